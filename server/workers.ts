import { Periodic } from "./billing/periodic.js";
import { SettlementWorker } from "./billing/settlement.js";
import { BillingWorker } from "./billing/worker.js";
import { recoverInterruptedCheckouts } from "./checkout/recovery.js";
import type { AppDeps } from "./deps.js";
import { errorMessage } from "./errors.js";
import { createTransport } from "./mail/transport.js";
import { MailWorker } from "./mail/worker.js";
import { WebhookDispatcher } from "./webhooks/dispatcher.js";

/**
 * The background work of a server process: recurring billing, bank-payment settlement, receipts, webhook
 * delivery, and recovery of checkouts a dead process left half-done. Each is safe to run in several processes at once
 * (rows are claimed before they are worked on, store/claim.ts), so every server runs all of them; the claims
 * name this process (`deps.processId`), so when it dies the others take its work over within the liveness
 * window of its heartbeat (store/processes.ts).
 */

export interface BackgroundWorker {
  start(intervalMs: number): void;
  stop(): Promise<void>;
}

/** Starts every background worker on `config.workerIntervalMs`; `stop()` waits for passes in flight. */
export function startWorkers(deps: AppDeps, extra: BackgroundWorker[] = []): { stop(): Promise<void> } {
  const { config, store } = deps;
  const recovery = new Periodic<number>((err) =>
    console.error(`Almoner checkout recovery: ${errorMessage(err)}`),
  );
  const workers: BackgroundWorker[] = [
    new BillingWorker({ deps }),
    new SettlementWorker({ deps }),
    new MailWorker({
      store,
      now: deps.now,
      processId: deps.processId,
      transport: createTransport({
        smtpUrl: config.smtpUrl,
        dataDir: config.dataDir,
        publicUrl: config.publicUrl,
      }),
    }),
    {
      start: (ms) => recovery.start(ms, () => recoverInterruptedCheckouts(deps)),
      stop: () => recovery.stop(),
    },
    // Polls every second at most (and at once when this process queues a delivery), whatever the interval.
    new WebhookDispatcher({ deps }),
    ...extra,
  ];
  for (const w of workers) w.start(deps.config.workerIntervalMs);
  return { stop: async () => void (await Promise.all(workers.map((w) => w.stop()))) };
}

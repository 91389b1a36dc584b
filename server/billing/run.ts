import { isoAt } from "../../shared/time.js";
import { composeDeps } from "../compose.js";
import type { Config } from "../config.js";
import { errorMessage } from "../errors.js";
import type { Store } from "../store/database.js";
import { ProcessHeartbeat } from "../store/processes.js";
import { type SettlementPassResult, SettlementWorker } from "./settlement.js";
import { type BillingPassResult, BillingWorker } from "./worker.js";

export interface BillingRun {
  asOf: string;
  billing: BillingPassResult;
  settlement: SettlementPassResult;
  /** One line per subscription or payment that could not be handled (it is tried again later). */
  errors: string[];
}

/**
 * One billing pass and one settlement pass as of `asOfMs` (the command line's `billing run --as-of`):
 * everything, the sandbox processor's clock included, sees that moment as now.
 */
export async function runBillingAt(store: Store, config: Config, asOfMs: number): Promise<BillingRun> {
  // A heartbeat of its own while it runs, so that a run killed midway leaves its claims to the servers
  // within the liveness window rather than for the whole lease (processes.ts).
  const heartbeat = new ProcessHeartbeat(store);
  await heartbeat.start();
  const deps = { ...(await composeDeps(store, config, () => asOfMs)), processId: heartbeat.id };
  const errors: string[] = [];
  const onError = (err: unknown, context: string) => errors.push(`${context}: ${errorMessage(err)}`);
  try {
    const billing = await new BillingWorker({ deps, onError }).runOnce(asOfMs);
    const settlement = await new SettlementWorker({ deps, onError }).runOnce();
    return { asOf: isoAt(asOfMs), billing, settlement, errors };
  } finally {
    await deps.metrics.close();
    await heartbeat.stop().catch(() => {});
  }
}

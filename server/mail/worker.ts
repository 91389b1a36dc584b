import type { ExpressionBuilder } from "kysely";
import { isoAt } from "../../shared/time.js";
import { Periodic } from "../billing/periodic.js";
import { errorMessage } from "../errors.js";
import { claimRows, newLease, RELEASED, releaseClaims } from "../store/claim.js";
import type { Store } from "../store/database.js";
import type { Database, EmailOutboxTable } from "../store/schema.js";
import { type MailMessage, type MailTransport, UndeliverableError } from "./transport.js";

/**
 * Drains the e-mail outbox. Any number of processes may run one on the same database: a worker first
 * claims a batch (store/claim.ts: one conditional UPDATE writes its token, a lease and its process into
 * due, free rows), then sends outside any transaction, then settles each row only while its token is still
 * on it. A process that dies mid-batch leaves its rows to the others once its heartbeat lapses.
 */

/** After the n-th failed attempt the next waits retryScheduleMs[n-1]; past the end the message is FAILED. */
export const DEFAULT_RETRY_SCHEDULE_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 12 * 3_600_000];

export interface MailWorkerOptions {
  store: Store;
  transport: MailTransport;
  now: () => number;
  batchSize?: number;
  retryScheduleMs?: number[];
  /**
   * How long a claim holds its rows even while its process lives (the rows of a dead process are free as
   * soon as its heartbeat lapses); no send starts that could outlast it.
   */
  leaseMs?: number;
  /** This process's heartbeat (store/processes.ts), named on its claims; none: they end with the lease. */
  processId?: string;
  /** Longest one send may take before it counts as failed (and is abandoned). */
  sendTimeoutMs?: number;
  onError?: (err: unknown, context: string) => void;
}

export interface PassResult {
  sent: number;
  failed: number;
}

/** A pass claims batch after batch while they come back full, up to this many (so stop() stays prompt). */
const MAX_BATCHES_PER_PASS = 50;
const MAX_ERROR_LENGTH = 1000;

function due(nowIso: string) {
  return (eb: ExpressionBuilder<Database, "email_outbox">) =>
    eb.and([eb("status", "=", "PENDING"), eb("next_attempt_at", "<=", nowIso)]);
}

function toMessage(row: EmailOutboxTable): MailMessage {
  return {
    id: row.id,
    fromName: row.from_name,
    to: row.to_address,
    replyTo: row.reply_to ?? undefined,
    subject: row.subject,
    text: row.text_body,
    html: row.html_body,
  };
}

function describeError(err: unknown): string {
  const text = errorMessage(err);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}

/** Runs `send` with an abort signal, and stops waiting for it once the time is up even if it ignores the signal. */
async function within(ms: number, send: (signal: AbortSignal) => Promise<void>): Promise<void> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new Error(`sending timed out after ${ms} ms`);
      controller.abort(err);
      reject(err);
    }, ms);
  });
  try {
    await Promise.race([send(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export class MailWorker {
  private readonly store: Store;
  private readonly transport: MailTransport;
  private readonly now: () => number;
  private readonly batchSize: number;
  private readonly schedule: number[];
  private readonly leaseMs: number;
  private readonly sendTimeoutMs: number;
  private readonly processId: string | undefined;
  private readonly onError: (err: unknown, context: string) => void;
  private readonly loop: Periodic<PassResult>;

  constructor(opts: MailWorkerOptions) {
    this.store = opts.store;
    this.transport = opts.transport;
    this.now = opts.now;
    this.batchSize = opts.batchSize ?? 10;
    this.schedule = opts.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS;
    this.sendTimeoutMs = opts.sendTimeoutMs ?? 60_000;
    this.processId = opts.processId;
    // Long enough for a whole batch at the time limit, so a slow but live worker keeps its rows.
    this.leaseMs = opts.leaseMs ?? Math.max(5 * 60_000, this.batchSize * this.sendTimeoutMs + 60_000);
    if (this.leaseMs <= this.sendTimeoutMs) throw new RangeError("leaseMs must be longer than sendTimeoutMs");
    this.onError =
      opts.onError ??
      ((err, context) => console.error(`Almoner mail worker: ${context}: ${describeError(err)}`));
    this.loop = new Periodic((err) => this.onError(err, "claiming messages"));
  }

  /**
   * Sends every due message once (retries included). A message that fails is rescheduled, never thrown;
   * only a failure to claim (the database is unreachable) rejects.
   */
  runOnce(): Promise<PassResult> {
    return this.loop.track(this.pass());
  }

  /** Runs a pass now and then every `intervalMs` after the previous one ends. */
  start(intervalMs: number): void {
    this.loop.start(intervalMs, () => this.runOnce());
  }

  /** Stops the timer and waits for any pass in flight, so the store can be closed afterwards. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async pass(): Promise<PassResult> {
    const result: PassResult = { sent: 0, failed: 0 };
    for (let i = 0; i < MAX_BATCHES_PER_PASS; i++) {
      const { rows, token, claimedUntil } = await this.claim();
      for (const [index, row] of rows.entries()) {
        // Never start a send that could outlast the lease: another worker could claim the row meanwhile.
        if (this.now() + this.sendTimeoutMs > claimedUntil) {
          await this.release(rows.slice(index), token);
          return result;
        }
        if (await this.deliver(row, token)) result.sent++;
        else result.failed++;
      }
      if (rows.length < this.batchSize) break;
    }
    return result;
  }

  private async claim(): Promise<{ rows: EmailOutboxTable[]; token: string; claimedUntil: number }> {
    const nowMs = this.now();
    const lease = newLease(this.processId, nowMs, this.leaseMs);
    const rows = await claimRows(this.store, {
      table: "email_outbox",
      where: due(isoAt(nowMs)),
      orderBy: "next_attempt_at",
      limit: this.batchSize,
      lease,
    });
    return { rows, token: lease.token, claimedUntil: lease.until };
  }

  /** Sends one message and records the outcome; true when it was sent. Never throws. */
  private async deliver(row: EmailOutboxTable, token: string): Promise<boolean> {
    let failure: unknown;
    try {
      await within(this.sendTimeoutMs, (signal) => this.transport.send(toMessage(row), signal));
    } catch (err) {
      failure = err ?? new Error("send failed");
    }
    try {
      if (failure === undefined) await this.markSent(row, token);
      else await this.markFailed(row, token, failure);
    } catch (err) {
      // The row keeps its claim and is retried once the lease ends (a sent one may then go out twice).
      this.onError(err, `recording the outcome of ${row.id}`);
    }
    return failure === undefined;
  }

  private async markSent(row: EmailOutboxTable, token: string): Promise<void> {
    await this.store.db
      .updateTable("email_outbox")
      .set({
        status: "SENT",
        sent_at: isoAt(this.now()),
        attempts: row.attempts + 1,
        last_error: null,
        ...RELEASED,
      })
      .where("id", "=", row.id)
      .where("claim_token", "=", token)
      .execute();
  }

  private async markFailed(row: EmailOutboxTable, token: string, err: unknown): Promise<void> {
    const attempts = row.attempts + 1;
    const wait = err instanceof UndeliverableError ? undefined : this.schedule[attempts - 1];
    await this.store.db
      .updateTable("email_outbox")
      .set({
        status: wait === undefined ? "FAILED" : "PENDING",
        attempts,
        next_attempt_at: wait === undefined ? row.next_attempt_at : isoAt(this.now() + wait),
        last_error: describeError(err),
        ...RELEASED,
      })
      .where("id", "=", row.id)
      .where("claim_token", "=", token)
      .execute();
  }

  private async release(rows: EmailOutboxTable[], token: string): Promise<void> {
    await releaseClaims(
      this.store,
      "email_outbox",
      rows.map((r) => r.id),
      token,
    ).catch((err) => this.onError(err, "releasing a claim"));
  }
}

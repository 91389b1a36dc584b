import type { ExpressionBuilder } from "kysely";
import { isoAt } from "../../shared/time.js";
import type { AppDeps } from "../deps.js";
import { errorMessage } from "../errors.js";
import { claimRows, newLease, releaseClaims } from "../store/claim.js";
import type { Database, SubscriptionsTable } from "../store/schema.js";
import { type BillingTally, billSubscription, emptyTally } from "./charges.js";
import { settleOrphanedCharges } from "./orphanedCharges.js";
import { Periodic } from "./periodic.js";

/**
 * Recurring billing: charges every ACTIVE subscription whose billing date (or retry) has come, ends those
 * past their end date. Any number of processes may run one on the same database: a worker claims a batch
 * (store/claim.ts: a conditional UPDATE writes its token, a lease and its process into due, free rows; on
 * PostgreSQL over candidates locked `FOR UPDATE SKIP LOCKED` first), then charges outside any transaction
 * (`charges.ts`). The rows of a process that dies mid-batch are free once its heartbeat lapses; a charge
 * it left half-done is finished by the next claim, with the same idempotency key.
 *
 * Claims are about live processes, so leases run on the wall clock even when a pass bills "as of"
 * another moment (the CLI's `--as-of`, tests' fixed clocks). What is due is decided as of the pass's
 * moment; a charge's payment is dated (and its retry counted from) the app's clock (`deps.now()`) when its
 * outcome is recorded, so a charge that waited on the processor lists above pages handed out meanwhile.
 */

export type BillingPassResult = BillingTally;

export interface BillingWorkerOptions {
  deps: AppDeps;
  /** Subscriptions claimed at a time. */
  batchSize?: number;
  /**
   * How long a claim holds its rows even while its process lives (the rows of a dead process are free as
   * soon as its heartbeat lapses).
   */
  leaseMs?: number;
  /**
   * The clock of leases, and the real time the mail a charge causes is due at when the pass bills as of a
   * later moment; default `Date.now`.
   */
  wallClock?: () => number;
  onError?: (err: unknown, context: string) => void;
}

/** A pass claims batch after batch while they come back full, up to this many (so stop() stays prompt). */
const MAX_BATCHES_PER_PASS = 40;

/** Due for a charge or a retry, or past its end date (claimRows adds: not held by a live claim). */
function due(atIso: string, skip: readonly string[]) {
  return (eb: ExpressionBuilder<Database, "subscriptions">) =>
    eb.and([
      eb("status", "=", "ACTIVE"),
      eb.or([
        eb.and([eb("retry_at", "is", null), eb("next_billing_at", "<=", atIso)]),
        eb("retry_at", "<=", atIso),
        eb.and([
          eb("end_billing_at", "is not", null),
          eb("end_billing_at", "<=", atIso),
          eb("end_billing_at", "<", eb.ref("next_billing_at")),
        ]),
      ]),
      ...(skip.length ? [eb("id", "not in", skip)] : []),
    ]);
}

export class BillingWorker {
  private readonly deps: AppDeps;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly wallClock: () => number;
  private readonly onError: (err: unknown, context: string) => void;
  private readonly loop: Periodic<BillingPassResult>;
  /** Organizations the sweep of orphaned charges leaves out for a while (their processor failed). */
  private readonly orphanRest = new Map<string, number>();

  constructor(opts: BillingWorkerOptions) {
    this.deps = opts.deps;
    this.batchSize = opts.batchSize ?? 25;
    this.leaseMs = opts.leaseMs ?? 10 * 60_000;
    this.wallClock = opts.wallClock ?? Date.now;
    if (!Number.isSafeInteger(this.batchSize) || this.batchSize < 1)
      throw new RangeError("batchSize must be ≥ 1");
    if (!(this.leaseMs > 0)) throw new RangeError("leaseMs must be positive");
    this.onError =
      opts.onError ??
      ((err, context) => console.error(`Almoner billing worker: ${context}: ${errorMessage(err)}`));
    this.loop = new Periodic((err) => this.onError(err, "claiming subscriptions"));
  }

  /**
   * Bills every subscription due at `asOfMs` (default: now) once. A subscription that cannot be billed
   * (an outage of the processor) is reported to `onError`, keeps its claim until the lease ends and is
   * tried again after that, with the same idempotency key; only a failure to claim (the database is
   * unreachable) rejects.
   */
  runOnce(asOfMs?: number): Promise<BillingPassResult> {
    return this.loop.track(this.pass(asOfMs ?? this.deps.now()));
  }

  /** Runs a pass now and then every `intervalMs` after the previous one ends; errors go to `onError`. */
  start(intervalMs: number): void {
    this.loop.start(intervalMs, () => this.runOnce());
  }

  /** Stops the timer and waits for any pass in flight, so the store can be closed afterwards. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async pass(atMs: number): Promise<BillingPassResult> {
    const total = emptyTally();
    // Charges an interrupted pass left behind on gifts cancelled since, which no claim below reaches.
    await settleOrphanedCharges(this.deps, this.deps.now(), this.wallClock(), {
      resting: this.orphanRest,
    }).catch((err) => this.onError(err, "settling the interrupted charges of ended gifts"));
    // One charge per subscription per pass, even if it is still due afterwards (it catches up next pass).
    const seen: string[] = [];
    for (let i = 0; i < MAX_BATCHES_PER_PASS; i++) {
      const { rows, token, claimedUntil } = await this.claim(atMs, seen);
      for (const [index, sub] of rows.entries()) {
        // Leave what is left to a later pass rather than work on past half the lease.
        if (this.wallClock() > claimedUntil - this.leaseMs / 2) {
          await this.release(rows.slice(index), token);
          return total;
        }
        seen.push(sub.id);
        try {
          const tally = await billSubscription(this.deps, sub, token, atMs, this.wallClock());
          total.charged += tally.charged;
          total.failed += tally.failed;
          total.cancelled += tally.cancelled;
          total.ended += tally.ended;
        } catch (err) {
          this.onError(err, `billing subscription ${sub.id}`);
        }
      }
      if (rows.length < this.batchSize) break;
    }
    return total;
  }

  private async claim(
    atMs: number,
    skip: readonly string[],
  ): Promise<{ rows: SubscriptionsTable[]; token: string; claimedUntil: number }> {
    const lease = newLease(this.deps.processId, this.wallClock(), this.leaseMs);
    const rows = await claimRows(this.deps.store, {
      table: "subscriptions",
      where: due(isoAt(atMs), skip),
      orderBy: "next_billing_at",
      limit: this.batchSize,
      lease,
    });
    return { rows, token: lease.token, claimedUntil: lease.until };
  }

  private async release(rows: SubscriptionsTable[], token: string): Promise<void> {
    await releaseClaims(
      this.deps.store,
      "subscriptions",
      rows.map((r) => r.id),
      token,
    ).catch((err) => this.onError(err, "releasing a claim"));
  }
}

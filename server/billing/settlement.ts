import type { ExpressionBuilder } from "kysely";
import { isoAt } from "../../shared/time.js";
import type { AppDeps } from "../deps.js";
import { errorMessage } from "../errors.js";
import { AWAITING_AUTHENTICATION, CONFIRMATION_WINDOW_MS } from "../payments/confirmationRequest.js";
import { outcomeOfLookup } from "../payments/outcome.js";
import { settlePayment } from "../payments/transition.js";
import type { PaymentLookup } from "../processors/port.js";
import { claimRows } from "../store/claim.js";
import { getOrganizationCached } from "../store/organizations.js";
import { paymentDetails } from "../store/payments.js";
import type { Database, PaymentsTable } from "../store/schema.js";
import { Periodic } from "./periodic.js";

/**
 * Settles PENDING payments (bank debits): asks the processor how each one stands and records it once it
 * has succeeded or failed, through the one transition every payment goes through (payments/transition.ts).
 * Works the same in every process and after restarts: the list of pending payments is the database. A
 * processor that reports by webhook (Stripe) is asked only now and then (`slowRepollMs`): its webhooks
 * settle its payments first, and this is the backstop for one that never arrived.
 *
 * Several processes may run one. A worker takes a batch by moving the rows' `updated_at` to now with a
 * conditional UPDATE (on PostgreSQL over candidates locked `FOR UPDATE SKIP LOCKED` first), so a payment is polled
 * by one worker at a time and at most once per `repollMs`; the outcome is recorded by an update conditional
 * on the status still being PENDING, so it is recorded once whoever polls. Nothing is held meanwhile (the
 * claim is the poll's time, not a lease of store/claim.ts): a payment whose poller died is polled again by
 * any process `repollMs` later, as every payment is.
 */

export interface SettlementPassResult {
  /** Payments that settled and are now COMPLETED. */
  completed: number;
  /** Payments that bounced and are now FAILED. */
  failed: number;
  /** Payments polled that are still pending at the processor. */
  pending: number;
}

export interface SettlementWorkerOptions {
  deps: AppDeps;
  batchSize?: number;
  /** Least time between two polls of the same payment. */
  repollMs?: number;
  /** The same for processors that report by webhook. */
  slowRepollMs?: number;
  /**
   * The real time, which the mail a settlement causes is due at when the deps' clock is a later moment (a
   * billing run `--as-of`); default `Date.now`.
   */
  wallClock?: () => number;
  onError?: (err: unknown, context: string) => void;
}

const MAX_BATCHES_PER_PASS = 40;

function pollable(cutoffIso: string, slowCutoffIso: string) {
  return (eb: ExpressionBuilder<Database, "payments">) =>
    eb.and([
      eb("status", "=", "PENDING"),
      eb("processor_payment_id", "is not", null),
      eb.or([
        eb.and([eb("processor", "=", "sandbox"), eb("updated_at", "<=", cutoffIso)]),
        eb.and([eb("processor", "!=", "sandbox"), eb("updated_at", "<=", slowCutoffIso)]),
      ]),
    ]);
}

export class SettlementWorker {
  private readonly deps: AppDeps;
  private readonly batchSize: number;
  private readonly repollMs: number;
  private readonly slowRepollMs: number;
  private readonly wallClock: () => number;
  private readonly onError: (err: unknown, context: string) => void;
  private readonly loop: Periodic<SettlementPassResult>;

  constructor(opts: SettlementWorkerOptions) {
    this.deps = opts.deps;
    this.batchSize = opts.batchSize ?? 50;
    this.repollMs = opts.repollMs ?? 60_000;
    this.slowRepollMs = opts.slowRepollMs ?? 3_600_000;
    this.wallClock = opts.wallClock ?? Date.now;
    if (!Number.isSafeInteger(this.batchSize) || this.batchSize < 1)
      throw new RangeError("batchSize must be ≥ 1");
    if (!Number.isSafeInteger(this.repollMs) || this.repollMs < 1)
      throw new RangeError("repollMs must be ≥ 1");
    this.onError =
      opts.onError ??
      ((err, context) => console.error(`Almoner settlement worker: ${context}: ${errorMessage(err)}`));
    this.loop = new Periodic((err) => this.onError(err, "claiming pending payments"));
  }

  /** Polls every pending payment not polled within `repollMs` once; only a failure to claim rejects. */
  runOnce(): Promise<SettlementPassResult> {
    return this.loop.track(this.pass());
  }

  start(intervalMs: number): void {
    this.loop.start(intervalMs, () => this.runOnce());
  }

  /** Stops the timer and waits for any pass in flight. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async pass(): Promise<SettlementPassResult> {
    const result: SettlementPassResult = { completed: 0, failed: 0, pending: 0 };
    for (let i = 0; i < MAX_BATCHES_PER_PASS; i++) {
      const rows = await this.claim();
      for (const row of rows) {
        try {
          const processorPaymentId = row.processor_payment_id ?? "";
          const org = await getOrganizationCached(this.deps.store, row.organization_id);
          if (!org) throw new Error(`payment ${row.id} belongs to no organization`);
          const processor = this.deps.processors.named(row.processor, org);
          const lookup = await processor.retrievePayment(processorPaymentId);
          if (!lookup) throw new Error(`the processor does not know payment ${processorPaymentId}`);
          if (lookup.status === "succeeded" || lookup.status === "failed") {
            if (await this.settle(row, lookup))
              result[lookup.status === "succeeded" ? "completed" : "failed"]++;
          } else if (await this.giveUp(row, lookup)) result.failed++;
          else result.pending++;
        } catch (err) {
          this.onError(err, `settling payment ${row.id}`);
        }
      }
      if (rows.length < this.batchSize) break;
    }
    return result;
  }

  private async claim(): Promise<PaymentsTable[]> {
    const nowMs = this.deps.now();
    return claimRows(this.deps.store, {
      table: "payments",
      where: pollable(isoAt(nowMs - this.repollMs), isoAt(nowMs - this.slowRepollMs)),
      orderBy: "updated_at",
      limit: this.batchSize,
      set: { updated_at: isoAt(nowMs) },
    });
  }

  /**
   * A recurring charge held for the donor's authentication that they did not confirm in time is cancelled
   * at the processor and recorded FAILED (its subscription retries on the usual schedule).
   */
  private async giveUp(row: PaymentsTable, lookup: PaymentLookup): Promise<boolean> {
    const nowMs = this.deps.now();
    if (row.failure_code !== AWAITING_AUTHENTICATION || lookup.status !== "requires_action") return false;
    if (nowMs - Date.parse(row.created_at) < CONFIRMATION_WINDOW_MS) return false;
    const org = await getOrganizationCached(this.deps.store, row.organization_id);
    const processor = org && this.deps.processors.named(row.processor, org);
    if (!processor?.cancelPayment || !(await processor.cancelPayment(lookup.processorPaymentId)))
      return false;
    const settled = await this.deps.store.transact((trx) =>
      settlePayment(
        trx,
        { nowMs, publicUrl: this.deps.config.publicUrl, wallMs: this.wallClock() },
        { id: row.id },
        {
          to: "FAILED",
          processorPaymentId: lookup.processorPaymentId,
          code: "authentication_required",
          message: "The payment was not confirmed with the bank in time. Nothing was charged.",
        },
      ),
    );
    return settled.changed;
  }

  /** Records the outcome; false when another process recorded it first. */
  private async settle(pending: PaymentsTable, lookup: PaymentLookup): Promise<boolean> {
    const outcome = outcomeOfLookup(lookup, paymentDetails(pending).processorCustomer ?? null);
    if (!outcome) return false;
    const settled = await this.deps.store.transact((trx) =>
      settlePayment(
        trx,
        { nowMs: this.deps.now(), publicUrl: this.deps.config.publicUrl, wallMs: this.wallClock() },
        { id: pending.id },
        outcome,
      ),
    );
    return settled.changed;
  }
}

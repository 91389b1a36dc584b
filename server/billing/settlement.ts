import type { ExpressionBuilder } from "kysely";
import type { AppDeps } from "../api/env.js";
import { CHECKOUT_CHARGE_PREFIX } from "../checkout/engine.js";
import type { PaymentLookup } from "../checkout/processor.js";
import { queueReceipt } from "../checkout/receipts.js";
import { errorMessage } from "../errors.js";
import { claimRows } from "../store/claim.js";
import type { Db } from "../store/database.js";
import { emitEvent } from "../store/events.js";
import { releaseItems } from "../store/inventory.js";
import { paymentDetails, presentPayment } from "../store/payments.js";
import type { Database, PaymentsTable, SubscriptionsTable } from "../store/schema.js";
import {
  cancelNeverPaidSubscription,
  findSubscription,
  presentSubscription,
  recordSuccessfulCharge,
} from "../store/subscriptions.js";
import { Periodic } from "./periodic.js";

/**
 * Settles PENDING payments (bank debits): asks the processor how each one stands and records it once it
 * has succeeded (COMPLETED, `donation.updated`, receipt) or failed (FAILED with the processor's code and
 * message, `donation.updated`). Works the same in every process and after restarts: the list of pending
 * payments is the database.
 *
 * Several processes may run one. A worker takes a batch by moving the rows' `updated_at` to now with a
 * conditional UPDATE (on PostgreSQL over candidates locked `FOR UPDATE SKIP LOCKED` first), so a payment is polled
 * by one worker at a time and at most once per `repollMs`; the outcome is recorded by an update conditional
 * on the status still being PENDING, so it is recorded once whoever polls.
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
  onError?: (err: unknown, context: string) => void;
}

const MAX_BATCHES_PER_PASS = 40;

const iso = (ms: number): string => new Date(ms).toISOString();

function pollable(cutoffIso: string) {
  return (eb: ExpressionBuilder<Database, "payments">) =>
    eb.and([
      eb("status", "=", "PENDING"),
      eb("processor_payment_id", "is not", null),
      eb("updated_at", "<=", cutoffIso),
    ]);
}

export class SettlementWorker {
  private readonly deps: AppDeps;
  private readonly batchSize: number;
  private readonly repollMs: number;
  private readonly onError: (err: unknown, context: string) => void;
  private readonly loop: Periodic<SettlementPassResult>;

  constructor(opts: SettlementWorkerOptions) {
    this.deps = opts.deps;
    this.batchSize = opts.batchSize ?? 50;
    this.repollMs = opts.repollMs ?? 60_000;
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
          const lookup = await this.deps.processor.retrievePayment(processorPaymentId);
          if (!lookup) throw new Error(`the processor does not know payment ${processorPaymentId}`);
          if (lookup.status === "succeeded" || lookup.status === "failed") {
            if (await this.settle(row, lookup))
              result[lookup.status === "succeeded" ? "completed" : "failed"]++;
          } else result.pending++;
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
      where: pollable(iso(nowMs - this.repollMs)),
      orderBy: "updated_at",
      limit: this.batchSize,
      set: { updated_at: iso(nowMs) },
    });
  }

  /** Records the outcome; false when another process recorded it first. */
  private async settle(pending: PaymentsTable, lookup: PaymentLookup): Promise<boolean> {
    const nowMs = this.deps.now();
    const succeeded = lookup.status === "succeeded";
    return this.deps.store.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable("payments")
        .set({
          status: succeeded ? "COMPLETED" : "FAILED",
          failure_code: succeeded ? null : (lookup.failureCode ?? "processing_error"),
          failure_message: succeeded ? null : (lookup.failureMessage ?? "The bank payment failed."),
          updated_at: iso(nowMs),
        })
        .where("id", "=", pending.id)
        .where("status", "=", "PENDING")
        .returningAll()
        .executeTakeFirst();
      if (!row) return false;
      // A bounced debit gives back what its checkout took (tickets, products, promo-code uses), as a
      // card declined at checkout does.
      if (!succeeded) await releaseItems(trx, row.form_id, paymentDetails(row).hold);
      await emitEvent(trx, row.organization_id, "donation.updated", row.id, presentPayment(row), nowMs);
      const sub = await this.settleSubscription(trx, row, succeeded, nowMs);
      if (succeeded) await queueReceipt(trx, row, sub, nowMs);
      return true;
    });
  }

  /**
   * What a settled charge means for its subscription: a cleared debit is its last successful charge
   * (`lastBillingDate`, the charge's date); a bounced first payment (the checkout's) ends a subscription that
   * was never paid, as a card declined at checkout never starts one. A later charge that bounces changes
   * nothing (its cycle is billed; the next charge comes on schedule).
   */
  private async settleSubscription(
    trx: Db,
    row: PaymentsTable,
    succeeded: boolean,
    nowMs: number,
  ): Promise<SubscriptionsTable | null> {
    const id = row.subscription_id;
    if (!id) return null;
    const nowIso = iso(nowMs);
    const changed = succeeded
      ? await recordSuccessfulCharge(trx, id, row.created_at, nowIso)
      : row.charge_key.startsWith(CHECKOUT_CHARGE_PREFIX)
        ? await cancelNeverPaidSubscription(trx, id, row.id, nowIso)
        : undefined;
    if (changed) {
      const type = succeeded ? "subscription.updated" : "subscription.cancelled";
      await emitEvent(trx, changed.organization_id, type, changed.id, presentSubscription(changed), nowMs);
    }
    return changed ?? (await findSubscription(trx, id)) ?? null;
  }
}

import type { ExpressionBuilder } from "kysely";
import type { Frequency } from "../../shared/enums.js";
import { isoAt } from "../../shared/time.js";
import { billingDate, type RecurringFrequency, retryAt } from "../billing/schedule.js";
import { prefixedId } from "../ids.js";
import type { PaymentMethod } from "../processors/port.js";
import type { Db } from "../store/database.js";
import { organizationTimeZone } from "../store/organizations.js";
import { paymentDetails } from "../store/payments.js";
import type { Database, PaymentsTable, SubscriptionsTable } from "../store/schema.js";
import {
  cancelNeverPaidSubscription,
  findSubscription,
  insertSubscription,
  recordSuccessfulCharge,
} from "../store/subscriptions.js";
import { type EventClock, emitEvent } from "../webhooks/events.js";
import { presentSubscription } from "../wire/subscription.js";
import type { ChargeOrigin } from "./chargeKey.js";

/**
 * What a payment's move means for its recurring gift, inside the transaction that moves it:
 * - a checkout's first payment that went through (or is pending) with a saved method starts the gift;
 * - a recurring charge that went through (or is pending) moves the gift to its next cycle, if it is still
 *   ACTIVE at the cycle and attempt that were charged (a cancel that landed meanwhile wins); one that
 *   failed schedules a retry (the gift's next charge, shown as its `nextBillingDate`), or after the last
 *   retry cancels the gift;
 * - a pending payment that clears becomes the gift's last successful charge; a checkout's first payment
 *   that bounces ends a gift that was never paid. A later charge that bounces changes nothing (its cycle
 *   is billed; the next charge comes on schedule).
 */

/** What happened to a recurring gift, for the billing pass's tally. */
export type BillingEffect = "advanced" | "retrying" | "cancelled" | "untouched";

export interface SubscriptionEffect {
  sub: SubscriptionsTable | null;
  billing: BillingEffect;
}

const untouched = (sub: SubscriptionsTable | null): SubscriptionEffect => ({ sub, billing: "untouched" });

export async function emitSubscription(
  trx: Db,
  type: "subscription.created" | "subscription.updated" | "subscription.cancelled",
  sub: SubscriptionsTable,
  at: number | EventClock,
): Promise<void> {
  await emitEvent(trx, sub.organization_id, type, sub.id, presentSubscription(sub), at);
}

/** A checkout's gift, from its first payment and the method saved with it. */
function newSubscription(
  row: PaymentsTable,
  method: PaymentMethod,
  processorCustomer: string | null,
  nowMs: number,
  timeZone: string,
): SubscriptionsTable {
  const nowIso = isoAt(nowMs);
  const frequency = row.frequency as Exclude<Frequency, "ONE_TIME">;
  const details = paymentDetails(row);
  return {
    id: prefixedId("sub", nowMs),
    organization_id: row.organization_id,
    form_id: row.form_id,
    contact_id: row.contact_id ?? "",
    status: "ACTIVE",
    amount_cents: Number(row.amount_cents) - Number(row.fee_cents),
    cover_fees: row.cover_fees,
    currency: row.currency,
    frequency,
    fund: row.fund,
    anonymous: row.anonymous,
    email: row.email,
    email_key: row.email_key,
    first_name: row.first_name,
    last_name: row.last_name,
    processor: row.processor,
    processor_customer: processorCustomer,
    payment_method_token: method.token,
    payment_method_type: method.type,
    card_brand: method.type === "card" ? (method.brand ?? null) : null,
    last4: method.last4,
    anchor_at: nowIso,
    cycle: 0,
    next_billing_at: billingDate(nowIso, frequency, 1, timeZone),
    // The last successful charge: a pending payment is not one yet (it is recorded when it clears).
    last_billing_at: row.status === "COMPLETED" ? nowIso : null,
    end_billing_at: null,
    failed_attempts: 0,
    retry_at: null,
    claimed_until: null,
    claim_token: null,
    // What every later charge repeats; a dedication stays with the gift it was made for.
    details: JSON.stringify({
      customInputs: details.customInputs,
      utm: details.utm,
      donor: details.donor,
      ...(details.tribute && { tribute: details.tribute }),
      ...(details.language && { language: details.language }),
    }),
    created_at: nowIso,
    updated_at: nowIso,
    cancelled_at: null,
  };
}

/**
 * A checkout's first payment that went through starts its gift; the caller links the payment to it and
 * emits `subscription.created` (after the donor's contact event). `timeZone` is the organization's, when
 * the caller has it at hand (it is read otherwise).
 */
export async function insertNewSubscription(
  trx: Db,
  row: PaymentsTable,
  method: PaymentMethod,
  processorCustomer: string | null,
  nowMs: number,
  timeZone?: string,
): Promise<SubscriptionsTable> {
  const zone = timeZone ?? (await organizationTimeZone(trx, row.organization_id));
  const sub = newSubscription(row, method, processorCustomer, nowMs, zone);
  await insertSubscription(trx, sub);
  return sub;
}

/** A pending payment cleared: it is its gift's latest successful charge. */
async function paid(trx: Db, row: PaymentsTable, at: EventClock): Promise<SubscriptionEffect> {
  const id = row.subscription_id;
  if (!id) return untouched(null);
  const changed = await recordSuccessfulCharge(trx, id, row.created_at, isoAt(at.nowMs));
  if (changed) await emitSubscription(trx, "subscription.updated", changed, at);
  return untouched(changed ?? (await findSubscription(trx, id)) ?? null);
}

/** After a payment left PENDING. */
export async function afterSettled(
  trx: Db,
  row: PaymentsTable,
  origin: ChargeOrigin,
  /** When (the event's clocks: fanout.ts). */
  at: EventClock,
): Promise<SubscriptionEffect> {
  if (row.status === "COMPLETED") return paid(trx, row, at);
  const id = row.subscription_id;
  if (!id) return untouched(null);
  if (origin.kind === "checkout") {
    const ended = await cancelNeverPaidSubscription(trx, id, row.id, isoAt(at.nowMs));
    if (ended) {
      await emitSubscription(trx, "subscription.cancelled", ended, at);
      return { sub: ended, billing: "cancelled" };
    }
  }
  return untouched((await findSubscription(trx, id)) ?? null);
}

/** After a recurring charge left PROCESSING (COMPLETED, PENDING or FAILED). */
export async function afterRecurringCharge(
  trx: Db,
  row: PaymentsTable,
  origin: Extract<ChargeOrigin, { kind: "billing" }>,
  /** When (the event's clocks: fanout.ts). */
  at: EventClock,
): Promise<SubscriptionEffect> {
  const nowIso = isoAt(at.nowMs);
  const current = await findSubscription(trx, origin.subscriptionId);
  if (!current) return untouched(null);
  // Only the gift still ACTIVE at the cycle and attempt that were charged moves on; a cancel wins.
  const still = (eb: ExpressionBuilder<Database, "subscriptions">) =>
    eb.and([
      eb("id", "=", origin.subscriptionId),
      eb("status", "=", "ACTIVE"),
      eb("cycle", "=", origin.cycle - 1),
      eb("failed_attempts", "=", origin.attempt - 1),
    ]);
  const unclaimed = { claim_token: null, claimed_until: null, updated_at: nowIso };

  if (row.status !== "FAILED") {
    const next = await trx
      .updateTable("subscriptions")
      .where(still)
      .set({
        ...unclaimed,
        cycle: origin.cycle,
        ...(row.status === "COMPLETED" && { last_billing_at: nowIso }),
        next_billing_at: billingDate(
          current.anchor_at,
          current.frequency as RecurringFrequency,
          origin.cycle + 1 - (current.anchor_cycle ?? 0),
          await organizationTimeZone(trx, current.organization_id),
        ),
        failed_attempts: 0,
        retry_at: null,
      })
      .returningAll()
      .executeTakeFirst();
    if (next) {
      await emitSubscription(trx, "subscription.updated", next, at);
      return { sub: next, billing: "advanced" };
    }
    // Cancelled meanwhile: the schedule stays, but a charge that went through is its last successful one.
    return row.status === "COMPLETED" ? paid(trx, row, at) : untouched(current);
  }

  const retry = retryAt(origin.attempt, nowIso);
  if (retry) {
    const waiting = await trx
      .updateTable("subscriptions")
      .where(still)
      .set({ ...unclaimed, failed_attempts: origin.attempt, retry_at: retry })
      .returningAll()
      .executeTakeFirst();
    if (!waiting) return untouched(current);
    // The next charge is now the retry: its `nextBillingDate` moved.
    await emitSubscription(trx, "subscription.updated", waiting, at);
    return { sub: waiting, billing: "retrying" };
  }
  const cancelled = await trx
    .updateTable("subscriptions")
    .where(still)
    .set({
      ...unclaimed,
      status: "CANCELLED",
      cancelled_at: nowIso,
      failed_attempts: origin.attempt,
      retry_at: null,
    })
    .returningAll()
    .executeTakeFirst();
  if (!cancelled) return untouched(current);
  await emitSubscription(trx, "subscription.cancelled", cancelled, at);
  return { sub: cancelled, billing: "cancelled" };
}

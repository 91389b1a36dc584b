import type { ExpressionBuilder } from "kysely";
import type { Frequency } from "../../shared/enums.js";
import { coverFeeCents, type FeeRate } from "../../shared/pricing.js";
import type { AppDeps } from "../api/env.js";
import type { ChargeResult, FailureCode } from "../checkout/processor.js";
import { queueReceipt } from "../checkout/receipts.js";
import { prefixedId } from "../ids.js";
import type { Db } from "../store/database.js";
import { emitEvent } from "../store/events.js";
import { findForm } from "../store/forms.js";
import { getOrganization } from "../store/organizations.js";
import { type PaymentDetails, presentPayment } from "../store/payments.js";
import type { Database, PaymentsTable, SubscriptionsTable } from "../store/schema.js";
import { findSubscription, presentSubscription, recordSuccessfulCharge } from "../store/subscriptions.js";
import { billingDate, parseInstant, type RecurringFrequency, retryAt } from "./schedule.js";

/**
 * One recurring charge of a claimed subscription, in three steps so that no transaction waits on the
 * processor (the checkout's pattern):
 *  1. the charge is written as a PROCESSING payment whose `charge_key` (`sub:<id>:<cycle>:<attempt>`) is
 *     unique, so each attempt of each cycle has one payment row, ever;
 *  2. the processor charges with that key as its idempotency key (a rerun after a crash first asks the
 *     processor whether the key was charged, and never charges it twice);
 *  3. one transaction records the outcome: it takes the PROCESSING row by a conditional update (so only
 *     one process records it), then moves the subscription on only while it is still ACTIVE at the cycle
 *     and attempt that were charged, so a cancel that landed meanwhile wins.
 */

/** What one subscription added to a billing pass. */
export interface BillingTally {
  charged: number;
  failed: number;
  cancelled: number;
  ended: number;
}

export const emptyTally = (): BillingTally => ({ charged: 0, failed: 0, cancelled: 0, ended: 0 });

const LINE_LABEL: Record<RecurringFrequency, string> = {
  DAILY: "Daily donation",
  WEEKLY: "Weekly donation",
  MONTHLY: "Monthly donation",
  ANNUALLY: "Annual donation",
};

const iso = (ms: number): string => new Date(ms).toISOString();

/** The idempotency key (and payment `charge_key`) of one attempt at one cycle. */
export function chargeKey(subscriptionId: string, cycle: number, attempt: number): string {
  return `sub:${subscriptionId}:${cycle}:${attempt}`;
}

/** True when the end date has passed and falls before the next billing date: no more charges. */
export function hasEnded(sub: SubscriptionsTable, atMs: number): boolean {
  if (sub.end_billing_at === null) return false;
  const endMs = parseInstant(sub.end_billing_at);
  return endMs <= atMs && parseInstant(sub.next_billing_at) > endMs;
}

/** True when the current cycle's charge (or its retry) is due. */
export function chargeIsDue(sub: SubscriptionsTable, atMs: number): boolean {
  return parseInstant(sub.retry_at ?? sub.next_billing_at) <= atMs;
}

async function releaseClaim(db: Db, id: string, token: string): Promise<void> {
  await db
    .updateTable("subscriptions")
    .set({ claim_token: null, claimed_until: null })
    .where("id", "=", id)
    .where("claim_token", "=", token)
    .execute();
}

/** Bills (or ends) one subscription this process has claimed with `token`. */
export async function billSubscription(
  deps: AppDeps,
  claimed: SubscriptionsTable,
  token: string,
  atMs: number,
): Promise<BillingTally> {
  const tally = emptyTally();
  if (hasEnded(claimed, atMs)) {
    if (await endSubscription(deps.store.db, claimed.id, token, atMs)) tally.ended++;
    return tally;
  }
  const prepared = chargeIsDue(claimed, atMs) ? await prepareCharge(deps, claimed, atMs) : null;
  // Not due after all, cancelled or billed since the claim, or already recorded: nothing to do.
  if (prepared?.payment.status !== "PROCESSING") {
    await releaseClaim(deps.store.db, claimed.id, token);
    return tally;
  }
  const { sub, payment, fresh } = prepared;
  // A row left by an interrupted pass: the processor may have charged it already.
  const earlier = fresh ? null : await deps.processor.findCharge(payment.charge_key);
  const charge =
    earlier ??
    (await deps.processor.charge({
      amountCents: Number(payment.amount_cents),
      currency: "USD",
      paymentMethod: sub.payment_method_token,
      idempotencyKey: payment.charge_key,
      description: `Donation: ${payment.form_title}`,
      offSession: true,
      metadata: { paymentId: payment.id, subscriptionId: sub.id, cycle: String(sub.cycle + 1) },
    }));
  return recordCharge(deps, sub, payment, charge, token, atMs);
}

/** Marks a subscription past its end date CANCELLED; false when it was no longer ACTIVE or no longer ours. */
async function endSubscription(db: Db, id: string, token: string, atMs: number): Promise<boolean> {
  const atIso = iso(atMs);
  return db.transaction().execute(async (trx) => {
    const ended = await trx
      .updateTable("subscriptions")
      .set({
        status: "CANCELLED",
        cancelled_at: atIso,
        updated_at: atIso,
        retry_at: null,
        claim_token: null,
        claimed_until: null,
      })
      .where("id", "=", id)
      .where("status", "=", "ACTIVE")
      .where("claim_token", "=", token)
      .returningAll()
      .executeTakeFirst();
    if (!ended) return false;
    await emitEvent(
      trx,
      ended.organization_id,
      "subscription.cancelled",
      ended.id,
      presentSubscription(ended),
      atMs,
    );
    return true;
  });
}

interface PreparedCharge {
  /** The subscription as it is now (the amount may have changed since it was claimed). */
  sub: SubscriptionsTable;
  payment: PaymentsTable;
  /** False when the row was written by an earlier, interrupted pass. */
  fresh: boolean;
}

/** Step 1: re-reads the subscription and writes (or finds) the attempt's PROCESSING payment. */
async function prepareCharge(
  deps: AppDeps,
  claimed: SubscriptionsTable,
  atMs: number,
): Promise<PreparedCharge | null> {
  const db = deps.store.db;
  const current = await findSubscription(db, claimed.id);
  if (!current) return null;
  const [org, form] = await Promise.all([
    getOrganization(db, current.organization_id),
    findForm(db, current.form_id),
  ]);
  if (!org) throw new Error(`subscription ${current.id} belongs to no organization`);
  // The check and the PROCESSING row in one transaction that first writes the subscription's row: that
  // locks it (both databases), so a cancel either commits before (and no charge starts) or after the
  // charge was written. An amount or payment-method change likewise applies to this charge or the next.
  return db.transaction().execute(async (trx) => {
    const sub = await trx
      .updateTable("subscriptions")
      .set((eb) => ({ updated_at: eb.ref("updated_at") }))
      .where("id", "=", claimed.id)
      .where("status", "=", "ACTIVE")
      .where("cycle", "=", claimed.cycle)
      .where("failed_attempts", "=", claimed.failed_attempts)
      .returningAll()
      .executeTakeFirst();
    if (!sub) return null;
    const row = chargeRow(sub, form?.config.title ?? "", org.feeRate, atMs);
    const inserted = await trx
      .insertInto("payments")
      .values(row)
      .onConflict((oc) => oc.column("charge_key").doNothing())
      .returning("id")
      .executeTakeFirst();
    if (inserted) return { sub, payment: row, fresh: true };
    const existing = await trx
      .selectFrom("payments")
      .selectAll()
      .where("charge_key", "=", row.charge_key)
      .executeTakeFirstOrThrow();
    return { sub, payment: existing, fresh: false };
  });
}

function chargeRow(
  sub: SubscriptionsTable,
  formTitle: string,
  feeRate: FeeRate,
  atMs: number,
): PaymentsTable {
  const atIso = iso(atMs);
  const cycle = sub.cycle + 1;
  const giftCents = Number(sub.amount_cents);
  const feeCents = sub.cover_fees === 1 ? coverFeeCents(giftCents, feeRate) : 0;
  const kept = JSON.parse(sub.details) as Partial<Pick<PaymentDetails, "customInputs" | "utm" | "donor">>;
  const details: PaymentDetails = {
    lines: [
      {
        kind: "donation",
        label: LINE_LABEL[sub.frequency as RecurringFrequency] ?? "Recurring donation",
        unitCents: giftCents,
        quantity: 1,
        amountCents: giftCents,
      },
    ],
    subtotalCents: giftCents,
    discountCents: 0,
    promoCode: null,
    attendees: 0,
    customInputs: kept.customInputs ?? [],
    utm: kept.utm ?? {},
    donor: kept.donor ?? {},
    hold: [],
    cycle,
  };
  return {
    id: prefixedId("pay"),
    organization_id: sub.organization_id,
    form_id: sub.form_id,
    contact_id: sub.contact_id,
    subscription_id: sub.id,
    status: "PROCESSING",
    amount_cents: giftCents + feeCents,
    fee_cents: feeCents,
    refunded_cents: 0,
    currency: sub.currency,
    fund: sub.fund,
    form_title: formTitle,
    frequency: sub.frequency as Frequency,
    cover_fees: sub.cover_fees,
    anonymous: sub.anonymous,
    email: sub.email,
    first_name: sub.first_name,
    last_name: sub.last_name,
    payment_method_type: sub.payment_method_type,
    card_brand: sub.card_brand,
    last4: sub.last4,
    // Off-session declines must not count against the donor's card in the checkout's card-testing guard.
    fingerprint: null,
    processor_payment_id: null,
    charge_key: chargeKey(sub.id, cycle, sub.failed_attempts + 1),
    failure_code: null,
    failure_message: null,
    details: JSON.stringify(details),
    created_at: atIso,
    updated_at: atIso,
  };
}

type Recorded =
  | { status: "COMPLETED" | "PENDING"; processorPaymentId: string }
  | { status: "FAILED"; processorPaymentId: string | null; code: FailureCode; message: string };

function recordedOutcome(charge: ChargeResult): Recorded {
  switch (charge.status) {
    case "succeeded":
      return { status: "COMPLETED", processorPaymentId: charge.processorPaymentId };
    case "pending":
      return { status: "PENDING", processorPaymentId: charge.processorPaymentId };
    case "requires_action":
      // Nobody is there to confirm an off-session charge: it fails like a decline and is retried.
      return {
        status: "FAILED",
        processorPaymentId: charge.processorPaymentId,
        code: "authentication_required",
        message: "Your bank asked to confirm this recurring payment. Please update your payment method.",
      };
    case "failed":
      return {
        status: "FAILED",
        processorPaymentId: charge.processorPaymentId,
        code: charge.failureCode,
        message: charge.failureMessage,
      };
  }
}

/** Step 3: the payment, the subscription's schedule, the events and the receipt, in one transaction. */
async function recordCharge(
  deps: AppDeps,
  sub: SubscriptionsTable,
  payment: PaymentsTable,
  charge: ChargeResult,
  token: string,
  atMs: number,
): Promise<BillingTally> {
  const atIso = iso(atMs);
  const outcome = recordedOutcome(charge);
  const cycle = sub.cycle + 1;
  const attempt = sub.failed_attempts + 1;
  const tally = emptyTally();
  return deps.store.db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable("payments")
      .set({
        status: outcome.status,
        processor_payment_id: outcome.processorPaymentId,
        failure_code: outcome.status === "FAILED" ? outcome.code : null,
        failure_message: outcome.status === "FAILED" ? outcome.message : null,
        created_at: atIso,
        updated_at: atIso,
      })
      .where("id", "=", payment.id)
      .where("status", "=", "PROCESSING")
      .returningAll()
      .executeTakeFirst();
    // Another process recorded this charge first.
    if (!row) return tally;
    await emitEvent(trx, row.organization_id, "donation.created", row.id, presentPayment(row), atMs);

    // Only the subscription still ACTIVE at the cycle and attempt charged moves on; a cancel wins.
    const still = (eb: ExpressionBuilder<Database, "subscriptions">) =>
      eb.and([
        eb("id", "=", sub.id),
        eb("status", "=", "ACTIVE"),
        eb("cycle", "=", sub.cycle),
        eb("failed_attempts", "=", sub.failed_attempts),
      ]);
    const unclaimed = { claim_token: null, claimed_until: null, updated_at: atIso };

    if (outcome.status !== "FAILED") {
      tally.charged++;
      const next = await trx
        .updateTable("subscriptions")
        .where(still)
        .set({
          ...unclaimed,
          cycle,
          // A pending bank debit is not a successful charge yet: settlement records it when it clears.
          ...(row.status === "COMPLETED" && { last_billing_at: atIso }),
          next_billing_at: billingDate(sub.anchor_at, sub.frequency as RecurringFrequency, cycle + 1),
          failed_attempts: 0,
          retry_at: null,
        })
        .returningAll()
        .executeTakeFirst();
      if (next)
        await emitEvent(
          trx,
          next.organization_id,
          "subscription.updated",
          next.id,
          presentSubscription(next),
          atMs,
        );
      else {
        await releaseClaim(trx, sub.id, token);
        // Cancelled meanwhile: the schedule stays, but the charge succeeded and is the last successful one.
        const paid = row.status === "COMPLETED" && (await recordSuccessfulCharge(trx, sub.id, atIso, atIso));
        if (paid)
          await emitEvent(
            trx,
            paid.organization_id,
            "subscription.updated",
            paid.id,
            presentSubscription(paid),
            atMs,
          );
      }
      if (row.status === "COMPLETED")
        await queueReceipt(trx, row, next ?? (await findSubscription(trx, sub.id)) ?? null, atMs);
      return tally;
    }

    tally.failed++;
    const retry = retryAt(attempt, atIso);
    if (retry) {
      const waiting = await trx
        .updateTable("subscriptions")
        .where(still)
        .set({ ...unclaimed, failed_attempts: attempt, retry_at: retry })
        .returning("id")
        .executeTakeFirst();
      if (!waiting) await releaseClaim(trx, sub.id, token);
      return tally;
    }
    const cancelled = await trx
      .updateTable("subscriptions")
      .where(still)
      .set({
        ...unclaimed,
        status: "CANCELLED",
        cancelled_at: atIso,
        failed_attempts: attempt,
        retry_at: null,
      })
      .returningAll()
      .executeTakeFirst();
    if (cancelled) {
      tally.cancelled++;
      await emitEvent(
        trx,
        cancelled.organization_id,
        "subscription.cancelled",
        cancelled.id,
        presentSubscription(cancelled),
        atMs,
      );
    } else await releaseClaim(trx, sub.id, token);
    return tally;
  });
}

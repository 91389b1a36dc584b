import { roundUpTo } from "../../shared/currency.js";
import type { Frequency } from "../../shared/enums.js";
import { coverFeeCents, type FeeRate } from "../../shared/pricing/fees.js";
import { isoAt } from "../../shared/time.js";
import type { AppDeps } from "../deps.js";
import { prefixedId } from "../ids.js";
import { billingChargeKey, supersedingChargeKey } from "../payments/chargeKey.js";
import { AWAITING_AUTHENTICATION, requestConfirmation } from "../payments/confirmationRequest.js";
import { confirmableOnSession } from "../payments/interruptedCharge.js";
import { outcomeOfCharge } from "../payments/outcome.js";
import { type PaymentOutcome, settlePayment } from "../payments/transition.js";
import {
  type ChargeResult,
  type PaymentProcessor,
  ProcessorError,
  type ProcessorErrorCode,
} from "../processors/port.js";
import type { Db } from "../store/database.js";
import { findForm } from "../store/forms.js";
import { getOrganization } from "../store/organizations.js";
import {
  type ChargedMethod,
  type PaymentDetails,
  recordChargedMethod,
  recordProcessorPaymentId,
  swapProcessorPaymentId,
} from "../store/payments.js";
import type { PaymentsTable, SubscriptionsTable } from "../store/schema.js";
import { findSubscription } from "../store/subscriptions.js";
import { emitEvent } from "../webhooks/events.js";
import { presentSubscription } from "../wire/subscription.js";
import { parseInstant, type RecurringFrequency } from "./schedule.js";

/**
 * One recurring charge of a claimed subscription, in three steps so that no transaction waits on the
 * processor (the checkout's pattern):
 *  1. the charge is written as a PROCESSING payment whose `charge_key` (`sub:<id>:<cycle>:<attempt>`) is
 *     unique, so each attempt of each cycle has one payment row, ever;
 *  2. the processor charges the saved method off-session with that key as its idempotency key (a rerun
 *     after a crash first asks the processor how that charge stands, and never charges it twice);
 *  3. the outcome is recorded by the one transition every payment goes through (payments/transition.ts),
 *     which moves the subscription on only while it is still ACTIVE at the cycle and attempt that were
 *     charged, so a cancel that landed meanwhile wins.
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
    .set({ claim_token: null, claimed_until: null, claimed_by: null })
    .where("id", "=", id)
    .where("claim_token", "=", token)
    .execute();
}

/**
 * Bills (or ends) one subscription this process has claimed with `token`, as of `atMs` (whether a charge is
 * due, or the end date passed); the payment itself is dated by `deps.now()` when its outcome is recorded.
 * `wallMs` is the real time (the billing worker's wall clock), when the mail the charge causes is due if
 * the clock is later.
 */
export async function billSubscription(
  deps: AppDeps,
  claimed: SubscriptionsTable,
  token: string,
  atMs: number,
  wallMs: number,
): Promise<BillingTally> {
  const tally = emptyTally();
  if (hasEnded(claimed, atMs)) {
    if (await endSubscription(deps.store.db, claimed.id, token, atMs, wallMs)) tally.ended++;
    return tally;
  }
  if (!chargeIsDue(claimed, atMs)) {
    await releaseClaim(deps.store.db, claimed.id, token);
    return tally;
  }
  const org = await getOrganization(deps.store.db, claimed.organization_id);
  // The processor that holds the gift's method is asked for before the charge's row is written: a gift
  // whose processor the organization has disconnected (Stripe) stays due, untouched, until it is connected
  // again, instead of leaving a charge in flight at every pass (which would hold the donor's changes).
  // Its claim is kept until the lease ends: released, the gift (the oldest due) would be claimed first by
  // every pass, and enough of them would fill every pass, so that no other gift were ever billed.
  if (!org) throw new Error(`subscription ${claimed.id} belongs to no organization`);
  let processor: PaymentProcessor = deps.processors.named(claimed.processor, org);
  const prepared = await prepareCharge(deps, claimed);
  // Not due after all, cancelled or billed since the claim, or already recorded: nothing to do.
  if (prepared?.payment.status !== "PROCESSING") {
    await releaseClaim(deps.store.db, claimed.id, token);
    return tally;
  }
  const { sub, payment, fresh } = prepared;
  // The method changed processor since the claim was read (a new card saved meanwhile).
  if (sub.processor !== claimed.processor) processor = deps.processors.named(sub.processor, org);
  // A row left by an interrupted pass: the processor may have charged it already.
  const ref = { idempotencyKey: payment.charge_key, processorPaymentId: payment.processor_payment_id };
  const earlier = fresh ? null : await processor.findCharge(ref);
  // `replacing`: the processor's payment the row names that this process found never made.
  const chargeWith = (idempotencyKey: string, replacing: string | null) =>
    processor.charge(
      {
        amountCents: Number(payment.amount_cents),
        currency: payment.currency,
        paymentMethod: sub.payment_method_token,
        idempotencyKey,
        description: `Donation: ${payment.form_title}`,
        offSession: true,
        ...(sub.processor_customer ? { customer: sub.processor_customer } : {}),
        metadata: {
          almoner_payment: payment.id,
          almoner_subscription: sub.id,
          almoner_organization: sub.organization_id,
          cycle: String(sub.cycle + 1),
        },
      },
      {
        // Settled meanwhile (an orphaned charge's sweep took it for abandoned), or made by another process
        // meanwhile (the row names its payment): refused before it is confirmed, so no money moves for a
        // payment recorded as not charged, and none twice.
        created: async (id) => {
          if (!(await recordProcessorPaymentId(deps.store.db, payment.id, id, replacing)))
            throw new Error(
              `the charge of payment ${payment.id} was settled or taken over while it was being made`,
            );
        },
      },
    );
  // Made again, with the method the gift holds now: the payment says so (the donor replaced it meanwhile).
  const method = methodOf(sub);
  const methodBefore = methodOf(payment);
  const methodChanged = (Object.keys(method) as (keyof ChargedMethod)[]).some(
    (k) => methodBefore[k] !== method[k],
  );
  if (!earlier && !fresh && methodChanged && (await recordChargedMethod(deps.store.db, payment.id, method)))
    Object.assign(payment, method);
  const charge =
    earlier ??
    (await chargeWith(payment.charge_key, payment.processor_payment_id)
      .catch(async (err: unknown) => {
        // The key refused as used before with other details: an interrupted try of this attempt was made
        // with a method or customer replaced since (the donor saved a new card meanwhile).
        if (fresh || !(err instanceof ProcessorError) || err.code !== "idempotency_key_reused") throw err;
        const superseding = await supersede(deps.store.db, processor, payment.id, payment.charge_key);
        if ("made" in superseding) {
          // The earlier try went through after all: the payment names the method it was made with.
          const used = superseding.made.method;
          await recordChargedMethod(
            deps.store.db,
            payment.id,
            used?.last4
              ? { payment_method_type: used.type, card_brand: used.brand ?? null, last4: used.last4 }
              : methodBefore,
          );
          return superseding.made;
        }
        return chargeWith(
          supersedingChargeKey(
            payment.charge_key,
            sub.payment_method_token,
            sub.processor_customer,
            superseding.replaced,
          ),
          // Taken off the row by supersede: the new try's id goes where none is.
          null,
        );
      })
      .catch(async (err: unknown) => {
        const refused = await refusedCharge(deps.store.db, processor, payment, err);
        if (!refused) throw err;
        return refused;
      }));
  const outcome = recurringOutcome(charge);
  // The payment is dated when its outcome is recorded, after the processor answered, as a checkout's is:
  // it then lists above every page of payments handed out meanwhile. A retry counts from that moment too.
  const recordedMs = deps.now();
  const settled = await deps.store.transact(async (trx) => {
    const done = await settlePayment(
      trx,
      { nowMs: recordedMs, publicUrl: deps.config.publicUrl, wallMs },
      { id: payment.id },
      outcome,
    );
    if (done.changed && outcome.to === "PENDING" && outcome.awaiting === AWAITING_AUTHENTICATION)
      await requestConfirmation(trx, done.row, org, deps.config.publicUrl, recordedMs, wallMs);
    return done;
  });
  await releaseClaim(deps.store.db, sub.id, token);
  if (!settled.changed) return tally;
  if (settled.row.status === "FAILED") tally.failed++;
  else tally.charged++;
  if (settled.billing === "cancelled") tally.cancelled++;
  return tally;
}

/** The saved method a gift or one of its payments names, as a payment records it. */
const methodOf = (row: ChargedMethod): ChargedMethod => ({
  payment_method_type: row.payment_method_type,
  card_brand: row.card_brand,
  last4: row.last4,
});

/**
 * Clears the way for an attempt made again under a key of its own, after the processor refused its key as
 * used before with other details (an interrupted try made with a method replaced since). Nothing made was
 * found before this attempt began, but another process may still be at that try (its claim lapsed): found
 * made now, it is the answer (`made`). Else the earlier payment the row names, never confirmed by this
 * process, is taken off the row (so the processor's news of its cancellation settles nothing) and
 * cancelled; one that cannot be cancelled and is found made is put back and is the answer. `replaced` names
 * the payment replaced (null: none was stored), for the new try's key. Throws (the row left PROCESSING,
 * naming its payment as before) when the processor cannot be asked or the row changed meanwhile.
 */
async function supersede(
  db: Db,
  processor: PaymentProcessor,
  paymentId: string,
  chargeKey: string,
): Promise<{ made: ChargeResult } | { replaced: string | null }> {
  const current = await db
    .selectFrom("payments")
    .select(["status", "processor_payment_id"])
    .where("id", "=", paymentId)
    .executeTakeFirst();
  if (current?.status !== "PROCESSING") throw new Error(`payment ${paymentId} was settled meanwhile`);
  const replaced = current.processor_payment_id;
  const ref = { idempotencyKey: chargeKey, processorPaymentId: replaced };
  const made = await processor.findCharge(ref);
  if (made) return { made };
  if (!replaced) return { replaced };
  if (!(await swapProcessorPaymentId(db, paymentId, replaced, null)))
    throw new Error(`payment ${paymentId} changed while its charge was being made again`);
  // A processor without cancellation makes its charges at once: found not made, there is none to cancel.
  // Asked twice when the first answer is lost: a cancel made already answers false the second time.
  let cancelled: boolean | undefined;
  let failure: unknown;
  for (let ask = 0; ask < 2 && cancelled === undefined; ask++) {
    try {
      cancelled = (await processor.cancelPayment?.(replaced)) ?? true;
    } catch (err) {
      failure = err;
    }
  }
  try {
    if (cancelled === undefined) throw failure;
    if (!cancelled) {
      // Confirmed meanwhile (by the process that made it), or cancelled already.
      const found = await processor.findCharge(ref);
      if (found) {
        await swapProcessorPaymentId(db, paymentId, null, replaced);
        return { made: found };
      }
    }
  } catch (err) {
    // Not known to be cancelled: the payment names it again, for the next pass to ask about.
    await swapProcessorPaymentId(db, paymentId, null, replaced);
    throw err;
  }
  return { replaced };
}

/** The processor's answers that refuse the charge for good (it was not made): a failed charge. */
const REFUSALS = new Set(["invalid_request", "amount_too_small", "amount_too_large"] as const);
const isRefusal = (
  code: ProcessorErrorCode,
): code is "invalid_request" | "amount_too_small" | "amount_too_large" =>
  (REFUSALS as ReadonlySet<ProcessorErrorCode>).has(code);

/**
 * A charge the processor refused outright (`invalid_request`: the saved method detached, the customer
 * deleted, another account connected; `amount_too_small`, `amount_too_large`), as a failed charge, so that the gift goes through
 * the retries and the cancellation a decline leads to instead of being billed again every pass. Null (the
 * error stands, the row stays PROCESSING and the next pass asks again) for an outage, a key refused, or
 * whenever the processor cannot say how the charge stands. A payment the processor made before refusing
 * (its id recorded by the `created` hook) is cancelled first; one that cannot be cancelled is recorded as
 * the processor reports it (`findCharge`), and fails only when it was never confirmed.
 */
async function refusedCharge(
  db: Db,
  processor: PaymentProcessor,
  payment: PaymentsTable,
  err: unknown,
): Promise<ChargeResult | null> {
  if (!(err instanceof ProcessorError) || !isRefusal(err.code)) return null;
  const failureCode = err.code;
  const current = await db
    .selectFrom("payments")
    .select(["status", "processor_payment_id"])
    .where("id", "=", payment.id)
    .executeTakeFirst();
  if (current?.status !== "PROCESSING") return null;
  const id = current.processor_payment_id;
  if (id) {
    try {
      if (!processor.cancelPayment || !(await processor.cancelPayment(id))) {
        const found = await processor.findCharge({
          idempotencyKey: payment.charge_key,
          processorPaymentId: id,
        });
        // Made after all (it could not be cancelled): recorded as it stands. Not found as made (never
        // confirmed, or cancelled already): nothing was charged, as recovery reads it too.
        if (found) return found;
      }
    } catch {
      return null;
    }
  }
  return {
    status: "failed",
    processorPaymentId: id,
    method: null,
    failureCode,
    failureMessage: err.message,
  };
}

/**
 * An off-session charge's answer as its outcome. One the bank holds for the donor's authentication, which
 * the donor can still confirm on-session (Stripe gives its client secret), is PENDING while they are asked
 * to (confirmationRequest.ts); elsewhere nobody is there to confirm it, and it fails like a decline.
 */
function recurringOutcome(charge: ChargeResult): PaymentOutcome {
  if (confirmableOnSession(charge))
    return {
      to: "PENDING",
      processorPaymentId: charge.processorPaymentId,
      awaiting: AWAITING_AUTHENTICATION,
    };
  if (charge.status === "requires_action")
    return {
      to: "FAILED",
      processorPaymentId: charge.processorPaymentId,
      code: "authentication_required",
      message: "Your bank asked to confirm this recurring payment. Please update your payment method.",
    };
  return outcomeOfCharge(charge, null) as PaymentOutcome;
}

/**
 * Marks a subscription past its end date CANCELLED; false when it was no longer ACTIVE or no longer ours.
 * `wallMs`: the real time, when its webhook deliveries are due if `atMs` is later.
 */
async function endSubscription(
  db: Db,
  id: string,
  token: string,
  atMs: number,
  wallMs: number,
): Promise<boolean> {
  const atIso = isoAt(atMs);
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
        claimed_by: null,
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
      { nowMs: atMs, wallMs },
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
async function prepareCharge(deps: AppDeps, claimed: SubscriptionsTable): Promise<PreparedCharge | null> {
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
    // Which cycle is due was decided as of the pass's moment; the row is written, like a checkout's, now.
    const row = chargeRow(sub, form?.config.title ?? "", org.feeRate, deps.now());
    const inserted = await trx
      .insertInto("payments")
      .values(row)
      .onConflict((oc) => oc.column("charge_key").doNothing())
      .returning("id")
      .executeTakeFirst();
    if (inserted) return { sub, payment: row, fresh: true };
    // The row an interrupted pass left, worked on again now: dated now, so that the sweep of orphaned
    // charges (PROCESSING rows untouched for 5 minutes) does not take it for abandoned while it is made.
    const existing =
      (await trx
        .updateTable("payments")
        .set({ updated_at: row.updated_at })
        .where("charge_key", "=", row.charge_key)
        .where("status", "=", "PROCESSING")
        .returningAll()
        .executeTakeFirst()) ??
      (await trx
        .selectFrom("payments")
        .selectAll()
        .where("charge_key", "=", row.charge_key)
        .executeTakeFirstOrThrow());
    return { sub, payment: existing, fresh: false };
  });
}

/** The fee a renewal of `giftCents` adds when the donor covers it (0 otherwise), in the gift's currency. */
export function renewalFeeCents(
  sub: Pick<SubscriptionsTable, "cover_fees" | "currency">,
  giftCents: number,
  feeRate: FeeRate,
): number {
  return sub.cover_fees === 1 ? roundUpTo(coverFeeCents(giftCents, feeRate), sub.currency) : 0;
}

function chargeRow(
  sub: SubscriptionsTable,
  formTitle: string,
  feeRate: FeeRate,
  nowMs: number,
): PaymentsTable {
  const nowIso = isoAt(nowMs);
  const cycle = sub.cycle + 1;
  const giftCents = Number(sub.amount_cents);
  const feeCents = renewalFeeCents(sub, giftCents, feeRate);
  const kept = JSON.parse(sub.details) as Partial<
    Pick<PaymentDetails, "customInputs" | "utm" | "donor" | "tribute" | "language">
  >;
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
    ...(kept.tribute && { tribute: kept.tribute }),
    ...(kept.language && { language: kept.language }),
  };
  return {
    id: prefixedId("pay", nowMs),
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
    email_key: sub.email_key,
    first_name: sub.first_name,
    last_name: sub.last_name,
    payment_method_type: sub.payment_method_type,
    card_brand: sub.card_brand,
    last4: sub.last4,
    // Off-session declines must not count against the donor's card in the checkout's card-testing guard.
    fingerprint: null,
    processor_payment_id: null,
    charge_key: billingChargeKey(sub.id, cycle, sub.failed_attempts + 1),
    failure_code: null,
    failure_message: null,
    details: JSON.stringify(details),
    processor: sub.processor,
    dispute: null,
    created_at: nowIso,
    updated_at: nowIso,
  };
}

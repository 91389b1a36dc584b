import type { Frequency } from "../../shared/enums.js";
import { centsToDollars } from "../../shared/money.js";
import { wireTime } from "../../shared/time.js";
import type { AppDeps } from "../api/env.js";
import { billingDate } from "../billing/schedule.js";
import { prefixedId } from "../ids.js";
import {
  type ContactAddress,
  contactTotals,
  findContact,
  findContactIdByEmail,
  insertContact,
  presentContact,
} from "../store/contacts.js";
import type { Db } from "../store/database.js";
import { emitEvent } from "../store/events.js";
import { fixedQuery } from "../store/fixedQuery.js";
import type { FormRecord } from "../store/forms.js";
import { releaseItems } from "../store/inventory.js";
import type { Organization } from "../store/organizations.js";
import { insertPayment, type PaymentDetails, paymentDetails, presentPayment } from "../store/payments.js";
import type { ConsentValue, PaymentsTable, SubscriptionsTable } from "../store/schema.js";
import { insertSubscription, presentSubscription } from "../store/subscriptions.js";
import type { ChargeResult, FailureCode, PaymentMethod } from "./processor.js";
import { queueReceipt } from "./receipts.js";

/**
 * Step 3 of a checkout: records what the processor said, in one transaction. The PROCESSING row is
 * claimed by a conditional update first, so a checkout is recorded once even if two callers finish it.
 */

export type ChargeOutcome =
  | { kind: "free" }
  | { kind: "succeeded" | "pending"; processorPaymentId: string; savedMethod: PaymentMethod | null }
  | { kind: "failed"; processorPaymentId: string | null; code: FailureCode; message: string };

/** The processor's answer as the record it leads to. */
export function outcomeOf(charge: ChargeResult): ChargeOutcome {
  if (charge.status === "failed")
    return {
      kind: "failed",
      processorPaymentId: charge.processorPaymentId,
      code: charge.failureCode,
      message: charge.failureMessage,
    };
  if (charge.status === "requires_action")
    return {
      kind: "failed",
      processorPaymentId: charge.processorPaymentId,
      code: "authentication_required",
      message: "Your bank asks you to confirm this payment, which this page cannot do yet. Try another card.",
    };
  return {
    kind: charge.status === "succeeded" ? "succeeded" : "pending",
    processorPaymentId: charge.processorPaymentId,
    savedMethod: charge.savedMethod ?? (charge.method.reusable ? charge.method : null),
  };
}

/** What the donor is told: the receipt view (201) or the decline (402). */
export interface FinalizedCheckout {
  status: 201 | 402;
  body: Record<string, unknown>;
}

/** The donor's own view of their payment: what they bought, what they paid, how. */
export function donorReceipt(row: PaymentsTable, sub: SubscriptionsTable | null) {
  const d = paymentDetails(row);
  return {
    paymentID: row.id,
    status: row.status,
    currency: row.currency,
    frequency: row.frequency as Frequency,
    fund: row.fund,
    form: row.form_title,
    date: wireTime(row.created_at),
    lines: d.lines.map((l) => ({
      kind: l.kind,
      label: l.label,
      quantity: l.quantity,
      amount: centsToDollars(l.amountCents),
    })),
    subtotal: centsToDollars(d.subtotalCents),
    discount: centsToDollars(d.discountCents),
    promoCode: d.promoCode,
    fee: centsToDollars(Number(row.fee_cents)),
    total: centsToDollars(Number(row.amount_cents)),
    paymentMethod:
      row.payment_method_type === "none"
        ? null
        : { type: row.payment_method_type, brand: row.card_brand, last4: row.last4 },
    subscription: sub
      ? {
          id: sub.id,
          amount: centsToDollars(Number(sub.amount_cents)),
          frequency: sub.frequency,
          nextBillingDate: wireTime(sub.next_billing_at),
        }
      : null,
  };
}

function consentFrom(optIn: boolean | undefined): ConsentValue {
  return optIn === undefined ? "UNKNOWN" : optIn ? "OPTED_IN" : "OPTED_OUT";
}

/**
 * The donor's contact: the one matched by email (`existing`), else created; an opt-in upgrades the
 * consent of a known donor.
 */
async function contactForPayment(
  trx: Db,
  row: PaymentsTable,
  existing: string | null,
  details: PaymentDetails,
  nowMs: number,
): Promise<{ id: string; created: boolean; updated: boolean }> {
  const nowIso = new Date(nowMs).toISOString();
  if (existing) {
    if (details.emailOptIn !== true) return { id: existing, created: false, updated: false };
    const result = await trx
      .updateTable("contacts")
      .set({ email_consent: "OPTED_IN", communication_consent: "OPTED_IN", updated_at: nowIso })
      .where("id", "=", existing)
      .where("email_consent", "!=", "OPTED_IN")
      .executeTakeFirst();
    return { id: existing, created: false, updated: Number(result.numUpdatedRows) > 0 };
  }
  const a = details.donor.address;
  const addresses: ContactAddress[] = a
    ? [
        {
          line1: a.line1 ?? "",
          line2: a.line2 ?? "",
          city: a.city ?? "",
          region: a.region ?? "",
          postal: a.postal ?? "",
          country: a.country ?? "",
          isPrimary: true,
        },
      ]
    : [];
  const consent = consentFrom(details.emailOptIn);
  const made = await insertContact(
    trx,
    row.organization_id,
    {
      firstName: row.first_name,
      lastName: row.last_name,
      organizationName: details.donor.organizationName ?? null,
      emails: [{ value: row.email, isPrimary: true, isVerified: false }],
      phones: details.donor.phone ? [{ value: details.donor.phone, isPrimary: true }] : [],
      addresses,
      emailConsent: consent,
      smsConsent: "UNKNOWN",
      communicationConsent: consent,
    },
    nowIso,
  );
  return { ...made, updated: false };
}

async function emitContact(
  trx: Db,
  contactId: string,
  type: "contact.created" | "contact.updated",
  nowMs: number,
) {
  const contact = await findContact(trx, contactId);
  if (!contact) return;
  const totals = (await contactTotals(trx, [contactId])).get(contactId);
  if (!totals) return;
  await emitEvent(trx, contact.organization_id, type, contactId, presentContact(contact, totals), nowMs);
}

function newSubscription(row: PaymentsTable, method: PaymentMethod, nowIso: string): SubscriptionsTable {
  const frequency = row.frequency as Exclude<Frequency, "ONE_TIME">;
  const details = paymentDetails(row);
  return {
    id: prefixedId("sub"),
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
    first_name: row.first_name,
    last_name: row.last_name,
    payment_method_token: method.token,
    payment_method_type: method.type,
    card_brand: method.type === "card" ? (method.brand ?? null) : null,
    last4: method.last4,
    anchor_at: nowIso,
    cycle: 0,
    next_billing_at: billingDate(nowIso, frequency, 1),
    // The last successful charge: a pending bank debit is not one yet (settlement records it).
    last_billing_at: row.status === "COMPLETED" ? nowIso : null,
    end_billing_at: null,
    failed_attempts: 0,
    retry_at: null,
    claimed_until: null,
    claim_token: null,
    details: JSON.stringify({ customInputs: details.customInputs, utm: details.utm, donor: details.donor }),
    created_at: nowIso,
    updated_at: nowIso,
    cancelled_at: null,
  };
}

/** Records a checkout's outcome on its PROCESSING payment; no row when it was recorded already. */
const claimProcessing = fixedQuery(
  (
    db: Db,
    id: string,
    status: string,
    processorPaymentId: string | null,
    failureCode: string | null,
    failureMessage: string | null,
    contactId: string | null,
    nowIso: string,
  ) =>
    db
      .updateTable("payments")
      .set({
        status,
        processor_payment_id: processorPaymentId,
        failure_code: failureCode,
        failure_message: failureMessage,
        contact_id: contactId,
        created_at: nowIso,
        updated_at: nowIso,
      })
      .where("id", "=", id)
      .where("status", "=", "PROCESSING")
      .returningAll(),
);

export async function finalizeCheckout(
  deps: AppDeps,
  paymentId: string,
  outcome: ChargeOutcome,
  /** What the checkout has at hand already: the form, its organization and the donor's email. */
  loaded?: { form: FormRecord; org: Organization; email: string },
): Promise<FinalizedCheckout> {
  return deps.store.transact((trx) => recordOutcome(trx, deps, { id: paymentId }, outcome, loaded));
}

/**
 * Where an outcome is recorded: on the PROCESSING payment `id` (claimed first, so that it is recorded
 * once), or as a payment not written yet (`row`, inserted with the outcome: a checkout that charges inside
 * its own transaction).
 */
export type OutcomeTarget = { id: string } | { row: PaymentsTable };

/** `finalizeCheckout`'s work, in the caller's transaction. */
export async function recordOutcome(
  trx: Db,
  deps: AppDeps,
  target: OutcomeTarget,
  outcome: ChargeOutcome,
  loaded?: { form: FormRecord; org: Organization; email: string },
): Promise<FinalizedCheckout> {
  const nowMs = deps.now();
  const nowIso = new Date(nowMs).toISOString();
  const status = outcome.kind === "failed" ? "FAILED" : outcome.kind === "pending" ? "PENDING" : "COMPLETED";
  const processorPaymentId = outcome.kind === "free" ? null : outcome.processorPaymentId;
  const failureCode = outcome.kind === "failed" ? outcome.code : null;
  const failureMessage = outcome.kind === "failed" ? outcome.message : null;
  // A known donor's contact is linked by the same write that records the outcome.
  const known = loaded ? await findContactIdByEmail(trx, loaded.org.id, loaded.email) : null;
  let row: PaymentsTable;
  if ("row" in target) {
    row = {
      ...target.row,
      status,
      processor_payment_id: processorPaymentId,
      failure_code: failureCode,
      failure_message: failureMessage,
      contact_id: known,
      created_at: nowIso,
      updated_at: nowIso,
    };
    await insertPayment(trx, row);
  } else {
    const {
      rows: [claimed],
    } = await claimProcessing(
      trx,
      target.id,
      status,
      processorPaymentId,
      failureCode,
      failureMessage,
      known,
      nowIso,
    );
    if (!claimed) return alreadyFinalized(trx, target.id);
    row = claimed;
  }
  const details = paymentDetails(row);
  const existing =
    row.contact_id ?? (loaded ? null : await findContactIdByEmail(trx, row.organization_id, row.email));

  if (outcome.kind === "failed") {
    await releaseItems(trx, row.form_id, details.hold);
    if (existing && !row.contact_id) {
      await trx.updateTable("payments").set({ contact_id: existing }).where("id", "=", row.id).execute();
      row = { ...row, contact_id: existing };
    }
    await emitEvent(trx, row.organization_id, "donation.created", row.id, presentPayment(row), nowMs);
    return declined(row);
  }

  const contact = await contactForPayment(trx, row, existing, details, nowMs);
  const linked = row.contact_id === contact.id;
  row = { ...row, contact_id: contact.id };
  let sub: SubscriptionsTable | null = null;
  if (row.frequency !== "ONE_TIME" && outcome.kind !== "free" && outcome.savedMethod) {
    sub = newSubscription(row, outcome.savedMethod, nowIso);
    await insertSubscription(trx, sub);
    row = { ...row, subscription_id: sub.id };
  }
  if (!linked || sub)
    await trx
      .updateTable("payments")
      .set({ contact_id: row.contact_id, subscription_id: row.subscription_id })
      .where("id", "=", row.id)
      .execute();

  if (contact.created) await emitContact(trx, contact.id, "contact.created", nowMs);
  else if (contact.updated) await emitContact(trx, contact.id, "contact.updated", nowMs);
  if (sub)
    await emitEvent(
      trx,
      row.organization_id,
      "subscription.created",
      sub.id,
      presentSubscription(sub),
      nowMs,
    );
  await emitEvent(trx, row.organization_id, "donation.created", row.id, presentPayment(row), nowMs);
  if (row.status === "COMPLETED") await queueReceipt(trx, row, sub, nowMs, loaded);
  return { status: 201, body: { payment: donorReceipt(row, sub), message: thanks(row) } };
}

function thanks(row: PaymentsTable): string {
  if (row.status === "PENDING")
    return `Thank you, ${row.first_name}! Your bank payment is processing; we will email a receipt to ${row.email} when it clears.`;
  return `Thank you, ${row.first_name}! A receipt is on its way to ${row.email}.`;
}

function declined(row: PaymentsTable): FinalizedCheckout {
  return {
    status: 402,
    body: {
      error: row.failure_message ?? "The payment was declined",
      code: row.failure_code,
      paymentID: row.id,
    },
  };
}

async function alreadyFinalized(trx: Db, paymentId: string): Promise<FinalizedCheckout> {
  const row = await trx
    .selectFrom("payments")
    .selectAll()
    .where("id", "=", paymentId)
    .executeTakeFirstOrThrow();
  if (row.status === "FAILED") return declined(row);
  const sub = row.subscription_id
    ? ((await trx
        .selectFrom("subscriptions")
        .selectAll()
        .where("id", "=", row.subscription_id)
        .executeTakeFirst()) ?? null)
    : null;
  return { status: 201, body: { payment: donorReceipt(row, sub), message: thanks(row) } };
}

import { isoAt } from "../../shared/time.js";
import type { DisputeState, PaymentMethod } from "../processors/port.js";
import { contactIdByEmailKey, emailKey, findContactIdByEmail } from "../store/contacts.js";
import type { Db } from "../store/database.js";
import type { FormRecord } from "../store/forms.js";
import { releaseItems, retakeItems } from "../store/inventory.js";
import type { Organization } from "../store/organizations.js";
import { insertPayment, lockedPayment, paymentDetails, paymentWithGift } from "../store/payments.js";
import type { EmailOutboxTable, PaymentsTable, SubscriptionsTable } from "../store/schema.js";
import { restoreTicketsOfPayment } from "../store/tickets.js";
import { issueTickets, voidTickets } from "../tickets/issue.js";
import { type EventClock, emitEvent } from "../webhooks/events.js";
import { presentPayment } from "../wire/payment.js";
import { chargeOrigin } from "./chargeKey.js";
import { contactForPayment, emitContact } from "./donorContact.js";
import { queueTributeNotice, receiptOutboxRow } from "./receipts.js";
import {
  afterRecurringCharge,
  afterSettled,
  type BillingEffect,
  emitSubscription,
  insertNewSubscription,
} from "./subscriptionEffects.js";

/**
 * The one place a payment's outcome is recorded, whoever learned it: the checkout, recurring billing, the
 * settlement worker, a processor's webhook, recovery after a crash, the donor's page back from 3-D Secure.
 * Each call is one step in the caller's transaction and is idempotent: the status moves by a conditional
 * update (PROCESSING → COMPLETED | PENDING | FAILED, PENDING → COMPLETED | FAILED), so an outcome
 * recorded twice, or a stale one arriving late, changes nothing the second time.
 *
 * With the status move, in the same transaction: stock given back when a payment fails, the donor's
 * contact (a checkout's), the recurring gift (subscriptionEffects.ts), the webhook event
 * (`donation.created` when a payment is first recorded, `donation.updated` after), and the receipt when
 * a payment completes.
 */

export type PaymentOutcome =
  | {
      to: "COMPLETED" | "PENDING";
      processorPaymentId: string | null;
      /** The reusable method, when the charge saved it (a recurring gift's first payment). */
      savedMethod?: PaymentMethod | null;
      /** The processor's customer the saved method belongs to. */
      processorCustomer?: string | null;
      /** Pending payments: what they wait for (kept in `failure_code`, shown to nobody but the API). */
      awaiting?: string;
    }
  | { to: "FAILED"; processorPaymentId: string | null; code: string; message: string };

/** What a checkout has at hand already: the form, its organization and the donor's email. */
export interface LoadedCheckout {
  form: FormRecord;
  org: Organization;
  email: string;
}

export interface Settled {
  /** The payment as it stands now. */
  row: PaymentsTable;
  /** False when the payment had moved already (the outcome was recorded before, or is stale). */
  changed: boolean;
  /** The payment's recurring gift after the change. */
  sub: SubscriptionsTable | null;
  billing: BillingEffect;
}

export interface SettleAt extends EventClock {
  publicUrl: string;
  /**
   * The real time, when `nowMs` is a later moment (a billing pass run `--as-of` it): the mail and the
   * webhook deliveries the change causes are due at once all the same (mailDueMs, fanout.ts). Left out,
   * `nowMs` is the real time.
   */
  wallMs?: number;
}

const FROM: Record<PaymentOutcome["to"], readonly string[]> = {
  COMPLETED: ["PROCESSING", "PENDING"],
  PENDING: ["PROCESSING"],
  FAILED: ["PROCESSING", "PENDING"],
};

/**
 * Records `outcome` on the payment `id`, or inserts `row` with it (a checkout that needed no processor:
 * a free order). Reads before it writes: run it in a write transaction (`Store.transact`, which on SQLite
 * takes the write lock first), never in a deferred one.
 */
export async function settlePayment(
  trx: Db,
  /** When, and the instance's public URL (the receipt links to the donor portal). */
  at: SettleAt,
  /** The payment (and, when the caller knows it, the status it should be in now), or a new one to insert. */
  target: { id: string; expected?: PaymentsTable["status"] } | { row: PaymentsTable },
  outcome: PaymentOutcome,
  loaded?: LoadedCheckout,
): Promise<Settled> {
  const nowMs = at.nowMs;
  const nowIso = isoAt(nowMs);
  const failed = outcome.to === "FAILED";
  const fields = {
    status: outcome.to,
    failure_code: failed ? outcome.code : (outcome.awaiting ?? null),
    failure_message: failed ? outcome.message : null,
    updated_at: nowIso,
  };
  let before: string;
  let row: PaymentsTable;
  /** The contact the payment is linked to as stored by the write below. */
  let known: string | null;
  if ("row" in target) {
    before = "PROCESSING";
    known = loaded ? await findContactIdByEmail(trx, loaded.org.id, loaded.email) : null;
    row = {
      ...target.row,
      ...fields,
      processor_payment_id: outcome.processorPaymentId,
      contact_id: known,
      created_at: nowIso,
    };
    await insertPayment(trx, row);
  } else {
    const move = (from: string) =>
      trx
        .updateTable("payments")
        .set((eb) => ({
          ...fields,
          ...(outcome.processorPaymentId !== null && { processor_payment_id: outcome.processorPaymentId }),
          // A payment is listed from when it is first recorded: its `date` is that moment.
          ...(from === "PROCESSING" && { created_at: nowIso }),
          // A known donor's contact is linked by the same write that records the outcome.
          ...(from === "PROCESSING" &&
            loaded && {
              contact_id: eb.fn.coalesce(
                contactIdByEmailKey(trx, loaded.org.id, emailKey(loaded.email)),
                eb.ref("payments.contact_id"),
              ),
            }),
        }))
        .where("id", "=", target.id)
        .where("status", "=", from)
        .returningAll()
        .executeTakeFirst();
    // The status the caller expects is tried first: one statement instead of a read and a write.
    let moved =
      target.expected !== undefined && FROM[outcome.to].includes(target.expected)
        ? await move(target.expected)
        : undefined;
    if (moved) before = target.expected as string;
    else {
      const current = await trx
        .selectFrom("payments")
        .select("status")
        .where("id", "=", target.id)
        .executeTakeFirst();
      if (!current) throw new Error(`No payment ${target.id}`);
      before = current.status;
      moved = FROM[outcome.to].includes(before) ? await move(before) : undefined;
    }
    if (!moved) return unchanged(trx, target.id);
    row = moved;
    known = row.contact_id;
  }

  const origin = chargeOrigin(row.charge_key);
  const details = paymentDetails(row);
  let effect: { sub: SubscriptionsTable | null; billing: BillingEffect } = {
    sub: null,
    billing: "untouched",
  };

  if (failed) await releaseItems(trx, row.form_id, details.hold);

  if (before === "PROCESSING" && origin.kind === "checkout") {
    // The donor's contact: matched by e-mail (declines are linked to a known donor, never make one).
    const existing =
      row.contact_id ?? (loaded ? null : await findContactIdByEmail(trx, row.organization_id, row.email));
    const contact =
      outcome.to === "FAILED"
        ? existing
          ? { id: existing, event: null }
          : null
        : await contactForPayment(trx, row, existing, details, nowMs);
    if (contact && contact.id !== row.contact_id) row = { ...row, contact_id: contact.id };
    const saved = outcome.to === "FAILED" ? null : outcome.savedMethod;
    const sub =
      outcome.to !== "FAILED" && row.frequency !== "ONE_TIME" && saved
        ? await insertNewSubscription(
            trx,
            row,
            saved,
            outcome.processorCustomer ?? null,
            nowMs,
            loaded?.org.timeZone,
          )
        : null;
    if (sub) row = { ...row, subscription_id: sub.id };
    if (contact && (contact.id !== known || sub))
      await trx
        .updateTable("payments")
        .set({ contact_id: row.contact_id, subscription_id: row.subscription_id })
        .where("id", "=", row.id)
        .execute();
    // Events in this order: the donor, the gift, the payment.
    if (contact?.event) await emitContact(trx, contact.id, contact.event, at);
    if (sub) {
      await emitSubscription(trx, "subscription.created", sub, at);
      effect = { sub, billing: "untouched" };
    }
  } else if (before === "PROCESSING" && origin.kind === "billing") {
    effect = await afterRecurringCharge(trx, row, origin, at);
  } else if (
    before === "PENDING" &&
    row.status === "COMPLETED" &&
    origin.kind === "checkout" &&
    row.frequency !== "ONE_TIME" &&
    !row.subscription_id &&
    outcome.to === "COMPLETED" &&
    outcome.savedMethod
  ) {
    // A recurring gift's first payment that waited without a saved method (a bank account verified by
    // microdeposits: Stripe attaches it to the customer only once the donor verifies) starts its gift
    // now, from this moment, as it would have when first recorded. Once: only the move out of PENDING
    // gets here.
    const sub = await insertNewSubscription(
      trx,
      row,
      outcome.savedMethod,
      outcome.processorCustomer ?? null,
      nowMs,
      loaded?.org.timeZone,
    );
    row = { ...row, subscription_id: sub.id };
    await trx.updateTable("payments").set({ subscription_id: sub.id }).where("id", "=", row.id).execute();
    await emitSubscription(trx, "subscription.created", sub, at);
    effect = { sub, billing: "untouched" };
  } else if (before === "PENDING") {
    effect = await afterSettled(trx, row, origin, at);
  }

  const type = before === "PROCESSING" ? "donation.created" : "donation.updated";
  let receipt: EmailOutboxTable | null = null;
  if (row.status === "COMPLETED") {
    const sub = effect.sub ?? (await paymentWithGift(trx, row)).sub;
    effect = { ...effect, sub };
    // An event order's tickets exist once its payment completes, and are listed on its receipt.
    const tickets = origin.kind === "checkout" ? await issueTickets(trx, row, nowMs) : [];
    receipt = await receiptOutboxRow(trx, row, sub, at, loaded, tickets);
  }
  // The receipt is written with the payment's event (on PostgreSQL by the same statement).
  await emitEvent(trx, row.organization_id, type, row.id, presentPayment(row), at, receipt ?? undefined);
  // A dedicated gift's notice, once: when the checkout's payment completes.
  if (row.status === "COMPLETED" && origin.kind === "checkout" && details.tribute)
    await queueTributeNotice(trx, row, details.tribute, at, loaded);
  return { row, changed: true, ...effect };
}

async function unchanged(trx: Db, id: string): Promise<Settled> {
  const row = await trx.selectFrom("payments").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
  return { ...(await paymentWithGift(trx, row)), changed: false, billing: "untouched" };
}

/**
 * Records that `refundedTotalCents` of the payment have been refunded (however the refund was made: the
 * API, the command line, the processor's dashboard). Takes totals, not increments, so a refund heard of
 * twice is counted once; only the processor's own report (`exact`) may lower it (a refund that failed).
 * A payment refunded in full is REFUNDED, gives back the stock it held and voids its tickets.
 */
export async function recordRefund(
  trx: Db,
  nowMs: number,
  paymentId: string,
  refundedTotalCents: number,
  opts: { exact?: boolean } = {},
): Promise<{ row: PaymentsTable; changed: boolean }> {
  const nowIso = isoAt(nowMs);
  // Locked: two refunds recorded at once are counted one after the other, the second against the total the
  // first left, never lost to it.
  const current = await lockedPayment(trx, paymentId);
  if (!current) throw new Error(`No payment ${paymentId}`);
  const amount = Number(current.amount_cents);
  const before = Number(current.refunded_cents);
  const total = Math.max(0, Math.min(refundedTotalCents, amount));
  const refundable = current.status === "COMPLETED" || current.status === "REFUNDED";
  if (!refundable || total === before || (total < before && !opts.exact))
    return { row: current, changed: false };
  const full = total >= amount;
  const row = await trx
    .updateTable("payments")
    .set({ refunded_cents: total, status: full ? "REFUNDED" : "COMPLETED", updated_at: nowIso })
    .where("id", "=", paymentId)
    .where("refunded_cents", "=", before)
    .returningAll()
    .executeTakeFirst();
  if (!row) return { row: current, changed: false };
  if (full && current.status !== "REFUNDED") {
    // A partial refund leaves the tickets all valid: which ticket it paid back is not known (a refund is an
    // amount), so the organization decides at the door.
    await giveBackOrder(trx, row, nowMs);
  } else if (!full && current.status === "REFUNDED") {
    // The full refund failed after the fact (the processor's report lowers the total): the order stands
    // again, with its stock and its tickets.
    await retakeItems(trx, row.form_id, paymentDetails(row).hold);
    await restoreTicketsOfPayment(trx, row.id);
  }
  await emitEvent(trx, row.organization_id, "donation.updated", row.id, presentPayment(row), nowMs);
  return { row, changed: true };
}

/** What an order ended in full (refunded, or cancelled when free) gives back: its stock, and its tickets' validity. */
async function giveBackOrder(trx: Db, row: PaymentsTable, nowMs: number): Promise<void> {
  await releaseItems(trx, row.form_id, paymentDetails(row).hold);
  await voidTickets(trx, row.id, nowMs);
}

/**
 * Cancels a free order (nothing was charged, so there is no refund to make): it is REFUNDED, gives back the
 * places it held and voids its tickets, as a full refund would. Unchanged when it is not a completed free
 * order (cancelled already, or one that cost something).
 */
export async function cancelFreeOrder(
  trx: Db,
  nowMs: number,
  paymentId: string,
): Promise<{ row: PaymentsTable; changed: boolean }> {
  const current = await lockedPayment(trx, paymentId);
  if (!current) throw new Error(`No payment ${paymentId}`);
  if (current.status !== "COMPLETED" || Number(current.amount_cents) !== 0)
    return { row: current, changed: false };
  const row = await trx
    .updateTable("payments")
    .set({ status: "REFUNDED", updated_at: isoAt(nowMs) })
    .where("id", "=", paymentId)
    .where("status", "=", "COMPLETED")
    .returningAll()
    .executeTakeFirst();
  if (!row) return { row: current, changed: false };
  await giveBackOrder(trx, row, nowMs);
  await emitEvent(trx, row.organization_id, "donation.updated", row.id, presentPayment(row), nowMs);
  return { row, changed: true };
}

/** A dispute as a payment keeps it: the processor's report, and when it last changed. */
export interface PaymentDispute extends DisputeState {
  updatedAt: string;
}

/** Records the latest state of a dispute on its payment; a repeat of the same state changes nothing. */
export async function recordDispute(
  trx: Db,
  nowMs: number,
  paymentId: string,
  reported: DisputeState,
): Promise<{ row: PaymentsTable; changed: boolean }> {
  const dispute: PaymentDispute = { ...reported, updatedAt: isoAt(nowMs) };
  const current = await trx.selectFrom("payments").selectAll().where("id", "=", paymentId).executeTakeFirst();
  if (!current) throw new Error(`No payment ${paymentId}`);
  const before = current.dispute ? (JSON.parse(current.dispute) as PaymentDispute) : null;
  const next: PaymentDispute =
    before?.id === dispute.id ? { ...dispute, createdAt: before.createdAt } : dispute;
  if (
    before &&
    before.id === next.id &&
    before.status === next.status &&
    before.fundsWithdrawn === next.fundsWithdrawn &&
    before.amountCents === next.amountCents
  )
    return { row: current, changed: false };
  const row = await trx
    .updateTable("payments")
    .set({ dispute: JSON.stringify(next), updated_at: isoAt(nowMs) })
    .where("id", "=", paymentId)
    .returningAll()
    .executeTakeFirstOrThrow();
  // A dispute lost (final at Stripe) took the money back from the organization: the order's tickets are
  // void, as a full refund's are (idempotent: a refunded order's are void already). Its places stay taken,
  // so that a refund made after it cannot give them back twice.
  if (next.status === "lost" && before?.status !== "lost") await voidTickets(trx, row.id, nowMs);
  await emitEvent(trx, row.organization_id, "donation.updated", row.id, presentPayment(row), nowMs);
  return { row, changed: true };
}

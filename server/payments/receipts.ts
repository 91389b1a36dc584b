import type { Frequency } from "../../shared/enums.js";
import { DEFAULT_LANGUAGE } from "../../shared/languages.js";
import { isoAt } from "../../shared/time.js";
import { deductibleCents, fairMarketCents } from "../documents/givingDocuments.js";
import { mailDueMs, outboxRow, queueEmail } from "../mail/outbox.js";
import { renderReceipt } from "../mail/receipt.js";
import { renderTributeNotice } from "../mail/tribute.js";
import type { Db } from "../store/database.js";
import { type FormRecord, findForm } from "../store/forms.js";
import { getOrganization, type Organization } from "../store/organizations.js";
import { lockedPayment, paymentDetails, paymentWithGift, type Tribute } from "../store/payments.js";
import type { EmailOutboxTable, PaymentsTable, SubscriptionsTable, TicketsTable } from "../store/schema.js";
import { ticketsOfPayment } from "../store/tickets.js";
import { nextChargeAt } from "../wire/subscription.js";
import { portalUrl } from "./portalUrl.js";
import { receiptEmailSettings } from "./receiptSettings.js";

/**
 * The outbox row of the thank-you email of a completed payment (a checkout, a settled bank payment, or a
 * recurring charge), to be written in the same transaction that records it (with its event: emitEvent);
 * the mail worker sends it later (SMTP or .eml files). Null when the form or organization is gone.
 */
export async function receiptOutboxRow(
  trx: Db,
  row: PaymentsTable,
  sub: SubscriptionsTable | null,
  at: { nowMs: number; publicUrl: string; wallMs?: number },
  /** The payment's form and organization when the caller has them already (a checkout does). */
  loaded?: { form: FormRecord; org: Organization },
  /** The payment's tickets when the caller has just issued them; read otherwise (an event order's). */
  issued?: TicketsTable[],
): Promise<EmailOutboxTable | null> {
  const [form, org] = loaded
    ? [loaded.form, loaded.org]
    : await Promise.all([findForm(trx, row.form_id), getOrganization(trx, row.organization_id)]);
  if (!form || !org) return null;
  const c = form.config;
  const d = paymentDetails(row);
  const tickets =
    issued ?? (d.lines.some((l) => l.kind === "ticket") ? await ticketsOfPayment(trx, row.id) : []);
  const mail = renderReceipt({
    organizationName: org.name,
    formTitle: row.form_title,
    customEmail: receiptEmailSettings(c, org.receiptDefaults),
    branding: org.branding,
    donor: { firstName: row.first_name, lastName: row.last_name, email: row.email },
    paymentId: row.id,
    status: row.status === "PENDING" ? "PENDING" : "COMPLETED",
    amountCents: Number(row.amount_cents),
    feeCents: Number(row.fee_cents),
    frequency: row.frequency as Frequency,
    fund: row.fund,
    date: row.created_at,
    timeZone: org.timeZone,
    lines: d.lines.map((l) => ({
      label: l.label,
      quantity: l.quantity,
      amountCents: l.amountCents,
      kind: l.kind,
    })),
    discountCents: d.discountCents,
    promoCode: d.promoCode,
    // A free order ("none") was charged nothing: its receipt names no payment method.
    paymentMethod:
      row.payment_method_type === "none"
        ? null
        : {
            type: row.payment_method_type === "bank" ? "bank" : "card",
            brand: row.card_brand ?? undefined,
            last4: row.last4 ?? "",
          },
    nextBillingDate: upcomingCharge(sub, at.nowMs),
    recurringCharge: d.cycle !== undefined && d.cycle > 0,
    // The receipt's own language (English when the gift named none), not the organization's default.
    portalUrl: portalUrl(at.publicUrl, row.organization_id, { language: d.language ?? DEFAULT_LANGUAGE }),
    currency: row.currency,
    ...(d.tribute && { tribute: { kind: d.tribute.kind, honoreeName: d.tribute.honoreeName } }),
    ...(d.language && { language: d.language }),
    ...(org.legal.taxId && {
      tax: {
        taxId: org.legal.taxId,
        legalName: org.legal.name,
        fairMarketCents: fairMarketCents(row),
        deductibleCents: deductibleCents(row),
      },
    }),
    ...(c.enableTimeAndLocation && {
      event: {
        date: c.eventDate ?? null,
        startTime: c.startTime ?? null,
        endTime: c.endTime ?? null,
        timeZone: c.timeZone ?? null,
        location: c.location ?? null,
      },
    }),
    ...(tickets.length > 0 && {
      tickets: tickets
        .filter((t) => t.voided_at === null)
        .map((t) => ({ code: t.code, ticketType: t.ticket_type, admits: t.admits })),
    }),
  });
  return outboxRow(
    {
      organizationId: row.organization_id,
      paymentId: row.id,
      to: row.email,
      fromName: org.name,
      replyTo: mail.replyTo,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
    },
    // A charge recorded "as of" a later moment (`billing run --as-of`, whose injected clock is that moment)
    // still mails its receipt now: the real time (`wallMs`) caps when it is due.
    mailDueMs(at.nowMs, at.wallMs),
  );
}

/**
 * The gift's next charge as a receipt tells it: only one still to come. A gift catching up on periods it
 * missed (billing was down, or `billing run --as-of` a later date) is due again at once, and a date already
 * past would tell the donor nothing true; its receipt then names none.
 */
function upcomingCharge(sub: SubscriptionsTable | null, nowMs: number): string | null {
  const next = sub ? nextChargeAt(sub) : null;
  return next !== null && Date.parse(next) > nowMs ? next : null;
}

/**
 * Queues the notice of a dedicated gift to the address its donor gave for it, in the same transaction
 * that records the gift as completed; nothing when the gift has no dedication or no address for it.
 */
export async function queueTributeNotice(
  trx: Db,
  row: PaymentsTable,
  tribute: Tribute,
  at: { nowMs: number; wallMs?: number },
  loaded?: { org: Organization },
): Promise<void> {
  if (!tribute.notifyEmail) return;
  const org = loaded ? loaded.org : await getOrganization(trx, row.organization_id);
  if (!org) return;
  const notice = renderTributeNotice({
    organizationName: org.name,
    donorName: row.anonymous === 1 ? null : `${row.first_name} ${row.last_name}`.trim(),
    kind: tribute.kind,
    honoreeName: tribute.honoreeName,
    message: tribute.message,
    language: paymentDetails(row).language,
  });
  await queueEmail(
    trx,
    {
      organizationId: row.organization_id,
      paymentId: row.id,
      to: tribute.notifyEmail,
      fromName: org.name,
      subject: notice.subject,
      text: notice.text,
      html: notice.html,
    },
    mailDueMs(at.nowMs, at.wallMs),
  );
}

/** How soon a payment's receipt may be sent again: a second click, or a retried call, sends no second mail. */
export const RECEIPT_RESEND_INTERVAL_MS = 60_000;

export class ReceiptResendError extends Error {
  constructor(
    readonly kind: "not-receipted" | "too-soon" | "gone",
    message: string,
  ) {
    super(message);
  }
}

/**
 * Sends a payment's receipt again to the donor's address, made afresh from the payment (in the donor's
 * language, with the tickets still valid) and the organization's and form's receipt wording of today:
 * for a completed payment, or a bank payment still settling. A refunded or failed payment has no receipt to
 * send; one sent in the last minute is not sent again.
 */
export async function resendReceipt(
  db: Db,
  row: PaymentsTable,
  at: { nowMs: number; publicUrl: string },
): Promise<{ emailId: string }> {
  if (row.status !== "COMPLETED" && row.status !== "PENDING")
    throw new ReceiptResendError(
      "not-receipted",
      row.status === "REFUNDED"
        ? "This payment was refunded in full: it has no receipt to send"
        : "This payment did not go through: it has no receipt to send",
    );
  // PENDING is a bank debit on its way, or a charge waiting for the donor (what it waits for is its
  // `failure_code`: a card's authentication, a bank account's verification): money that may never come
  // has no receipt.
  if (row.status === "PENDING" && (row.payment_method_type !== "bank" || row.failure_code !== null))
    throw new ReceiptResendError(
      "not-receipted",
      "This payment is waiting for the donor's confirmation: it has no receipt yet",
    );
  const since = isoAt(at.nowMs - RECEIPT_RESEND_INTERVAL_MS);
  const refuseIfSentLately = async (q: Db) => {
    const recent = await q
      .selectFrom("email_outbox")
      .select("id")
      .where("payment_id", "=", row.id)
      .where("to_address", "=", row.email)
      .where("created_at", ">", since)
      .executeTakeFirst();
    if (recent) throw new ReceiptResendError("too-soon", "The receipt was sent less than a minute ago");
  };
  // A repeat within the minute is refused before the receipt is made; the check that counts is the one
  // below, in the insert's write transaction with the payment's row locked, so that requests at the same
  // moment (a double click) queue one mail.
  await refuseIfSentLately(db);
  const { sub } = await paymentWithGift(db, row);
  const mail = await receiptOutboxRow(db, row, sub, at);
  if (!mail)
    throw new ReceiptResendError("gone", "The payment's form no longer exists: its receipt cannot be made");
  await db.transaction().execute(async (trx: Db) => {
    await lockedPayment(trx, row.id);
    await refuseIfSentLately(trx);
    await trx.insertInto("email_outbox").values(mail).execute();
  });
  return { emailId: mail.id };
}

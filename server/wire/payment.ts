import type { Frequency } from "../../shared/enums.js";
import { centsToDollars } from "../../shared/money.js";
import { wireTime } from "../../shared/time.js";
import { type PaymentStatus, paymentDetails } from "../store/payments.js";
import type { PaymentsTable } from "../store/schema.js";

/**
 * The payment as the API and the `donation.*` webhook events show it: one record per charge, in dollars,
 * times to the second. PROCESSING rows (a charge in flight) are never shown, so the status here is never
 * PROCESSING.
 */
export function presentPayment(row: PaymentsTable) {
  const d = paymentDetails(row);
  const tickets = d.lines
    .filter((l) => l.kind === "ticket")
    .map((l) => ({ name: l.label, quantity: l.quantity, amount: centsToDollars(l.amountCents) }));
  return {
    paymentID: row.id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    amount: centsToDollars(Number(row.amount_cents)),
    currency: row.currency,
    status: row.status as Exclude<PaymentStatus, "PROCESSING">,
    fund: row.fund,
    form: row.form_title,
    formID: row.form_id,
    frequency: row.frequency as Frequency,
    date: wireTime(row.created_at),
    paymentMethod: row.payment_method_type,
    coverFees: row.cover_fees === 1,
    anonymous: row.anonymous === 1,
    contactId: row.contact_id,
    subscriptionId: row.subscription_id,
    feeAmount: centsToDollars(Number(row.fee_cents)),
    refundedAmount: centsToDollars(Number(row.refunded_cents)),
    card: row.card_brand ? { brand: row.card_brand, last4: row.last4 } : null,
    bankLast4: row.payment_method_type === "bank" ? row.last4 : null,
    tickets,
    promoCode: d.promoCode,
    discount: centsToDollars(d.discountCents),
    customInputs: d.customInputs,
    tribute: d.tribute ?? null,
    utm: d.utm,
    failureMessage: row.failure_message,
    dispute: presentDispute(row.dispute),
  };
}

/** The payment's dispute, stored as JSON in cents, shown in dollars; null when there is none. */
function presentDispute(stored: string | null) {
  if (!stored) return null;
  const d = JSON.parse(stored) as {
    status: string;
    reason: string;
    amountCents: number;
    fundsWithdrawn: boolean;
    createdAt: string;
    updatedAt: string;
  };
  return {
    status: d.status,
    reason: d.reason,
    amount: centsToDollars(d.amountCents),
    fundsWithdrawn: d.fundsWithdrawn,
    createdAt: wireTime(d.createdAt),
    updatedAt: wireTime(d.updatedAt),
  };
}

export type PaymentView = ReturnType<typeof presentPayment>;

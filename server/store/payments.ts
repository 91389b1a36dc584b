import type { Frequency } from "../../shared/enums.js";
import { centsToDollars } from "../../shared/money.js";
import type { QuoteLine } from "../../shared/pricing/quote.js";
import { wireTime } from "../../shared/time.js";
import type { Db } from "./database.js";
import { insertRow } from "./fixedQuery.js";
import type { HeldItem } from "./inventory.js";
import { afterPosition } from "./keyset.js";
import type { PaymentsTable, SubscriptionsTable } from "./schema.js";

/** Payments: one row per charge (a checkout, or one charge of a subscription). */

export type PaymentStatus = "PROCESSING" | "COMPLETED" | "PENDING" | "FAILED" | "REFUNDED";

export interface CustomAnswer {
  id: string;
  title: string;
  value: string | string[];
}

/** What a payment remembers beyond its columns (stored as JSON). */
export interface PaymentDetails {
  lines: QuoteLine[];
  subtotalCents: number;
  discountCents: number;
  promoCode: string | null;
  attendees: number;
  customInputs: CustomAnswer[];
  utm: Partial<Record<"source" | "medium" | "campaign" | "term" | "content", string>>;
  donor: {
    phone?: string;
    organizationName?: string;
    address?: Partial<Record<"line1" | "line2" | "city" | "region" | "postal" | "country", string>>;
  };
  /** Stock this payment holds (returned when the charge fails). */
  hold: HeldItem[];
  elementId?: string;
  /** Subscription charges: the billing cycle this charge pays. */
  cycle?: number;
  emailOptIn?: boolean;
  /** The donor's customer at the processor (Stripe `cus_…`), kept with a recurring gift's saved method. */
  processorCustomer?: string;
}

/** A payment's id: `pay_` and 26 lower-case letters and digits. */
export const PAYMENT_ID = /^pay_[0-9a-z]{26}$/;

export async function insertPayment(trx: Db, row: PaymentsTable): Promise<void> {
  await insertRow(trx, "payments", row);
}

export async function findPayment(db: Db, id: string): Promise<PaymentsTable | undefined> {
  return db.selectFrom("payments").selectAll().where("id", "=", id).executeTakeFirst();
}

/** The payment made at a processor by its id there (webhooks), if it is this organization's. */
export async function findPaymentByProcessorId(
  db: Db,
  organizationId: string,
  processorPaymentId: string,
): Promise<PaymentsTable | undefined> {
  return db
    .selectFrom("payments")
    .selectAll()
    .where("processor_payment_id", "=", processorPaymentId)
    .where("organization_id", "=", organizationId)
    .executeTakeFirst();
}

/** Stores the processor's id of a payment it has made and not yet confirmed (before money can move). */
export async function recordProcessorPaymentId(
  db: Db,
  id: string,
  processorPaymentId: string,
): Promise<void> {
  await db
    .updateTable("payments")
    .set({ processor_payment_id: processorPaymentId })
    .where("id", "=", id)
    .where("status", "=", "PROCESSING")
    .execute();
}

/** A payment with its recurring gift, if it has one. */
export async function paymentWithGift(
  db: Db,
  row: PaymentsTable,
): Promise<{ row: PaymentsTable; sub: SubscriptionsTable | null }> {
  const sub = row.subscription_id
    ? ((await db
        .selectFrom("subscriptions")
        .selectAll()
        .where("id", "=", row.subscription_id)
        .executeTakeFirst()) ?? null)
    : null;
  return { row, sub };
}

/**
 * The organization's payments, newest first (`created_at` is the time the outcome was recorded, so a
 * payment appears once it is settled and never moves behind a cursor already handed out). PROCESSING
 * rows (a charge in flight) are never listed.
 */
export async function listPayments(
  db: Db,
  organizationId: string,
  limit: number,
  after?: { sort: string; id: string },
): Promise<PaymentsTable[]> {
  let query = db
    .selectFrom("payments")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("status", "!=", "PROCESSING");
  if (after) query = query.where((eb) => afterPosition(eb, "created_at", after));
  return query.orderBy("created_at", "desc").orderBy("id", "desc").limit(limit).execute();
}

export function paymentDetails(row: Pick<PaymentsTable, "details">): PaymentDetails {
  return JSON.parse(row.details) as PaymentDetails;
}

/** The payment as the API returns it (seed 2.5, contract 7); PROCESSING rows are never shown. */
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
    utm: d.utm,
    failureMessage: row.failure_message,
    dispute: presentDispute(row.dispute),
  };
}

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

/** The deprecated donation shape (seed 2.5 legacy names, contract 7). */
export function presentDonation(row: PaymentsTable, merchantName: string) {
  return {
    donationID: row.id,
    donorEmail: row.email,
    donorFirstName: row.first_name,
    donorLastName: row.last_name,
    amount: centsToDollars(Number(row.amount_cents)),
    currency: row.currency,
    status: row.status as Exclude<PaymentStatus, "PROCESSING">,
    fundName: row.fund,
    formName: row.form_title,
    frequency: row.frequency as Frequency,
    donationDate: wireTime(row.created_at),
    paymentMethod: row.payment_method_type,
    coverFees: row.cover_fees === 1,
    anonymous: row.anonymous === 1,
    merchantName,
    tipAmount: 0,
    transactionID: row.processor_payment_id,
  };
}

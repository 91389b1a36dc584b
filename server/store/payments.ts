import { sql } from "kysely";
import type { TributeKind } from "../../shared/enums.js";
import type { Language } from "../../shared/languages.js";
import type { QuoteLine } from "../../shared/pricing/quote.js";
import type { Db } from "./database.js";
import { isPostgres } from "./dialect.js";
import { fixedQuery, insertRow } from "./fixedQuery.js";
import type { HeldItem } from "./inventory.js";
import { afterPosition } from "./keyset.js";
import { filterConditions, type PaymentFilters } from "./listFilters.js";
import type { PaymentsTable, SubscriptionsTable } from "./schema.js";
import { findSubscription } from "./subscriptions.js";

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
  /** The gift's dedication, on forms that take one. */
  tribute?: Tribute;
  /** The donor's language when not English (the page's): receipts are written in it. */
  language?: Language;
}

/** A gift's dedication, as the donor gave it. */
export interface Tribute {
  kind: TributeKind;
  honoreeName: string;
  notifyEmail?: string;
  message?: string;
}

/** A payment's id: `pay_` and 26 lower-case letters and digits. */
export const PAYMENT_ID = /^pay_[0-9a-z]{26}$/;

export async function insertPayment(trx: Db, row: PaymentsTable): Promise<void> {
  await insertRow(trx, "payments", row);
}

/** Declined payments of one card (its fingerprint) since a time: at `cap` or more, the card is refused. */
export interface DeclineCap {
  fingerprint: string;
  since: string;
  cap: number;
}

/** The columns of payments that are not text, with their type (an `insert … select` states it). */
const NUMBER_COLUMNS: Partial<Record<keyof PaymentsTable, "bigint" | "integer">> = {
  amount_cents: "bigint",
  fee_cents: "bigint",
  refunded_cents: "bigint",
  cover_fees: "integer",
  anonymous: "integer",
};

const PAYMENT_COLUMNS = [
  "id",
  "organization_id",
  "form_id",
  "contact_id",
  "subscription_id",
  "status",
  "amount_cents",
  "fee_cents",
  "refunded_cents",
  "currency",
  "fund",
  "form_title",
  "frequency",
  "cover_fees",
  "anonymous",
  "email",
  "email_key",
  "first_name",
  "last_name",
  "payment_method_type",
  "card_brand",
  "last4",
  "fingerprint",
  "processor_payment_id",
  "charge_key",
  "failure_code",
  "failure_message",
  "details",
  "processor",
  "dispute",
  "claimed_by",
  "created_at",
  "updated_at",
] as const satisfies readonly (keyof PaymentsTable)[];
/** Columns of payments missing from PAYMENT_COLUMNS: none (this does not compile once one is). */
type MissingPaymentColumn = Exclude<keyof PaymentsTable, (typeof PAYMENT_COLUMNS)[number]>;
const noMissingPaymentColumn: [MissingPaymentColumn] extends [never] ? true : MissingPaymentColumn = true;
void noMissingPaymentColumn;

const insertUnlessDeclined = fixedQuery(
  (db: Db, fingerprint: string, since: string, cap: number, ...values: unknown[]) =>
    db
      .insertInto("payments")
      .columns(PAYMENT_COLUMNS)
      .expression(
        db
          .selectNoFrom((eb) =>
            PAYMENT_COLUMNS.map((column, i) => {
              const type = NUMBER_COLUMNS[column];
              return (type ? eb.cast(eb.val(values[i]), type) : eb.val(values[i])).as(column);
            }),
          )
          .where(
            (eb) =>
              eb
                .selectFrom("payments")
                .select((count) => count.fn.countAll<number>().as("n"))
                .where("fingerprint", "=", fingerprint)
                .where("created_at", ">", since)
                // A literal, so that the partial index of declines (FAILED rows only) serves the count.
                .where("status", "=", sql.lit("FAILED")),
            "<",
            cap,
          ),
      ),
);

/**
 * Inserts the payment unless its card was declined `cap` times or more since `since` (card testing): the
 * count and the insert are one statement. False when the card is refused, and nothing was written. Without
 * a cap (none configured, or no card), a plain insert.
 */
export async function insertPaymentUnlessDeclined(
  trx: Db,
  row: PaymentsTable,
  cap: DeclineCap | null,
): Promise<boolean> {
  if (!cap) {
    await insertPayment(trx, row);
    return true;
  }
  const result = await insertUnlessDeclined(
    trx,
    cap.fingerprint,
    cap.since,
    cap.cap,
    ...PAYMENT_COLUMNS.map((column) => row[column] ?? null),
  );
  return Number(result.numAffectedRows ?? 0) > 0;
}

/**
 * When a card over its cap is taken again: the moment the cap-th newest of its declines since `cap.since`
 * was made (once it leaves the window, fewer than `cap` remain); null when fewer than `cap` are counted now.
 */
export async function capStartedAt(db: Db, cap: DeclineCap): Promise<string | null> {
  const row = await db
    .selectFrom("payments")
    .select("created_at")
    .where("fingerprint", "=", cap.fingerprint)
    .where("created_at", ">", cap.since)
    .where("status", "=", sql.lit("FAILED"))
    .orderBy("created_at", "desc")
    .offset(cap.cap - 1)
    .limit(1)
    .executeTakeFirst();
  return row?.created_at ?? null;
}

export async function findPayment(db: Db, id: string): Promise<PaymentsTable | undefined> {
  return db.selectFrom("payments").selectAll().where("id", "=", id).executeTakeFirst();
}

/**
 * The payment's row, read inside a write transaction and held until it ends (PostgreSQL's FOR UPDATE;
 * SQLite's write transactions run one at a time already): two requests deciding from it at the same moment
 * go one after the other, the second seeing what the first wrote.
 */
export async function lockedPayment(trx: Db, id: string): Promise<PaymentsTable | undefined> {
  const read = trx.selectFrom("payments").selectAll().where("id", "=", id);
  return (isPostgres(trx) ? read.forUpdate() : read).executeTakeFirst();
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

/**
 * Stores the processor's id of a payment it has made and not yet confirmed (before money can move), in
 * place of none, of itself, or of `replacing` (the one the caller read and found never made); false, and
 * nothing stored, when the payment is no longer PROCESSING (settled meanwhile) or names another of the
 * processor's payments by now (another process is making this charge).
 */
export async function recordProcessorPaymentId(
  db: Db,
  id: string,
  processorPaymentId: string,
  replacing: string | null = null,
): Promise<boolean> {
  const result = await db
    .updateTable("payments")
    .set({ processor_payment_id: processorPaymentId })
    .where("id", "=", id)
    .where("status", "=", "PROCESSING")
    .where((eb) =>
      eb.or([
        eb("processor_payment_id", "is", null),
        eb("processor_payment_id", "in", replacing ? [processorPaymentId, replacing] : [processorPaymentId]),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Replaces the processor's payment a PROCESSING payment names, `from` (null: none) by `to` (null: none);
 * false when the payment names another by now or was settled, and nothing changed.
 */
export async function swapProcessorPaymentId(
  db: Db,
  id: string,
  from: string | null,
  to: string | null,
): Promise<boolean> {
  const result = await db
    .updateTable("payments")
    .set({ processor_payment_id: to })
    .where("id", "=", id)
    .where("status", "=", "PROCESSING")
    .where("processor_payment_id", from === null ? "is" : "=", from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The saved method a payment records it was charged with. */
export type ChargedMethod = Pick<PaymentsTable, "payment_method_type" | "card_brand" | "last4">;

/**
 * Says on a payment still PROCESSING which saved method its charge is now made with (an attempt in doubt
 * made again after the donor replaced the method); false when it was settled meanwhile.
 */
export async function recordChargedMethod(db: Db, id: string, method: ChargedMethod): Promise<boolean> {
  const result = await db
    .updateTable("payments")
    .set(method)
    .where("id", "=", id)
    .where("status", "=", "PROCESSING")
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** A payment with its recurring gift, if it has one. */
export async function paymentWithGift(
  db: Db,
  row: PaymentsTable,
): Promise<{ row: PaymentsTable; sub: SubscriptionsTable | null }> {
  const sub = row.subscription_id ? ((await findSubscription(db, row.subscription_id)) ?? null) : null;
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
  filters: PaymentFilters,
  limit: number,
  after?: { sort: string; id: string },
): Promise<PaymentsTable[]> {
  return paymentsQuery(db, organizationId, filters, after).limit(limit).execute();
}

/**
 * The organization's listed payments that match `filters`, newest first, after a keyset position if one
 * is given: a page adds its limit; an export streams it whole.
 */
export function paymentsQuery(
  db: Db,
  organizationId: string,
  filters: PaymentFilters,
  after?: { sort: string; id: string },
) {
  const conditions = filterConditions(db);
  let query = db
    .selectFrom("payments")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("status", "!=", "PROCESSING")
    .where((eb) => conditions.payments(eb, filters));
  if (after) query = query.where((eb) => afterPosition(eb, "created_at", after));
  return query.orderBy("created_at", "desc").orderBy("id", "desc");
}

export function paymentDetails(row: Pick<PaymentsTable, "details">): PaymentDetails {
  return JSON.parse(row.details) as PaymentDetails;
}

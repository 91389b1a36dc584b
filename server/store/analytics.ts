import { sql } from "kysely";
import type { Db } from "./database.js";
import { isKeptSql, keptCentsSql } from "./keptSql.js";
import type { PaymentsTable } from "./schema.js";

/**
 * The sums behind the dashboard's summary: what an organization raised in a span of time, per UTC hour
 * (or minute), its active recurring gifts, and the payments that need someone's attention. Times are the
 * stored ISO 8601 UTC strings, compared as text, so a span is `[startIso, endIso)`.
 */

function keptPayments(db: Db, organizationId: string, currency: string, startIso: string, endIso: string) {
  return db
    .selectFrom("payments")
    .where("organization_id", "=", organizationId)
    .where("created_at", ">=", startIso)
    .where("created_at", "<", endIso)
    .where("currency", "=", currency)
    .where(isKeptSql(db));
}

export interface RaisedTotals {
  /** Net of refunds, in hundredths. */
  cents: number;
  gifts: number;
  donors: number;
}

/** What was raised in `[startIso, endIso)` in one currency: net sum, payments and distinct donors. */
export async function raisedBetween(
  db: Db,
  organizationId: string,
  currency: string,
  startIso: string,
  endIso: string,
): Promise<RaisedTotals> {
  const row = await keptPayments(db, organizationId, currency, startIso, endIso)
    .select((eb) => [
      eb.fn.countAll<number>().as("n"),
      eb.fn.sum<number>(keptCentsSql(db)).as("net"),
      // A donor is their contact, else (a payment not linked to one) their address in any case.
      sql<number>`count(distinct coalesce(contact_id, lower(email)))`.as("donors"),
    ])
    .executeTakeFirstOrThrow();
  return { cents: Number(row.net ?? 0), gifts: Number(row.n), donors: Number(row.donors) };
}

/**
 * What was raised in `[startIso, endIso)` per UTC hour (`YYYY-MM-DDTHH`, bucket 13) or minute
 * (`YYYY-MM-DDTHH:MM`, bucket 16): the caller adds buckets up into local days, which begin on a whole
 * hour in most zones and on a whole minute in all.
 */
export async function raisedByBucket(
  db: Db,
  organizationId: string,
  currency: string,
  startIso: string,
  endIso: string,
  bucket: 13 | 16,
): Promise<{ bucket: string; cents: number; gifts: number }[]> {
  const key = sql<string>`substr(created_at, 1, ${sql.lit(bucket)})`;
  const rows = await keptPayments(db, organizationId, currency, startIso, endIso)
    .select((eb) => [
      key.as("bucket"),
      eb.fn.countAll<number>().as("n"),
      eb.fn.sum<number>(keptCentsSql(db)).as("net"),
    ])
    .groupBy(key)
    .execute();
  return rows.map((r) => ({ bucket: r.bucket, cents: Number(r.net ?? 0), gifts: Number(r.n) }));
}

/** Active recurring gifts in one currency, per frequency: how many and their sum (before covered fees). */
export async function activeRecurringByFrequency(
  db: Db,
  organizationId: string,
  currency: string,
): Promise<{ frequency: string; count: number; cents: number }[]> {
  const rows = await db
    .selectFrom("subscriptions")
    .select((eb) => [
      "frequency",
      eb.fn.countAll<number>().as("n"),
      eb.fn.sum<number>("amount_cents").as("sum"),
    ])
    .where("organization_id", "=", organizationId)
    .where("status", "=", "ACTIVE")
    .where("currency", "=", currency)
    .groupBy("frequency")
    .execute();
  return rows.map((r) => ({ frequency: r.frequency, count: Number(r.n), cents: Number(r.sum ?? 0) }));
}

/**
 * Failed payments in `[startIso, endIso)` that the donor did not see fail on the page: charges of a
 * recurring gift, and bank debits (which fail days later). How many, and the most recent `limit`.
 */
export async function failedPayments(
  db: Db,
  organizationId: string,
  startIso: string,
  endIso: string,
  limit: number,
): Promise<{ count: number; recent: PaymentsTable[] }> {
  const base = db
    .selectFrom("payments")
    .where("organization_id", "=", organizationId)
    .where("created_at", ">=", startIso)
    .where("created_at", "<", endIso)
    .where("status", "=", "FAILED")
    .where((eb) => eb.or([eb("subscription_id", "is not", null), eb("payment_method_type", "=", "bank")]));
  const [total, recent] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow(),
    base.selectAll().orderBy("created_at", "desc").orderBy("id", "desc").limit(limit).execute(),
  ]);
  return { count: Number(total.n), recent };
}

/** The processor's statuses of a dispute still open (to answer, or being reviewed). */
export const OPEN_DISPUTE_STATUSES = [
  "needs_response",
  "warning_needs_response",
  "under_review",
  "warning_under_review",
] as const;

/**
 * Payments whose latest dispute is open, whenever they were made: how many, and the `limit` most recently
 * changed. The dispute is kept as JSON (`JSON.stringify` of PaymentDispute, whose only `status` key is the
 * dispute's), so its status is matched in the text.
 */
export async function openDisputes(
  db: Db,
  organizationId: string,
  limit: number,
): Promise<{ count: number; recent: PaymentsTable[] }> {
  const base = db
    .selectFrom("payments")
    .where("organization_id", "=", organizationId)
    .where("dispute", "is not", null)
    .where((eb) => eb.or(OPEN_DISPUTE_STATUSES.map((s) => eb("dispute", "like", `%"status":"${s}"%`))));
  const [total, recent] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow(),
    base.selectAll().orderBy("updated_at", "desc").orderBy("id", "desc").limit(limit).execute(),
  ]);
  return { count: Number(total.n), recent };
}

/**
 * What each of `formIds` raised, ever (net of refunds; gifts as raisedBetween counts them): in `currency`
 * (the organization's), and apart, in any other a gift was made in before the currency changed.
 */
export interface FormTotals {
  /** Net of refunds, in the organization's currency. */
  cents: number;
  /** Gifts in every currency. */
  gifts: number;
  /** Gifts in other currencies (made before the organization changed its currency), by currency. */
  other: Map<string, { cents: number; gifts: number }>;
}

export async function raisedByForm(
  db: Db,
  organizationId: string,
  currency: string,
  formIds: readonly string[],
): Promise<Map<string, FormTotals>> {
  const out = new Map<string, FormTotals>();
  if (formIds.length === 0) return out;
  const rows = await db
    .selectFrom("payments")
    .where("organization_id", "=", organizationId)
    .where("form_id", "in", formIds)
    .where(isKeptSql(db))
    .select((eb) => [
      "form_id",
      "currency",
      eb.fn.countAll<number>().as("n"),
      eb.fn.sum<number>(keptCentsSql(db)).as("net"),
    ])
    .groupBy(["form_id", "currency"])
    .orderBy("form_id")
    .orderBy("currency")
    .execute();
  for (const row of rows) {
    let totals = out.get(row.form_id);
    if (!totals) {
      totals = { cents: 0, gifts: 0, other: new Map() };
      out.set(row.form_id, totals);
    }
    const cents = Number(row.net ?? 0);
    const gifts = Number(row.n);
    totals.gifts += gifts;
    if (row.currency === currency) totals.cents = cents;
    else totals.other.set(row.currency, { cents, gifts });
  }
  return out;
}

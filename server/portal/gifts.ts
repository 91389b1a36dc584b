import type { ExpressionBuilder } from "kysely";
import { localYear, startOfLocalDay } from "../../shared/localDays.js";
import { isoAt } from "../../shared/time.js";
import type { Db } from "../store/database.js";
import { keptCentsSql } from "../store/keptSql.js";
import { PAYMENT_ID } from "../store/payments.js";
import type { Database, PaymentsTable, SubscriptionsTable } from "../store/schema.js";

/**
 * A signed-in donor's own gifts: the organization's payments and recurring gifts given with the donor's
 * e-mail address (in any case). Anything else, another donor's included, is not found.
 */

/** At most this many of each are listed, newest first. */
export const MAX_LISTED = 500;
const SUBSCRIPTION_ID = /^sub_[0-9a-z]{26}$/;

/**
 * This donor's rows at this organization: given with their address, in any case, compared by the key the
 * application made of it when the row was written (never SQL's lower(), whose rules follow PostgreSQL's
 * locale). The (organization_id, email_key) index serves it.
 */
export const byDonor =
  (organizationId: string, emailKey: string) =>
  (eb: ExpressionBuilder<Database, "payments" | "subscriptions">) =>
    eb.and([eb("organization_id", "=", organizationId), eb("email_key", "=", emailKey)]);

export async function donorPayments(
  db: Db,
  organizationId: string,
  emailKey: string,
): Promise<PaymentsTable[]> {
  return db
    .selectFrom("payments")
    .selectAll()
    .where(byDonor(organizationId, emailKey))
    .where("status", "!=", "PROCESSING")
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(MAX_LISTED)
    .execute();
}

export async function donorSubscriptions(
  db: Db,
  organizationId: string,
  emailKey: string,
): Promise<SubscriptionsTable[]> {
  return db
    .selectFrom("subscriptions")
    .selectAll()
    .where(byDonor(organizationId, emailKey))
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(MAX_LISTED)
    .execute();
}

/** The donor's payment `id`, or undefined (unknown, or not theirs). */
export async function donorPayment(
  db: Db,
  organizationId: string,
  emailKey: string,
  id: string,
): Promise<PaymentsTable | undefined> {
  if (!PAYMENT_ID.test(id)) return undefined;
  return db
    .selectFrom("payments")
    .selectAll()
    .where("id", "=", id)
    .where(byDonor(organizationId, emailKey))
    .where("status", "!=", "PROCESSING")
    .executeTakeFirst();
}

/** The donor's subscription `id`, or undefined (unknown, or not theirs). */
export async function donorSubscription(
  db: Db,
  organizationId: string,
  emailKey: string,
  id: string,
): Promise<SubscriptionsTable | undefined> {
  if (!SUBSCRIPTION_ID.test(id)) return undefined;
  return db
    .selectFrom("subscriptions")
    .selectAll()
    .where("id", "=", id)
    .where(byDonor(organizationId, emailKey))
    .executeTakeFirst();
}

/**
 * The payments a year-end statement lists (`statementPdf`): completed or refunded ones that kept some money
 * (`keptCents` > 0). One refunded, or taken back by a dispute, in full is in none.
 */
const onStatement = (db: Db) => (eb: ExpressionBuilder<Database, "payments">) =>
  eb.and([eb("status", "in", ["COMPLETED", "REFUNDED"]), eb(keptCentsSql(db), ">", 0)]);

/** The first instant of January 1 of `year` in a zone, written as `created_at` is (ISO 8601 UTC). */
const startOfYear = (year: number, timeZone: string): string =>
  isoAt(startOfLocalDay(`${String(year).padStart(4, "0")}-01-01`, timeZone));

/**
 * The payments the donor's statement of the calendar year `year` of the organization's time zone lists
 * (completed or partly refunded), oldest first: a gift at 23:30 on December 31 in New York belongs to that
 * year there.
 */
export async function donorPaymentsOfYear(
  db: Db,
  organizationId: string,
  emailKey: string,
  year: number,
  timeZone: string,
): Promise<PaymentsTable[]> {
  return db
    .selectFrom("payments")
    .selectAll()
    .where(byDonor(organizationId, emailKey))
    .where(onStatement(db))
    .where("created_at", ">=", startOfYear(year, timeZone))
    .where("created_at", "<", startOfYear(year + 1, timeZone))
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/**
 * The years, in the organization's time zone, whose statement lists at least one of the donor's gifts
 * (those of `donorPaymentsOfYear`; a declined attempt or a fully refunded payment makes none), newest first.
 */
export async function donorStatementYears(
  db: Db,
  organizationId: string,
  emailKey: string,
  timeZone: string,
): Promise<number[]> {
  const rows = await db
    .selectFrom("payments")
    .select("created_at")
    .where(byDonor(organizationId, emailKey))
    .where(onStatement(db))
    .execute();
  const years = new Set(rows.map((r) => localYear(Date.parse(r.created_at), timeZone)));
  return [...years].sort((a, b) => b - a);
}

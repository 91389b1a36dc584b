import type { ExpressionBuilder } from "kysely";
import type { Db } from "../store/database.js";
import { foldFor } from "../store/listFilters.js";
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
 * This donor's rows at this organization: given with their address, in any case. An ASCII address is
 * compared with lower(), which the (organization_id, lower(email)) index serves; any other with the
 * store's Unicode fold, since SQLite's lower() knows only ASCII ("Ünal@…" would never find "ünal@…").
 */
export const byDonor =
  (db: Db, organizationId: string, emailKey: string) =>
  (eb: ExpressionBuilder<Database, "payments" | "subscriptions">) => {
    const email = eb.ref("email");
    const folded = /^[ -~]*$/.test(emailKey) ? eb.fn<string>("lower", [email]) : foldFor(db)(email);
    return eb.and([eb("organization_id", "=", organizationId), eb(folded, "=", emailKey)]);
  };

export async function donorPayments(
  db: Db,
  organizationId: string,
  emailKey: string,
): Promise<PaymentsTable[]> {
  return db
    .selectFrom("payments")
    .selectAll()
    .where(byDonor(db, organizationId, emailKey))
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
    .where(byDonor(db, organizationId, emailKey))
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
    .where(byDonor(db, organizationId, emailKey))
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
    .where(byDonor(db, organizationId, emailKey))
    .executeTakeFirst();
}

/** The donor's completed (or refunded) payments created in the UTC calendar year `year`, oldest first. */
export async function donorPaymentsOfYear(
  db: Db,
  organizationId: string,
  emailKey: string,
  year: number,
): Promise<PaymentsTable[]> {
  return db
    .selectFrom("payments")
    .selectAll()
    .where(byDonor(db, organizationId, emailKey))
    .where("status", "in", ["COMPLETED", "REFUNDED"])
    .where("created_at", ">=", `${year}-01-01T00:00:00`)
    .where("created_at", "<", `${year + 1}-01-01T00:00:00`)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

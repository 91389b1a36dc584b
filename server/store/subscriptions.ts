import type { Db } from "./database.js";
import { afterPosition } from "./keyset.js";
import { filterConditions, type SubscriptionFilters } from "./listFilters.js";
import type { PaymentMethodUpdateLinksTable, SubscriptionsTable } from "./schema.js";

/** Recurring gifts: the schedule, the reusable payment method and the claim a billing pass holds. */

export async function insertSubscription(trx: Db, row: SubscriptionsTable): Promise<void> {
  await trx.insertInto("subscriptions").values(row).execute();
}

export async function findSubscription(db: Db, id: string): Promise<SubscriptionsTable | undefined> {
  return db.selectFrom("subscriptions").selectAll().where("id", "=", id).executeTakeFirst();
}

/** The organization's subscriptions that match `filters`, newest first. */
export async function listSubscriptions(
  db: Db,
  organizationId: string,
  filters: SubscriptionFilters,
  limit: number,
  after?: { sort: string; id: string },
): Promise<SubscriptionsTable[]> {
  return subscriptionsQuery(db, organizationId, filters, after).limit(limit).execute();
}

/** The same as a query, after a keyset position if one is given: a page adds its limit; an export streams it. */
export function subscriptionsQuery(
  db: Db,
  organizationId: string,
  filters: SubscriptionFilters,
  after?: { sort: string; id: string },
) {
  const conditions = filterConditions(db);
  let query = db
    .selectFrom("subscriptions")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where((eb) => conditions.subscriptions(eb, filters));
  if (after) query = query.where((eb) => afterPosition(eb, "created_at", after));
  return query.orderBy("created_at", "desc").orderBy("id", "desc");
}

/**
 * Records a successful charge made at `chargedAtIso` (the API's `lastBillingDate` is the last successful
 * charge): a card charge when it is recorded, a bank debit once it settles. An older charge settling after
 * a newer one leaves the date alone. Whatever the status: a charge that succeeded did so. Undefined when
 * nothing changed.
 */
export async function recordSuccessfulCharge(
  trx: Db,
  id: string,
  chargedAtIso: string,
  nowIso: string,
): Promise<SubscriptionsTable | undefined> {
  return trx
    .updateTable("subscriptions")
    .set({ last_billing_at: chargedAtIso, updated_at: nowIso })
    .where("id", "=", id)
    .where((eb) => eb.or([eb("last_billing_at", "is", null), eb("last_billing_at", "<", chargedAtIso)]))
    .returningAll()
    .executeTakeFirst();
}

/**
 * Cancels an ACTIVE subscription whose first payment (a bank debit) bounced, when it has no other charge
 * that succeeded or may still succeed: the donor's gift never started, as with a card declined at checkout,
 * which makes no subscription. Any other payment of it that is not FAILED (COMPLETED, REFUNDED, or still
 * PENDING or PROCESSING) keeps it, whatever order concurrent settlements commit in. Undefined when nothing
 * changed.
 */
export async function cancelNeverPaidSubscription(
  trx: Db,
  id: string,
  bouncedPaymentId: string,
  nowIso: string,
): Promise<SubscriptionsTable | undefined> {
  return trx
    .updateTable("subscriptions")
    .set({ status: "CANCELLED", cancelled_at: nowIso, updated_at: nowIso, retry_at: null })
    .where("id", "=", id)
    .where("status", "=", "ACTIVE")
    .where(({ exists, not, selectFrom }) =>
      not(
        exists(
          selectFrom("payments")
            .select("payments.id")
            .whereRef("payments.subscription_id", "=", "subscriptions.id")
            .where("payments.id", "<>", bouncedPaymentId)
            .where("payments.status", "<>", "FAILED"),
        ),
      ),
    )
    .returningAll()
    .executeTakeFirst();
}

/** Replaces the payment method of an ACTIVE subscription (the next charge uses it). */
export async function setSubscriptionPaymentMethod(
  trx: Db,
  id: string,
  method: { token: string; type: string; brand: string | null; last4: string },
  nowIso: string,
): Promise<SubscriptionsTable | undefined> {
  return trx
    .updateTable("subscriptions")
    .set({
      payment_method_token: method.token,
      payment_method_type: method.type,
      card_brand: method.brand,
      last4: method.last4,
      updated_at: nowIso,
    })
    .where("id", "=", id)
    .where("status", "=", "ACTIVE")
    .returningAll()
    .executeTakeFirst();
}

/**
 * Gives a subscription the donor's new customer at its processor, in place of `gone` (a customer the
 * processor no longer has); one that names another customer by now is left as it is.
 */
export async function replaceProcessorCustomer(
  db: Db,
  id: string,
  gone: string,
  customer: string,
  nowIso: string,
): Promise<void> {
  await db
    .updateTable("subscriptions")
    .set({ processor_customer: customer, updated_at: nowIso })
    .where("id", "=", id)
    .where("processor_customer", "=", gone)
    .execute();
}

export async function insertUpdateLink(db: Db, row: PaymentMethodUpdateLinksTable): Promise<void> {
  await db.insertInto("payment_method_update_links").values(row).execute();
}

export async function findUpdateLinkByHash(
  db: Db,
  tokenHash: string,
): Promise<PaymentMethodUpdateLinksTable | undefined> {
  return db
    .selectFrom("payment_method_update_links")
    .selectAll()
    .where("token_hash", "=", tokenHash)
    .executeTakeFirst();
}

/** Uses the link up: true for the one caller that did so while it was unused and unexpired. */
export async function consumeUpdateLink(trx: Db, id: string, nowIso: string): Promise<boolean> {
  const result = await trx
    .updateTable("payment_method_update_links")
    .set({ used_at: nowIso })
    .where("id", "=", id)
    .where("used_at", "is", null)
    .where("expires_at", ">", nowIso)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Takes one of a link's attempts before the processor is asked about a payment method entered on its page:
 * the count of attempts taken so far, this one included, or null when `max` are taken already (or the link
 * is used). A refused method keeps its attempt; anything else gives it back (giveBackUpdateLinkAttempt). So
 * submissions sent at once cannot ask the processor more often than the link allows, and the link cannot
 * be used to test cards.
 */
export async function takeUpdateLinkAttempt(db: Db, id: string, max: number): Promise<number | null> {
  const row = await db
    .updateTable("payment_method_update_links")
    .set((eb) => ({ failed_attempts: eb("failed_attempts", "+", 1) }))
    .where("id", "=", id)
    .where("failed_attempts", "<", max)
    .where("used_at", "is", null)
    .returning("failed_attempts")
    .executeTakeFirst();
  return row ? Number(row.failed_attempts) : null;
}

/** Gives back an attempt taken for a method that was not refused (saved, sent to the bank, or not asked). */
export async function giveBackUpdateLinkAttempt(db: Db, id: string): Promise<void> {
  await db
    .updateTable("payment_method_update_links")
    .set((eb) => ({ failed_attempts: eb("failed_attempts", "-", 1) }))
    .where("id", "=", id)
    .where("failed_attempts", ">", 0)
    .execute();
}

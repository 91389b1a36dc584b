import type { Frequency } from "../../shared/enums.js";
import { centsToDollars } from "../../shared/money.js";
import type { Db } from "./database.js";
import type { SubscriptionsTable } from "./schema.js";

/** Recurring gifts: the schedule, the reusable payment method and the claim a billing pass holds. */

export async function insertSubscription(trx: Db, row: SubscriptionsTable): Promise<void> {
  await trx.insertInto("subscriptions").values(row).execute();
}

export async function findSubscription(db: Db, id: string): Promise<SubscriptionsTable | undefined> {
  return db.selectFrom("subscriptions").selectAll().where("id", "=", id).executeTakeFirst();
}

/** The subscription as the API returns it (seed 2.6, contract 7). */
export function presentSubscription(row: SubscriptionsTable) {
  return {
    id: row.id,
    status: row.status as "ACTIVE" | "CANCELLED",
    amount: centsToDollars(Number(row.amount_cents)),
    currency: row.currency,
    frequency: row.frequency as Exclude<Frequency, "ONE_TIME">,
    nextBillingDate: row.status === "ACTIVE" ? row.next_billing_at : null,
    lastBillingDate: row.last_billing_at,
    endBillingDate: row.end_billing_at,
    coveredFee: row.cover_fees === 1,
    formID: row.form_id,
    contactId: row.contact_id,
    email: row.email,
    fund: row.fund,
    paymentMethod: {
      type: row.payment_method_type,
      brand: row.card_brand,
      last4: row.last4,
    },
    createdAt: row.created_at,
    cancelledAt: row.cancelled_at,
  };
}

export type SubscriptionView = ReturnType<typeof presentSubscription>;

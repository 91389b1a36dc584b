import type { Frequency } from "../../shared/enums.js";
import { centsToDollars } from "../../shared/money.js";
import { wireTime } from "../../shared/time.js";
import type { SubscriptionsTable } from "../store/schema.js";

/**
 * When the subscription's next charge is due, as stored (ISO 8601 with milliseconds): the retry's time while
 * a failed charge waits for one, else the next billing date; null once it is cancelled. Everything that
 * shows a next billing date (the API, webhook events, the portal, receipts, exports) shows this.
 */
export function nextChargeAt(row: SubscriptionsTable): string | null {
  if (row.status !== "ACTIVE") return null;
  return row.retry_at ?? row.next_billing_at;
}

/**
 * The subscription as the API, the hosted update-link page and the `subscription.*` webhook events show
 * it. A cancelled subscription has no next billing date.
 */
export function presentSubscription(row: SubscriptionsTable) {
  return {
    id: row.id,
    status: row.status as "ACTIVE" | "CANCELLED",
    amount: centsToDollars(Number(row.amount_cents)),
    currency: row.currency,
    frequency: row.frequency as Exclude<Frequency, "ONE_TIME">,
    nextBillingDate: wireTime(nextChargeAt(row)),
    lastBillingDate: wireTime(row.last_billing_at),
    endBillingDate: wireTime(row.end_billing_at),
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
    createdAt: wireTime(row.created_at),
    cancelledAt: wireTime(row.cancelled_at),
  };
}

export type SubscriptionView = ReturnType<typeof presentSubscription>;

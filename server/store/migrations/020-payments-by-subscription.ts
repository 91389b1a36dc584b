import type { AnyTrx, Migration } from "./shared.js";

/**
 * Payments indexed by their recurring gift, in the lists' order: the payments list filtered by
 * `subscriptionId` (a recurring gift's charges, on its page in the dashboard) reads only that gift's
 * payments instead of walking every payment of the organization.
 */
export const paymentsBySubscription: Migration = {
  version: 20,
  name: "payments of one recurring gift, newest first, read from an index",
  async up(trx: AnyTrx) {
    await trx.schema
      .createIndex("payments_subscription_created")
      .on("payments")
      .columns(["subscription_id", "created_at", "id"])
      .execute();
  },
};

import type { AnyTrx, Migration } from "./shared.js";

/** Links that let a donor replace a subscription's payment method; subscriptions listed by status. */
export const paymentMethodUpdateLinks: Migration = {
  version: 4,
  name: "payment-method update links; subscriptions listed by status",
  async up(trx: AnyTrx) {
    // A hosted link lets a donor replace a subscription's payment method. Only the token's hash is kept.
    await trx.schema
      .createTable("payment_method_update_links")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
      .addColumn("subscription_id", "text", (c) => c.notNull().references("subscriptions.id"))
      .addColumn("token_hash", "text", (c) => c.notNull().unique())
      .addColumn("allowed_methods", "text", (c) => c.notNull())
      .addColumn("return_url", "text")
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addColumn("used_at", "text")
      .addColumn("failed_attempts", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await trx.schema
      .createIndex("subscriptions_org_status_created")
      .on("subscriptions")
      .columns(["organization_id", "status", "created_at", "id"])
      .execute();
  },
};

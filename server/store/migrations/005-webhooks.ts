import type { AnyTrx, Migration } from "./shared.js";

/** Webhooks, their delivery queue and their delivery log. */
export const webhooks: Migration = {
  version: 5,
  name: "webhooks, their delivery queue and delivery log",
  async up(trx: AnyTrx) {
    await trx.schema
      .createTable("webhooks")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("events", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("secret", "text", (c) => c.notNull())
      .addColumn("success_count", "bigint", (c) => c.notNull())
      .addColumn("failure_count", "bigint", (c) => c.notNull())
      .addColumn("last_delivery_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("deleted_at", "text")
      .execute();
    await trx.schema
      .createIndex("webhooks_org_status")
      .on("webhooks")
      .columns(["organization_id", "status"])
      .execute();

    await trx.schema
      .createTable("webhook_deliveries")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("organization_id", "text", (c) => c.notNull())
      .addColumn("webhook_id", "text", (c) => c.notNull().references("webhooks.id"))
      .addColumn("event_id", "text", (c) => c.notNull().references("outbox_events.id"))
      .addColumn("event_type", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("next_attempt_at", "text", (c) => c.notNull())
      .addColumn("claimed_until", "text")
      .addColumn("claim_token", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await trx.schema
      .createIndex("webhook_deliveries_due")
      .on("webhook_deliveries")
      .columns(["status", "next_attempt_at", "id"])
      .execute();
    await trx.schema
      .createIndex("webhook_deliveries_webhook")
      .on("webhook_deliveries")
      .columns(["webhook_id", "status"])
      .execute();

    await trx.schema
      .createTable("webhook_logs")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("organization_id", "text", (c) => c.notNull())
      .addColumn("webhook_id", "text", (c) => c.notNull())
      .addColumn("delivery_id", "text", (c) => c.notNull())
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("event_type", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("http_status", "integer")
      .addColumn("response_time_ms", "integer")
      .addColumn("attempt", "integer", (c) => c.notNull())
      .addColumn("error", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await trx.schema
      .createIndex("webhook_logs_org_created")
      .on("webhook_logs")
      .columns(["organization_id", "created_at", "id"])
      .execute();
    await trx.schema
      .createIndex("webhook_logs_webhook_created")
      .on("webhook_logs")
      .columns(["webhook_id", "created_at", "id"])
      .execute();
    await trx.schema.createIndex("webhook_logs_delivery").on("webhook_logs").column("delivery_id").execute();
  },
};

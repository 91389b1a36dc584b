import { sql } from "kysely";
import type { AnyTrx, Migration } from "./shared.js";

/**
 * The first schema: organizations, their API keys and forms, rate-limit buckets, idempotency keys and API
 * metrics.
 */
export const initialSchema: Migration = {
  version: 1,
  name: "organizations, keys, forms, rate limits, idempotency, api metrics",
  async up(trx: AnyTrx) {
    await trx.schema
      .createTable("organizations")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("base_urls", "text", (c) => c.notNull())
      .addColumn("global_custom_inputs", "text", (c) => c.notNull())
      .addColumn("sandbox", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();

    await trx.schema
      .createTable("api_keys")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
      .addColumn("key_hash", "text", (c) => c.notNull().unique())
      .addColumn("key_prefix", "text", (c) => c.notNull())
      .addColumn("permissions", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("revoked_at", "text")
      .execute();
    await trx.schema
      .createIndex("api_keys_org")
      .on("api_keys")
      .columns(["organization_id", "created_at"])
      .execute();

    await trx.schema
      .createTable("forms")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
      .addColumn("title", "text", (c) => c.notNull())
      .addColumn("title_key", "text", (c) => c.notNull())
      .addColumn("form_type", "text", (c) => c.notNull())
      .addColumn("active", "integer", (c) => c.notNull())
      .addColumn("config", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("deleted_at", "text")
      .execute();
    await trx.schema
      .createIndex("forms_org_created")
      .on("forms")
      .columns(["organization_id", "created_at", "id"])
      .execute();
    await trx.schema
      .createIndex("forms_live_title")
      .on("forms")
      .columns(["organization_id", "title_key"])
      .unique()
      .where(sql.ref("deleted_at"), "is", null)
      .execute();

    await trx.schema
      .createTable("rate_limit_buckets")
      .addColumn("key_id", "text", (c) => c.notNull())
      .addColumn("bucket", "integer", (c) => c.notNull())
      .addColumn("count", "integer", (c) => c.notNull())
      .addPrimaryKeyConstraint("rate_limit_buckets_pk", ["key_id", "bucket"])
      .execute();

    await trx.schema
      .createTable("idempotency_keys")
      .addColumn("organization_id", "text", (c) => c.notNull())
      .addColumn("idem_key", "text", (c) => c.notNull())
      .addColumn("request_hash", "text", (c) => c.notNull())
      .addColumn("status_code", "integer")
      .addColumn("response_body", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("idempotency_keys_pk", ["organization_id", "idem_key"])
      .execute();
    await trx.schema
      .createIndex("idempotency_keys_created")
      .on("idempotency_keys")
      .column("created_at")
      .execute();

    await trx.schema
      .createTable("api_metrics")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("organization_id", "text", (c) => c.notNull())
      .addColumn("key_id", "text", (c) => c.notNull())
      .addColumn("endpoint", "text", (c) => c.notNull())
      .addColumn("method", "text", (c) => c.notNull())
      .addColumn("status_code", "integer", (c) => c.notNull())
      .addColumn("response_time_us", "bigint", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await trx.schema
      .createIndex("api_metrics_org_created")
      .on("api_metrics")
      .columns(["organization_id", "created_at", "id"])
      .execute();
  },
};

import { type CreateTableBuilder, type Kysely, sql, type Transaction } from "kysely";
import { DEFAULT_COUNTRY, phoneMatchKey, toE164 } from "../../shared/phone.js";
import { StartupError } from "../errors.js";
import { installChangeNotifications, installSqliteChangeCounter } from "./changes.js";
import { isPostgres, storedByPrimaryKey } from "./dialect.js";
import type { Database } from "./schema.js";

/**
 * The schema's history, portable across SQLite and PostgreSQL. Pending migrations run together in one
 * transaction, behind a row lock that serialises several processes starting at once.
 */

interface Migration {
  version: number;
  name: string;
  up(trx: Transaction<Database>): Promise<void>;
}

// biome-ignore lint/suspicious/noExplicitAny: migrations build tables that the Database type does not yet describe.
type AnyTrx = Transaction<any>;

export const MIGRATIONS: Migration[] = [
  {
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
  },
  {
    version: 2,
    name: "checkout links",
    async up(trx: AnyTrx) {
      await trx.schema
        .createTable("checkout_links")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
        .addColumn("form_id", "text", (c) => c.notNull().references("forms.id"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("destination_type", "text", (c) => c.notNull())
        .addColumn("overlay_path", "text", (c) => c.notNull())
        .addColumn("prefill", "text", (c) => c.notNull())
        .addColumn("active", "integer", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await trx.schema
        .createIndex("checkout_links_form_created")
        .on("checkout_links")
        .columns(["form_id", "created_at", "id"])
        .execute();
    },
  },
  {
    version: 3,
    name: "checkout engine: contacts, payments, subscriptions, inventory, outboxes, processor ledger",
    async up(trx: AnyTrx) {
      await trx.schema
        .alterTable("organizations")
        .addColumn("fee_percent_bps", "integer", (c) => c.notNull().defaultTo(290))
        .execute();
      await trx.schema
        .alterTable("organizations")
        .addColumn("fee_fixed_cents", "integer", (c) => c.notNull().defaultTo(30))
        .execute();

      await trx.schema
        .createTable("contacts")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
        .addColumn("first_name", "text", (c) => c.notNull())
        .addColumn("last_name", "text", (c) => c.notNull())
        .addColumn("organization_name", "text")
        .addColumn("emails", "text", (c) => c.notNull())
        .addColumn("phones", "text", (c) => c.notNull())
        .addColumn("addresses", "text", (c) => c.notNull())
        .addColumn("email_consent", "text", (c) => c.notNull())
        .addColumn("sms_consent", "text", (c) => c.notNull())
        .addColumn("communication_consent", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("merged_into", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await trx.schema
        .createIndex("contacts_org_created")
        .on("contacts")
        .columns(["organization_id", "created_at", "id"])
        .execute();
      // One row per email (lower-cased) or phone (digits) of a live contact: the unique key makes
      // "match by email, else create" safe when two checkouts of the same donor race.
      await trx.schema
        .createTable("contact_keys")
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("value_key", "text", (c) => c.notNull())
        .addColumn("contact_id", "text", (c) => c.notNull().references("contacts.id"))
        .addPrimaryKeyConstraint("contact_keys_pk", ["organization_id", "kind", "value_key"])
        .execute();
      await trx.schema.createIndex("contact_keys_contact").on("contact_keys").column("contact_id").execute();

      await trx.schema
        .createTable("subscriptions")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
        .addColumn("form_id", "text", (c) => c.notNull().references("forms.id"))
        .addColumn("contact_id", "text", (c) => c.notNull().references("contacts.id"))
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("amount_cents", "bigint", (c) => c.notNull())
        .addColumn("cover_fees", "integer", (c) => c.notNull())
        .addColumn("currency", "text", (c) => c.notNull())
        .addColumn("frequency", "text", (c) => c.notNull())
        .addColumn("fund", "text", (c) => c.notNull())
        .addColumn("anonymous", "integer", (c) => c.notNull())
        .addColumn("email", "text", (c) => c.notNull())
        .addColumn("first_name", "text", (c) => c.notNull())
        .addColumn("last_name", "text", (c) => c.notNull())
        .addColumn("payment_method_token", "text", (c) => c.notNull())
        .addColumn("payment_method_type", "text", (c) => c.notNull())
        .addColumn("card_brand", "text")
        .addColumn("last4", "text")
        .addColumn("anchor_at", "text", (c) => c.notNull())
        .addColumn("cycle", "integer", (c) => c.notNull())
        .addColumn("next_billing_at", "text", (c) => c.notNull())
        .addColumn("last_billing_at", "text")
        .addColumn("end_billing_at", "text")
        .addColumn("failed_attempts", "integer", (c) => c.notNull())
        .addColumn("retry_at", "text")
        .addColumn("claimed_until", "text")
        .addColumn("claim_token", "text")
        .addColumn("details", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("cancelled_at", "text")
        .execute();
      await trx.schema
        .createIndex("subscriptions_org_created")
        .on("subscriptions")
        .columns(["organization_id", "created_at", "id"])
        .execute();
      await trx.schema
        .createIndex("subscriptions_due")
        .on("subscriptions")
        .columns(["status", "next_billing_at"])
        .execute();
      await trx.schema
        .createIndex("subscriptions_contact")
        .on("subscriptions")
        .column("contact_id")
        .execute();

      await trx.schema
        .createTable("payments")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
        .addColumn("form_id", "text", (c) => c.notNull().references("forms.id"))
        .addColumn("contact_id", "text", (c) => c.references("contacts.id"))
        .addColumn("subscription_id", "text", (c) => c.references("subscriptions.id"))
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("amount_cents", "bigint", (c) => c.notNull())
        .addColumn("fee_cents", "bigint", (c) => c.notNull())
        .addColumn("refunded_cents", "bigint", (c) => c.notNull())
        .addColumn("currency", "text", (c) => c.notNull())
        .addColumn("fund", "text", (c) => c.notNull())
        .addColumn("form_title", "text", (c) => c.notNull())
        .addColumn("frequency", "text", (c) => c.notNull())
        .addColumn("cover_fees", "integer", (c) => c.notNull())
        .addColumn("anonymous", "integer", (c) => c.notNull())
        .addColumn("email", "text", (c) => c.notNull())
        .addColumn("first_name", "text", (c) => c.notNull())
        .addColumn("last_name", "text", (c) => c.notNull())
        .addColumn("payment_method_type", "text", (c) => c.notNull())
        .addColumn("card_brand", "text")
        .addColumn("last4", "text")
        .addColumn("fingerprint", "text")
        .addColumn("processor_payment_id", "text")
        .addColumn("charge_key", "text", (c) => c.notNull().unique())
        .addColumn("failure_code", "text")
        .addColumn("failure_message", "text")
        .addColumn("details", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await trx.schema
        .createIndex("payments_org_created")
        .on("payments")
        .columns(["organization_id", "created_at", "id"])
        .execute();
      await trx.schema.createIndex("payments_contact").on("payments").column("contact_id").execute();
      await trx.schema
        .createIndex("payments_form_status")
        .on("payments")
        .columns(["form_id", "status"])
        .execute();
      await trx.schema
        .createIndex("payments_status")
        .on("payments")
        .columns(["status", "updated_at"])
        .execute();
      await trx.schema
        .createIndex("payments_fingerprint")
        .on("payments")
        .columns(["fingerprint", "created_at"])
        .execute();

      await trx.schema
        .createTable("inventory")
        .addColumn("form_id", "text", (c) => c.notNull().references("forms.id"))
        .addColumn("item_kind", "text", (c) => c.notNull())
        .addColumn("item_key", "text", (c) => c.notNull())
        .addColumn("sold", "integer", (c) => c.notNull())
        .addPrimaryKeyConstraint("inventory_pk", ["form_id", "item_kind", "item_key"])
        .execute();

      await trx.schema
        .createTable("outbox_events")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("subject_id", "text", (c) => c.notNull())
        .addColumn("data", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await trx.schema
        .createIndex("outbox_events_org_created")
        .on("outbox_events")
        .columns(["organization_id", "created_at", "id"])
        .execute();

      await trx.schema
        .createTable("email_outbox")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("payment_id", "text")
        .addColumn("to_address", "text", (c) => c.notNull())
        .addColumn("from_name", "text", (c) => c.notNull())
        .addColumn("reply_to", "text")
        .addColumn("subject", "text", (c) => c.notNull())
        .addColumn("text_body", "text", (c) => c.notNull())
        .addColumn("html_body", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull())
        .addColumn("next_attempt_at", "text", (c) => c.notNull())
        .addColumn("claimed_until", "text")
        .addColumn("claim_token", "text")
        .addColumn("last_error", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("sent_at", "text")
        .execute();
      await trx.schema
        .createIndex("email_outbox_due")
        .on("email_outbox")
        .columns(["status", "next_attempt_at"])
        .execute();

      await trx.schema
        .createTable("processor_ledger")
        .addColumn("key", "text", (c) => c.primaryKey())
        .addColumn("value", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .execute();

      await trx.schema
        .createTable("instance_settings")
        .addColumn("key", "text", (c) => c.primaryKey())
        .addColumn("value", "text", (c) => c.notNull())
        .execute();
    },
  },
  {
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
  },
  {
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
      await trx.schema
        .createIndex("webhook_logs_delivery")
        .on("webhook_logs")
        .column("delivery_id")
        .execute();
    },
  },
  {
    version: 6,
    name: "declined-payment count per card fingerprint reads only declined payments",
    async up(trx: AnyTrx) {
      // The card-testing guard counts a fingerprint's FAILED payments of the last day; with status in the
      // index it no longer walks every completed payment of a card that gives often.
      await trx.schema.dropIndex("payments_fingerprint").execute();
      await trx.schema
        .createIndex("payments_fingerprint_status")
        .on("payments")
        .columns(["fingerprint", "status", "created_at"])
        .execute();
    },
  },
  {
    version: 7,
    name: "api metrics keyed by organization and time only",
    async up(trx: AnyTrx) {
      // Every API request writes a metric: keyed by the list's own order, a row updates one index instead
      // of two (the id alone was never looked up).
      await rebuildApiMetrics(trx, "api_metrics_by_org", (table) => table);
    },
  },
  {
    version: 8,
    name: "PostgreSQL notifies changes to the tables processes cache",
    async up(trx: AnyTrx) {
      // SQLite: see migration 10.
      if (isPostgres(trx)) await installChangeNotifications(trx);
    },
  },
  {
    version: 9,
    name: "api metrics stored in key order on SQLite",
    async up(trx: AnyTrx) {
      // Every API request writes a metric row: stored in its primary key's b-tree only (WITHOUT ROWID), a
      // row is written once instead of twice (a quarter less time per row on the bench machine).
      if (isPostgres(trx)) return;
      await rebuildApiMetrics(trx, "api_metrics_by_key", (table) => storedByPrimaryKey(trx, table));
    },
  },
  {
    version: 10,
    name: "SQLite counts changes to the tables processes cache",
    async up(trx: AnyTrx) {
      // Until now any commit by another connection emptied the caches (PRAGMA data_version); a counter
      // moved by the cached tables' triggers tells those changes from all others (changes.ts).
      if (!isPostgres(trx)) await installSqliteChangeCounter(trx);
    },
  },
  {
    version: 11,
    name: "payment processors per organization: Stripe connections, customers, incoming events, disputes",
    async up(trx: AnyTrx) {
      // An organization's processor ("stripe"; null: the instance default), its public settings (JSON)
      // and its secrets (sealed with the instance's SECRETS_KEY, never stored in the clear).
      await trx.schema.alterTable("organizations").addColumn("processor", "text").execute();
      await trx.schema.alterTable("organizations").addColumn("processor_settings", "text").execute();
      await trx.schema.alterTable("organizations").addColumn("processor_secrets", "text").execute();
      // Which processor made a payment or holds a subscription's method: refunds, settlement and
      // billing go back to it even after the organization connects another.
      await trx.schema
        .alterTable("payments")
        .addColumn("processor", "text", (c) => c.notNull().defaultTo("sandbox"))
        .execute();
      await trx.schema.alterTable("payments").addColumn("dispute", "text").execute();
      await trx.schema
        .createIndex("payments_processor_payment")
        .on("payments")
        .column("processor_payment_id")
        .execute();
      await trx.schema
        .alterTable("subscriptions")
        .addColumn("processor", "text", (c) => c.notNull().defaultTo("sandbox"))
        .execute();
      await trx.schema.alterTable("subscriptions").addColumn("processor_customer", "text").execute();
      // A link can also ask the donor to confirm a recurring charge their bank held for authentication.
      await trx.schema.alterTable("payment_method_update_links").addColumn("payment_id", "text").execute();
      // The processor's customer of each donor (by e-mail, as contacts are matched) per processor account.
      await trx.schema
        .createTable("processor_customers")
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("account", "text", (c) => c.notNull())
        .addColumn("email_key", "text", (c) => c.notNull())
        .addColumn("customer_id", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("processor_customers_pk", ["organization_id", "account", "email_key"])
        .execute();
      // Events a processor sent (Stripe webhooks): each applied once, by id and by what it says.
      await trx.schema
        .createTable("processor_events")
        .addColumn("organization_id", "text", (c) => c.notNull())
        .addColumn("event_id", "text", (c) => c.notNull())
        .addColumn("effect_key", "text", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("received_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("processor_events_pk", ["organization_id", "event_id"])
        .execute();
      await trx.schema
        .createIndex("processor_events_effect")
        .on("processor_events")
        .columns(["organization_id", "effect_key"])
        .unique()
        .execute();
      await trx.schema
        .createIndex("processor_events_received")
        .on("processor_events")
        .column("received_at")
        .execute();
      // Refunds need the new permission donations:write: keys that held every permission (made without
      // --permissions) keep holding every permission.
      const everyEarlier = [
        "donations:read",
        "subscriptions:read",
        "subscriptions:write",
        "contacts:read",
        "contacts:write",
        "forms:read",
        "forms:write",
        "webhooks:read",
        "webhooks:write",
        "analytics:read",
        "organization:read",
        "organization:write",
      ];
      const keys = await trx.selectFrom("api_keys").select(["id", "permissions"]).execute();
      for (const key of keys) {
        const held = JSON.parse(key.permissions) as string[];
        if (everyEarlier.every((p) => held.includes(p)) && !held.includes("donations:write"))
          await trx
            .updateTable("api_keys")
            .set({ permissions: JSON.stringify([...held, "donations:write"]) })
            .where("id", "=", key.id)
            .execute();
      }
    },
  },
  {
    version: 12,
    name: "phones matched by their E.164 form, read in the organization's country",
    async up(trx: AnyTrx) {
      await trx.schema
        .alterTable("organizations")
        .addColumn("country", "text", (c) => c.notNull().defaultTo(DEFAULT_COUNTRY))
        .execute();
      // Every stored phone gains its E.164 form (read as a US number: every organization's country until
      // now), and the phone keys are rebuilt from them. Where two live contacts now hold one number, the
      // older keeps the key; the other keeps the phone on its record, unclaimed (as a checkout does).
      await trx.deleteFrom("contact_keys").where("kind", "=", "phone").execute();
      const contacts = await trx
        .selectFrom("contacts")
        .select(["id", "organization_id", "phones", "status"])
        .where("phones", "!=", "[]")
        .orderBy("created_at")
        .orderBy("id")
        .execute();
      for (const contact of contacts) {
        const phones = (JSON.parse(contact.phones) as { value: string; isPrimary: boolean }[]).map((p) => ({
          value: p.value,
          isPrimary: p.isPrimary,
          e164: toE164(p.value, DEFAULT_COUNTRY),
        }));
        await trx
          .updateTable("contacts")
          .set({ phones: JSON.stringify(phones) })
          .where("id", "=", contact.id)
          .execute();
        if (contact.status !== "ACTIVE") continue;
        for (const key of new Set(phones.map(phoneMatchKey).filter(Boolean)))
          await trx
            .insertInto("contact_keys")
            .values({
              organization_id: contact.organization_id,
              kind: "phone",
              value_key: key,
              contact_id: contact.id,
            })
            .onConflict((oc) => oc.columns(["organization_id", "kind", "value_key"]).doNothing())
            .execute();
      }
    },
  },
];

/**
 * Rebuilds api_metrics keyed by (organization_id, created_at, id), as `store` leaves its table's storage:
 * a new table `staging` (its key named `<staging>_pk`), the rows copied, the old table dropped, the new one
 * renamed. Migrations 7 and 9.
 */
async function rebuildApiMetrics(
  trx: AnyTrx,
  staging: string,
  store: <T extends string, C extends string>(table: CreateTableBuilder<T, C>) => CreateTableBuilder<T, C>,
): Promise<void> {
  const columns = [
    ["id", "text"],
    ["organization_id", "text"],
    ["key_id", "text"],
    ["endpoint", "text"],
    ["method", "text"],
    ["status_code", "integer"],
    ["response_time_us", "bigint"],
    ["created_at", "text"],
  ] as const;
  let table: CreateTableBuilder<string, string> = trx.schema.createTable(staging);
  for (const [name, type] of columns) table = table.addColumn(name, type, (c) => c.notNull());
  await store(
    table.addPrimaryKeyConstraint(`${staging}_pk`, ["organization_id", "created_at", "id"]),
  ).execute();
  const names = sql.join(columns.map(([name]) => sql.id(name)));
  await sql`insert into ${sql.table(staging)} (${names}) select ${names} from api_metrics`.execute(trx);
  await trx.schema.dropTable("api_metrics").execute();
  await trx.schema.alterTable(staging).renameTo("api_metrics").execute();
}

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

/** Brings the database to the latest schema; refuses one that is newer than this code knows. */
export async function migrate(db: Kysely<Database>): Promise<{ applied: number[] }> {
  await db.schema
    .createTable("almoner_schema_lock")
    .ifNotExists()
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("holder", "text")
    .execute();
  await db.schema
    .createTable("almoner_migrations")
    .ifNotExists()
    .addColumn("version", "integer", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("applied_at", "text", (c) => c.notNull())
    .execute();
  await db
    .insertInto("almoner_schema_lock")
    .values({ id: 1, holder: null })
    .onConflict((oc) => oc.column("id").doNothing())
    .execute();

  return db.transaction().execute(async (trx) => {
    // Taking the lock row's write lock first makes concurrent migrators wait for each other.
    await trx
      .updateTable("almoner_schema_lock")
      .set({ holder: String(process.pid) })
      .where("id", "=", 1)
      .execute();
    const rows = await trx.selectFrom("almoner_migrations").select("version").execute();
    const done = new Set(rows.map((r) => Number(r.version)));
    const newest = Math.max(0, ...done);
    if (newest > LATEST_VERSION) {
      throw new StartupError(
        `The database is at schema version ${newest}, newer than this Almoner knows (${LATEST_VERSION}): upgrade Almoner, or point DATABASE_URL at another database`,
      );
    }
    const applied: number[] = [];
    for (const migration of MIGRATIONS) {
      if (done.has(migration.version)) continue;
      await migration.up(trx);
      await trx
        .insertInto("almoner_migrations")
        .values({ version: migration.version, name: migration.name, applied_at: new Date().toISOString() })
        .execute();
      applied.push(migration.version);
    }
    return { applied };
  });
}

import type { AnyTrx, Migration } from "./shared.js";

/**
 * The checkout engine: organization fees, contacts and their match keys, subscriptions, payments, inventory,
 * the event and e-mail outboxes, the processor ledger and instance settings.
 */
export const checkoutEngine: Migration = {
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
    await trx.schema.createIndex("subscriptions_contact").on("subscriptions").column("contact_id").execute();

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
};

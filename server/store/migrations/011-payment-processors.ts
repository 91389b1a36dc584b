import type { AnyTrx, Migration } from "./shared.js";

/**
 * Payment processors per organization: Stripe connections, processor customers, incoming processor events,
 * disputes; API keys that held every permission gain donations:write.
 */
export const paymentProcessors: Migration = {
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
};

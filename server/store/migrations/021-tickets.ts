import type { AnyTrx, Migration } from "./shared.js";

/**
 * Event tickets: one row per ticket bought, written with the payment that completes its order.
 * Each has its own short code (unique across the instance: a code typed or scanned at the door finds one
 * ticket), who bought it, how many people it admits, and its check-in: `checked_in_at` is set by one
 * conditional update, so two phones at the same door never admit a ticket twice. A refund in full voids
 * the order's tickets (`voided_at`).
 */
export const tickets: Migration = {
  version: 21,
  name: "event tickets: codes, buyers, check-in",
  async up(trx: AnyTrx) {
    await trx.schema
      .createTable("tickets")
      .addColumn("id", "text", (c) => c.primaryKey())
      // `ABCD-EFGH-JK`: 10 Crockford base32 characters, grouped for reading aloud.
      .addColumn("code", "text", (c) => c.notNull().unique())
      .addColumn("organization_id", "text", (c) => c.notNull())
      .addColumn("form_id", "text", (c) => c.notNull())
      .addColumn("payment_id", "text", (c) => c.notNull())
      // Its place among the payment's tickets (0, 1, …): a payment's tickets are written once.
      .addColumn("position", "integer", (c) => c.notNull())
      .addColumn("contact_id", "text")
      .addColumn("buyer_name", "text", (c) => c.notNull())
      .addColumn("buyer_email", "text", (c) => c.notNull())
      .addColumn("ticket_type", "text", (c) => c.notNull())
      .addColumn("admits", "integer", (c) => c.notNull())
      .addColumn("checked_in_at", "text")
      .addColumn("checked_in_by", "text")
      .addColumn("voided_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addUniqueConstraint("tickets_payment_position", ["payment_id", "position"])
      .execute();
    // Keys that could do everything still can: they are given the new permissions (as 011 did).
    const everyEarlier = [
      "donations:read",
      "donations:write",
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
      if (everyEarlier.every((p) => held.includes(p)))
        await trx
          .updateTable("api_keys")
          .set({
            permissions: JSON.stringify([
              ...held,
              ...["tickets:read", "tickets:write"].filter((p) => !held.includes(p)),
            ]),
          })
          .where("id", "=", key.id)
          .execute();
    }
    // A form's tickets in the list's order (newest first).
    await trx.schema
      .createIndex("tickets_form_created")
      .on("tickets")
      .columns(["form_id", "created_at", "id"])
      .execute();
  },
};

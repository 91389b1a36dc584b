import type { AnyTrx, Migration } from "./shared.js";

/** Checkout links: named entry points to a form, with their prefill. */
export const checkoutLinks: Migration = {
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
};

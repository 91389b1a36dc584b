import { sql } from "kysely";
import type { AnyTrx, Migration } from "./shared.js";

/**
 * The donor portal: single-use sign-in links and sessions of donors (by e-mail address), the
 * organization's legal details for receipts and statements, a subscription's schedule that survives a
 * change of frequency, and the audit log of changes made to donors' recurring gifts.
 */
export const donorPortal: Migration = {
  version: 14,
  name: "donor portal: sign-in links, sessions, legal details, re-anchored schedules, audit log",
  async up(trx: AnyTrx) {
    for (const column of ["legal_name", "legal_address", "tax_id"])
      await trx.schema.alterTable("organizations").addColumn(column, "text").execute();
    // The cycle whose billing date the anchor is: 0 (the first charge) until the frequency changes, when
    // the next charge becomes the new anchor while cycles keep counting (they name each charge).
    await trx.schema
      .alterTable("subscriptions")
      .addColumn("anchor_cycle", "integer", (c) => c.notNull().defaultTo(0))
      .execute();

    // A donor's gifts are found by the address they gave, in any case.
    await sql`create index payments_donor_email on payments (organization_id, lower(email))`.execute(trx);
    await sql`create index subscriptions_donor_email on subscriptions (organization_id, lower(email))`.execute(
      trx,
    );

    // A mailed sign-in link: only the token's hash is kept; single-use, short-lived.
    await trx.schema
      .createTable("donor_links")
      .addColumn("token_hash", "text", (c) => c.primaryKey())
      .addColumn("organization_id", "text", (c) => c.notNull())
      .addColumn("email_key", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addColumn("used_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await trx.schema.createIndex("donor_links_expires_at").on("donor_links").column("expires_at").execute();

    // A donor's signed-in session: the cookie's token hashed.
    await trx.schema
      .createTable("donor_sessions")
      .addColumn("token_hash", "text", (c) => c.primaryKey())
      .addColumn("organization_id", "text", (c) => c.notNull())
      .addColumn("email_key", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await trx.schema
      .createIndex("donor_sessions_expires_at")
      .on("donor_sessions")
      .column("expires_at")
      .execute();

    // Who changed what: the actor (an API key, a donor), the record, the values before and after.
    await trx.schema
      .createTable("audit_log")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("organization_id", "text", (c) => c.notNull())
      .addColumn("actor_type", "text", (c) => c.notNull())
      .addColumn("actor", "text", (c) => c.notNull())
      .addColumn("action", "text", (c) => c.notNull())
      .addColumn("subject_type", "text", (c) => c.notNull())
      .addColumn("subject_id", "text", (c) => c.notNull())
      .addColumn("old_values", "text", (c) => c.notNull())
      .addColumn("new_values", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await trx.schema
      .createIndex("audit_log_subject")
      .on("audit_log")
      .columns(["organization_id", "subject_type", "subject_id", "created_at"])
      .execute();
  },
};

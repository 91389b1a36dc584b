import type { AnyTrx, Migration } from "./shared.js";

/**
 * The organization's staff: people with an e-mail address and a password, a role in each organization they
 * belong to, single-use set-up links, and their signed-in sessions. Only hashes of tokens are kept.
 */
export const staffAccounts: Migration = {
  version: 16,
  name: "staff accounts: people, roles per organization, set-up links, sessions, failed sign-ins",
  async up(trx: AnyTrx) {
    await trx.schema
      .createTable("staff_users")
      .addColumn("id", "text", (c) => c.primaryKey())
      // The address, trimmed and lower-cased: one person per address.
      .addColumn("email_key", "text", (c) => c.notNull().unique())
      .addColumn("email", "text", (c) => c.notNull())
      // scrypt, with its parameters and salt; null until the person has set a password.
      .addColumn("password_hash", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();

    await trx.schema
      .createTable("staff_memberships")
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("organization_id", "text", (c) => c.notNull())
      .addColumn("role", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("staff_memberships_pk", ["user_id", "organization_id"])
      .execute();
    await trx.schema
      .createIndex("staff_memberships_organization")
      .on("staff_memberships")
      .column("organization_id")
      .execute();

    // A single-use link that lets a person set their password (set-up), valid for a while.
    await trx.schema
      .createTable("staff_tokens")
      .addColumn("token_hash", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("organization_id", "text", (c) => c.notNull())
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addColumn("used_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();

    // A signed-in session in one organization: the cookie's token, hashed.
    await trx.schema
      .createTable("staff_sessions")
      .addColumn("token_hash", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("organization_id", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("last_seen_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addColumn("revoked_at", "text")
      .execute();
    await trx.schema.createIndex("staff_sessions_user").on("staff_sessions").column("user_id").execute();

    // Failed sign-ins, by address and by client address (`email:…`, `ip:…`), counted over 15 minutes.
    await trx.schema
      .createTable("staff_login_failures")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("key", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await trx.schema
      .createIndex("staff_login_failures_key")
      .on("staff_login_failures")
      .columns(["key", "created_at"])
      .execute();
  },
};

import type { AnyTrx, Migration } from "./shared.js";

/**
 * Staff account security: a person's TOTP secret (sealed with the instance key) and the last time-step a
 * code was used at (a code is good once), their one-time recovery codes (hashed), where a session was
 * opened from, and the organization's setting that makes two-factor sign-in compulsory for Owners and
 * Finance. Password-reset links are `staff_tokens` of kind `reset` (016).
 */
export const staffSecurity: Migration = {
  version: 17,
  name: "staff security: TOTP, recovery codes, session origins, compulsory two-factor",
  async up(trx: AnyTrx) {
    // One column per statement: SQLite adds one at a time.
    const userColumns: [string, "text" | "integer"][] = [
      // The enrolled secret, sealed; null while two-factor sign-in is off.
      ["totp_secret", "text"],
      // A secret handed out by "start enrolment", sealed, until a code from it confirms it.
      ["totp_pending_secret", "text"],
      ["totp_enabled_at", "text"],
      // The time-step (30 s) of the last code accepted: a code of that step or an earlier one is refused.
      ["totp_last_step", "integer"],
    ];
    for (const [name, type] of userColumns)
      await trx.schema.alterTable("staff_users").addColumn(name, type).execute();

    for (const name of ["user_agent", "client_ip"])
      await trx.schema.alterTable("staff_sessions").addColumn(name, "text").execute();

    await trx.schema
      .alterTable("organizations")
      .addColumn("require_two_factor", "integer", (c) => c.notNull().defaultTo(0))
      .execute();

    // Ten per person, each good once; only a hash is kept.
    await trx.schema
      .createTable("staff_recovery_codes")
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("code_hash", "text", (c) => c.notNull())
      .addColumn("used_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("staff_recovery_codes_pk", ["user_id", "code_hash"])
      .execute();
  },
};

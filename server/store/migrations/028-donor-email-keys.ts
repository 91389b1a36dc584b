import { sql } from "kysely";
import { emailKey } from "../../../shared/email.js";
import type { AnyTrx, Migration } from "./shared.js";

/** Rows read at a time while the keys are written. */
const BATCH = 5000;

/**
 * A donor's gifts are found by a key of their address that the application makes (`emailKey`: trimmed,
 * lower-cased and composed as JavaScript does it), kept beside the address, no longer by SQL's lower():
 * PostgreSQL's follows the database's locale, so that "İpek@…" matched "ipek@…" (another mailbox) and
 * "ΝΙΚΟΣ@…" or, under the C locale, "Ünal@…" matched nothing, their donors never getting a sign-in link.
 */
export const donorEmailKeys: Migration = {
  version: 28,
  name: "donors' gifts found by their address's key as the application makes it",
  async up(trx: AnyTrx) {
    for (const table of ["payments", "subscriptions"] as const) {
      await trx.schema
        .alterTable(table)
        .addColumn("email_key", "text", (c) => c.notNull().defaultTo(""))
        .execute();
      // ASCII lower-casing is the same everywhere: one statement writes most keys, and the rows whose key
      // the application makes otherwise (any letter beyond ASCII, blanks around) are written one by one.
      await sql`update ${sql.table(table)} set email_key = lower(email)`.execute(trx);
      let after = "";
      for (;;) {
        const rows = await trx
          .selectFrom(table)
          .select(["id", "email", "email_key"])
          .where("id", ">", after)
          .orderBy("id")
          .limit(BATCH)
          .execute();
        for (const row of rows) {
          const key = emailKey(row.email);
          if (row.email_key !== key)
            await trx.updateTable(table).set({ email_key: key }).where("id", "=", row.id).execute();
        }
        if (rows.length < BATCH) break;
        after = rows[rows.length - 1].id;
      }
    }
    await sql`drop index payments_donor_email`.execute(trx);
    await sql`drop index subscriptions_donor_email`.execute(trx);
    await trx.schema
      .createIndex("payments_donor_email_key")
      .on("payments")
      .columns(["organization_id", "email_key"])
      .execute();
    await trx.schema
      .createIndex("subscriptions_donor_email_key")
      .on("subscriptions")
      .columns(["organization_id", "email_key"])
      .execute();
  },
};

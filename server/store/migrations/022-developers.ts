import type { AnyTrx, Migration } from "./shared.js";

/**
 * The developers' page: API keys' names, when each key was last used, the receiver's answer of each webhook
 * delivery attempt, and a webhook's previous signing secret while a rotation's overlap lasts.
 *
 * A key's last use is a table of its own, not a column of api_keys: api_keys is served from the read cache
 * and every write to it empties that cache in every process (changes.ts), so a note made once a minute per
 * key must not touch it.
 */
export const developers: Migration = {
  version: 22,
  name: "API keys' names and last use, webhook answers, webhook secret rotation",
  async up(trx: AnyTrx) {
    await trx.schema
      .alterTable("api_keys")
      .addColumn("name", "text", (c) => c.notNull().defaultTo(""))
      .execute();
    await trx.schema
      .createTable("api_key_uses")
      .addColumn("key_id", "text", (c) => c.primaryKey())
      .addColumn("last_used_at", "text", (c) => c.notNull())
      .execute();
    await trx.schema.alterTable("webhook_logs").addColumn("response_body", "text").execute();
    for (const column of ["previous_secret", "previous_secret_expires_at"])
      await trx.schema.alterTable("webhooks").addColumn(column, "text").execute();
  },
};

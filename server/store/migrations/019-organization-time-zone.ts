import type { AnyTrx, Migration } from "./shared.js";

/**
 * Each organization's time zone (an IANA name, default UTC): the day a gift falls on in its reports and
 * the dates of its exports.
 */
export const organizationTimeZone: Migration = {
  version: 19,
  name: "organization time zone",
  async up(trx: AnyTrx) {
    await trx.schema
      .alterTable("organizations")
      .addColumn("time_zone", "text", (c) => c.notNull().defaultTo("UTC"))
      .execute();
  },
};

import type { AnyTrx, Migration } from "./shared.js";

/**
 * The organization's branding (a logo's https URL, a `#RRGGBB` colour) and its receipt defaults (reply-to
 * address, subject, message), used by receipts whose form sets no custom e-mail of its own. All null
 * until set.
 */
export const organizationBrandingReceipts: Migration = {
  version: 23,
  name: "organization branding and receipt defaults",
  async up(trx: AnyTrx) {
    for (const column of [
      "logo_url",
      "brand_color",
      "receipt_reply_to",
      "receipt_subject",
      "receipt_message",
    ])
      await trx.schema.alterTable("organizations").addColumn(column, "text").execute();
  },
};

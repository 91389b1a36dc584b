import { DEFAULT_CURRENCY } from "../../../shared/currency.js";
import { DEFAULT_LANGUAGE } from "../../../shared/languages.js";
import type { AnyTrx, Migration } from "./shared.js";

/** Each organization takes gifts in its own currency and speaks to donors in its own language by default. */
export const organizationCurrencyLanguage: Migration = {
  version: 15,
  name: "organization currency and language",
  async up(trx: AnyTrx) {
    await trx.schema
      .alterTable("organizations")
      .addColumn("currency", "text", (c) => c.notNull().defaultTo(DEFAULT_CURRENCY))
      .execute();
    await trx.schema
      .alterTable("organizations")
      .addColumn("language", "text", (c) => c.notNull().defaultTo(DEFAULT_LANGUAGE))
      .execute();
  },
};

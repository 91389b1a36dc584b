import { DEFAULT_COUNTRY, toE164 } from "../../../shared/phone.js";
import { type AnyTrx, claimPhoneKeys, type Migration } from "./shared.js";

/** The key of a phone as this migration made it: its E.164 form, else the text as typed (trimmed). */
const phoneMatchKey = (phone: { value: string; e164: string | null }): string =>
  phone.e164 ?? phone.value.trim();

/** Phones matched by their E.164 form, read in the organization's country. */
export const phonesE164: Migration = {
  version: 12,
  name: "phones matched by their E.164 form, read in the organization's country",
  async up(trx: AnyTrx) {
    await trx.schema
      .alterTable("organizations")
      .addColumn("country", "text", (c) => c.notNull().defaultTo(DEFAULT_COUNTRY))
      .execute();
    // Every stored phone gains its E.164 form (read as a US number: every organization's country until
    // now), and the phone keys are rebuilt from them. Where two live contacts now hold one number, the
    // older keeps the key; the other keeps the phone on its record, unclaimed (as a checkout does).
    await trx.deleteFrom("contact_keys").where("kind", "=", "phone").execute();
    const contacts = await trx
      .selectFrom("contacts")
      .select(["id", "organization_id", "phones", "status"])
      .where("phones", "!=", "[]")
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    for (const contact of contacts) {
      const phones = (JSON.parse(contact.phones) as { value: string; isPrimary: boolean }[]).map((p) => ({
        value: p.value,
        isPrimary: p.isPrimary,
        e164: toE164(p.value, DEFAULT_COUNTRY),
      }));
      await trx
        .updateTable("contacts")
        .set({ phones: JSON.stringify(phones) })
        .where("id", "=", contact.id)
        .execute();
      if (contact.status !== "ACTIVE") continue;
      await claimPhoneKeys(trx, contact, phones.map(phoneMatchKey).filter(Boolean));
    }
  },
};

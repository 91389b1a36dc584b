import { phoneMatchKeys } from "../../../shared/phone.js";
import { type AnyTrx, claimPhoneKeys, type Migration } from "./shared.js";

/**
 * Phones also claim their digits (phones are compared by their digits), beside the E.164 form
 * of a valid number: `555-123-4567` and `(555) 123-4567`, which no metadata calls valid, are one number.
 * The phones stored keep their E.164 form; their keys are rebuilt, the older contact keeping a key that
 * two live contacts would now share (the other keeps the phone on its record, unclaimed).
 */
export const phoneDigitKeys: Migration = {
  version: 25,
  name: "contact phones matched by their digits too",
  up: rebuildPhoneKeys,
};

/**
 * Every live contact's phone keys made again by today's rule (phoneMatchKeys), oldest contact first: a key
 * two live contacts would share stays with the older one (the other keeps the phone, unclaimed).
 */
export async function rebuildPhoneKeys(trx: AnyTrx): Promise<void> {
  await trx.deleteFrom("contact_keys").where("kind", "=", "phone").execute();
  const contacts = await trx
    .selectFrom("contacts")
    .select(["id", "organization_id", "phones"])
    .where("status", "=", "ACTIVE")
    .where("phones", "!=", "[]")
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  for (const contact of contacts) {
    const phones = JSON.parse(contact.phones) as { value: string; e164?: string | null }[];
    await claimPhoneKeys(trx, contact, phones.flatMap(phoneMatchKeys));
  }
}

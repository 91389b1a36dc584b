import { isoAt } from "../../shared/time.js";
import type { ContactAddress } from "../store/contacts.js";
import { contactTotals, findContact, insertContact } from "../store/contacts.js";
import type { Db } from "../store/database.js";
import type { PaymentDetails } from "../store/payments.js";
import type { ConsentValue, PaymentsTable } from "../store/schema.js";
import { type EventClock, emitEvent } from "../webhooks/events.js";
import { presentContact } from "../wire/contact.js";

/** The contact a checkout's payment belongs to: matched by e-mail, or made from what the donor entered. */

function consentFrom(optIn: boolean | undefined): ConsentValue {
  return optIn === undefined ? "UNKNOWN" : optIn ? "OPTED_IN" : "OPTED_OUT";
}

export type ContactEvent = "contact.created" | "contact.updated";

/**
 * The donor's contact: the one matched by email (`existing`), else created; an opt-in upgrades the
 * consent of a known donor. Says which event the change calls for (emitted once the payment is linked,
 * so the contact's totals count it).
 */
export async function contactForPayment(
  trx: Db,
  row: PaymentsTable,
  existing: string | null,
  details: PaymentDetails,
  nowMs: number,
): Promise<{ id: string; event: ContactEvent | null }> {
  const nowIso = isoAt(nowMs);
  if (existing) {
    if (details.emailOptIn !== true) return { id: existing, event: null };
    const result = await trx
      .updateTable("contacts")
      .set({ email_consent: "OPTED_IN", communication_consent: "OPTED_IN", updated_at: nowIso })
      .where("id", "=", existing)
      .where("email_consent", "!=", "OPTED_IN")
      .executeTakeFirst();
    return { id: existing, event: Number(result.numUpdatedRows) > 0 ? "contact.updated" : null };
  }
  const a = details.donor.address;
  const addresses: ContactAddress[] = a
    ? [
        {
          line1: a.line1 ?? "",
          line2: a.line2 ?? "",
          city: a.city ?? "",
          region: a.region ?? "",
          postal: a.postal ?? "",
          country: a.country ?? "",
          isPrimary: true,
        },
      ]
    : [];
  const consent = consentFrom(details.emailOptIn);
  const made = await insertContact(
    trx,
    row.organization_id,
    {
      firstName: row.first_name,
      lastName: row.last_name,
      organizationName: details.donor.organizationName ?? null,
      emails: [{ value: row.email, isPrimary: true, isVerified: false }],
      phones: details.donor.phone ? [{ value: details.donor.phone, isPrimary: true }] : [],
      addresses,
      emailConsent: consent,
      smsConsent: "UNKNOWN",
      communicationConsent: consent,
    },
    nowIso,
  );
  // Another checkout of the same donor may have made it first: then it is matched, not made.
  return { id: made.id, event: made.created ? "contact.created" : null };
}

export async function emitContact(trx: Db, contactId: string, type: ContactEvent, at: number | EventClock) {
  const contact = await findContact(trx, contactId);
  if (!contact) return;
  const totals = (await contactTotals(trx, [contactId])).get(contactId);
  if (!totals) return;
  await emitEvent(trx, contact.organization_id, type, contactId, presentContact(contact, totals), at);
}

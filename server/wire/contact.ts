import { centsToDollars } from "../../shared/money.js";
import { wireTime } from "../../shared/time.js";
import type { ContactAddress, ContactEmail, ContactPhone, ContactTotals } from "../store/contacts.js";
import type { ConsentValue, ContactsTable } from "../store/schema.js";

/**
 * The contact as the API and the `contact.*` webhook events show it. The totals (count, value, first and
 * last gift, an active subscription) are derived from the donor's payments and subscriptions.
 */
export function presentContact(row: ContactsTable, totals: ContactTotals) {
  return {
    id: row.id,
    firstName: row.first_name,
    lastName: row.last_name,
    fullName: [row.first_name, row.last_name].filter((s) => s.trim() !== "").join(" "),
    organizationName: row.organization_name,
    emails: JSON.parse(row.emails) as ContactEmail[],
    phones: (JSON.parse(row.phones) as ContactPhone[]).map((p) => ({
      value: p.value,
      isPrimary: p.isPrimary,
      e164: p.e164 ?? null,
    })),
    addresses: JSON.parse(row.addresses) as ContactAddress[],
    totalTransactionCount: totals.count,
    totalTransactionValue: centsToDollars(totals.valueCents),
    emailConsent: row.email_consent as ConsentValue,
    smsConsent: row.sms_consent as ConsentValue,
    communicationConsent: row.communication_consent as ConsentValue,
    hasActiveSubscription: totals.activeSubscription,
    firstDonationAt: wireTime(totals.first),
    lastDonationAt: wireTime(totals.last),
    createdAt: wireTime(row.created_at),
    updatedAt: wireTime(row.updated_at),
  };
}

export type ContactView = ReturnType<typeof presentContact>;

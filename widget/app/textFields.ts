import { type Signal, signal } from "@preact/signals";

/** Every text the donor types, one signal per field. */

export const TEXT_FIELDS = [
  "firstName",
  "lastName",
  "email",
  "phone",
  "organizationName",
  "line1",
  "line2",
  "city",
  "region",
  "postal",
  "country",
  "customAmount",
  "extraDonation",
  "promoCode",
  "cardNumber",
  "cardExp",
  "cardCvc",
  "cardPostal",
  "routingNumber",
  "accountNumber",
  "accountHolder",
  "website",
  "honoreeName",
  "tributeEmail",
  "tributeMessage",
] as const;
export type TextField = (typeof TEXT_FIELDS)[number];
export type TextFields = Record<TextField, Signal<string>>;

/** One signal per text field, holding its `initial` text or "". */
export function createTextFields(initial: Partial<Record<TextField, string>>): TextFields {
  return Object.fromEntries(TEXT_FIELDS.map((k) => [k, signal(initial[k] ?? "")])) as TextFields;
}

/** Reads a field's text without the spaces around it. */
export function trimmedText(text: TextFields): (k: TextField) => string {
  return (k) => text[k].value.trim();
}

import {
  type CountryCode,
  getCountries,
  isSupportedCountry,
  parsePhoneNumberFromString,
} from "libphonenumber-js/min";

/**
 * Phone numbers as people type them. `+1 617-555-0101`, `(617) 555-0101` and `6175550101` are one number:
 * its E.164 form (`+16175550101`), with the donor's country (their address's, when they gave one) or else
 * the organization's supplying a missing country code; a number written with a leading + is read as
 * international whatever the country.
 * Text that is not a valid phone number is kept as typed and matched by its digits (text without digits
 * as typed): phone formats are not validated (libphonenumber-js with its small metadata set decides what
 * is a valid number).
 */

export const DEFAULT_COUNTRY = "US";

/** The ISO 3166-1 alpha-2 countries whose numbers can be read, as the API documents them. */
export const PHONE_COUNTRIES: string[] = getCountries();

/** Whether `code` is an ISO 3166-1 alpha-2 country whose numbers can be read. */
export function isPhoneCountry(code: string): boolean {
  return isSupportedCountry(code);
}

/**
 * The country a person's phone is read in: their own (`personCountry`, their address's ISO code, any
 * case) when it is one whose numbers can be read, else the organization's.
 */
export function phoneCountry(personCountry: string | null | undefined, orgCountry: string): string {
  const own = personCountry?.trim().toUpperCase();
  return own && isSupportedCountry(own) ? own : orgCountry;
}

/** The E.164 form of a typed phone number, or null when it is not a valid number. */
export function toE164(typed: string, country: string = DEFAULT_COUNTRY): string | null {
  const region = isSupportedCountry(country) ? (country as CountryCode) : (DEFAULT_COUNTRY as CountryCode);
  const parsed = parsePhoneNumberFromString(typed, region);
  return parsed?.isValid() ? parsed.number : null;
}

/**
 * What contacts are matched by. A valid number: its E.164 form, and those digits without the `+` (so
 * `442079460958`, typed without it, is `+44 20 7946 0958`); never the digits as typed, which national
 * numbers of different countries share (French `06 12 34 56 78` and Dutch `06 12345678`). A number that is
 * not valid: its digits as typed, so `555-123-4567` and `(555) 123-4567` are one number; text without
 * digits by itself (trimmed). Two numbers match when any key is shared.
 */
export function phoneMatchKeys(phone: { value: string; e164?: string | null }): string[] {
  if (phone.e164) return [phone.e164, phone.e164.slice(1)];
  const digits = phone.value.replace(/\D/g, "");
  const typed = digits || phone.value.trim();
  return typed ? [typed] : [];
}

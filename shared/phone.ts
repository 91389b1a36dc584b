import {
  type CountryCode,
  getCountries,
  isSupportedCountry,
  parsePhoneNumberFromString,
} from "libphonenumber-js/min";

/**
 * Phone numbers as people type them. `+1 617-555-0101`, `(617) 555-0101` and `6175550101` are one number:
 * its E.164 form (`+16175550101`), with the organization's country supplying a missing country code.
 * Text that is not a valid phone number is kept as typed and matched as typed: phone formats are not
 * validated (libphonenumber-js with its small metadata set decides what is a valid number).
 */

export const DEFAULT_COUNTRY = "US";

/** The ISO 3166-1 alpha-2 countries whose numbers can be read, as the API documents them. */
export const PHONE_COUNTRIES: string[] = getCountries();

/** Whether `code` is an ISO 3166-1 alpha-2 country whose numbers can be read. */
export function isPhoneCountry(code: string): boolean {
  return isSupportedCountry(code);
}

/** The E.164 form of a typed phone number, or null when it is not a valid number. */
export function toE164(typed: string, country: string = DEFAULT_COUNTRY): string | null {
  const region = isSupportedCountry(country) ? (country as CountryCode) : (DEFAULT_COUNTRY as CountryCode);
  const parsed = parsePhoneNumberFromString(typed, region);
  return parsed?.isValid() ? parsed.number : null;
}

/** What contacts are matched by: the E.164 form, else the text as typed (trimmed). */
export function phoneMatchKey(phone: { value: string; e164?: string | null }): string {
  return phone.e164 ?? phone.value.trim();
}

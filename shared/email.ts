/**
 * What an e-mail address field takes: one address, `local@domain`, as people type them. The local part
 * is letters (any script), digits and the usual `!#$%&'*+/=?^_\`{|}~.-` (no comma, no quotes, no spaces:
 * nothing that could make a second address); the domain is a name with a dot (no `[ip]` literal). Used by
 * every form of the API and the checkout, so one address is one address everywhere.
 */
const EMAIL_PATTERN =
  /^[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+(\.[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+)*@([\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+[\p{L}\p{N}-]{2,63}$/u;

export function isEmailAddress(value: string): boolean {
  return value.length <= 254 && EMAIL_PATTERN.test(value);
}

/** How the OpenAPI document states the rule (the pattern is the one above, read with Unicode classes). */
export const EMAIL_ADDRESS = { format: "email", pattern: EMAIL_PATTERN.source, maxLength: 254 };

/**
 * An address as records are found by (a donor's gifts, a staff member, a contact): trimmed, lower-cased
 * and in Unicode's composed form (NFC), so that "José" typed with a precomposed é and with an e and an
 * accent is one address.
 */
export const emailKey = (email: string): string => email.trim().toLowerCase().normalize("NFC");

/**
 * A ticket's code: 10 characters of Crockford's base 32 (digits and upper-case letters without I, L, O
 * and U, so that none is mistaken for another), written in groups `ABCD-EFGH-JK` to be read aloud or
 * typed at the door. 50 random bits: not guessable. What a person types is read leniently, as Crockford
 * reads it: any case, with or without dashes and spaces, O for 0 and I or L for 1.
 */

export const TICKET_CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
export const TICKET_CODE_LENGTH = 10;

/** A code as it is written: `ABCD-EFGH-JK`. */
export const TICKET_CODE = /^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{2}$/;

/** The 10 characters grouped as they are written: `ABCDEFGHJK` → `ABCD-EFGH-JK`. */
export function groupTicketCode(chars: string): string {
  return `${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8)}`;
}

/** Typed characters as a code's would be: upper case, no dashes or spaces, O read as 0 and I or L as 1. */
export function ticketCodeChars(typed: string): string {
  return typed.toUpperCase().replace(/[\s-]/g, "").replace(/O/g, "0").replace(/[IL]/g, "1");
}

/** What was typed or scanned, as the code it stands for; null when it cannot be one. */
export function normalizeTicketCode(typed: string): string | null {
  const chars = ticketCodeChars(typed);
  if (chars.length !== TICKET_CODE_LENGTH) return null;
  for (const c of chars) if (!TICKET_CODE_ALPHABET.includes(c)) return null;
  return groupTicketCode(chars);
}

/** Stripe-looking identifiers, client secrets and payment-method fingerprints. */

import { createHmac, randomBytes } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

export function randomChars(length: number): string {
  const bytes = randomBytes(length);
  let out = "";
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i] % ALPHABET.length];
  return out;
}

/** `pi_3Q…` style: Stripe's prefix, then 24 alphanumerics (account ids use 16). */
export function newId(prefix: string, length = 24): string {
  return `${prefix}_${randomChars(length)}`;
}

export function clientSecret(id: string): string {
  return `${id}_secret_${randomChars(25)}`;
}

/**
 * A fingerprint stable for the same card number (or routing + account number) within one Stripe account,
 * different across accounts, and not reversible in practice (HMAC keyed by the account).
 */
export function fingerprint(accountId: string, material: string): string {
  const digest = createHmac("sha256", `stripe-emulator-fingerprint:${accountId}`).update(material).digest();
  let out = "";
  for (let i = 0; i < 16; i++) out += ALPHABET[digest[i] % ALPHABET.length];
  return out;
}

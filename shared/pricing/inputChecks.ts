import { FREQUENCIES, type Frequency } from "../enums.js";

/** Checks on the untrusted order input: every field is `unknown` until one of these says otherwise. */

export function isFrequency(value: unknown): value is Frequency {
  return typeof value === "string" && (FREQUENCIES as readonly string[]).includes(value);
}

/** A safe integer: a whole number of cents, or a quantity. */
export function isWholeCents(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

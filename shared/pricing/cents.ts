/**
 * Whole-cent arithmetic. Where a rate meets money (processing fees, percentage discounts) the sum is done
 * on BigInt, never in floating point, and rounded to the cent by the rule of the caller.
 */

/** Throws a RangeError unless `cents` is a whole number of cents >= 0. */
export function assertCents(name: string, cents: number): void {
  if (!Number.isSafeInteger(cents) || cents < 0)
    throw new RangeError(`${name} must be a whole number of cents >= 0, not ${cents}`);
}

/** ceil(a / b) for a >= 0, b > 0. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

/** round half up (a / b) for a >= 0, b > 0. */
export function roundHalfUpDiv(a: bigint, b: bigint): bigint {
  return (2n * a + b) / (2n * b);
}

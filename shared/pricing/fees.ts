import { assertCents, ceilDiv } from "./cents.js";

/**
 * Processing fees, in exact integer arithmetic:
 * - processing fee of a charge T: `ceil(T * percentBps / 10000) + fixedCents` (rounded UP to the cent);
 * - cover fee for an intended amount G: the smallest whole-cent F with `(G + F) - processingFee(G + F) >= G`.
 */

/** An organization's card-processing fee: `percentBps` basis points (290 = 2.9%) plus `fixedCents` per charge. */
export interface FeeRate {
  percentBps: number;
  fixedCents: number;
}

/** 2.9% + $0.30, used when the organization has not set its own rate. */
export const DEFAULT_FEE_RATE: FeeRate = Object.freeze({ percentBps: 290, fixedCents: 30 });

/** Throws a RangeError unless `percentBps` is an integer in 0..9999 and `fixedCents` an integer >= 0. */
export function assertFeeRate(rate: FeeRate): void {
  if (!Number.isSafeInteger(rate.percentBps) || rate.percentBps < 0 || rate.percentBps >= 10_000)
    throw new RangeError(`percentBps must be an integer from 0 to 9999, not ${rate.percentBps}`);
  if (!Number.isSafeInteger(rate.fixedCents) || rate.fixedCents < 0)
    throw new RangeError(`fixedCents must be a whole number of cents >= 0, not ${rate.fixedCents}`);
}

/**
 * What the processor keeps from a charge of `totalCents`: `ceil(total * percentBps / 10000) + fixedCents`,
 * the percentage part rounded UP to the cent (so our estimate is never below the processor's). A charge of
 * 0 cents is not made at all, so its fee is 0.
 */
export function processingFeeCents(totalCents: number, rate: FeeRate = DEFAULT_FEE_RATE): number {
  assertFeeRate(rate);
  assertCents("totalCents", totalCents);
  if (totalCents === 0) return 0;
  return Number(ceilDiv(BigInt(totalCents) * BigInt(rate.percentBps), 10_000n)) + rate.fixedCents;
}

/**
 * The fee a donor adds to cover processing: the smallest whole-cent `f >= 0` such that
 * `(gift + f) - processingFeeCents(gift + f) >= gift`, i.e. the organization nets at least the intended gift.
 *
 * Closed form (exact, integer): with p = percentBps, the charge T = gift + f must satisfy
 * `T - ceil(T·p/10000) - fixed >= gift`  ⇔  `floor(T·(10000-p)/10000) >= gift + fixed`
 * ⇔  `T >= (gift + fixed)·10000/(10000-p)`; so `T = ceil((gift + fixed)·10000 / (10000-p))` and `f = T - gift`.
 * Example at the default rate: a $100.00 gift → T = ceil(10030·10000/9710) = 10330, f = 330 ($3.30);
 * the processor keeps ceil(299.57) + 30 = 330 and the organization nets exactly $100.00.
 *
 * A gift of 0 (a free order) is not charged, so its cover fee is 0.
 */
export function coverFeeCents(giftCents: number, rate: FeeRate = DEFAULT_FEE_RATE): number {
  assertFeeRate(rate);
  assertCents("giftCents", giftCents);
  if (giftCents === 0) return 0;
  const total = ceilDiv(BigInt(giftCents + rate.fixedCents) * 10_000n, BigInt(10_000 - rate.percentBps));
  return Number(total) - giftCents;
}

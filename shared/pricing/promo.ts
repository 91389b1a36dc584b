import type { FormConfig } from "../schemas/form.js";
import { type Availability, promoKey, sold } from "./availability.js";
import { assertCents, roundHalfUpDiv } from "./cents.js";
import type { ChosenTicket } from "./order.js";
import type { Fail } from "./quote.js";

/**
 * Event promo codes: which code applies, to which tickets, and the discount it gives. A percentage discount
 * is `round half up (applicableSubtotal * percent / 100)` to the cent, in exact integer arithmetic.
 */

type PromoCode = FormConfig["promoCodes"][number];

/** What the donor is told of any promo code that cannot be used (unknown, used up, or not for these tickets). */
export function promoRefusal(code: string): string {
  return `Promo code "${code.trim().slice(0, 50)}" cannot be used for this order`;
}

/** The percentage discount on `cents`: round half up (cents × percent / 100). Percent is taken to 6 decimals. */
export function percentOf(cents: number, percent: number): number {
  assertCents("cents", cents);
  if (!Number.isFinite(percent) || percent < 0 || percent > 100)
    throw new RangeError(`percent must be from 0 to 100, not ${percent}`);
  const micro = BigInt(Math.round(percent * 1_000_000)); // millionths of a percent
  return Number(roundHalfUpDiv(BigInt(cents) * micro, 100_000_000n));
}

/** The discount a promo code gives on an applicable subtotal: never more than that subtotal. */
export function promoDiscountCents(
  promo: Pick<PromoCode, "discountType" | "discountValue">,
  applicable: number,
) {
  const raw =
    promo.discountType === "percentage"
      ? percentOf(applicable, Math.min(100, Math.max(0, promo.discountValue)))
      : Math.max(0, Math.round(promo.discountValue));
  return Math.min(raw, applicable);
}

/** A code with no applicable tickets listed applies to every ticket. */
function promoApplies(promo: PromoCode, ticketName: string): boolean {
  return promo.applicableTickets.length === 0 || promo.applicableTickets.includes(ticketName);
}

/**
 * The promo code of an event order (`rawCode`, the untrusted `promoCode` input): blank is none; otherwise it
 * must be one of the form's codes (matched case-insensitively), not used up, and apply to at least one of the
 * `chosen` tickets, whose subtotal it discounts; when that takes nothing off, the code is not applied. `chosen` is empty when the tickets could not all be read:
 * the code is then checked only for existing and being left. Every refusal has the same message, so that
 * guessing codes learns nothing from it.
 */
export function ticketPromo(
  form: FormConfig,
  rawCode: unknown,
  chosen: ChosenTicket[],
  availability: Availability,
  fail: Fail,
): { discountCents: number; promoCode: string | null } {
  let discountCents = 0;
  let promoCode: string | null = null;
  if (rawCode !== undefined && rawCode !== null) {
    if (typeof rawCode !== "string") fail("promoCode", "invalid", "promoCode must be a string");
    else if (rawCode.trim() !== "") {
      const key = promoKey(rawCode);
      const promo = form.promoCodes.find((p) => p.code.toUpperCase() === key);
      const refused = promoRefusal(rawCode);
      if (!promo) fail("promoCode", "unknown", refused);
      else {
        const redeemed = sold(availability.promoRedemptions, key);
        if (promo.quantity !== null && promo.quantity !== undefined && redeemed >= promo.quantity)
          fail("promoCode", "promo_exhausted", refused);
        else if (chosen.length > 0) {
          const applicable = chosen.filter((c) => promoApplies(promo, c.ticket.name));
          if (applicable.length === 0) fail("promoCode", "promo_not_applicable", refused);
          else {
            const applicableSubtotal = applicable.reduce((s, c) => s + c.ticket.price * c.quantity, 0);
            const discount = promoDiscountCents(promo, applicableSubtotal);
            // A code that takes nothing off (its tickets are free) is not applied: the order does not use
            // up one of its limited redemptions.
            if (discount > 0) {
              discountCents = discount;
              promoCode = promo.code;
            }
          }
        }
      }
    }
  }
  return { discountCents, promoCode };
}

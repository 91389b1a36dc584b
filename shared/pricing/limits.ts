import { formatMoney } from "../currency.js";
import { MAX_AMOUNT_CENTS } from "../money.js";

/** The bounds of an order: what a donor may type or choose, and the most one order may charge. */

/** Smallest and largest gift (and extra donation) a donor may type: $1 to $1,000,000. */
export const MIN_CUSTOM_AMOUNT_CENTS = 100;
export const MAX_CUSTOM_AMOUNT_CENTS = MAX_AMOUNT_CENTS;
/**
 * The same range in major units, as a request's `amount` states it (1 to 1,000,000 in every currency): the
 * bounds of the schemas that take a recurring gift's new amount, so that the checkout's range is written once.
 */
export const MIN_CUSTOM_AMOUNT = MIN_CUSTOM_AMOUNT_CENTS / 100;
export const MAX_CUSTOM_AMOUNT = MAX_CUSTOM_AMOUNT_CENTS / 100;
/** Per line: at most this many of one product in an order. */
export const MAX_PRODUCT_QUANTITY = 100;
/** Per line: at most this many of one ticket type in an order (before the ticket's own `maxPerOrder`). */
export const MAX_TICKET_QUANTITY = 1000;
/**
 * Largest total one order may charge ($10,000,000). Keeps every sum far inside exact integer range and
 * inside a 32-bit integer column; an order above it is refused with `limit_exceeded` on `total`.
 */
export const MAX_ORDER_TOTAL_CENTS = 1_000_000_000;

/** Whether a typed amount (a custom gift or an extra donation) is within the custom range. */
export function inCustomRange(cents: number): boolean {
  return cents >= MIN_CUSTOM_AMOUNT_CENTS && cents <= MAX_CUSTOM_AMOUNT_CENTS;
}

/**
 * The custom range in words, after the field's name, in the form's currency and in English (the API's
 * language): "must be from $1 to $1,000,000", "must be from €1 to €1,000,000".
 */
export function customRangeMessage(currency: string): string {
  return `must be from ${formatMoney(MIN_CUSTOM_AMOUNT_CENTS, currency)} to ${formatMoney(MAX_CUSTOM_AMOUNT_CENTS, currency)}`;
}

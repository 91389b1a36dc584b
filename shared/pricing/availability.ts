import type { FormConfig } from "../schemas/form.js";

/**
 * What has already been sold (or held) of a form's limited stock: tickets, products and promo code
 * redemptions, and what is left of each.
 */

/** What has already been taken; missing entries count as 0. */
export interface Availability {
  /** Ticket name → tickets sold (or held). */
  ticketsSold: Record<string, number>;
  /** `productKey(group, name)` → products sold (or held). */
  productsSold: Record<string, number>;
  /** `promoKey(code)` (upper-cased) → times redeemed (or held). */
  promoRedemptions: Record<string, number>;
}

export const NO_SALES: Availability = Object.freeze({
  ticketsSold: {},
  productsSold: {},
  promoRedemptions: {},
});

/** The key of a product in `Availability.productsSold`: the JSON array `[group title, option title]`. */
export function productKey(group: string, name: string): string {
  return JSON.stringify([group, name]);
}

/** The key of a promo code in `Availability.promoRedemptions`: the code upper-cased. */
export function promoKey(code: string): string {
  return code.trim().toUpperCase();
}

/** How many of `key` are taken: a missing, negative or non-finite count is 0, a fraction rounds down. */
export function sold(record: Record<string, number> | undefined, key: string): number {
  const n = record?.[key];
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/** What is left of a stock of `stock` once `taken` are gone, never below 0; null when the stock is unlimited. */
export function left(stock: number | null | undefined, taken: number): number | null {
  if (stock === null || stock === undefined) return null;
  return Math.max(0, stock - taken);
}

/** Ticket name → tickets still available, or null when the ticket has no quantity limit. */
export function remainingTickets(
  form: FormConfig,
  availability: Availability,
): Record<string, number | null> {
  // Without a prototype: a ticket may be named "__proto__" or "toString" like any other.
  const out: Record<string, number | null> = Object.create(null);
  for (const t of form.tickets) out[t.name] = left(t.quantity, sold(availability.ticketsSold, t.name));
  return out;
}

/**
 * Group title → (option title → products still available, or null when unlimited). Nested rather than keyed
 * by `productKey`, since the same option title may appear in two groups.
 */
export function remainingProducts(
  form: FormConfig,
  availability: Availability,
): Record<string, Record<string, number | null>> {
  const out: Record<string, Record<string, number | null>> = Object.create(null);
  for (const g of form.sponsorshipGroups) {
    const options: Record<string, number | null> = Object.create(null);
    for (const o of g.options)
      options[o.optionTitle] = left(
        o.quantity,
        sold(availability.productsSold, productKey(g.groupTitle, o.optionTitle)),
      );
    out[g.groupTitle] = options;
  }
  return out;
}

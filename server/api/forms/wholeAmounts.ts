import { isExpressible } from "../../../shared/currency.js";
import type { Prefill } from "../../../shared/prefill.js";
import type { FormConfig } from "../../../shared/schemas/form.js";

/** The refusal of an amount its currency cannot express, as forms and checkout links word it. */
export const notWholeAmount = (field: string, currency: string): string =>
  `${field} must be a whole number of ${currency}, which has no decimals`;

/** The fields of a form whose amounts the currency cannot express (decimals in JPY), by their paths. */
export function amountsWithDecimals(config: FormConfig, currency: string): string[] {
  const amounts: [string, number | null | undefined][] = [
    ["defaultAmount", config.defaultAmount],
    ["goal", config.goal],
    ["monthlyUpsellMinimum", config.monthlyUpsellMinimum],
  ];
  for (const field of [
    "oneTimeAmounts",
    "dailyAmounts",
    "weeklyAmounts",
    "monthlyAmounts",
    "annuallyAmounts",
  ] as const)
    for (const [i, cents] of config[field].entries()) amounts.push([`${field}[${i}]`, cents]);
  for (const [i, level] of config.givingLevels.entries())
    amounts.push([`givingLevels[${i}].amount`, level.amount]);
  for (const [g, group] of config.sponsorshipGroups.entries())
    for (const [o, option] of group.options.entries())
      amounts.push([`sponsorshipGroups[${g}].options[${o}].amount`, option.amount]);
  for (const [i, ticket] of config.tickets.entries()) {
    amounts.push([`tickets[${i}].price`, ticket.price]);
    amounts.push([`tickets[${i}].fairMarketValue`, ticket.fairMarketValue]);
  }
  for (const [i, promo] of config.promoCodes.entries())
    if (promo.discountType === "amount")
      amounts.push([`promoCodes[${i}].discountValue`, promo.discountValue]);
  return expressless(amounts, currency);
}

/**
 * The fields of a checkout link's prefill whose amounts the currency cannot express. `amount` is a link's
 * only money of its own: a product's or ticket's price is the form's, checked with the form.
 */
export function prefillAmountsWithDecimals(prefill: Prefill, currency: string): string[] {
  return expressless([["prefill.amount", prefill.amount]], currency);
}

function expressless(amounts: [string, number | null | undefined][], currency: string): string[] {
  return amounts
    .filter(([, cents]) => typeof cents === "number" && !isExpressible(cents, currency))
    .map(([field]) => field);
}

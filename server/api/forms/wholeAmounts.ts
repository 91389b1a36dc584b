import { isExpressible } from "../../../shared/currency.js";
import type { FormConfig } from "../../../shared/schemas/form.js";

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
  return amounts
    .filter(([, cents]) => typeof cents === "number" && !isExpressible(cents, currency))
    .map(([field]) => field);
}

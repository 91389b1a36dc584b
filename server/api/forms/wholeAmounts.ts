import { isExpressible } from "../../../shared/currency.js";
import type { FormConfig } from "../../../shared/schemas/form.js";

/** The fields of a form whose amounts the currency cannot express (decimals in JPY), by their paths. */
export function amountsWithDecimals(config: FormConfig, currency: string): string[] {
  const bad: string[] = [];
  const check = (field: string, cents: number | null | undefined) => {
    if (typeof cents === "number" && !isExpressible(cents, currency)) bad.push(field);
  };
  for (const field of [
    "oneTimeAmounts",
    "dailyAmounts",
    "weeklyAmounts",
    "monthlyAmounts",
    "annuallyAmounts",
  ] as const)
    config[field].forEach((cents, i) => check(`${field}[${i}]`, cents));
  check("defaultAmount", config.defaultAmount);
  check("goal", config.goal);
  config.givingLevels.forEach((level, i) => check(`givingLevels[${i}].amount`, level.amount));
  config.sponsorshipGroups.forEach((group, g) =>
    group.options.forEach((option, o) =>
      check(`sponsorshipGroups[${g}].options[${o}].amount`, option.amount),
    ),
  );
  config.tickets.forEach((ticket, i) => {
    check(`tickets[${i}].price`, ticket.price);
    check(`tickets[${i}].fairMarketValue`, ticket.fairMarketValue);
  });
  config.promoCodes.forEach((promo, i) => {
    if (promo.discountType === "amount") check(`promoCodes[${i}].discountValue`, promo.discountValue);
  });
  return bad;
}

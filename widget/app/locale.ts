import { formatMoney } from "../../shared/currency.js";

/**
 * The page's language and currency, set once before the app renders (in the browser from the boot data,
 * on the server before each synchronous render of a page), read by every component that shows an amount.
 */

let language = "en";
let currency = "USD";

export function setLocale(next: { language: string; currency: string }): void {
  language = next.language;
  currency = next.currency;
}

export const pageLanguage = (): string => language;
export const pageCurrency = (): string => currency;

/** An amount in dollars (major units) as the page's language writes it in the page's currency. */
export function money(amount: number): string {
  return formatMoney(Math.round(amount * 100), currency, language);
}

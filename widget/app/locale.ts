import { formatMoney } from "../../shared/currency.js";
import type { MessageKey } from "../../shared/i18n/catalogs/en.js";
import { type CompiledCatalog, formatMessage, type MessageValues } from "../../shared/i18n/format.js";

/**
 * The page's language, currency and messages, set once before the app renders (in the browser from the
 * boot data, on the server before each synchronous render of a page), read by every component. Only the
 * page's language is sent, compiled, inside the page: the bundle holds no catalog.
 */

let language = "en";
let currency = "USD";
let messages: CompiledCatalog = {};

export function setLocale(next: { language: string; currency: string; messages?: CompiledCatalog }): void {
  language = next.language;
  currency = next.currency;
  if (next.messages) messages = next.messages;
}

export const pageLanguage = (): string => language;
export const pageCurrency = (): string => currency;

/** A message of the page's language; its key when the page was sent without it. */
export function t(key: MessageKey, values: MessageValues = {}): string {
  const message = messages[key];
  return message === undefined ? key : formatMessage(message, values, language);
}

/**
 * An amount in major units (dollars, euros) as the page's language writes it in the page's currency. On a
 * right-to-left page it is isolated as left-to-right text (U+2066 … U+2069): else the bidirectional
 * algorithm lays "25 US$" out as "$US 25" among Arabic words.
 */
export function money(amount: number): string {
  const text = formatMoney(Math.round(amount * 100), currency, language);
  return language === "ar" ? `\u2066${text}\u2069` : text;
}

/** The currency's symbol as the page's language writes it (`$`, `€`, `¥`). */
export function currencySymbol(): string {
  try {
    return (
      new Intl.NumberFormat(language, { style: "currency", currency })
        .formatToParts(0)
        .find((p) => p.type === "currency")?.value ?? currency
    );
  } catch {
    return currency;
  }
}

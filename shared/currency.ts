/**
 * The currencies an organization may take gifts in (ISO 4217) and their minor units: two decimals, or none
 * (JPY, KRW, …). Amounts are kept as integers in hundredths of the major unit everywhere (cents for USD;
 * for a currency without decimals every amount is a whole number of units, a multiple of 100 there), and
 * become the currency's own minor units only where they leave for Stripe (`toMinorUnits`; the sandbox takes
 * hundredths as they are).
 */

/** Currencies without a minor unit (Stripe's zero-decimal list, those in use for giving). */
const ZERO_DECIMAL = [
  "BIF",
  "CLP",
  "DJF",
  "GNF",
  "JPY",
  "KMF",
  "KRW",
  "MGA",
  "PYG",
  "RWF",
  "UGX",
  "VND",
  "XAF",
  "XOF",
  "XPF",
];

/** Two-decimal currencies offered. */
const TWO_DECIMAL = [
  "USD",
  "EUR",
  "GBP",
  "CAD",
  "AUD",
  "NZD",
  "CHF",
  "SEK",
  "NOK",
  "DKK",
  "PLN",
  "CZK",
  "HUF",
  "RON",
  "BGN",
  "MXN",
  "BRL",
  "ARS",
  "COP",
  "PEN",
  "INR",
  "SGD",
  "HKD",
  "TWD",
  "THB",
  "MYR",
  "PHP",
  "IDR",
  "ZAR",
  "NGN",
  "KES",
  "GHS",
  "ILS",
  "AED",
  "SAR",
  "QAR",
  "EGP",
  "MAD",
  "TRY",
];

// Pure: a bundle that uses neither (the checkout's first paint) leaves the lists out.
export const CURRENCIES: readonly string[] = /* @__PURE__ */ [...TWO_DECIMAL, ...ZERO_DECIMAL].sort();
export const DEFAULT_CURRENCY = "USD";

const zero = new Set(ZERO_DECIMAL);
const known = /* @__PURE__ */ new Set(CURRENCIES);

export const isCurrency = (code: string): boolean => known.has(code);

/** Digits after the decimal point: 2, or 0. */
export const decimalsOf = (currency: string): 0 | 2 => (zero.has(currency.toUpperCase()) ? 0 : 2);

/** The smallest amount, in hundredths: 1 (a cent), or 100 (one whole unit). */
export const smallestCents = (currency: string): 1 | 100 => (decimalsOf(currency) === 0 ? 100 : 1);

/** Whether `cents` (hundredths) is an amount the currency can express. */
export const isExpressible = (cents: number, currency: string): boolean =>
  Number.isSafeInteger(cents) && cents % smallestCents(currency) === 0;

/** Hundredths to the currency's minor units (what processors take): JPY 1000.00 → 1000, USD 10.50 → 1050. */
export const toMinorUnits = (cents: number, currency: string): number =>
  decimalsOf(currency) === 0 ? Math.round(cents / 100) : cents;

/** The currency's minor units back to hundredths. */
export const fromMinorUnits = (minor: number, currency: string): number =>
  decimalsOf(currency) === 0 ? minor * 100 : minor;

/** Rounds hundredths up to an amount the currency can express (a covered fee). */
export const roundUpTo = (cents: number, currency: string): number => {
  const step = smallestCents(currency);
  return Math.ceil(cents / step) * step;
};

/** Rounds hundredths down to an amount the currency can express (a discount). */
export const roundDownTo = (cents: number, currency: string): number => {
  const step = smallestCents(currency);
  return Math.floor(cents / step) * step;
};

const formatters = new Map<string, Intl.NumberFormat>();

/**
 * An amount for people, in their language: `€1,234.50` in English, `1.234,50 €` in German; whole amounts
 * without decimals (`$25`), as the checkout shows giving amounts.
 */
export function formatMoney(cents: number, currency: string, locale = "en"): string {
  const whole = cents % 100 === 0;
  const key = `${locale}|${currency}|${whole}`;
  let format = formatters.get(key);
  if (!format) {
    const digits = whole ? 0 : decimalsOf(currency);
    try {
      format = new Intl.NumberFormat(locale, {
        style: "currency",
        currency,
        minimumFractionDigits: digits,
        maximumFractionDigits: digits,
      });
    } catch {
      format = new Intl.NumberFormat("en", {
        style: "currency",
        currency: DEFAULT_CURRENCY,
        minimumFractionDigits: digits,
        maximumFractionDigits: digits,
      });
    }
    formatters.set(key, format);
  }
  return format.format(cents / 100);
}

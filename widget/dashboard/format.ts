/** How the dashboard writes money and dates: in the browser's locale, amounts in their own currency. */

const moneyFormats = new Map<string, Intl.NumberFormat>();

/** `amount` in major units (as the API sends it), e.g. 12.5 USD → "$12.50". */
export function money(amount: number, currency: string): string {
  const code = currency.toUpperCase();
  let format = moneyFormats.get(code);
  if (!format) {
    try {
      format = new Intl.NumberFormat(undefined, { style: "currency", currency: code });
    } catch {
      format = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2 });
    }
    moneyFormats.set(code, format);
  }
  return format.format(amount);
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeZone: "UTC" });

/** An ISO time or a Unix time in seconds, as a date and time. */
export function when(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === "") return "—";
  const date = typeof value === "number" ? new Date(value * 1000) : new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : dateTime.format(date);
}

/** A calendar day, YYYY-MM-DD, as a date (no time zone shift). */
export function day(value: string | null | undefined): string {
  if (!value) return "—";
  const date = new Date(`${value.slice(0, 10)}T00:00:00Z`);
  return Number.isNaN(date.getTime()) ? value : dateOnly.format(date);
}

/** A status as words: "PARTIALLY_REFUNDED" → "Partially refunded". */
export function words(value: string): string {
  const text = value.replace(/_/g, " ").toLowerCase();
  return text.charAt(0).toUpperCase() + text.slice(1);
}

import { localDateTime } from "../../shared/localDays.js";
import { me } from "./session.js";

/**
 * How the dashboard writes money and dates: in the browser's locale, amounts in their own currency, times
 * in the organization's time zone.
 */

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

const dateTimes = new Map<string, Intl.DateTimeFormat>();
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeZone: "UTC" });

/**
 * Date and time in the organization's time zone (the signed-in person's `me`), the zone the lists' day
 * filters, the summary and the CSV exports use, so a row never shows a day its filter left out; the
 * browser's own zone until `me` is known or when the zone is not one the browser knows.
 */
function dateTimeFormat(): Intl.DateTimeFormat {
  const zone = me.value?.timeZone ?? "";
  let format = dateTimes.get(zone);
  if (!format) {
    const style = { dateStyle: "medium", timeStyle: "short" } as const;
    try {
      format = new Intl.DateTimeFormat(undefined, zone ? { ...style, timeZone: zone } : style);
    } catch {
      format = new Intl.DateTimeFormat(undefined, style);
    }
    dateTimes.set(zone, format);
  }
  return format;
}

/** An ISO time or a Unix time in seconds, as a date and time in the organization's time zone. */
export function when(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === "") return "—";
  const date = typeof value === "number" ? new Date(value * 1000) : new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : dateTimeFormat().format(date);
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

/**
 * Now, as the organization's wall clock reads it (`2026-03-01T23:30:00`): the day in an export's file name and
 * the stamp of a copied form's title are the organization's, as every other date the dashboard shows; the
 * browser's own zone when the organization's is not known.
 */
export function orgNow(nowMs = Date.now()): string {
  const zone = me.value?.timeZone;
  if (zone)
    try {
      return localDateTime(nowMs, zone);
    } catch {
      // Not a zone this browser knows: its own below.
    }
  return new Date(nowMs - new Date(nowMs).getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
}

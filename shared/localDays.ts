/**
 * Calendar days in a time zone: the local date of an instant, and the instant a local day begins. Dates are
 * `YYYY-MM-DD` strings; instants are milliseconds since the epoch. Built on `Intl` (the runtime's time zone
 * data), so daylight-saving changes and offsets such as +05:45 are the zone's own.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
    });
    formatters.set(timeZone, format);
  }
  return format;
}

/** The local date and time of an instant in a zone, to the second: `2026-03-01T23:30:00`. */
export function localDateTime(ms: number, timeZone: string): string {
  const parts: Record<string, string> = {};
  for (const p of formatterFor(timeZone).formatToParts(ms)) parts[p.type] = p.value;
  // Years before 1000 come unpadded ("1"); dates compare as text, so they are written with four digits.
  return `${parts.year.padStart(4, "0")}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`;
}

/** The date an instant falls on in a zone. */
export function localDate(ms: number, timeZone: string): string {
  return localDateTime(ms, timeZone).slice(0, 10);
}

/** The calendar year it is at an instant in a zone. */
export function localYear(ms: number, timeZone: string): number {
  return Number(localDate(ms, timeZone).slice(0, 4));
}

/** The date `days` days after (or, negative, before) a date. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** Whole days from `from` to `to` (0 for the same date; negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

const MINUTE = 60_000;
const DAY = 86_400_000;

/** A zone's offset from UTC at an instant, in milliseconds: local time minus UTC (−5 h in New York's winter). */
export function zoneOffsetMs(ms: number, timeZone: string): number {
  return Date.parse(`${localDateTime(ms, timeZone)}Z`) - Math.floor(ms / 1000) * 1000;
}

/**
 * The wall time a zone's clocks show at an instant, written as the instant of that same date and time in
 * UTC (milliseconds since the epoch): calendar arithmetic on it is arithmetic on the local calendar.
 */
export function wallTimeMs(ms: number, timeZone: string): number {
  return ms + zoneOffsetMs(ms, timeZone);
}

/**
 * The instant a zone's clocks show a wall time (written as by `wallTimeMs`). A time the clocks show twice
 * (they went back) is its first occurrence; a time they skip (they went forward) becomes the instant they
 * skip at, the first that exists after it.
 */
export function instantOfWallTime(wall: number, timeZone: string): number {
  // The offsets in force within a day of it: the instant is the wall time less one of them.
  const offsets = [...new Set([-DAY, 0, DAY].map((d) => zoneOffsetMs(wall + d, timeZone)))];
  const fits = offsets.map((o) => wall - o).filter((t) => wallTimeMs(t, timeZone) === wall);
  if (fits.length > 0) return Math.min(...fits);
  // Skipped: the clocks jump over it between these two instants; the jump is found by bisection.
  let before = wall - Math.max(...offsets);
  let after = wall - Math.min(...offsets);
  while (after - before > 1) {
    const mid = before + Math.floor((after - before) / 2);
    if (wallTimeMs(mid, timeZone) >= wall) after = mid;
    else before = mid;
  }
  return after;
}

/**
 * The first instant of a local date in a zone (usually its midnight; the first minute after a gap when the
 * clocks skip midnight). Found by bisection on whole minutes, which every zone's offsets are: no offset
 * arithmetic to get wrong around a change of offset.
 */
export function startOfLocalDay(date: string, timeZone: string): number {
  const utcMidnight = Date.parse(`${date}T00:00:00Z`);
  // Offsets lie within −12:00 and +14:00: 15 hours before UTC midnight is the day before everywhere, and
  // 13 hours after it is this day (or later) everywhere.
  let lo = utcMidnight - 15 * 60 * MINUTE;
  let hi = utcMidnight + 13 * 60 * MINUTE;
  while (hi - lo > MINUTE) {
    const mid = lo + Math.floor((hi - lo) / MINUTE / 2) * MINUTE;
    if (localDate(mid, timeZone) >= date) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** Whether `value` is a real calendar date written `YYYY-MM-DD`. */
export function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const ms = Date.parse(`${value}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === value;
}

/**
 * The days a date filter or range of the API may name: from the epoch to the last whole year whose day after
 * is still written with four digits (so that a range's end plus one day stays a plain YYYY-MM-DD).
 */
export const FIRST_DAY = "1970-01-01";
export const LAST_DAY = "9998-12-31";

/** Whether `value` is a calendar date YYYY-MM-DD from FIRST_DAY to LAST_DAY. */
export function isDayInRange(value: string): boolean {
  return isCalendarDate(value) && value >= FIRST_DAY && value <= LAST_DAY;
}

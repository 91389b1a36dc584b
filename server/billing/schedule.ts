import type { Frequency } from "../../shared/enums.js";
import { instantOfWallTime, wallTimeMs } from "../../shared/localDays.js";
import { isoAt } from "../../shared/time.js";

/**
 * Calendar rules of recurring gifts, on the calendar of the organization's time zone. Every billing date is
 * computed from the anchor (the first charge) plus n periods, never from the previous date, so clamping a
 * short month does not drift the day: an anchor on Jan 31 bills Feb 28, Mar 31, Apr 30, and so on.
 *
 * The anchor is an instant; its local date and time of day are read in the zone, the periods are added on
 * the local calendar (n days, 7n days, or n months clamped to the month's last day), and the local date and
 * time reached are turned back into an instant with that date's own offset, so daylight saving time never
 * moves the day nor the time of day. A time the clocks skip that day becomes the instant they skip at; a
 * time they show twice, its first occurrence. The zone is the one given now: an organization that changes
 * its time zone has its later dates computed on the new zone's calendar from the same anchor instant.
 * Retries are not calendar dates: they come whole 24-hour days after the failed attempt.
 */

export type RecurringFrequency = Exclude<Frequency, "ONE_TIME">;

const DAY_MS = 24 * 60 * 60 * 1000;

/** Days between a failed charge and its retry; after the last one the subscription is cancelled. */
export const CHARGE_RETRY_DELAYS_DAYS: readonly number[] = Object.freeze([1, 3, 5]);

/** ISO 8601 with a date, a time and an explicit offset ("Z" or ±hh:mm), as stored in the database. */
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-](\d{2}):(\d{2}))$/;

/** Milliseconds since the epoch; refuses times without an offset, which `Date.parse` would read as local. */
export function parseInstant(iso: string): number {
  const m = INSTANT.exec(iso);
  if (m) {
    const [year, month, day, hour, minute] = [1, 2, 3, 4, 5].map((i) => Number(m[i]));
    const second = Number(m[6] ?? 0);
    const ms = m[7] ? Number(m[7].padEnd(3, "0").slice(0, 3)) : 0;
    const offsetMin = m[8] === "Z" ? 0 : (m[8][0] === "-" ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10]));
    if (
      month >= 1 &&
      month <= 12 &&
      day >= 1 &&
      day <= daysInMonth(year, month - 1) &&
      hour <= 23 &&
      minute <= 59 &&
      second <= 59 &&
      Number(m[9] ?? 0) <= 23 &&
      Number(m[10] ?? 0) <= 59
    )
      return (
        utc(year, month - 1, day, hour * 3_600_000 + minute * 60_000 + second * 1000 + ms) -
        offsetMin * 60_000
      );
  }
  throw new RangeError(`Not an ISO 8601 time with an offset: ${JSON.stringify(iso)}`);
}

/** `Date.UTC` maps years 0–99 to the 1900s; this does not. */
function utc(year: number, month: number, day: number, msOfDay: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month, day);
  return d.getTime() + msOfDay;
}

function daysInMonth(year: number, month: number): number {
  return new Date(utc(year, month + 1, 0, 0)).getUTCDate();
}

function checkCycle(n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`A cycle must be a whole number ≥ 0, not ${n}`);
}

/** The anchor plus n periods on the calendar of UTC (or of wall times written as UTC: wallTimeMs). */
function calendarMs(anchorMs: number, frequency: RecurringFrequency, n: number): number {
  switch (frequency) {
    case "DAILY":
      return anchorMs + n * DAY_MS;
    case "WEEKLY":
      return anchorMs + n * 7 * DAY_MS;
    case "MONTHLY":
    case "ANNUALLY": {
      const anchor = new Date(anchorMs);
      const months = anchor.getUTCMonth() + n * (frequency === "MONTHLY" ? 1 : 12);
      const year = anchor.getUTCFullYear() + Math.floor(months / 12);
      const month = months % 12;
      const day = Math.min(anchor.getUTCDate(), daysInMonth(year, month));
      const msOfDay = anchorMs - utc(anchor.getUTCFullYear(), anchor.getUTCMonth(), anchor.getUTCDate(), 0);
      return utc(year, month, day, msOfDay);
    }
  }
}

/** The anchor plus n periods on the calendar of `timeZone`; n = 0 is the anchor itself. */
function billingMs(anchorMs: number, frequency: RecurringFrequency, n: number, timeZone: string): number {
  // In UTC the wall time is the instant itself.
  if (n === 0 || timeZone === "UTC") return calendarMs(anchorMs, frequency, n);
  return instantOfWallTime(calendarMs(wallTimeMs(anchorMs, timeZone), frequency, n), timeZone);
}

/**
 * The anchor plus n periods, at the anchor's local time of day in `timeZone` (the organization's, an IANA
 * name); n = 0 is the anchor itself.
 */
export function billingDate(
  anchorIso: string,
  frequency: RecurringFrequency,
  n: number,
  timeZone = "UTC",
): string {
  checkCycle(n);
  return isoAt(billingMs(parseInstant(anchorIso), frequency, n, timeZone));
}

/** The smallest cycle n ≥ 1 whose billing date (in `timeZone`) is strictly after `asOfIso`. */
export function nextCycleAfter(
  anchorIso: string,
  frequency: RecurringFrequency,
  asOfIso: string,
  timeZone = "UTC",
): number {
  const anchorMs = parseInstant(anchorIso);
  const asOfMs = parseInstant(asOfIso);
  const at = (n: number) => billingMs(anchorMs, frequency, n, timeZone);
  // Estimate from the elapsed time, then step: billing dates strictly increase with n.
  let n: number;
  if (frequency === "DAILY" || frequency === "WEEKLY") {
    n = Math.floor((asOfMs - anchorMs) / (frequency === "DAILY" ? DAY_MS : 7 * DAY_MS)) + 1;
  } else {
    const a = new Date(anchorMs);
    const b = new Date(asOfMs);
    const months = (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth();
    n = Math.floor(months / (frequency === "MONTHLY" ? 1 : 12));
  }
  n = Math.max(1, n);
  while (n > 1 && at(n - 1) > asOfMs) n--;
  while (at(n) <= asOfMs) n++;
  return n;
}

/**
 * When to retry a charge after its `failedAttempts`-th failure at `fromIso` (the failed attempt's time):
 * 1, 3 and 5 days later; null once those retries are spent, meaning give up and cancel.
 */
export function retryAt(failedAttempts: number, fromIso: string): string | null {
  if (!Number.isSafeInteger(failedAttempts) || failedAttempts < 1)
    throw new RangeError(`failedAttempts must be a whole number ≥ 1, not ${failedAttempts}`);
  const fromMs = parseInstant(fromIso);
  const delayDays = CHARGE_RETRY_DELAYS_DAYS[failedAttempts - 1];
  return delayDays === undefined ? null : isoAt(fromMs + delayDays * DAY_MS);
}

/**
 * An event's when, as a language writes it: its day in full, a time of day, its time zone's name. The
 * checkout shows these and the receipt e-mail repeats them, so both read them here. English is written out
 * (the same on every runtime whatever its ICU data, which differs, for one, in the space before "PM"); other
 * languages are written as Intl writes them. `language` is a BCP 47 tag (`en`, `fr`, `pt-BR`).
 */

const MONTHS = "January February March April May June July August September October November December".split(
  " ",
);
const DAYS = "Sunday Monday Tuesday Wednesday Thursday Friday Saturday".split(" ");

/**
 * 2027-05-15 → Saturday, May 15, 2027 (the event's own calendar date, no time zone shift); in another
 * language as Intl writes it ("sábado, 15 de mayo de 2027").
 */
export function longDate(iso: string, language: string): string {
  const [y, m, d] = iso.split("-").map(Number);
  if (!y || !m || !d) return iso;
  const at = Date.UTC(y, m - 1, d);
  if (language !== "en")
    return new Intl.DateTimeFormat(language, { dateStyle: "full", timeZone: "UTC" }).format(at);
  const day = new Date(at).getUTCDay();
  return `${DAYS[day]}, ${MONTHS[m - 1]} ${d}, ${y}`;
}

/** America/New_York → "Eastern Time", in the language; the zone's own name where the runtime has none. */
export function zoneName(zone: string, language: string): string {
  try {
    return (
      new Intl.DateTimeFormat(language, { timeZone: zone, timeZoneName: "longGeneric" })
        .formatToParts(0)
        .find((p) => p.type === "timeZoneName")?.value ?? zone
    );
  } catch {
    return zone.replace(/_/g, " ");
  }
}

/** 18:30 → 6:30 PM (18:30 in languages that write the 24-hour clock). */
export function clock(hhmm: string, language: string): string {
  const [h, m] = hhmm.split(":").map(Number);
  if (Number.isNaN(h) || Number.isNaN(m)) return hhmm;
  if (language !== "en")
    return new Intl.DateTimeFormat(language, {
      hour: "numeric",
      minute: "2-digit",
      timeZone: "UTC",
    }).format(Date.UTC(2000, 0, 1, h, m));
  return `${h % 12 || 12}:${String(m).padStart(2, "0")} ${h < 12 ? "AM" : "PM"}`;
}

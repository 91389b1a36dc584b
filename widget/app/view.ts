import type { Frequency } from "../../shared/enums.js";
import type { CompiledCatalog } from "../../shared/i18n/format.js";
import type { PublicFormView } from "../../shared/schemas/publicForm.js";
import { pageLanguage, t } from "./locale.js";

/**
 * The data the checkout app starts from: the public form view (GET /api/forms/{id}, amounts in dollars) and,
 * on the hosted page, the server's quote of the initial order so the first HTML already shows the total.
 * Types only: nothing of the server reaches the bundle.
 */

export type FormView = PublicFormView;
export type CustomInput = FormView["customInputs"][number];
export type Ticket = FormView["tickets"][number];

export interface QuoteLine {
  kind: string;
  label: string;
  unitPrice: number;
  quantity: number;
  amount: number;
  admits?: number;
}

export interface Quote {
  frequency: string;
  fund: string;
  lines: QuoteLine[];
  subtotal: number;
  discount: number;
  promoCode: string | null;
  coverFees: boolean;
  fee: number;
  total: number;
  attendees: number;
}

export interface Receipt {
  paymentID: string;
  status: "COMPLETED" | "PENDING";
  total: number;
  frequency: Frequency;
  paymentMethod: { type: string; brand: string | null; last4: string | null } | null;
  /** `nextBillingDay`: the next charge's day in the organization's time zone (YYYY-MM-DD). */
  subscription: { id: string; amount: number; frequency: string; nextBillingDay: string } | null;
}

/** What the hosted page embeds as JSON and the app hydrates from. */
export interface Boot {
  view: FormView;
  /** The server's quote of the initial order, with the order body it priced (JSON). */
  quote?: { order: string; quote: Quote } | null;
  /** The page's language (BCP 47) and its compiled `checkout.*` messages; absent: English keys. */
  language?: string;
  messages?: CompiledCatalog;
  /** In embed mode, the origin of the page that framed the checkout, when the server knows it. */
  parentOrigin?: string;
}

/** The frequency's name ("Monthly"), its "per" suffix ("/month", none for one-time), its adverb ("monthly"). */
export function frequencyLabel(f: Frequency): string {
  return t(`checkout.frequency.${f}`);
}
export function perPeriod(f: Frequency): string {
  return f === "ONE_TIME" ? "" : t(`checkout.per.${f}`);
}
export function adverbOf(f: Frequency): string {
  return f === "ONE_TIME" ? "" : t(`checkout.adverb.${f}`);
}

export { money } from "./locale.js";

const MONTHS = "January February March April May June July August September October November December".split(
  " ",
);
const DAYS = "Sunday Monday Tuesday Wednesday Thursday Friday Saturday".split(" ");

/**
 * 2027-05-15 → Saturday, May 15, 2027 (the event's own calendar date, no time zone shift); in another
 * language as Intl writes it ("sábado, 15 de mayo de 2027").
 */
export function longDate(iso: string): string {
  const [y, m, d] = iso.split("-").map(Number);
  if (!y || !m || !d) return iso;
  const at = Date.UTC(y, m - 1, d);
  if (pageLanguage() !== "en")
    return new Intl.DateTimeFormat(pageLanguage(), { dateStyle: "full", timeZone: "UTC" }).format(at);
  const day = new Date(at).getUTCDay();
  return `${DAYS[day]}, ${MONTHS[m - 1]} ${d}, ${y}`;
}

/** America/New_York → "Eastern Time", in the page's language; the zone's own name where the runtime has none. */
export function zoneName(zone: string): string {
  try {
    return (
      new Intl.DateTimeFormat(pageLanguage(), { timeZone: zone, timeZoneName: "longGeneric" })
        .formatToParts(0)
        .find((p) => p.type === "timeZoneName")?.value ?? zone
    );
  } catch {
    return zone.replace(/_/g, " ");
  }
}

/** 18:30 → 6:30 PM (18:30 in languages that write the 24-hour clock). */
export function clock(hhmm: string): string {
  const [h, m] = hhmm.split(":").map(Number);
  if (Number.isNaN(h) || Number.isNaN(m)) return hhmm;
  if (pageLanguage() !== "en")
    return new Intl.DateTimeFormat(pageLanguage(), {
      hour: "numeric",
      minute: "2-digit",
      timeZone: "UTC",
    }).format(Date.UTC(2000, 0, 1, h, m));
  return `${h % 12 || 12}:${String(m).padStart(2, "0")} ${h < 12 ? "AM" : "PM"}`;
}

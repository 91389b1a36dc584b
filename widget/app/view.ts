import type { Frequency } from "../../shared/enums.js";
import type { PublicFormView } from "../../shared/schemas/publicForm.js";

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
  subscription: { id: string; amount: number; frequency: string; nextBillingDate: string } | null;
}

/** What the hosted page embeds as JSON and the app hydrates from. */
export interface Boot {
  view: FormView;
  /** The server's quote of the initial order, with the order body it priced (JSON). */
  quote?: { order: string; quote: Quote } | null;
}

export const FREQUENCY_NAMES: Record<Frequency, { label: string; adverb: string; per: string }> = {
  ONE_TIME: { label: "One time", adverb: "", per: "" },
  DAILY: { label: "Daily", adverb: "daily", per: "/day" },
  WEEKLY: { label: "Weekly", adverb: "weekly", per: "/week" },
  MONTHLY: { label: "Monthly", adverb: "monthly", per: "/month" },
  ANNUALLY: { label: "Yearly", adverb: "yearly", per: "/year" },
};

export { money } from "./locale.js";

const MONTHS = "January February March April May June July August September October November December".split(
  " ",
);
const DAYS = "Sunday Monday Tuesday Wednesday Thursday Friday Saturday".split(" ");

/** 2027-05-15 → Saturday, May 15, 2027 (the event's own calendar date, no time zone shift). */
export function longDate(iso: string): string {
  const [y, m, d] = iso.split("-").map(Number);
  if (!y || !m || !d) return iso;
  const day = new Date(Date.UTC(y, m - 1, d)).getUTCDay();
  return `${DAYS[day]}, ${MONTHS[m - 1]} ${d}, ${y}`;
}

/** 18:30 → 6:30 PM. */
export function clock(hhmm: string): string {
  const [h, m] = hhmm.split(":").map(Number);
  if (Number.isNaN(h) || Number.isNaN(m)) return hhmm;
  return `${h % 12 || 12}:${String(m).padStart(2, "0")} ${h < 12 ? "AM" : "PM"}`;
}

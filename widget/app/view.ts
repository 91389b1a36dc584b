import type { Frequency } from "../../shared/enums.js";
import type { CompiledCatalog } from "../../shared/i18n/format.js";
import type { PublicFormView } from "../../shared/schemas/publicForm.js";
import { t } from "./locale.js";

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

// An event's day, times of day and time zone, written as the page's language writes them.
export { clock, longDate, zoneName } from "../../shared/eventTime.js";
export { money } from "./locale.js";

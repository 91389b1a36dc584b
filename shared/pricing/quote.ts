import type { Frequency } from "../enums.js";

/** What pricing an order answers: a quote (its lines, discount, fee and total, in cents) or every error. */

export interface QuoteLine {
  kind: "donation" | "ticket" | "product" | "extra_donation";
  label: string;
  unitCents: number;
  quantity: number;
  /** unitCents × quantity. */
  amountCents: number;
  /** Ticket lines only: the people this line admits in all (quantity × groupSize; groupSize is 1 for INDIVIDUAL). */
  admits?: number;
  /** Ticket lines with a stated fair-market value: that value × quantity (the part that is no gift). */
  fairMarketCents?: number;
}

export interface Quote {
  frequency: Frequency;
  fund: string;
  lines: QuoteLine[];
  /** Sum of the lines' amountCents (tickets, products, donation, extra donation). */
  subtotalCents: number;
  /** Promo discount, only ever taken off ticket lines; 0 without a promo. */
  discountCents: number;
  /** The form's own spelling of the applied promo code, or null. */
  promoCode: string | null;
  /** Whether the donor covers the processing fee. */
  coverFees: boolean;
  /** The covered processing fee (0 unless `coverFees`). */
  feeCents: number;
  /** What the donor is charged: subtotal − discount + fee. */
  totalCents: number;
  /** What the organization receives before processing fees: subtotal − discount (= total − fee). */
  netIntendedCents: number;
  /** People admitted (sum of ticket lines' admits); 0 for non-event orders. */
  attendees: number;
}

export interface PricingError {
  /** Path of the offending input field, e.g. "amount", "tickets[1].quantity", "product.name", "total". */
  field: string;
  code:
    | "required"
    | "invalid"
    | "not_allowed"
    | "sold_out"
    | "limit_exceeded"
    | "promo_exhausted"
    | "promo_not_applicable"
    | "unknown";
  message: string;
}

export type PricingResult = { ok: true; quote: Quote } | { ok: false; errors: PricingError[] };

/** Records one error and lets pricing go on, so that every problem of an order is reported at once. */
export type Fail = (field: string, code: PricingError["code"], message: string) => void;

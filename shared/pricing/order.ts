import type { Frequency } from "../enums.js";
import type { FormConfig } from "../schemas/form.js";

/**
 * What the donor orders: their choices only. There is no total, subtotal, fee or discount field on purpose:
 * every price, discount, fee and total comes out of the form's own data, and a client-computed total is
 * never read.
 */
export interface OrderInput {
  /** Must be one of `form.frequencies`. EVENT and PRODUCT orders are ONE_TIME only. */
  frequency: Frequency;
  /** One of `form.funds`; default `form.funds[0]`. */
  fund?: string;
  /**
   * Cents. EMBED_FORM: the gift, a preset of that frequency's list or, when `allowCustomAmount`, any whole
   * number of cents in 100..100_000_000. CROWDFUNDING_FORM: may name a level by its amount (see `givingLevel`).
   * Not accepted on PRODUCT or EVENT forms.
   */
  amount?: number;
  /** CROWDFUNDING_FORM only: a level title; that level's amount is the gift. */
  givingLevel?: string;
  /** PRODUCT only: `group` = sponsorshipGroups[].groupTitle, `name` = options[].optionTitle; quantity 1..100, default 1. */
  product?: { group: string; name: string; quantity?: number };
  /** EVENT only: integer quantities 0..1000 per ticket name, each name at most once, at least one > 0. */
  tickets?: { name: string; quantity: number }[];
  /** EVENT only; matched case-insensitively; blank = none. */
  promoCode?: string;
  /** EVENT only: cents, 0 or 100..100_000_000. */
  extraDonation?: number;
  /** The donor pays the processing fee on top. Only when `form.enableCoverFees`. */
  coverFees?: boolean;
}

/** One of an event order's ticket entries, matched to the form's ticket of that name. */
export interface ChosenTicket {
  ticket: FormConfig["tickets"][number];
  quantity: number;
}

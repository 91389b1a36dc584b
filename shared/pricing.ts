import { AMOUNT_FIELD_BY_FREQUENCY, FREQUENCIES, type Frequency } from "./enums.js";
import { formatDollars, MAX_AMOUNT_CENTS } from "./money.js";
import type { FormConfig } from "./schemas/form.js";

/**
 * Server-side pricing (contract 10): what an order costs, computed from the stored form alone.
 *
 * Pure functions, no I/O and no Node-only APIs, so the widget can show the same numbers the server charges.
 * The server is the authority: `OrderInput` has no total, subtotal, fee or discount field on purpose. The
 * donor's choices (amount, level, product, tickets, promo code, extra donation, cover fees) go in; every
 * price, discount, fee and total comes out of the form's own data. A client-computed total is never read.
 *
 * All money is integer cents. The two places where a rate meets money (percentage discounts and processing
 * fees) use exact integer arithmetic (BigInt), never floating point:
 * - processing fee of a charge T: `ceil(T * percentBps / 10000) + fixedCents` (rounded UP to the cent);
 * - cover fee for an intended amount G: the smallest whole-cent F with `(G + F) - processingFee(G + F) >= G`;
 * - percentage promo discount: `round half up (applicableSubtotal * percent / 100)` to the cent.
 */

// ---------------------------------------------------------------------------------------------- fees

/** An organization's card-processing fee: `percentBps` basis points (290 = 2.9%) plus `fixedCents` per charge. */
export interface FeeRate {
  percentBps: number;
  fixedCents: number;
}

/** 2.9% + $0.30, used when the organization has not set its own rate. */
export const DEFAULT_FEE_RATE: FeeRate = Object.freeze({ percentBps: 290, fixedCents: 30 });

/** Throws a RangeError unless `percentBps` is an integer in 0..9999 and `fixedCents` an integer >= 0. */
export function assertFeeRate(rate: FeeRate): void {
  if (!Number.isSafeInteger(rate.percentBps) || rate.percentBps < 0 || rate.percentBps >= 10_000)
    throw new RangeError(`percentBps must be an integer from 0 to 9999, not ${rate.percentBps}`);
  if (!Number.isSafeInteger(rate.fixedCents) || rate.fixedCents < 0)
    throw new RangeError(`fixedCents must be a whole number of cents >= 0, not ${rate.fixedCents}`);
}

function assertCents(name: string, cents: number): void {
  if (!Number.isSafeInteger(cents) || cents < 0)
    throw new RangeError(`${name} must be a whole number of cents >= 0, not ${cents}`);
}

/** ceil(a / b) for a >= 0, b > 0. */
function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

/** round half up (a / b) for a >= 0, b > 0. */
function roundHalfUpDiv(a: bigint, b: bigint): bigint {
  return (2n * a + b) / (2n * b);
}

/**
 * What the processor keeps from a charge of `totalCents`: `ceil(total * percentBps / 10000) + fixedCents`,
 * the percentage part rounded UP to the cent (so our estimate is never below the processor's). A charge of
 * 0 cents is not made at all, so its fee is 0.
 */
export function processingFeeCents(totalCents: number, rate: FeeRate = DEFAULT_FEE_RATE): number {
  assertFeeRate(rate);
  assertCents("totalCents", totalCents);
  if (totalCents === 0) return 0;
  return Number(ceilDiv(BigInt(totalCents) * BigInt(rate.percentBps), 10_000n)) + rate.fixedCents;
}

/**
 * The fee a donor adds to cover processing: the smallest whole-cent `f >= 0` such that
 * `(gift + f) - processingFeeCents(gift + f) >= gift`, i.e. the organization nets at least the intended gift.
 *
 * Closed form (exact, integer): with p = percentBps, the charge T = gift + f must satisfy
 * `T - ceil(T·p/10000) - fixed >= gift`  ⇔  `floor(T·(10000-p)/10000) >= gift + fixed`
 * ⇔  `T >= (gift + fixed)·10000/(10000-p)`; so `T = ceil((gift + fixed)·10000 / (10000-p))` and `f = T - gift`.
 * Example at the default rate: a $100.00 gift → T = ceil(10030·10000/9710) = 10330, f = 330 ($3.30);
 * the processor keeps ceil(299.57) + 30 = 330 and the organization nets exactly $100.00.
 *
 * A gift of 0 (a free order) is not charged, so its cover fee is 0.
 */
export function coverFeeCents(giftCents: number, rate: FeeRate = DEFAULT_FEE_RATE): number {
  assertFeeRate(rate);
  assertCents("giftCents", giftCents);
  if (giftCents === 0) return 0;
  const total = ceilDiv(BigInt(giftCents + rate.fixedCents) * 10_000n, BigInt(10_000 - rate.percentBps));
  return Number(total) - giftCents;
}

// ------------------------------------------------------------------------------------- limits & keys

/** Smallest and largest gift (and extra donation) a donor may type: $1 to $1,000,000. */
export const MIN_CUSTOM_AMOUNT_CENTS = 100;
export const MAX_CUSTOM_AMOUNT_CENTS = MAX_AMOUNT_CENTS;
/** Per line: at most this many of one product in an order. */
export const MAX_PRODUCT_QUANTITY = 100;
/** Per line: at most this many of one ticket type in an order (before the ticket's own `maxPerOrder`). */
export const MAX_TICKET_QUANTITY = 1000;
/**
 * Largest total one order may charge ($10,000,000). Keeps every sum far inside exact integer range and
 * inside a 32-bit integer column; an order above it is refused with `limit_exceeded` on `total`.
 */
export const MAX_ORDER_TOTAL_CENTS = 1_000_000_000;

/** The key of a product in `Availability.productsSold`: the JSON array `[group title, option title]`. */
export function productKey(group: string, name: string): string {
  return JSON.stringify([group, name]);
}

/** What the donor is told of any promo code that cannot be used (unknown, used up, or not for these tickets). */
export function promoRefusal(code: string): string {
  return `Promo code "${code.trim().slice(0, 50)}" cannot be used for this order`;
}

/** The key of a promo code in `Availability.promoRedemptions`: the code upper-cased. */
export function promoKey(code: string): string {
  return code.trim().toUpperCase();
}

// ------------------------------------------------------------------------------------------ types

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

/** What has already been taken; missing entries count as 0. */
export interface Availability {
  /** Ticket name → tickets sold (or held). */
  ticketsSold: Record<string, number>;
  /** `productKey(group, name)` → products sold (or held). */
  productsSold: Record<string, number>;
  /** `promoKey(code)` (upper-cased) → times redeemed (or held). */
  promoRedemptions: Record<string, number>;
}

export const NO_SALES: Availability = Object.freeze({
  ticketsSold: {},
  productsSold: {},
  promoRedemptions: {},
});

export interface QuoteLine {
  kind: "donation" | "ticket" | "product" | "extra_donation";
  label: string;
  unitCents: number;
  quantity: number;
  /** unitCents × quantity. */
  amountCents: number;
  /** Ticket lines only: the people this line admits in all (quantity × groupSize; groupSize is 1 for INDIVIDUAL). */
  admits?: number;
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

type Ticket = FormConfig["tickets"][number];
type PromoCode = FormConfig["promoCodes"][number];

// --------------------------------------------------------------------------------------- helpers

const FREQUENCY_LABEL: Record<Frequency, string> = {
  ONE_TIME: "Donation",
  DAILY: "Daily donation",
  WEEKLY: "Weekly donation",
  MONTHLY: "Monthly donation",
  ANNUALLY: "Annual donation",
};

function isFrequency(value: unknown): value is Frequency {
  return typeof value === "string" && (FREQUENCIES as readonly string[]).includes(value);
}

function isWholeCents(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function sold(record: Record<string, number> | undefined, key: string): number {
  const n = record?.[key];
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

function left(stock: number | null | undefined, taken: number): number | null {
  if (stock === null || stock === undefined) return null;
  return Math.max(0, stock - taken);
}

function customRangeMessage(): string {
  return `must be from ${formatDollars(MIN_CUSTOM_AMOUNT_CENTS)} to ${formatDollars(MAX_CUSTOM_AMOUNT_CENTS)}`;
}

function inCustomRange(cents: number): boolean {
  return cents >= MIN_CUSTOM_AMOUNT_CENTS && cents <= MAX_CUSTOM_AMOUNT_CENTS;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : JSON.stringify(value);
}

/** The percentage discount on `cents`: round half up (cents × percent / 100). Percent is taken to 6 decimals. */
export function percentOf(cents: number, percent: number): number {
  assertCents("cents", cents);
  if (!Number.isFinite(percent) || percent < 0 || percent > 100)
    throw new RangeError(`percent must be from 0 to 100, not ${percent}`);
  const micro = BigInt(Math.round(percent * 1_000_000)); // millionths of a percent
  return Number(roundHalfUpDiv(BigInt(cents) * micro, 100_000_000n));
}

/** The discount a promo code gives on an applicable subtotal: never more than that subtotal. */
export function promoDiscountCents(
  promo: Pick<PromoCode, "discountType" | "discountValue">,
  applicable: number,
) {
  const raw =
    promo.discountType === "percentage"
      ? percentOf(applicable, Math.min(100, Math.max(0, promo.discountValue)))
      : Math.max(0, Math.round(promo.discountValue));
  return Math.min(raw, applicable);
}

function promoApplies(promo: PromoCode, ticketName: string): boolean {
  return promo.applicableTickets.length === 0 || promo.applicableTickets.includes(ticketName);
}

function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}

// ------------------------------------------------------------------------------------ public views

/** Ticket name → tickets still available, or null when the ticket has no quantity limit. */
export function remainingTickets(
  form: FormConfig,
  availability: Availability,
): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const t of form.tickets) out[t.name] = left(t.quantity, sold(availability.ticketsSold, t.name));
  return out;
}

/**
 * Group title → (option title → products still available, or null when unlimited). Nested rather than keyed
 * by `productKey`, since the same option title may appear in two groups.
 */
export function remainingProducts(
  form: FormConfig,
  availability: Availability,
): Record<string, Record<string, number | null>> {
  const out: Record<string, Record<string, number | null>> = {};
  for (const g of form.sponsorshipGroups) {
    const options: Record<string, number | null> = {};
    for (const o of g.options)
      options[o.optionTitle] = left(
        o.quantity,
        sold(availability.productsSold, productKey(g.groupTitle, o.optionTitle)),
      );
    out[g.groupTitle] = options;
  }
  return out;
}

// ----------------------------------------------------------------------------------------- pricing

/**
 * Prices an order against the stored form, what has been sold, and the organization's fee rate.
 * Every problem is reported at once (`ok: false` with all errors); nothing the client computed is used.
 *
 * Rules, per form type:
 * - Every order: `frequency` must be enabled on the form (EVENT and PRODUCT orders are ONE_TIME only, and
 *   any other frequency is refused on them); `fund` one of the form's funds (default the first). Fields that do
 *   not belong to the form type (`amount` on PRODUCT/EVENT, `givingLevel` off CROWDFUNDING_FORM, `product` off
 *   PRODUCT, `tickets`/`promoCode`/`extraDonation` off EVENT) are refused with `not_allowed`, never ignored.
 * - EMBED_FORM: `amount` is required; a preset of that frequency's list, or (when `allowCustomAmount`) any
 *   whole number of cents in 100..100_000_000.
 * - CROWDFUNDING_FORM: `givingLevel` names a level, or `amount` equals a level's amount (first match); the
 *   level's amount is the gift. With both, `amount` must equal the named level's amount. An `amount` matching no
 *   level is a custom gift, accepted only when `allowCustomAmount` and within 100..100_000_000.
 * - PRODUCT: `product.group`/`product.name` must exist; quantity 1..100 (default 1) and within stock.
 * - EVENT: tickets by name with quantities (see `OrderInput.tickets`), each within `maxPerOrder` and the tickets
 *   left; an optional promo code on its applicable tickets; an optional extra donation. A free order (total 0,
 *   e.g. free tickets or a 100% promo) is allowed; it charges nothing and adds no cover fee.
 * - `coverFees` (only when `form.enableCoverFees`) adds `coverFeeCents(subtotal − discount, feeRate)`.
 * - The order's total may not exceed MAX_ORDER_TOTAL_CENTS.
 */
export function priceOrder(
  form: FormConfig,
  input: OrderInput,
  availability: Availability = NO_SALES,
  feeRate: FeeRate = DEFAULT_FEE_RATE,
): PricingResult {
  assertFeeRate(feeRate);
  const errors: PricingError[] = [];
  const fail = (field: string, code: PricingError["code"], message: string) =>
    errors.push({ field, code, message });
  const type = form.formType;
  const oneTimeOnly = type === "EVENT" || type === "PRODUCT";
  const kindName =
    type === "EVENT"
      ? "event"
      : type === "PRODUCT"
        ? "sponsorship (PRODUCT)"
        : type === "CROWDFUNDING_FORM"
          ? "giving-level (CROWDFUNDING_FORM)"
          : "standard (EMBED_FORM)";

  // frequency
  const frequency = input.frequency as unknown;
  let freqOk = false;
  if (frequency === undefined || frequency === null) fail("frequency", "required", "frequency is required");
  else if (!isFrequency(frequency))
    fail(
      "frequency",
      "invalid",
      `frequency must be one of: ${FREQUENCIES.join(", ")}, not ${describe(frequency)}`,
    );
  else if (oneTimeOnly && frequency !== "ONE_TIME")
    fail(
      "frequency",
      "not_allowed",
      `frequency must be ONE_TIME: ${type === "EVENT" ? "event" : "sponsorship"} orders are one-time only`,
    );
  else if (!oneTimeOnly && !form.frequencies.includes(frequency))
    fail(
      "frequency",
      "not_allowed",
      `frequency ${frequency} is not enabled on this form; choose one of: ${form.frequencies.join(", ")}`,
    );
  else freqOk = true;
  const freq: Frequency = freqOk ? (frequency as Frequency) : "ONE_TIME";

  // fund
  let fund = form.funds[0];
  if (input.fund !== undefined && input.fund !== null) {
    if (typeof input.fund !== "string" || !form.funds.includes(input.fund))
      fail("fund", "unknown", `fund must be one of this form's funds: ${form.funds.join(", ")}`);
    else fund = input.fund;
  }

  // fields that belong to another form type
  const present = (v: unknown) => v !== undefined && v !== null;
  if (present(input.amount) && oneTimeOnly)
    fail(
      "amount",
      "not_allowed",
      `amount is not accepted on a ${kindName} form: the price comes from the ${type === "EVENT" ? "tickets" : "product"}`,
    );
  if (present(input.givingLevel) && type !== "CROWDFUNDING_FORM")
    fail(
      "givingLevel",
      "not_allowed",
      `givingLevel is only accepted on giving-level forms, not on a ${kindName} form`,
    );
  if (present(input.product) && type !== "PRODUCT")
    fail(
      "product",
      "not_allowed",
      `product is only accepted on sponsorship forms, not on a ${kindName} form`,
    );
  if (type !== "EVENT") {
    if (present(input.tickets))
      fail("tickets", "not_allowed", `tickets are only accepted on event forms, not on a ${kindName} form`);
    if (typeof input.promoCode === "string" ? input.promoCode.trim() !== "" : present(input.promoCode))
      fail(
        "promoCode",
        "not_allowed",
        `promoCode is only accepted on event forms, not on a ${kindName} form`,
      );
    if (present(input.extraDonation))
      fail(
        "extraDonation",
        "not_allowed",
        `extraDonation is only accepted on event forms, not on a ${kindName} form`,
      );
  }

  const lines: QuoteLine[] = [];
  let discountCents = 0;
  let promoCode: string | null = null;

  if (type === "EMBED_FORM") {
    const line = embedLine(form, input, freq, freqOk, fail);
    if (line) lines.push(line);
  } else if (type === "CROWDFUNDING_FORM") {
    const line = crowdfundingLine(form, input, freq, fail);
    if (line) lines.push(line);
  } else if (type === "PRODUCT") {
    const line = productLine(form, input, availability, fail);
    if (line) lines.push(line);
  } else if (type === "EVENT") {
    const event = eventLines(form, input, availability, fail);
    lines.push(...event.lines);
    discountCents = event.discountCents;
    promoCode = event.promoCode;
  }

  // cover fees
  const coverFees = input.coverFees as unknown;
  if (coverFees !== undefined && coverFees !== null && typeof coverFees !== "boolean")
    fail("coverFees", "invalid", `coverFees must be true or false, not ${describe(coverFees)}`);
  else if (coverFees === true && !form.enableCoverFees)
    fail("coverFees", "not_allowed", "coverFees is not enabled on this form");

  if (errors.length > 0) return { ok: false, errors };

  const subtotalCents = lines.reduce((sum, l) => sum + l.amountCents, 0);
  const netIntendedCents = subtotalCents - discountCents;
  const feeCents = coverFees === true ? coverFeeCents(netIntendedCents, feeRate) : 0;
  const totalCents = netIntendedCents + feeCents;
  if (totalCents > MAX_ORDER_TOTAL_CENTS)
    return {
      ok: false,
      errors: [
        {
          field: "total",
          code: "limit_exceeded",
          message: `The order total ${formatDollars(totalCents)} is above the ${formatDollars(MAX_ORDER_TOTAL_CENTS)} limit for one order`,
        },
      ],
    };
  const attendees = lines.reduce((sum, l) => sum + (l.admits ?? 0), 0);
  return {
    ok: true,
    quote: {
      frequency: freq,
      fund,
      lines,
      subtotalCents,
      discountCents,
      promoCode,
      coverFees: coverFees === true,
      feeCents,
      totalCents,
      netIntendedCents,
      attendees,
    },
  };
}

type Fail = (field: string, code: PricingError["code"], message: string) => void;

function donationLine(label: string, cents: number): QuoteLine {
  return { kind: "donation", label, unitCents: cents, quantity: 1, amountCents: cents };
}

function embedLine(
  form: FormConfig,
  input: OrderInput,
  freq: Frequency,
  freqOk: boolean,
  fail: Fail,
): QuoteLine | null {
  const amount = input.amount as unknown;
  if (amount === undefined || amount === null) {
    fail("amount", "required", "amount is required");
    return null;
  }
  if (!isWholeCents(amount)) {
    fail("amount", "invalid", `amount ${customRangeMessage()}`);
    return null;
  }
  // Without a valid frequency we cannot tell which preset list applies; the frequency error stands alone.
  if (!freqOk) {
    if (!inCustomRange(amount)) fail("amount", "invalid", `amount ${customRangeMessage()}`);
    return null;
  }
  const presets: number[] = form[AMOUNT_FIELD_BY_FREQUENCY[freq]];
  if (presets.includes(amount)) return donationLine(FREQUENCY_LABEL[freq], amount);
  if (!form.allowCustomAmount) {
    const list = presets.map(formatDollars).join(", ");
    fail(
      "amount",
      "not_allowed",
      presets.length
        ? `amount must be one of this form's ${freq} amounts (${list}); custom amounts are not allowed`
        : `this form offers no ${freq} amounts and does not allow custom amounts`,
    );
    return null;
  }
  if (!inCustomRange(amount)) {
    fail("amount", "invalid", `amount ${customRangeMessage()}`);
    return null;
  }
  return donationLine(FREQUENCY_LABEL[freq], amount);
}

function crowdfundingLine(
  form: FormConfig,
  input: OrderInput,
  freq: Frequency,
  fail: Fail,
): QuoteLine | null {
  const amount = input.amount as unknown;
  const title = input.givingLevel as unknown;
  const hasAmount = amount !== undefined && amount !== null;
  const hasTitle =
    title !== undefined && title !== null && !(typeof title === "string" && title.trim() === "");
  if (hasAmount && !isWholeCents(amount)) {
    fail("amount", "invalid", `amount ${customRangeMessage()}`);
    return null;
  }
  if (hasTitle) {
    const level = typeof title === "string" ? form.givingLevels.find((l) => l.title === title) : undefined;
    if (!level) {
      fail(
        "givingLevel",
        "unknown",
        `givingLevel must be one of this form's levels: ${form.givingLevels.map((l) => l.title).join(", ")}`,
      );
      return null;
    }
    if (hasAmount && amount !== level.amount) {
      fail(
        "amount",
        "invalid",
        `amount ${formatDollars(amount as number)} does not match the giving level "${level.title}" (${formatDollars(level.amount)})`,
      );
      return null;
    }
    return donationLine(level.title, level.amount);
  }
  if (!hasAmount) {
    fail("givingLevel", "required", "givingLevel (or an amount equal to a level's amount) is required");
    return null;
  }
  const cents = amount as number;
  const byAmount = form.givingLevels.find((l) => l.amount === cents);
  if (byAmount) return donationLine(byAmount.title, byAmount.amount);
  if (!form.allowCustomAmount) {
    fail(
      "amount",
      "not_allowed",
      `amount must be one of this form's giving levels (${form.givingLevels.map((l) => `${l.title} ${formatDollars(l.amount)}`).join(", ")}); custom amounts are not allowed`,
    );
    return null;
  }
  if (!inCustomRange(cents)) {
    fail("amount", "invalid", `amount ${customRangeMessage()}`);
    return null;
  }
  return donationLine(FREQUENCY_LABEL[freq], cents);
}

function productLine(
  form: FormConfig,
  input: OrderInput,
  availability: Availability,
  fail: Fail,
): QuoteLine | null {
  const product = input.product as unknown;
  if (product === undefined || product === null) {
    fail("product", "required", "product is required on a sponsorship form");
    return null;
  }
  if (!isObject(product)) {
    fail("product", "invalid", "product must be an object {group, name, quantity?}");
    return null;
  }
  const quantity = product.quantity === undefined || product.quantity === null ? 1 : product.quantity;
  let quantityOk = true;
  if (!isWholeCents(quantity) || quantity < 1 || quantity > MAX_PRODUCT_QUANTITY) {
    fail(
      "product.quantity",
      "invalid",
      `product.quantity must be a whole number from 1 to ${MAX_PRODUCT_QUANTITY}`,
    );
    quantityOk = false;
  }
  const group =
    typeof product.group === "string"
      ? form.sponsorshipGroups.find((g) => g.groupTitle === product.group)
      : undefined;
  if (!group) {
    fail(
      "product.group",
      product.group === undefined || product.group === null ? "required" : "unknown",
      `product.group must be one of: ${form.sponsorshipGroups.map((g) => g.groupTitle).join(", ")}`,
    );
    return null;
  }
  const option =
    typeof product.name === "string" ? group.options.find((o) => o.optionTitle === product.name) : undefined;
  if (!option) {
    fail(
      "product.name",
      product.name === undefined || product.name === null ? "required" : "unknown",
      `product.name must be one of the products in "${group.groupTitle}": ${group.options.map((o) => o.optionTitle).join(", ")}`,
    );
    return null;
  }
  if (!quantityOk) return null;
  const qty = quantity as number;
  const remaining = left(
    option.quantity,
    sold(availability.productsSold, productKey(group.groupTitle, option.optionTitle)),
  );
  if (remaining !== null && qty > remaining) {
    fail(
      "product.quantity",
      "sold_out",
      remaining === 0
        ? `"${option.optionTitle}" is sold out`
        : `Only ${remaining} "${option.optionTitle}" ${plural(remaining, "is", "are")} left`,
    );
    return null;
  }
  return {
    kind: "product",
    label: `${option.optionTitle} (${group.groupTitle})`,
    unitCents: option.amount,
    quantity: qty,
    amountCents: option.amount * qty,
  };
}

function eventLines(
  form: FormConfig,
  input: OrderInput,
  availability: Availability,
  fail: Fail,
): { lines: QuoteLine[]; discountCents: number; promoCode: string | null } {
  const lines: QuoteLine[] = [];
  const chosen: { ticket: Ticket; quantity: number }[] = [];
  const tickets = input.tickets as unknown;
  // Every entry named a known ticket once with a valid quantity: the promo code can be judged against them.
  let ticketsParsed = false;

  if (tickets === undefined || tickets === null) {
    fail("tickets", "required", "tickets are required: choose at least one ticket");
  } else if (!Array.isArray(tickets)) {
    fail("tickets", "invalid", "tickets must be a list of {name, quantity}");
  } else {
    const seen = new Set<string>();
    let total = 0;
    let allQuantitiesValid = true;
    ticketsParsed = true;
    tickets.forEach((entry: unknown, i) => {
      const at = `tickets[${i}]`;
      if (!isObject(entry)) {
        fail(at, "invalid", `${at} must be an object {name, quantity}`);
        ticketsParsed = false;
        allQuantitiesValid = false;
        return;
      }
      const q = entry.quantity;
      const qOk = isWholeCents(q) && q >= 0 && q <= MAX_TICKET_QUANTITY;
      if (!qOk) {
        fail(
          `${at}.quantity`,
          "invalid",
          `${at}.quantity must be a whole number from 0 to ${MAX_TICKET_QUANTITY}`,
        );
        ticketsParsed = false;
        allQuantitiesValid = false;
      }
      const name = entry.name;
      const ticket = typeof name === "string" ? form.tickets.find((t) => t.name === name) : undefined;
      if (!ticket) {
        fail(
          `${at}.name`,
          name === undefined || name === null ? "required" : "unknown",
          `${at}.name must be one of this event's tickets: ${form.tickets.map((t) => t.name).join(", ")}`,
        );
        ticketsParsed = false;
        return;
      }
      if (seen.has(ticket.name)) {
        fail(`${at}.name`, "invalid", `${at}.name lists "${ticket.name}" more than once`);
        ticketsParsed = false;
        return;
      }
      seen.add(ticket.name);
      if (!qOk) return;
      const quantity = q as number;
      total += quantity;
      if (quantity === 0) return;
      if (ticket.maxPerOrder !== null && ticket.maxPerOrder !== undefined && quantity > ticket.maxPerOrder) {
        fail(
          `${at}.quantity`,
          "limit_exceeded",
          `At most ${ticket.maxPerOrder} "${ticket.name}" ${plural(ticket.maxPerOrder, "ticket", "tickets")} per order`,
        );
      }
      const remaining = left(ticket.quantity, sold(availability.ticketsSold, ticket.name));
      if (remaining !== null && quantity > remaining) {
        fail(
          `${at}.quantity`,
          "sold_out",
          remaining === 0
            ? `"${ticket.name}" tickets are sold out`
            : `Only ${remaining} "${ticket.name}" ${plural(remaining, "ticket is", "tickets are")} left`,
        );
      }
      chosen.push({ ticket, quantity });
    });
    if (allQuantitiesValid && total === 0) {
      fail("tickets", "required", "choose at least one ticket (every quantity is 0)");
    }
  }

  for (const { ticket, quantity } of chosen)
    lines.push({
      kind: "ticket",
      label: ticket.name,
      unitCents: ticket.price,
      quantity,
      amountCents: ticket.price * quantity,
      admits: quantity * (ticket.groupSize ?? 1),
    });

  // promo code
  let discountCents = 0;
  let promoCode: string | null = null;
  const rawCode = input.promoCode as unknown;
  if (rawCode !== undefined && rawCode !== null) {
    if (typeof rawCode !== "string") fail("promoCode", "invalid", "promoCode must be a string");
    else if (rawCode.trim() !== "") {
      const key = promoKey(rawCode);
      const promo = form.promoCodes.find((p) => p.code.toUpperCase() === key);
      // One message for every code that cannot be used, so that guessing learns nothing from it.
      const refused = promoRefusal(rawCode);
      if (!promo) fail("promoCode", "unknown", refused);
      else {
        const redeemed = sold(availability.promoRedemptions, key);
        if (promo.quantity !== null && promo.quantity !== undefined && redeemed >= promo.quantity)
          fail("promoCode", "promo_exhausted", refused);
        else if (ticketsParsed && chosen.length > 0) {
          const applicable = chosen.filter((c) => promoApplies(promo, c.ticket.name));
          if (applicable.length === 0) fail("promoCode", "promo_not_applicable", refused);
          else {
            const applicableSubtotal = applicable.reduce((s, c) => s + c.ticket.price * c.quantity, 0);
            discountCents = promoDiscountCents(promo, applicableSubtotal);
            promoCode = promo.code;
          }
        }
      }
    }
  }

  // extra donation
  const extra = input.extraDonation as unknown;
  if (extra !== undefined && extra !== null) {
    if (!isWholeCents(extra) || (extra !== 0 && !inCustomRange(extra)))
      fail(
        "extraDonation",
        "invalid",
        `extraDonation must be 0 or ${customRangeMessage().replace(/^must be /, "")}`,
      );
    else if (extra > 0)
      lines.push({
        kind: "extra_donation",
        label: "Additional donation",
        unitCents: extra,
        quantity: 1,
        amountCents: extra,
      });
  }

  return { lines, discountCents, promoCode };
}

import {
  DEFAULT_CURRENCY,
  decimalsOf,
  formatMoney,
  isExpressible,
  roundDownTo,
  roundUpTo,
} from "../currency.js";
import { FREQUENCIES, type Frequency } from "../enums.js";
import type { FormConfig } from "../schemas/form.js";
import { type Availability, NO_SALES } from "./availability.js";
import { crowdfundingLine, embedLine } from "./donationLine.js";
import { eventLines } from "./eventLines.js";
import { assertFeeRate, coverFeeCents, DEFAULT_FEE_RATE, type FeeRate } from "./fees.js";
import { isFrequency } from "./inputChecks.js";
import { MAX_ORDER_TOTAL_CENTS } from "./limits.js";
import type { OrderInput } from "./order.js";
import { productLine } from "./productLine.js";
import type { PricingError, PricingResult, QuoteLine } from "./quote.js";
import { describe } from "./wording.js";

/**
 * Server-side pricing: what an order costs, computed from the stored form alone. Pure functions, no I/O and
 * no Node-only APIs, so the widget can show the same numbers the server charges. The server is the
 * authority: the donor's choices go in; every price, discount, fee and total comes out of the form's own
 * data. All money is integer cents; where a rate meets money (processing fees, percentage discounts) the
 * arithmetic is exact (BigInt), never floating point.
 *
 * Prices an order against the stored form, what has been sold, and the organization's fee rate.
 * Every problem is reported at once (`ok: false` with all errors); nothing the client computed is used.
 *
 * Rules:
 * - Every order: `frequency` must be enabled on the form (EVENT and PRODUCT orders are ONE_TIME only, and
 *   any other frequency is refused on them); `fund` one of the form's funds (default the first). Fields that do
 *   not belong to the form type (`amount` on PRODUCT/EVENT, `givingLevel` off CROWDFUNDING_FORM, `product` off
 *   PRODUCT, `tickets`/`promoCode`/`extraDonation` off EVENT) are refused with `not_allowed`, never ignored.
 * - The lines, per form type: `embedLine` (EMBED_FORM), `crowdfundingLine` (CROWDFUNDING_FORM), `productLine`
 *   (PRODUCT), `eventLines` (EVENT, with the promo discount); each states its own rules.
 * - A free order (total 0, e.g. free tickets or a 100% promo) is allowed; it charges nothing and adds no
 *   cover fee.
 * - `coverFees` (only when `form.enableCoverFees`) adds `coverFeeCents(subtotal − discount, feeRate)`.
 * - The order's total may not exceed MAX_ORDER_TOTAL_CENTS.
 */
export function priceOrder(
  form: FormConfig,
  input: OrderInput,
  availability: Availability = NO_SALES,
  feeRate: FeeRate = DEFAULT_FEE_RATE,
  /** The organization's currency: one without decimals (JPY) takes whole amounts only. */
  currency: string = DEFAULT_CURRENCY,
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
    const line = embedLine(form, input, freq, freqOk, currency, fail);
    if (line) lines.push(line);
  } else if (type === "CROWDFUNDING_FORM") {
    const line = crowdfundingLine(form, input, freq, currency, fail);
    if (line) lines.push(line);
  } else if (type === "PRODUCT") {
    const line = productLine(form, input, availability, fail);
    if (line) lines.push(line);
  } else if (type === "EVENT") {
    const event = eventLines(form, input, availability, currency, fail);
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

  // A currency without decimals: what the donor typed, and what the form asks, in whole units only.
  if (decimalsOf(currency) === 0) {
    for (const field of ["amount", "extraDonation"] as const) {
      const value = input[field];
      if (typeof value === "number" && Number.isSafeInteger(value) && !isExpressible(value, currency))
        fail(field, "invalid", `${field} must be a whole number of ${currency}, which has no decimals`);
    }
    if (errors.length === 0 && lines.some((l) => !isExpressible(l.amountCents, currency)))
      fail("total", "invalid", `This form's amounts have decimals, which ${currency} does not have`);
    discountCents = roundDownTo(discountCents, currency);
    // A code that takes nothing off once rounded to the currency's units is not applied (nor redeemed).
    if (discountCents === 0) promoCode = null;
  }

  if (errors.length > 0) return { ok: false, errors };

  const subtotalCents = lines.reduce((sum, l) => sum + l.amountCents, 0);
  const netIntendedCents = subtotalCents - discountCents;
  const feeCents = coverFees === true ? roundUpTo(coverFeeCents(netIntendedCents, feeRate), currency) : 0;
  const totalCents = netIntendedCents + feeCents;
  if (totalCents > MAX_ORDER_TOTAL_CENTS)
    return {
      ok: false,
      errors: [
        {
          field: "total",
          code: "limit_exceeded",
          message: `The order total ${formatMoney(totalCents, currency)} is above the ${formatMoney(MAX_ORDER_TOTAL_CENTS, currency)} limit for one order`,
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

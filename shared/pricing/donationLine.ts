import { formatMoney } from "../currency.js";
import { AMOUNT_FIELD_BY_FREQUENCY, type Frequency } from "../enums.js";
import type { FormConfig } from "../schemas/form.js";
import { isWholeCents } from "./inputChecks.js";
import { customRangeMessage, inCustomRange } from "./limits.js";
import type { OrderInput } from "./order.js";
import type { Fail, QuoteLine } from "./quote.js";

/**
 * The one donation line of a standard (EMBED_FORM) or giving-level (CROWDFUNDING_FORM) order. Refusals
 * name amounts in the form's currency (`currency`), in English.
 */

/** The label of a gift line that is not a giving level, by frequency. */
const FREQUENCY_LABEL: Record<Frequency, string> = {
  ONE_TIME: "Donation",
  DAILY: "Daily donation",
  WEEKLY: "Weekly donation",
  MONTHLY: "Monthly donation",
  ANNUALLY: "Annual donation",
};

function donationLine(label: string, cents: number): QuoteLine {
  return { kind: "donation", label, unitCents: cents, quantity: 1, amountCents: cents };
}

/**
 * EMBED_FORM: `amount` is required; a preset of that frequency's list, or (when `allowCustomAmount`) any
 * whole number of cents in 100..100_000_000. Null when the amount is refused (with the reason in `fail`).
 */
export function embedLine(
  form: FormConfig,
  input: OrderInput,
  freq: Frequency,
  freqOk: boolean,
  currency: string,
  fail: Fail,
): QuoteLine | null {
  const money = (cents: number) => formatMoney(cents, currency);
  const amount = input.amount as unknown;
  if (amount === undefined || amount === null) {
    fail("amount", "required", "amount is required");
    return null;
  }
  if (!isWholeCents(amount)) {
    fail("amount", "invalid", `amount ${customRangeMessage(currency)}`);
    return null;
  }
  // Without a valid frequency we cannot tell which preset list applies; the frequency error stands alone.
  if (!freqOk) {
    if (!inCustomRange(amount)) fail("amount", "invalid", `amount ${customRangeMessage(currency)}`);
    return null;
  }
  const presets: number[] = form[AMOUNT_FIELD_BY_FREQUENCY[freq]];
  if (presets.includes(amount)) return donationLine(FREQUENCY_LABEL[freq], amount);
  if (!form.allowCustomAmount) {
    const list = presets.map(money).join(", ");
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
    fail("amount", "invalid", `amount ${customRangeMessage(currency)}`);
    return null;
  }
  return donationLine(FREQUENCY_LABEL[freq], amount);
}

/**
 * CROWDFUNDING_FORM: `givingLevel` names a level, or `amount` equals a level's amount (first match); the
 * level's amount is the gift. With both, `amount` must equal the named level's amount. An `amount` matching no
 * level is a custom gift, accepted only when `allowCustomAmount` and within 100..100_000_000.
 */
export function crowdfundingLine(
  form: FormConfig,
  input: OrderInput,
  freq: Frequency,
  currency: string,
  fail: Fail,
): QuoteLine | null {
  const money = (cents: number) => formatMoney(cents, currency);
  const amount = input.amount as unknown;
  const title = input.givingLevel as unknown;
  const hasAmount = amount !== undefined && amount !== null;
  const hasTitle =
    title !== undefined && title !== null && !(typeof title === "string" && title.trim() === "");
  if (hasAmount && !isWholeCents(amount)) {
    fail("amount", "invalid", `amount ${customRangeMessage(currency)}`);
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
        `amount ${money(amount as number)} does not match the giving level "${level.title}" (${money(level.amount)})`,
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
      `amount must be one of this form's giving levels (${form.givingLevels.map((l) => `${l.title} ${money(l.amount)}`).join(", ")}); custom amounts are not allowed`,
    );
    return null;
  }
  if (!inCustomRange(cents)) {
    fail("amount", "invalid", `amount ${customRangeMessage(currency)}`);
    return null;
  }
  return donationLine(FREQUENCY_LABEL[freq], cents);
}

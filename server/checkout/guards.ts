import { isoAt } from "../../shared/time.js";
import type { AppDeps } from "../deps.js";
import { ApiError } from "../errors.js";
import { sha256Hex } from "../ids.js";
import { countAgainstLimit } from "../overLimit.js";
import { capStartedAt, type DeclineCap } from "../store/payments.js";
import { countEvent, countInWindow } from "../store/rateLimits.js";

/**
 * Defences of the public checkout against card testing (trying stolen card numbers through a donation
 * form): attempt limits per IP address and per form, a honeypot field, and a cap on declines per card
 * fingerprint. Each answers with a clear 429 or 400 before any money moves.
 */

export function checkHoneypot(value: string | undefined): void {
  if (value !== undefined && value.trim() !== "")
    throw new ApiError(400, "This submission looks automated and was not accepted");
}

/** A limit of 0 is no limit (the setting's documented way to turn one off). */
async function limit(deps: AppDeps, key: string, max: number, what: string): Promise<void> {
  if (max === 0) return;
  await countAgainstLimit(deps, key, max, `Too many checkout attempts ${what}; try again in a few minutes`);
}

const declineKey = (ip: string, formId: string) => `checkout-decline:${formId}:${ip}`;

/**
 * Checkout attempts per address, and per form. The form's limit is proportionate: once a form has had
 * CHECKOUT_LIMIT_PER_FORM attempts in the rolling hour (a card-testing burst), only addresses with a
 * declined attempt on it in that hour are refused; donors from other addresses still give. So a burst
 * from a few addresses cannot close a form to everyone, and a burst from many gets one try per address.
 */
export async function checkAttemptLimits(deps: AppDeps, ip: string, formId: string): Promise<void> {
  await limit(deps, `checkout-ip:${ip}`, deps.config.checkoutLimitPerIp, "from this address");
  const max = deps.config.checkoutLimitPerForm;
  if (max === 0) return;
  const db = deps.store.db;
  const form = await deps.store.rateLimits.hit(`checkout-form:${formId}`, max, deps.now());
  if (form.allowed) return;
  const declined = await countInWindow(db, declineKey(ip, formId), deps.now());
  if (declined.count > 0)
    throw ApiError.tooMany(
      "Too many checkout attempts on this form, and one from this address was declined; try again later",
      declined.retryAfterSeconds,
    );
}

/** Counts a declined attempt (a 402) of an address on a form, for the form's proportionate limit. */
export async function countDecline(deps: AppDeps, ip: string, formId: string): Promise<void> {
  await countEvent(deps.store.db, declineKey(ip, formId), deps.now());
}

/** Quotes (priced as the donor chooses) per address and per form: far more than checkouts, still bounded. */
export async function checkQuoteLimits(deps: AppDeps, ip: string, formId: string): Promise<void> {
  await limit(deps, `quote-ip:${ip}`, deps.config.quoteLimitPerIp, "from this address");
  await limit(deps, `quote-form:${formId}`, deps.config.quoteLimitPerForm, "on this form");
}

const promoKey = (ip: string, formId: string) => `promo-fail:${formId}:${ip}`;

/**
 * 429 for an order with a promo code from an address that has had PROMO_FAILURE_LIMIT different codes
 * refused on this form in the rolling hour: codes cannot be found by trying them.
 */
export async function checkPromoGuesses(
  deps: AppDeps,
  ip: string,
  formId: string,
  promoCode: string | undefined,
): Promise<void> {
  const max = deps.config.promoFailureLimit;
  if (!promoCode?.trim() || max === 0) return;
  const tried = await countInWindow(deps.store.db, promoKey(ip, formId), deps.now());
  if (tried.count >= max)
    throw ApiError.tooMany("Too many promo codes were tried; try again later", tried.retryAfterSeconds);
}

/**
 * Counts a refused promo code against the address on the form, once per code in the rolling hour: the same
 * code priced again as the donor changes the order (or sent again) is one guess, not one more each time.
 * The code is kept only as a hash, in the key of its own marker.
 */
export async function countPromoFailure(
  deps: AppDeps,
  ip: string,
  formId: string,
  promoCode: string | undefined,
): Promise<void> {
  const db = deps.store.db;
  const code = (promoCode ?? "").trim().toUpperCase();
  const marker = `promo-tried:${formId}:${ip}:${sha256Hex(code).slice(0, 32)}`;
  if ((await countInWindow(db, marker, deps.now())).count > 0) return;
  await countEvent(db, marker, deps.now());
  await countEvent(db, promoKey(ip, formId), deps.now());
}

/**
 * The cap on one card's declines: at CARD_FAILURE_LIMIT declined payments of its fingerprint in the last
 * 24 hours it is refused. Checked by the write that records the payment (insertPaymentUnlessDeclined), which
 * comes after the processor made its payment and before it moves any money; null when there is no cap.
 */
export function declineCap(deps: AppDeps, fingerprint: string): DeclineCap | null {
  const cap = deps.config.cardFailureLimit;
  if (cap === 0) return null;
  return { fingerprint, since: isoAt(deps.now() - DECLINE_WINDOW_MS), cap };
}

const DECLINE_WINDOW_MS = 24 * 3600 * 1000;

/**
 * The answer to a card over its cap of declines, its Retry-After the seconds until the card is taken again
 * (the oldest decline that keeps it at the cap leaves the 24-hour window).
 */
export async function cardDeclinedTooOften(deps: AppDeps, cap: DeclineCap | null): Promise<ApiError> {
  const started = cap && (await capStartedAt(deps.store.db, cap));
  const freeAt = started ? Date.parse(started) + DECLINE_WINDOW_MS : deps.now();
  return ApiError.tooMany(
    "This card has been declined too many times today; use another payment method or try again tomorrow",
    Math.max(1, Math.ceil((freeAt - deps.now()) / 1000)),
  );
}

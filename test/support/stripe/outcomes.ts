/** What a test card does when charged or set up, and the `next_action` hashes of intents that wait. */

import { type Decline, invalidRequest } from "./errors.js";
import { newId } from "./ids.js";
import type { Op } from "./state.js";
import { DECLINES, TEST_CARDS } from "./test-data.js";
import type { Instrument } from "./types.js";

export type Outcome = { kind: "succeed" } | { kind: "decline"; decline: Decline } | { kind: "action" };

const SUCCEED: Outcome = { kind: "succeed" };
const ACTION: Outcome = { kind: "action" };
const decline = (d: Decline): Outcome => ({ kind: "decline", decline: d });

export function cardOutcome(
  op: Op,
  instrument: Extract<Instrument, { kind: "card" }>,
  opts: { setup: boolean; offSession: boolean; offSessionReady: boolean },
): Outcome {
  const known = TEST_CARDS[instrument.number];
  if (op.livemode) return known ? decline(DECLINES.live_mode_test_card) : SUCCEED;
  if (!known) return decline(DECLINES.test_mode_live_card);
  const b = known.behaviour;
  switch (b.kind) {
    case "decline":
      return decline(b.decline);
    case "charge_decline":
      return opts.setup ? SUCCEED : decline(b.decline);
    case "auth_unless_set_up":
      if (opts.setup || !opts.offSession) return ACTION;
      return opts.offSessionReady ? SUCCEED : decline(DECLINES.authentication_required);
    case "auth_always":
      if (opts.setup || !opts.offSession) return ACTION;
      return decline(DECLINES.authentication_required);
    default:
      return SUCCEED;
  }
}

const RETURN_URL_MESSAGE =
  "This %s is configured to accept payment methods enabled in your Dashboard, because some of these payment methods might redirect your customer off of your page, you must provide a `return_url`. If you don't want to accept redirect-based payment methods, set `automatic_payment_methods[enabled]` to `true` and `automatic_payment_methods[allow_redirects]` to `never` when creating Setup Intents and Payment Intents.";

/** Stripe refuses to confirm on-session without a return_url when redirect-based methods are allowed. */
export function checkReturnUrl(
  kind: "PaymentIntent" | "SetupIntent",
  automatic: { enabled: boolean; allow_redirects?: string } | null,
  returnUrl: string | null | undefined,
  offSession: boolean,
): void {
  if (offSession || returnUrl || !automatic?.enabled || automatic.allow_redirects === "never") return;
  throw invalidRequest(RETURN_URL_MESSAGE.replace("%s", kind), { param: "return_url" });
}

export function checkUrl(url: string | null | undefined, param: string): void {
  if (!url) return;
  try {
    const parsed = new URL(url);
    if (parsed.protocol === "http:" || parsed.protocol === "https:") return;
  } catch {
    // falls through
  }
  throw invalidRequest(`Not a valid URL`, { param, code: "url_invalid" });
}

/** 3-D Secure: `use_stripe_sdk` (Stripe.js handles it) or `redirect_to_url` (a hosted page, then return_url). */
export function threeDSecureAction(
  op: Op,
  intentId: string,
  clientSecret: string,
  returnUrl: string | null,
  useStripeSdk: boolean,
): Record<string, unknown> {
  const page = `${op.env.baseUrl}/_emulator/3ds/${intentId}`;
  if (!useStripeSdk && returnUrl) {
    const url = `${page}?client_secret=${encodeURIComponent(clientSecret)}&return_url=${encodeURIComponent(returnUrl)}`;
    return { type: "redirect_to_url", redirect_to_url: { return_url: returnUrl, url } };
  }
  return {
    type: "use_stripe_sdk",
    use_stripe_sdk: {
      type: "three_d_secure_redirect",
      source: newId("src"),
      stripe_js: page,
      directory_server_name: "visa",
    },
  };
}

export function microdepositsAction(op: Op, intentId: string): Record<string, unknown> {
  return {
    type: "verify_with_microdeposits",
    verify_with_microdeposits: {
      arrival_date: op.now + 2 * 24 * 60 * 60,
      hosted_verification_url: `${op.env.baseUrl}/_emulator/microdeposits/${intentId}`,
      microdeposit_type: "descriptor_code",
    },
  };
}

export const PAYMENT_AUTHENTICATION_FAILURE =
  "The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod to attempt to fulfill this PaymentIntent again.";
export const SETUP_AUTHENTICATION_FAILURE =
  "The latest attempt to set up the payment method has failed because authentication failed.";

/**
 * Minimum charge amounts Stripe enforces (docs.stripe.com/currencies#minimum-and-maximum-charge-amounts), in
 * the currency's smallest unit: cents, or whole units for a zero-decimal currency (¥50).
 */
export const MINIMUM_AMOUNTS: Record<string, number> = {
  usd: 50,
  aed: 200,
  aud: 50,
  bgn: 100,
  brl: 50,
  cad: 50,
  chf: 50,
  czk: 1500,
  dkk: 250,
  eur: 50,
  gbp: 30,
  hkd: 400,
  huf: 17500,
  inr: 50,
  jpy: 50,
  mxn: 1000,
  myr: 200,
  nok: 300,
  nzd: 50,
  pln: 200,
  ron: 200,
  sek: 300,
  sgd: 50,
  thb: 1000,
};

/** Stripe's zero-decimal currencies: amounts are whole units (¥500 is `500`), not hundredths. */
export const ZERO_DECIMAL_CURRENCIES: ReadonlySet<string> = new Set([
  "bif",
  "clp",
  "djf",
  "gnf",
  "jpy",
  "kmf",
  "krw",
  "mga",
  "pyg",
  "rwf",
  "ugx",
  "vnd",
  "vuv",
  "xaf",
  "xof",
  "xpf",
]);

const SYMBOLS: Record<string, string> = { usd: "$", eur: "€", gbp: "£", jpy: "¥" };

/** An amount in the currency's smallest unit as Stripe writes it in messages: `$0.50`, `¥50`. */
export function formatAmount(amount: number, currency: string): string {
  const value = ZERO_DECIMAL_CURRENCIES.has(currency) ? String(amount) : (amount / 100).toFixed(2);
  return `${SYMBOLS[currency] ?? ""}${value}`;
}

import Stripe from "stripe";
import { ProcessorError } from "../port.js";

/**
 * The official `stripe` package, set up once per organization's key. `STRIPE_API_URL` points it at a local
 * stand-in (tests, a developer's emulator) through the package's own host/port/protocol options; it is
 * refused with live keys, so real money never goes anywhere but Stripe.
 */

/** The API version every request, and the webhook endpoints made here, use: the package's own. */
export const STRIPE_API_VERSION = Stripe.API_VERSION;

export function isLiveKey(key: string): boolean {
  return /^(sk|rk|pk)_live_/.test(key);
}

export function stripeClient(secretKey: string, apiUrl: string | undefined): Stripe {
  const config: Stripe.StripeConfig = {
    // Network errors and 5xx answers are retried with the same idempotency key: a lost answer is
    // replayed, never charged again.
    maxNetworkRetries: 2,
    timeout: 30_000,
    telemetry: false,
    appInfo: { name: "Almoner" },
  };
  if (apiUrl) {
    if (isLiveKey(secretKey))
      throw new ProcessorError(
        "misconfigured",
        "STRIPE_API_URL is for test keys only; live keys always go to Stripe",
      );
    const url = new URL(apiUrl);
    config.host = url.hostname;
    config.protocol = url.protocol === "http:" ? "http" : "https";
    config.port = Number(url.port || (url.protocol === "http:" ? 80 : 443));
  }
  return new Stripe(secretKey, config);
}

/**
 * Runs a call of the package without the caller's stack trace that it captures on every request (for its
 * own error messages, which are not shown here): with source maps on, as under tsx, capturing one is
 * costly (docs/benchmarks.md). The capture happens before the call's first await, so the limit is back in
 * place before anything else runs.
 */
export function withoutCallSite<T>(call: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return call();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * What a card statement shows after the account's own descriptor: the organization's name in the
 * characters Stripe accepts there (Latin letters, digits, spaces and `.,-`), at most 22 of them, with at
 * least one letter; undefined when nothing usable is left.
 */
export function statementSuffix(name: string): string | undefined {
  const plain = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^A-Za-z0-9 .,-]+/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 22)
    .trim();
  return /[A-Za-z]/.test(plain) ? plain : undefined;
}

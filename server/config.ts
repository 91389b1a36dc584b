import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { StartupError } from "./errors.js";

/** A whole number written in decimal digits (not `0x50`, `1e3` or a blank) from `min` to `max`. */
const whole = (min: number, max: number) =>
  z.string().trim().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(min).max(max));

const port = whole(0, 65535);

const envSchema = z.object({
  PORT: port.default(3000),
  HOST: z.string().min(1).default("0.0.0.0"),
  DATA_DIR: z.string().min(1).default("./data"),
  DATABASE_URL: z.string().min(1).optional(),
  // The base of every link the server makes: no query or fragment to end up in the middle of them.
  PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .refine((url) => !/[?#]/.test(url))
    .optional(),
  // Anything else (a typo such as `prod`) would silently run the development rules.
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  RATE_LIMIT_PER_HOUR: whole(1, 10_000_000).default(1000),
  MAX_BODY_BYTES: whole(1024, 50_000_000).default(262_144),
  REQUEST_TIMEOUT_SECONDS: whole(1, 3600).default(30),
  LEGACY_DONATIONS_API: z.enum(["on", "off"]).optional(),
  SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  TRUST_PROXY: z
    .string()
    .regex(/^(on|off|[1-9])$/)
    .default("off"),
  CHECKOUT_LIMIT_PER_IP: whole(0, 10_000_000).default(30),
  CHECKOUT_LIMIT_PER_FORM: whole(0, 10_000_000).default(3000),
  CARD_FAILURE_LIMIT: whole(0, 1000).default(5),
  QUOTE_LIMIT_PER_IP: whole(0, 10_000_000).default(600),
  PROMO_FAILURE_LIMIT: whole(0, 10_000).default(20),
  QUOTE_LIMIT_PER_FORM: whole(0, 10_000_000).default(60_000),
  WORKER_INTERVAL_SECONDS: z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/)
    .transform(Number)
    .pipe(z.number().min(0.05).max(3600))
    .default(15),
  SANDBOX_BANK_SETTLE_SECONDS: whole(0, 30 * 86400).default(120),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .regex(/^\s*\d+(\.\d+)?\s*(,\s*\d+(\.\d+)?\s*){0,19}$/)
    .transform((raw) => raw.split(",").map((s) => Math.round(Number(s) * 1000)))
    .refine((ms) => ms.every((n) => n <= 30 * 86_400_000))
    .optional(),
  WEBHOOK_TARGET_GUARD: z.enum(["on", "off"]).optional(),
  SECRETS_KEY: z
    .string()
    .regex(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$/)
    .optional(),
  STRIPE_API_URL: z.url({ protocol: /^https?$/ }).optional(),
  STRIPE_JS_URL: z.url({ protocol: /^https?$/ }).optional(),
  APPLE_PAY_DOMAIN_ASSOCIATION: z.string().min(1).optional(),
});

/** Waits between webhook delivery attempts: 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS = [60, 300, 1800, 7200, 21_600, 43_200, 86_400].map(
  (s) => s * 1000,
);

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** `sqlite:<file>` or a postgres:// URL. */
  databaseUrl: string;
  publicUrl: string;
  /** PUBLIC_URL was given: pages are this instance's only when they come from it (not from any Host). */
  publicUrlSet: boolean;
  production: boolean;
  rateLimitPerHour: number;
  maxBodyBytes: number;
  /**
   * How long a client may take to send one whole request (headers and body); a connection still sending
   * then is answered 408 and closed, so a slow client cannot hold one open for minutes.
   */
  requestTimeoutMs: number;
  /** /v1/donations turned off (false) or on; undefined: served (only the setting turns it off). */
  legacyDonationsApi: boolean | undefined;
  /** Where receipts go; undefined = .eml files under `<dataDir>/mail`. */
  smtpUrl: string | undefined;
  /** Take the donor's address from X-Forwarded-For (behind a reverse proxy). */
  /**
   * Reverse proxies in front of the server (TRUST_PROXY: off = 0, on = 1, or a number of hops): the
   * donor's address is the X-Forwarded-For entry the outermost trusted proxy added, counted from the right.
   */
  trustProxyHops: number;
  /** Checkout attempts per rolling hour per IP address and per form; 0 turns a limit off. */
  checkoutLimitPerIp: number;
  checkoutLimitPerForm: number;
  /** Refused promo codes per rolling hour per IP address and form before codes are refused outright; 0 = off. */
  promoFailureLimit: number;
  /** Quotes per rolling hour per IP address and per form; 0 turns a limit off. */
  quoteLimitPerIp: number;
  quoteLimitPerForm: number;
  /** Declined attempts per card (or bank account) fingerprint in 24 hours before it is refused; 0 = off. */
  cardFailureLimit: number;
  /** How often the background workers (billing, bank settlement, receipts) run. */
  workerIntervalMs: number;
  /** How long a sandbox bank payment stays PENDING. */
  sandboxBankSettleMs: number;
  /** After the n-th failed webhook attempt the next waits about webhookRetryScheduleMs[n-1]; past the end it gives up. */
  webhookRetryScheduleMs: number[];
  /** Webhooks only to https URLs of public addresses (on by default in production). */
  webhookTargetGuard: boolean;
  /** The 32-byte instance key that seals processor secrets (SECRETS_KEY); undefined: a generated key file outside production. */
  secretsKey: Buffer | undefined;
  /** Where the Stripe package sends its requests instead of Stripe (a local emulator in tests); test keys only. */
  stripeApiUrl: string | undefined;
  /** Where pages load Stripe.js from instead of Stripe (a stand-in in tests). */
  stripeJsUrl: string | undefined;
  /** A file with Apple Pay's domain-association content, served at /.well-known/. */
  applePayDomainAssociation: string | undefined;
}

/** Every setting, parsed once from the environment. A bad one throws a StartupError naming it. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(withoutBlanks(env));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue.path[0]);
    throw new StartupError(`Invalid setting ${name}${shownValue(name, env[name] ?? "")}: ${describe(name)}`);
  }
  const e = parsed.data;
  if (e.STRIPE_API_URL && e.NODE_ENV === "production")
    throw new StartupError(
      "STRIPE_API_URL points the Stripe package at a stand-in: it is for tests and development, and refused in production",
    );
  // A stand-in Stripe.js would see the card details donors type into the page.
  if (e.STRIPE_JS_URL && e.NODE_ENV === "production")
    throw new StartupError(
      "STRIPE_JS_URL gives pages a stand-in Stripe.js: it is for tests and development, and refused in production",
    );
  // Read when Apple Pay asks for it, which may be long after the start: a file that cannot be read stops
  // the start instead.
  if (e.APPLE_PAY_DOMAIN_ASSOCIATION !== undefined && !readableFile(e.APPLE_PAY_DOMAIN_ASSOCIATION))
    throw new StartupError(
      `Invalid setting APPLE_PAY_DOMAIN_ASSOCIATION=${JSON.stringify(e.APPLE_PAY_DOMAIN_ASSOCIATION)}: no file that can be read there (the domain association file downloaded from Stripe)`,
    );
  const dataDir = path.resolve(e.DATA_DIR);
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, "");
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    databaseUrl: e.DATABASE_URL ?? `sqlite:${path.join(dataDir, "almoner.db")}`,
    publicUrl,
    publicUrlSet: e.PUBLIC_URL !== undefined,
    production: e.NODE_ENV === "production",
    rateLimitPerHour: e.RATE_LIMIT_PER_HOUR,
    maxBodyBytes: e.MAX_BODY_BYTES,
    requestTimeoutMs: e.REQUEST_TIMEOUT_SECONDS * 1000,
    legacyDonationsApi: e.LEGACY_DONATIONS_API === undefined ? undefined : e.LEGACY_DONATIONS_API === "on",
    smtpUrl: e.SMTP_URL,
    trustProxyHops: e.TRUST_PROXY === "off" ? 0 : e.TRUST_PROXY === "on" ? 1 : Number(e.TRUST_PROXY),
    checkoutLimitPerIp: e.CHECKOUT_LIMIT_PER_IP,
    checkoutLimitPerForm: e.CHECKOUT_LIMIT_PER_FORM,
    promoFailureLimit: e.PROMO_FAILURE_LIMIT,
    quoteLimitPerIp: e.QUOTE_LIMIT_PER_IP,
    quoteLimitPerForm: e.QUOTE_LIMIT_PER_FORM,
    cardFailureLimit: e.CARD_FAILURE_LIMIT,
    workerIntervalMs: Math.round(e.WORKER_INTERVAL_SECONDS * 1000),
    sandboxBankSettleMs: e.SANDBOX_BANK_SETTLE_SECONDS * 1000,
    webhookRetryScheduleMs: e.WEBHOOK_RETRY_SCHEDULE ?? DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS,
    // Production rules: https-only, public webhook targets; development takes http and local ones.
    webhookTargetGuard: (e.WEBHOOK_TARGET_GUARD ?? (e.NODE_ENV === "production" ? "on" : "off")) === "on",
    secretsKey: e.SECRETS_KEY === undefined ? undefined : parseSecretsKey(e.SECRETS_KEY),
    stripeApiUrl: e.STRIPE_API_URL?.replace(/\/+$/, ""),
    stripeJsUrl: e.STRIPE_JS_URL,
    applePayDomainAssociation: e.APPLE_PAY_DOMAIN_ASSOCIATION,
  };
}

function readableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.R_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The environment with blank settings left out: `CHECKOUT_LIMIT_PER_IP=` (a blank line of an .env file or
 * a compose template) means the default, never 0, which would turn a limit off.
 */
function withoutBlanks(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env))
    if (value === undefined || value.trim() !== "") kept[name] = value;
  return kept;
}

/** Settings whose value is never written to the log, even when it is refused. */
const SECRET_SETTINGS = new Set(["SECRETS_KEY"]);

/** The refused value as the start-up error shows it: secrets left out, a URL's password masked. */
function shownValue(name: string, value: string): string {
  if (SECRET_SETTINGS.has(name)) return " (its value is not shown)";
  return `=${JSON.stringify(maskPassword(value))}`;
}

/**
 * A URL-like text with its `user:password@` part replaced by `***@`: everything before the last `@`
 * after the scheme, whatever the password holds (an `@`, no scheme given).
 */
export function maskPassword(text: string): string {
  const at = text.lastIndexOf("@");
  if (at < 0) return text;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(text)?.[0] ?? "";
  return `${scheme}***${text.slice(at)}`;
}

/** SECRETS_KEY as hex (64 digits) or base64 / base64url (43 characters, optional `=`): 32 bytes. */
function parseSecretsKey(text: string): Buffer {
  return /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, "hex") : Buffer.from(text, "base64url");
}

function describe(name: string): string {
  switch (name) {
    case "PORT":
      return "must be a port number from 0 to 65535";
    case "PUBLIC_URL":
      return "must be an absolute http(s) URL without a query or fragment, such as https://give.example.org";
    case "NODE_ENV":
      return "must be production, development or test";
    case "RATE_LIMIT_PER_HOUR":
      return "must be a whole number of requests per hour, 1 to 10000000";
    case "MAX_BODY_BYTES":
      return "must be a whole number of bytes from 1024 to 50000000";
    case "REQUEST_TIMEOUT_SECONDS":
      return "must be a whole number of seconds from 1 to 3600";
    case "LEGACY_DONATIONS_API":
      return "must be on or off";
    case "TRUST_PROXY":
      return "must be off, on (one proxy) or the number of proxies in front of the server, 1 to 9";
    case "SMTP_URL":
      return "must be an smtp:// or smtps:// URL such as smtp://user:password@mail.example.org:587";
    case "CHECKOUT_LIMIT_PER_IP":
    case "CHECKOUT_LIMIT_PER_FORM":
      return "must be a whole number of checkout attempts per hour, 0 to 10000000 (0 turns the limit off)";
    case "PROMO_FAILURE_LIMIT":
      return "must be a whole number of refused promo codes per address and form per hour, 0 to 10000 (0 turns it off)";
    case "QUOTE_LIMIT_PER_IP":
    case "QUOTE_LIMIT_PER_FORM":
      return "must be a whole number of quotes per hour, 0 to 10000000 (0 turns the limit off)";
    case "CARD_FAILURE_LIMIT":
      return "must be a whole number of declined attempts per card per day, 0 to 1000 (0 turns it off)";
    case "WORKER_INTERVAL_SECONDS":
      return "must be a number of seconds from 0.05 to 3600";
    case "SANDBOX_BANK_SETTLE_SECONDS":
      return "must be a whole number of seconds, 0 to 2592000 (30 days)";
    case "WEBHOOK_RETRY_SCHEDULE":
      return "must be 1 to 20 comma-separated numbers of seconds, each 0 to 2592000 (30 days), such as 60,300,1800";
    case "WEBHOOK_TARGET_GUARD":
      return "must be on or off";
    case "SECRETS_KEY":
      return "must be 32 random bytes as 64 hex digits or base64 (openssl rand -hex 32)";
    case "STRIPE_API_URL":
      return "must be an http(s) URL of a Stripe API emulator, such as http://127.0.0.1:12111 (test keys only)";
    case "STRIPE_JS_URL":
      return "must be an http(s) URL of a Stripe.js script";
    default:
      return "must not be empty";
  }
}

import type Stripe from "stripe";
import type { SecretBox } from "../../secrets.js";
import type { StripeConnection } from "../../store/organizations.js";
import { isLiveKey, STRIPE_API_VERSION, stripeClient } from "./client.js";
import { STRIPE_EVENT_TYPES } from "./events.js";

/**
 * Connecting an organization's own Stripe account (`org stripe`): the keys are checked with Stripe
 * (`GET /v1/account`: charges enabled, the keys in the same mode), the webhook
 * endpoint this instance listens on is made at Stripe unless its secret is given, and the instance's host
 * is registered as a payment method domain (wallets). The secrets are sealed with the instance key before
 * they are stored; nothing here prints or returns a secret.
 */

export interface StripeSecrets {
  secretKey: string;
  webhookSecret: string | null;
}

/**
 * Why a connection was refused: `invalid` (the keys, the account or a domain: the caller can fix it),
 * `stripe` (Stripe could not be reached or failed), `setup` (this instance cannot keep secrets),
 * `not-connected` (a change of a connection there is none of).
 */
export class StripeConnectError extends Error {
  constructor(
    message: string,
    readonly kind: "invalid" | "stripe" | "setup" | "not-connected" = "invalid",
  ) {
    super(message);
  }
}

/** How the caller names the inputs in messages: the command line's flags, or the API's fields. */
export interface InputNames {
  secretKey: string;
  publishableKey: string;
  webhookSecret: string;
  /** How another domain is registered. */
  registerDomain: string;
}

export const CLI_NAMES: InputNames = {
  secretKey: "--secret-key",
  publishableKey: "--publishable-key",
  webhookSecret: "--webhook-secret",
  registerDomain: "--register-domain",
};

/** The shapes of Stripe's keys: checked here, and stated in the API's document. */
export const SECRET_KEY = /^(sk|rk)_(test|live)_[A-Za-z0-9]{8,247}$/;
export const PUBLISHABLE_KEY = /^pk_(test|live)_[A-Za-z0-9]{8,247}$/;
export const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/=_-]{8,256}$/;

export function sealStripeSecrets(box: SecretBox, organizationId: string, secrets: StripeSecrets): string {
  return box.seal(JSON.stringify(secrets), `stripe:${organizationId}`);
}

export function openStripeSecrets(box: SecretBox, organizationId: string, sealed: string): StripeSecrets {
  return JSON.parse(box.open(sealed, `stripe:${organizationId}`)) as StripeSecrets;
}

/** A key shown in messages: its prefix and last four characters only. */
export function maskKey(key: string): string {
  const prefix = /^[a-z]+_(test|live)_/.exec(key)?.[0] ?? "";
  return `${prefix}…${key.slice(-4)}`;
}

export interface ConnectInput {
  organizationId: string;
  secretKey: string;
  publishableKey: string;
  webhookSecret?: string;
  /** PUBLIC_URL: the webhook endpoint and the wallet domain are made from it. */
  publicUrl: string;
  apiUrl: string | undefined;
  production: boolean;
  nowIso: string;
  /** The connection it replaces (its webhook endpoint is reused or removed). */
  previous: StripeConnection | null;
  previousSecrets: StripeSecrets | null;
  /** Tests: a client of their own. */
  client?: Stripe;
  /** How messages name the inputs (default: the command line's flags). */
  names?: InputNames;
}

export interface ConnectResult {
  settings: StripeConnection;
  secrets: StripeSecrets;
  /** Things the operator should know that did not stop the connection (a domain Stripe refused). */
  warnings: string[];
}

function mode(key: string): "test" | "live" {
  return isLiveKey(key) ? "live" : "test";
}

/** Checks the keys' shapes and this instance's rules before anything is sent to Stripe. */
function checkKeys(input: ConnectInput): void {
  const names = input.names ?? CLI_NAMES;
  if (!SECRET_KEY.test(input.secretKey))
    throw new StripeConnectError(
      `${names.secretKey} must be a Stripe secret key (sk_test_…, sk_live_…) or restricted key (rk_test_…, rk_live_…)`,
    );
  if (!PUBLISHABLE_KEY.test(input.publishableKey))
    throw new StripeConnectError(
      `${names.publishableKey} must be a Stripe publishable key (pk_test_… or pk_live_…)`,
    );
  if (mode(input.secretKey) !== mode(input.publishableKey))
    throw new StripeConnectError(
      `The keys are from different modes: the secret key is a ${mode(input.secretKey)} key and the publishable key a ${mode(input.publishableKey)} key`,
    );
  if (input.webhookSecret !== undefined && !WEBHOOK_SECRET.test(input.webhookSecret))
    throw new StripeConnectError(`${names.webhookSecret} must be an endpoint signing secret (whsec_…)`);
  if (input.apiUrl && (input.production || mode(input.secretKey) === "live"))
    throw new StripeConnectError(
      "STRIPE_API_URL points Stripe calls at a stand-in: it is refused with live keys and in production",
    );
}

/** Whether a failure of the `stripe` package is Stripe's (unreachable, its error) rather than the keys'. */
function failureKind(err: unknown): "invalid" | "stripe" {
  const type = (err as { type?: string }).type;
  return type === "StripeConnectionError" || type === "StripeAPIError" ? "stripe" : "invalid";
}

function describeStripeFailure(err: unknown, key: string): string {
  const e = err as { type?: string; message?: string };
  if (e.type === "StripeAuthenticationError")
    return `Stripe refused the secret key ${maskKey(key)}: check it`;
  if (e.type === "StripePermissionError")
    return `The restricted key ${maskKey(key)} lacks a permission Almoner needs: ${e.message ?? ""} (docs/payments.md lists them)`;
  if (e.type === "StripeConnectionError" || e.type === "StripeAPIError")
    return `Stripe could not be reached: ${e.message ?? "no answer"}`;
  return `Stripe refused: ${e.message ?? String(err)}`;
}

/** Checks the keys with Stripe and sets up the webhook endpoint and the wallet domain. */
export async function connectStripe(input: ConnectInput): Promise<ConnectResult> {
  checkKeys(input);
  const client = input.client ?? stripeClient(input.secretKey, input.apiUrl);
  const warnings: string[] = [];
  let account: Stripe.Account;
  try {
    account = await client.accounts.retrieveCurrent();
  } catch (err) {
    throw new StripeConnectError(describeStripeFailure(err, input.secretKey), failureKind(err));
  }
  if (!account.charges_enabled)
    throw new StripeConnectError(
      `Stripe says the account ${account.id} cannot take charges yet: finish activating it in the Stripe dashboard`,
    );
  // Kept to be shown: what the account settles in by default. Payments are charged in their own
  // currency whatever it is (Stripe converts), so no currency is refused here.
  const currency = (account.default_currency ?? "usd").toLowerCase();

  const url = `${input.publicUrl}/stripe/webhooks/${input.organizationId}`;
  let webhookEndpointId: string | null = null;
  let webhookSecret: string | null = input.webhookSecret ?? null;
  const sameAccount = input.previous?.accountId === account.id;
  if (!webhookSecret) {
    if (sameAccount && input.previous?.webhookEndpointId && input.previousSecrets?.webhookSecret) {
      // Reconnecting the same account: its endpoint stays.
      webhookEndpointId = input.previous.webhookEndpointId;
      webhookSecret = input.previousSecrets.webhookSecret;
    } else {
      try {
        const endpoint = await client.webhookEndpoints.create({
          url,
          enabled_events: [...STRIPE_EVENT_TYPES],
          api_version: STRIPE_API_VERSION,
          description: "Almoner: payments, refunds and disputes",
          metadata: { almoner_organization: input.organizationId },
        });
        webhookEndpointId = endpoint.id;
        webhookSecret = endpoint.secret ?? null;
      } catch (err) {
        throw new StripeConnectError(
          `Could not create the webhook endpoint ${url}: ${describeStripeFailure(err, input.secretKey)} (or give ${(input.names ?? CLI_NAMES).webhookSecret})`,
          failureKind(err),
        );
      }
      if (!webhookSecret)
        throw new StripeConnectError("Stripe did not return the webhook endpoint's secret", "stripe");
    }
  }

  const domains = sameAccount ? [...(input.previous?.domains ?? [])] : [];
  const host = new URL(input.publicUrl).hostname;
  const registered = await registerDomain(client, host, input.names);
  if (registered === true && !domains.includes(host)) domains.push(host);
  else if (registered !== true) warnings.push(registered.message);

  return {
    settings: {
      processor: "stripe",
      mode: mode(input.secretKey),
      accountId: account.id,
      accountName: account.settings?.dashboard?.display_name ?? account.business_profile?.name ?? null,
      publishableKey: input.publishableKey,
      currency,
      webhookEndpointId,
      domains,
      connectedAt: input.nowIso,
    },
    secrets: { secretKey: input.secretKey, webhookSecret },
    warnings,
  };
}

/** Why a domain was not registered: not a public domain (`invalid`), or Stripe refused or failed. */
export interface DomainRefusal {
  kind: "invalid" | "stripe";
  message: string;
}

/** A site as a bare host: `https://Give.Example.org/path` → `give.example.org`. */
export function hostOf(domain: string): string {
  return domain
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, "")
    .replace(/[/?#].*$/, "")
    .replace(/:\d+$/, "")
    .replace(/\.$/, "");
}

/** Registers a host for wallets (Apple Pay, Google Pay, Link); true, or why it was not registered. */
export async function registerDomain(
  client: Stripe,
  host: string,
  names: InputNames = CLI_NAMES,
): Promise<true | DomainRefusal> {
  if (!/^[a-z0-9.-]+\.[a-z]{2,}$/i.test(host) || host === "localhost")
    return {
      kind: "invalid",
      message: `${host} is not a public domain: wallets are offered only on registered public domains (register one with ${names.registerDomain})`,
    };
  try {
    const existing = await client.paymentMethodDomains.list({ domain_name: host, limit: 1 });
    if (existing.data.length === 0)
      await client.paymentMethodDomains.create({ domain_name: host, enabled: true });
    return true;
  } catch (err) {
    return {
      kind: failureKind(err),
      message: `Stripe did not register ${host} for wallets: ${(err as Error).message}`,
    };
  }
}

/** Removes the webhook endpoint this instance made (disconnecting); a failure is reported, not thrown. */
export async function removeWebhookEndpoint(
  connection: StripeConnection,
  secrets: StripeSecrets,
  apiUrl: string | undefined,
  client?: Stripe,
): Promise<string | null> {
  if (!connection.webhookEndpointId) return null;
  try {
    await (client ?? stripeClient(secrets.secretKey, apiUrl)).webhookEndpoints.del(
      connection.webhookEndpointId,
    );
    return null;
  } catch (err) {
    return `The webhook endpoint ${connection.webhookEndpointId} could not be removed at Stripe: ${(err as Error).message}`;
  }
}

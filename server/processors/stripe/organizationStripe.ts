import { isoAt } from "../../../shared/time.js";
import type { Config } from "../../config.js";
import { type SecretBox, SecretsError } from "../../secrets.js";
import { type AuditActor, recordChange } from "../../store/auditLog.js";
import type { Db } from "../../store/database.js";
import {
  type Organization,
  type StripeConnection,
  setProcessorConnection,
} from "../../store/organizations.js";
import { stripeClient } from "./client.js";
import {
  CLI_NAMES,
  connectStripe,
  hostOf,
  type InputNames,
  maskKey,
  openStripeSecrets,
  registerDomain,
  removeWebhookEndpoint,
  StripeConnectError,
  type StripeSecrets,
  sealStripeSecrets,
} from "./connection.js";

/**
 * An organization's Stripe connection as the command line (`org stripe`) and the API
 * (`/v1/organization/payments`) change it, through the same code: connect (keys checked with Stripe, the
 * webhook endpoint made, the secrets sealed and stored), register another wallet domain, disconnect. Each
 * change is stored with its audit-log entry (`organization.updated`, the public view of the connection
 * before and after: never a secret). Refusals are StripeConnectError.
 */

export interface StripeAccountDeps {
  db: Db;
  secrets: SecretBox;
  config: Pick<Config, "publicUrl" | "stripeApiUrl" | "production" | "secretsKey">;
  now: () => number;
}

/** The connection as it may be shown and audited: no secret, the secret key as its last four only. */
export interface StripeConnectionView {
  mode: "test" | "live";
  accountId: string;
  accountName: string | null;
  publishableKey: string;
  /** `sk_test_…abcd`: the kind of key and its last four characters; null when it cannot be opened. */
  secretKeyHint: string | null;
  /** The account's default currency, upper case. */
  currency: string;
  webhook: {
    url: string;
    /** The endpoint Almoner made at Stripe, or null when its signing secret was given instead. */
    endpointId: string | null;
    /** `created`: made at Stripe by Almoner; `secret-given`: the operator gave the signing secret. */
    setUp: "created" | "secret-given";
  };
  walletDomains: string[];
  connectedAt: string;
}

export function viewOf(
  connection: StripeConnection,
  secrets: StripeSecrets | null,
  publicUrl: string,
  organizationId: string,
): StripeConnectionView {
  return {
    mode: connection.mode,
    accountId: connection.accountId,
    accountName: connection.accountName,
    publishableKey: connection.publishableKey,
    secretKeyHint: secrets ? maskKey(secrets.secretKey) : null,
    currency: connection.currency.toUpperCase(),
    webhook: {
      url: webhookUrl(publicUrl, organizationId),
      endpointId: connection.webhookEndpointId,
      setUp: connection.webhookEndpointId ? "created" : "secret-given",
    },
    walletDomains: connection.domains,
    connectedAt: connection.connectedAt,
  };
}

export const webhookUrl = (publicUrl: string, organizationId: string): string =>
  `${publicUrl}/stripe/webhooks/${organizationId}`;

/** The organization's stored secrets, or null (not connected, or sealed with another SECRETS_KEY). */
export function secretsOf(box: SecretBox, org: Organization): StripeSecrets | null {
  if (!org.processor || !org.processorSecrets) return null;
  try {
    return openStripeSecrets(box, org.id, org.processorSecrets);
  } catch (err) {
    if (err instanceof SecretsError) return null;
    throw err;
  }
}

/** The organization's connection as shown (no secret), or null when not connected. */
export function connectionView(deps: StripeAccountDeps, org: Organization): StripeConnectionView | null {
  if (!org.processor) return null;
  return viewOf(org.processor, secretsOf(deps.secrets, org), deps.config.publicUrl, org.id);
}

/** What the audit log records of a connection: its public view without the secret key's last four. */
function audited(view: StripeConnectionView | null): Record<string, unknown> {
  if (!view) return { paymentProcessor: null };
  const { secretKeyHint: _, ...shown } = view;
  return { paymentProcessor: { name: "stripe", ...shown } };
}

async function store(
  deps: StripeAccountDeps,
  org: Organization,
  next: { settings: StripeConnection; secrets: StripeSecrets } | null,
  actor: AuditActor,
): Promise<void> {
  const nowMs = deps.now();
  let sealed: string | null = null;
  if (next) {
    try {
      sealed = sealStripeSecrets(deps.secrets, org.id, next.secrets);
    } catch (err) {
      if (err instanceof SecretsError) throw new StripeConnectError(err.message, "setup");
      throw err;
    }
  }
  const before = audited(connectionView(deps, org));
  const after = audited(next && viewOf(next.settings, next.secrets, deps.config.publicUrl, org.id));
  await deps.db.transaction().execute(async (trx) => {
    await setProcessorConnection(
      trx,
      org.id,
      next && sealed ? { settings: next.settings, sealedSecrets: sealed } : null,
      isoAt(nowMs),
    );
    await recordChange(
      trx,
      {
        organizationId: org.id,
        actor,
        action: "organization.updated",
        subjectType: "organization",
        subjectId: org.id,
        before,
        after,
      },
      nowMs,
    );
  });
}

/**
 * Connects (or reconnects) the organization's own Stripe account: the keys are checked with Stripe, the
 * webhook endpoint is made unless `webhookSecret` is given, PUBLIC_URL's host is registered for wallets.
 */
export async function connectOrganizationStripe(
  deps: StripeAccountDeps,
  org: Organization,
  keys: { secretKey: string; publishableKey: string; webhookSecret?: string },
  actor: AuditActor,
  names: InputNames = CLI_NAMES,
): Promise<{ view: StripeConnectionView; warnings: string[] }> {
  if (deps.config.production && !deps.config.secretsKey)
    throw new StripeConnectError(
      "Set SECRETS_KEY (32 random bytes: openssl rand -hex 32) before storing Stripe keys: they are kept sealed with it",
      "setup",
    );
  // A sandbox organization's API keys are test keys (cs_test_…): no real money may move through it.
  if (org.sandbox && (/^(sk|rk)_live_/.test(keys.secretKey) || keys.publishableKey.startsWith("pk_live_")))
    throw new StripeConnectError(
      `${names.secretKey} and ${names.publishableKey} must be test keys (sk_test_… or rk_test_…, pk_test_…): this is a sandbox organization, whose own API keys are test keys, so it takes no real money`,
    );
  const connected = await connectStripe({
    organizationId: org.id,
    secretKey: keys.secretKey,
    publishableKey: keys.publishableKey,
    ...(keys.webhookSecret ? { webhookSecret: keys.webhookSecret } : {}),
    publicUrl: deps.config.publicUrl,
    apiUrl: deps.config.stripeApiUrl,
    production: deps.config.production,
    nowIso: isoAt(deps.now()),
    previous: org.processor,
    previousSecrets: secretsOf(deps.secrets, org),
    names,
  });
  await store(deps, org, connected, actor);
  // The endpoint the connection it replaces had (another account's, or one given up for a webhook secret
  // of the operator's) would go on posting events this instance now refuses: removed at Stripe.
  const previous = org.processor;
  const previousSecrets = secretsOf(deps.secrets, org);
  const warnings = [...connected.warnings];
  if (previous?.webhookEndpointId && previous.webhookEndpointId !== connected.settings.webhookEndpointId) {
    const warning = previousSecrets
      ? await removeWebhookEndpoint(previous, previousSecrets, deps.config.stripeApiUrl)
      : `The webhook endpoint ${previous.webhookEndpointId} was left at Stripe: the old keys could not be opened to remove it`;
    if (warning) warnings.push(warning);
  }
  return {
    view: viewOf(connected.settings, connected.secrets, deps.config.publicUrl, org.id),
    warnings,
  };
}

/** Registers another site (one that embeds the forms) at Stripe for wallets; the domains registered. */
export async function registerOrganizationDomain(
  deps: StripeAccountDeps,
  org: Organization,
  domain: string,
  actor: AuditActor,
  names: InputNames = CLI_NAMES,
): Promise<{ host: string; view: StripeConnectionView }> {
  const secrets = secretsOf(deps.secrets, org);
  if (!org.processor || !secrets)
    throw new StripeConnectError(
      "Connect Stripe first: wallet domains are registered with its account",
      "not-connected",
    );
  const host = hostOf(domain);
  const result = await registerDomain(stripeClient(secrets.secretKey, deps.config.stripeApiUrl), host, names);
  if (result !== true) throw new StripeConnectError(result.message, result.kind);
  const settings = { ...org.processor, domains: [...new Set([...org.processor.domains, host])] };
  await store(deps, org, { settings, secrets }, actor);
  return { host, view: viewOf(settings, secrets, deps.config.publicUrl, org.id) };
}

/**
 * Disconnects Stripe: the webhook endpoint Almoner made is removed at Stripe (a failure there is a
 * warning), the keys are forgotten. False when Stripe was not connected (nothing changes then).
 */
export async function disconnectOrganizationStripe(
  deps: StripeAccountDeps,
  org: Organization,
  actor: AuditActor,
): Promise<{ disconnected: boolean; warnings: string[] }> {
  if (!org.processor) return { disconnected: false, warnings: [] };
  const secrets = secretsOf(deps.secrets, org);
  const warning = secrets
    ? await removeWebhookEndpoint(org.processor, secrets, deps.config.stripeApiUrl)
    : org.processor.webhookEndpointId
      ? `The webhook endpoint ${org.processor.webhookEndpointId} was left at Stripe: the keys could not be opened to remove it`
      : null;
  await store(deps, org, null, actor);
  return { disconnected: true, warnings: warning ? [warning] : [] };
}

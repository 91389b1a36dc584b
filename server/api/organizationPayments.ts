import type { Context } from "hono";
import { z } from "zod";
import { requiredString } from "../../shared/schemas/common.js";
import { ApiError } from "../errors.js";
import {
  type InputNames,
  PUBLISHABLE_KEY,
  SECRET_KEY,
  StripeConnectError,
  WEBHOOK_SECRET,
} from "../processors/stripe/connection.js";
import {
  connectionView,
  connectOrganizationStripe,
  disconnectOrganizationStripe,
  registerOrganizationDomain,
  type StripeAccountDeps,
} from "../processors/stripe/organizationStripe.js";
import type { Organization } from "../store/organizations.js";
import type { AppDeps, AppEnv } from "./env.js";
import { loadCallerOrganization } from "./organization.js";
import { ownersOnly } from "./ownerOnly.js";
import { defineRoute, errorSchema, type RouteSpec, standardErrors } from "./route.js";

/**
 * The organization's payment processor from the dashboard's Settings: what takes its payments, and its
 * own Stripe account connected, given wallet domains or disconnected, through the same code as
 * `org stripe` on the command line. Nothing here ever answers a secret: the secret key is shown as its
 * kind and last four characters, the webhook signing secret not at all.
 */

const API_NAMES: InputNames = {
  secretKey: "secretKey",
  publishableKey: "publishableKey",
  webhookSecret: "webhookSecret",
  registerDomain: "POST /v1/organization/payments/stripe/domains",
};

const stripeConnectionSchema = z
  .object({
    mode: z.enum(["test", "live"]).meta({ description: "From the keys' prefix (sk_test_/sk_live_)" }),
    accountId: z.string().meta({ description: "The Stripe account (acct_…)" }),
    accountName: z.string().nullable().meta({ description: "Its name as Stripe shows it, when it has one" }),
    publishableKey: z.string().meta({ description: "Public by design: pages load Stripe.js with it" }),
    secretKeyHint: z.string().nullable().meta({
      description:
        "The secret key's kind and last four characters (`sk_test_…abcd`), never more; null when it cannot be opened (SECRETS_KEY changed)",
    }),
    currency: z.string().meta({ description: "ISO 4217, upper case: the account's default currency" }),
    webhook: z.object({
      url: z.string().meta({ description: "Where Stripe sends this organization's events" }),
      endpointId: z.string().nullable().meta({ description: "The endpoint Almoner made at Stripe (we_…)" }),
      setUp: z.enum(["created", "secret-given"]).meta({
        description:
          "`created`: Almoner made the endpoint at Stripe (and removes it on disconnect); `secret-given`: its signing secret was given instead",
      }),
    }),
    walletDomains: z
      .array(z.string())
      .meta({ description: "Hosts registered at Stripe for Apple Pay, Google Pay and Link" }),
    connectedAt: z.string().meta({ description: "ISO 8601: when these keys were saved" }),
  })
  .meta({ description: "The organization's own Stripe account; never a secret" });

const paymentsSchema = z.object({
  processor: z.enum(["sandbox", "stripe"]).nullable().meta({
    description:
      "What takes the organization's payments: its Stripe account, the instance's sandbox (test payments, outside production or a sandbox organization), or null (production without Stripe: no payments)",
  }),
  mode: z.enum(["test", "live"]).meta({ description: "live only with live Stripe keys" }),
  stripe: stripeConnectionSchema.nullable(),
});

const paymentsChangeSchema = paymentsSchema.extend({
  warnings: z.array(z.string()).meta({
    description:
      "What did not stop the change but should be known (a domain Stripe did not register, an endpoint left at Stripe)",
  }),
});

const stripeKeysSchema = z.strictObject({
  secretKey: requiredString(255)
    .regex(SECRET_KEY, {
      message: "must be a Stripe secret key (sk_test_…, sk_live_…) or restricted key (rk_test_…, rk_live_…)",
    })
    .meta({
      pattern: SECRET_KEY.source,
      description:
        "A secret (sk_test_…, sk_live_…) or restricted (rk_…) key: checked with Stripe, stored sealed",
    }),
  publishableKey: requiredString(255)
    .regex(PUBLISHABLE_KEY, { message: "must be a Stripe publishable key (pk_test_…, pk_live_…)" })
    .meta({
      pattern: PUBLISHABLE_KEY.source,
      description: "pk_test_… or pk_live_…, of the same mode",
    }),
  webhookSecret: requiredString(300)
    .regex(WEBHOOK_SECRET, { message: "must be an endpoint signing secret (whsec_…)" })
    .optional()
    .meta({
      pattern: WEBHOOK_SECRET.source,
      description:
        "whsec_…: the signing secret of an endpoint made by hand at Stripe. Left out: Almoner makes the endpoint",
    }),
});

const domainSchema = z.strictObject({
  domain: requiredString(253).meta({
    description:
      "A public host (`give.example.org`; a URL is read as its host) where the forms are shown: registered at Stripe for wallets",
  }),
});

const stripeRefusals = {
  400: {
    description: "Refused: the keys, the account or the domain (the message says why)",
    schema: errorSchema,
  },
  502: { description: "Stripe could not be reached, or failed", schema: errorSchema },
  503: {
    description: "This instance cannot keep secrets (SECRETS_KEY unset in production)",
    schema: errorSchema,
  },
};

export function organizationPaymentRoutes(deps: AppDeps): RouteSpec[] {
  const account: StripeAccountDeps = {
    db: deps.store.db,
    secrets: deps.secrets,
    config: deps.config,
    now: deps.now,
  };

  function present(org: Organization) {
    const stripe = connectionView(account, org);
    return {
      processor: deps.processors.nameFor(org),
      mode: stripe?.mode ?? "test",
      stripe,
    };
  }

  /** The organization as it is now, after a change. */
  async function reload(c: Context<AppEnv>) {
    return present(await loadCallerOrganization(deps, c.get("auth").organizationId));
  }

  function refusal(err: unknown): never {
    if (!(err instanceof StripeConnectError)) throw err;
    if (err.kind === "stripe") throw new ApiError(502, err.message);
    if (err.kind === "setup") throw new ApiError(503, err.message);
    if (err.kind === "not-connected") throw new ApiError(409, err.message);
    throw new ApiError(400, err.message);
  }

  return [
    defineRoute({
      method: "get",
      path: "/v1/organization/payments",
      operationId: "getPaymentProcessor",
      permission: "organization:read",
      tags: ["Organization"],
      summary: "Get the organization's payment processor",
      description:
        "What takes the organization's payments and, with its own Stripe account connected, the account, mode, publishable key, webhook endpoint and wallet domains. Never a secret: the secret key only as its kind and last four characters.",
      responses: { 200: { description: "The payment processor", schema: paymentsSchema }, ...standardErrors },
      handler: async (c) => c.json(await reload(c)),
    }),
    defineRoute({
      method: "put",
      path: "/v1/organization/payments/stripe",
      operationId: "connectStripe",
      permission: "organization:write",
      idempotent: false,
      before: ownersOnly,
      tags: ["Organization"],
      summary: "Connect the organization's Stripe account",
      description:
        "The same as `org stripe` on the command line. The keys are checked with Stripe (the account must be able to take charges; both keys of one mode), the webhook endpoint `{PUBLIC_URL}/stripe/webhooks/{organizationId}` is made at Stripe unless `webhookSecret` is given, and PUBLIC_URL's host is registered for wallets. The keys are stored sealed and never shown again. Connecting again replaces the keys (the same account keeps its endpoint). Payments go through Stripe from then on. An Owner's session, or a key with organization:write. Recorded in the audit log as `organization.updated` (the connection's public view; no secret).",
      body: stripeKeysSchema,
      rules: [
        {
          fields: ["secretKey", "publishableKey"],
          rule: "both keys of one mode (test or live)",
          error: "The keys are from different modes",
        },
      ],
      responses: {
        200: { description: "Connected", schema: paymentsChangeSchema },
        ...standardErrors,
        ...stripeRefusals,
      },
      handler: async (c, { body }) => {
        const org = await loadCallerOrganization(deps, c.get("auth").organizationId);
        const { warnings } = await connectOrganizationStripe(
          account,
          org,
          {
            secretKey: body.secretKey,
            publishableKey: body.publishableKey,
            ...(body.webhookSecret ? { webhookSecret: body.webhookSecret } : {}),
          },
          c.get("auth").actor,
          API_NAMES,
        ).catch(refusal);
        return c.json({ ...(await reload(c)), warnings });
      },
    }),
    defineRoute({
      method: "post",
      path: "/v1/organization/payments/stripe/domains",
      operationId: "registerWalletDomain",
      permission: "organization:write",
      before: ownersOnly,
      tags: ["Organization"],
      summary: "Register a wallet domain",
      description:
        "Registers a site that shows the forms (embedded or overlay) at Stripe as a payment method domain, so that Apple Pay, Google Pay and Link are offered there; PUBLIC_URL's host is registered when Stripe is connected. Registering a domain again changes nothing. 409 without a Stripe connection.",
      body: domainSchema,
      responses: {
        200: { description: "Registered", schema: paymentsChangeSchema },
        ...standardErrors,
        ...stripeRefusals,
        409: { description: "Stripe is not connected", schema: errorSchema },
      },
      handler: async (c, { body }) => {
        const org = await loadCallerOrganization(deps, c.get("auth").organizationId);
        await registerOrganizationDomain(account, org, body.domain, c.get("auth").actor, API_NAMES).catch(
          refusal,
        );
        return c.json({ ...(await reload(c)), warnings: [] });
      },
    }),
    defineRoute({
      method: "delete",
      path: "/v1/organization/payments/stripe",
      operationId: "disconnectStripe",
      permission: "organization:write",
      before: ownersOnly,
      tags: ["Organization"],
      summary: "Disconnect the organization's Stripe account",
      description:
        "Forgets the keys and removes the webhook endpoint Almoner made at Stripe (a failure there is a warning). Payments then go to the instance's sandbox outside production, and nowhere in production until Stripe is connected again; payments made through Stripe can be refunded only while it is connected, and recurring gifts made through it wait, due and unchanged (no charge is begun; the billing worker logs each one), until it is connected again, when they are charged. Without a connection nothing changes.",
      responses: { 200: { description: "Disconnected", schema: paymentsChangeSchema }, ...standardErrors },
      handler: async (c) => {
        const org = await loadCallerOrganization(deps, c.get("auth").organizationId);
        const { warnings } = await disconnectOrganizationStripe(account, org, c.get("auth").actor).catch(
          refusal,
        );
        return c.json({ ...(await reload(c)), warnings });
      },
    }),
  ];
}

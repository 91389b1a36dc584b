import Stripe from "stripe";
import { connectStripe, sealStripeSecrets } from "../../server/processors/stripe/connection.js";
import { setProcessorConnection } from "../../server/store/organizations.js";
import { createForm, donor } from "./checkout.js";
import {
  encodeForm,
  type StripeEmulator,
  type StripeEmulatorOptions,
  startStripeEmulator,
} from "./stripe/emulator.js";
import { setupTestApp, type TestApp, type TestOrg, type TestResponse, validForms } from "./testApp.js";

/**
 * The app with its organization connected to a Stripe account of a local emulator (STRIPE_API_URL), the
 * way `org stripe` connects one. Webhooks are held by the emulator until the test delivers them to the
 * app (`deliverEvents`), signed as Stripe signs them.
 */

export interface StripeTestApp {
  t: TestApp;
  emulator: StripeEmulator;
  /** The `stripe` package on the organization's account (what a test needs to look at Stripe's side). */
  stripe: Stripe;
  /** A ConfirmationToken as Stripe.js makes it in the donor's browser (publishable key, card details to "Stripe"). */
  cardToken(number?: string, opts?: { setupFutureUsage?: "off_session" }): Promise<string>;
  bankToken(account?: string, opts?: { setupFutureUsage?: "off_session"; manual?: boolean }): Promise<string>;
  /** Delivers the events Stripe has queued for the organization's endpoint to the app; their HTTP statuses. */
  deliverEvents(): Promise<{ type: string; status: number; body: unknown }[]>;
  /** POSTs a webhook body to the organization's endpoint with a Stripe-Signature made with `secret`. */
  postEvent(
    payload: string,
    opts?: { secret?: string; timestamp?: number; org?: TestOrg },
  ): Promise<TestResponse>;
  webhookSecret(): string;
  close(): Promise<void>;
}

/**
 * Connects the app's organization to the emulator's account as `org stripe` does (webhook endpoint at
 * PUBLIC_URL, sealed secrets); answers the endpoint's signing secret.
 */
export async function connectOrganization(t: TestApp, emulator: StripeEmulator): Promise<string> {
  const account = emulator.account;
  const connected = await connectStripe({
    organizationId: t.org.id,
    secretKey: account.secretKey,
    publishableKey: account.publishableKey,
    publicUrl: t.config.publicUrl,
    apiUrl: emulator.url,
    production: false,
    nowIso: new Date().toISOString(),
    previous: null,
    previousSecrets: null,
  });
  await setProcessorConnection(
    t.store.db,
    t.org.id,
    {
      settings: connected.settings,
      sealedSecrets: sealStripeSecrets(t.deps.secrets, t.org.id, connected.secrets),
    },
    new Date().toISOString(),
  );
  return connected.secrets.webhookSecret ?? "";
}

export async function setupStripeApp(
  opts: { env?: Record<string, string>; now?: () => number; emulator?: StripeEmulatorOptions } = {},
): Promise<StripeTestApp> {
  const emulator = await startStripeEmulator({
    webhookMode: "manual",
    followUpDelayMs: null,
    ...opts.emulator,
  });
  const t = await setupTestApp({
    env: {
      STRIPE_API_URL: emulator.url,
      STRIPE_JS_URL: emulator.stripeJsUrl,
      CHECKOUT_LIMIT_PER_IP: "0",
      CHECKOUT_LIMIT_PER_FORM: "0",
      ...opts.env,
    },
    ...(opts.now ? { now: opts.now } : {}),
  });
  const account = emulator.account;
  const webhookSecret = await connectOrganization(t, emulator);
  const stripe = new Stripe(account.secretKey, emulator.clientOptions());

  async function browserToken(paymentMethodData: Record<string, unknown>, setupFutureUsage?: string) {
    const res = await fetch(`${emulator.url}/v1/confirmation_tokens`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: encodeForm({
        key: account.publishableKey,
        payment_method_data: paymentMethodData,
        ...(setupFutureUsage ? { setup_future_usage: setupFutureUsage } : {}),
      }),
    });
    const body = (await res.json()) as { id?: string; error?: { message: string } };
    if (!res.ok || !body.id)
      throw new Error(`confirmation token refused: ${body.error?.message ?? res.status}`);
    return body.id;
  }

  async function postEvent(
    payload: string,
    o: { secret?: string; timestamp?: number; org?: TestOrg } = {},
  ): Promise<TestResponse> {
    return t.request("POST", `/stripe/webhooks/${(o.org ?? t.org).id}`, {
      key: null,
      rawBody: payload,
      headers: {
        "Content-Type": "application/json",
        "Stripe-Signature": emulator.sign(payload, o.secret ?? webhookSecret, o.timestamp),
      },
    });
  }

  return {
    t,
    emulator,
    stripe,
    cardToken: (number = "4242424242424242", o = {}) =>
      browserToken(
        {
          type: "card",
          card: { number, exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, cvc: "123" },
          billing_details: { name: "Ada Donor", email: "ada@example.org" },
        },
        o.setupFutureUsage,
      ),
    bankToken: (accountNumber = "000123456789", o = {}) =>
      browserToken(
        {
          type: "us_bank_account",
          us_bank_account: {
            routing_number: "110000000",
            account_number: accountNumber,
            account_holder_type: "individual",
            ...(o.manual ? { verification_method: "microdeposits" } : {}),
          },
          billing_details: { name: "Ada Donor", email: "ada@example.org" },
        },
        o.setupFutureUsage,
      ),
    async deliverEvents() {
      const out: { type: string; status: number; body: unknown }[] = [];
      for (const event of emulator.webhooks.pending()) {
        emulator.webhooks.drop(event.id);
        const res = await postEvent(JSON.stringify(event));
        out.push({ type: event.type, status: res.status, body: res.body });
      }
      return out;
    },
    postEvent,
    webhookSecret: () => webhookSecret,
    async close() {
      await t.close();
      await emulator.close();
    },
  };
}

/**
 * A monthly gift of 30 by sam@example.org on a new form that takes monthly gifts, paid with `token` (one of
 * `cardToken` or `bankToken`): the form and the checkout's answer, whatever it is.
 */
export async function giveMonthly(s: StripeTestApp, token: string) {
  const formId = await createForm(s.t, { ...validForms.standard(), frequencies: ["ONE_TIME", "MONTHLY"] });
  const res = await s.t.request<Record<string, unknown>>("POST", `/api/forms/${formId}/checkout`, {
    key: null,
    body: {
      amount: 30,
      frequency: "MONTHLY",
      donor: donor("sam@example.org"),
      paymentMethod: { type: "token", token },
    },
  });
  return { formId, res };
}

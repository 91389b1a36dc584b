import type { Frame, Page } from "playwright-core";
import { expect } from "vitest";
import {
  type StripeEmulator,
  type StripeEmulatorOptions,
  startStripeEmulator,
} from "../../support/stripe/emulator.js";
import { connectOrganization } from "../../support/stripeApp.js";
import { type ServedApp, type ServeOptions, serveTestApp } from "./browser.js";

/**
 * The served app with its organization connected to an account of the local Stripe emulator, and what a
 * donor does in Stripe's fields (the stand-in Stripe.js the page loads from the emulator).
 */

export interface StripeServedApp {
  served: ServedApp;
  emulator: StripeEmulator;
  close(): Promise<void>;
}

/**
 * Starts the emulator, serves the app pointed at it (STRIPE_API_URL, STRIPE_JS_URL) and connects the test
 * organization as `org stripe` does. With webhooks in "auto" mode (the default) the emulator POSTs signed
 * events to the served app, whose PUBLIC_URL is its real address.
 */
export async function serveStripeApp(
  opts: { env?: Record<string, string>; emulator?: StripeEmulatorOptions; serve?: ServeOptions } = {},
): Promise<StripeServedApp> {
  const emulator = await startStripeEmulator({
    webhookMode: "auto",
    followUpDelayMs: null,
    ...opts.emulator,
  });
  let served: ServedApp;
  try {
    served = await serveTestApp(
      {
        STRIPE_API_URL: emulator.url,
        STRIPE_JS_URL: emulator.stripeJsUrl,
        CHECKOUT_LIMIT_PER_IP: "0",
        CHECKOUT_LIMIT_PER_FORM: "0",
        ...opts.env,
      },
      opts.serve,
    );
  } catch (err) {
    await emulator.close();
    throw err;
  }
  await connectOrganization(served.t, emulator);
  return {
    served,
    emulator,
    async close() {
      await served.close();
      await emulator.close();
    },
  };
}

type Surface = Page | Frame;

/** Waits for Stripe's Payment Element (the stand-in's card fields) to be on the page. */
export async function paymentElement(on: Surface): Promise<void> {
  await on.locator('#alm-stripe-payment [data-stripe-standin="payment"]').waitFor();
  await on.getByLabel("Card number").waitFor();
}

/** Types a card into Stripe's fields: any future expiry, any CVC, a ZIP code. */
export async function fillStripeCard(on: Surface, number = "4242 4242 4242 4242"): Promise<void> {
  await on.getByLabel("Card number").fill(number);
  await on.getByLabel("Expiration date (MM / YY)").fill("12 / 34");
  await on.getByLabel("Security code (CVC)").fill("123");
  await on.getByLabel("ZIP code").fill("94107");
}

export async function api<T = Record<string, unknown>>(
  served: ServedApp,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(served.baseUrl + path, {
    method,
    headers: {
      Authorization: `Bearer ${served.t.org.key}`,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
}

export interface ApiPayment {
  paymentID: string;
  email: string;
  amount: number;
  status: string;
  frequency: string;
  paymentMethod: string;
  subscriptionId: string | null;
  refundedAmount: number;
  card: { brand: string; last4: string | null } | null;
  bankLast4: string | null;
}

/** The payments of a form in `GET /v1/payments` (a checkout still in flight is not listed). */
export async function listedPayments(served: ServedApp, formId: string): Promise<ApiPayment[]> {
  const res = await api<{ payments: (ApiPayment & { formID: string })[] }>(
    served,
    "GET",
    "/v1/payments?limit=100",
  );
  expect(res.status).toBe(200);
  return res.body.payments.filter((p) => p.formID === formId);
}

/** The one payment a donor made with `email` on the form, once the API lists it. */
export async function listedPayment(served: ServedApp, formId: string, email: string): Promise<ApiPayment> {
  let found: ApiPayment | undefined;
  await expect
    .poll(async () => {
      found = (await listedPayments(served, formId)).find((p) => p.email === email);
      return found !== undefined;
    })
    .toBe(true);
  return found as ApiPayment;
}

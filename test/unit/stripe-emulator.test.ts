import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Window } from "happy-dom";
import Stripe from "stripe";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type StripeEmulator, startStripeEmulator } from "../support/stripe/emulator.js";

type CtokenParams = Parameters<Stripe["testHelpers"]["confirmationTokens"]["create"]>[0];

let emulator: StripeEmulator;
let stripe: Stripe;

function client(key: string, extra: Partial<Stripe.StripeConfig> = {}): Stripe {
  return new Stripe(key, {
    host: "127.0.0.1",
    port: emulator.port,
    protocol: "http",
    maxNetworkRetries: 0,
    ...extra,
  });
}

/** A ConfirmationToken from raw card details, as the browser would make it (test helper, secret key). */
function cardToken(number: string, extra: Record<string, unknown> = {}, s: Stripe = stripe) {
  return s.testHelpers.confirmationTokens.create({
    payment_method_data: {
      type: "card",
      card: { number, exp_month: 12, exp_year: new Date().getFullYear() + 2, cvc: "123" },
      billing_details: { name: "Ada Lovelace", email: "ada@example.com" },
    },
    ...extra,
  } as unknown as CtokenParams);
}

function bankToken(account: string, extra: Record<string, unknown> = {}, manual = false) {
  return stripe.testHelpers.confirmationTokens.create({
    payment_method_data: {
      type: "us_bank_account",
      us_bank_account: {
        routing_number: "110000000",
        account_number: account,
        account_holder_type: "individual",
        ...(manual ? { verification_method: "microdeposits" } : {}),
      },
      billing_details: { name: "Ada Lovelace", email: "ada@example.com" },
    },
    ...extra,
  } as unknown as CtokenParams);
}

async function expectStripeError(promise: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  try {
    await promise;
  } catch (e) {
    expect(e).toBeInstanceOf(Stripe.errors.StripeError);
    return e as Stripe.errors.StripeError;
  }
  throw new Error("expected a Stripe error");
}

const RETURN_URL = "https://donate.example/return";

interface Received {
  body: string;
  signature: string;
}

async function startReceiver(status = 200) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => {
      received.push({ body, signature: String(req.headers["stripe-signature"] ?? "") });
      res.writeHead(status, { "Content-Type": "text/plain" });
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/stripe`;
  return {
    url,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

beforeAll(async () => {
  emulator = await startStripeEmulator({ followUpDelayMs: null });
  stripe = client(emulator.account.secretKey);
});

afterAll(async () => {
  await emulator.close();
});

beforeEach(() => {
  emulator.reset();
});

describe("accounts and keys", () => {
  it("answers GET /v1/account and refuses unknown and publishable keys", async () => {
    const account = await stripe.accounts.retrieveCurrent();
    expect(account.id).toBe(emulator.account.id);
    expect(account.object).toBe("account");
    expect(account.charges_enabled).toBe(true);
    expect(account.default_currency).toBe("usd");
    expect(account.settings?.dashboard.display_name).toBe("Emulated Stripe account");

    const bad = await expectStripeError(client("sk_test_notarealkeyabcd").accounts.retrieveCurrent());
    expect(bad).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(bad.statusCode).toBe(401);
    expect(bad.message).toBe("Invalid API Key provided: sk_test_****abcd");

    const pk = await expectStripeError(client(emulator.account.publishableKey).customers.create({}));
    expect(pk.statusCode).toBe(401);
    expect(pk.message).toMatch(/publishable API key/);
  });

  it("keeps accounts apart and supports restricted and live keys", async () => {
    const other = emulator.addAccount({
      secretKey: "sk_live_otheraccount123",
      publishableKey: "pk_live_otheraccount123",
      restrictedKeys: ["rk_live_otheraccount123"],
      chargesEnabled: false,
      displayName: "Other",
    });
    const live = client(other.secretKey);
    const liveAccount = await client("rk_live_otheraccount123").accounts.retrieveCurrent();
    expect(liveAccount.id).toBe(other.id);
    expect(liveAccount.charges_enabled).toBe(false);

    const customer = await stripe.customers.create({ email: "a@example.com" });
    expect(customer.livemode).toBe(false);
    const missing = await expectStripeError(live.customers.retrieve(customer.id));
    expect(missing.statusCode).toBe(404);
    expect(missing.code).toBe("resource_missing");
    expect(missing.message).toBe(`No such customer: '${customer.id}'`);

    const liveCustomer = await live.customers.create({ name: "Live" });
    expect(liveCustomer.livemode).toBe(true);
    // Magic test PaymentMethods do not exist in live mode, test card numbers are refused there…
    const magic = await expectStripeError(
      live.paymentIntents.create({ amount: 1000, currency: "usd", payment_method: "pm_card_visa" }),
    );
    expect(magic.statusCode).toBe(404);
    const testCard = await expectStripeError(cardToken("4242424242424242", {}, live));
    expect(testCard.decline_code).toBe("live_mode_test_card");
    // …and this account cannot make live charges.
    const token = await cardToken("4000056655665564", { return_url: RETURN_URL }, live);
    expect(token.livemode).toBe(true);
    const refused = await expectStripeError(
      live.paymentIntents.create({
        amount: 1000,
        currency: "usd",
        confirmation_token: token.id,
        confirm: true,
      }),
    );
    expect(refused.message).toBe("Your account cannot currently make live charges.");
  });
});

describe("confirmation tokens", () => {
  it("makes tokens with the test helper and previews the card without revealing it", async () => {
    const token = await stripe.testHelpers.confirmationTokens.create({
      payment_method: "pm_card_visa",
      return_url: RETURN_URL,
    });
    expect(token.id).toMatch(/^ctoken_/);
    expect(token.object).toBe("confirmation_token");
    expect(token.expires_at).toBe(token.created + 12 * 60 * 60);
    expect(token.payment_method_preview?.type).toBe("card");
    expect(token.payment_method_preview?.card).toMatchObject({ brand: "visa", last4: "4242", wallet: null });
    expect(token.return_url).toBe(RETURN_URL);

    const again = await stripe.confirmationTokens.retrieve(token.id);
    expect(again.id).toBe(token.id);

    const a = await cardToken("4242424242424242");
    const b = await cardToken("4242 4242 4242 4242");
    const c = await cardToken("5555555555554444");
    expect(a.payment_method_preview?.card?.fingerprint).toBe(b.payment_method_preview?.card?.fingerprint);
    expect(c.payment_method_preview?.card?.fingerprint).not.toBe(a.payment_method_preview?.card?.fingerprint);
    expect(c.payment_method_preview?.card?.brand).toBe("mastercard");
    expect(JSON.stringify(a)).not.toContain("4242424242424242");

    const other = emulator.addAccount();
    const otherToken = await cardToken("4242424242424242", {}, client(other.secretKey));
    expect(otherToken.payment_method_preview?.card?.fingerprint).not.toBe(
      a.payment_method_preview?.card?.fingerprint,
    );
    await expectStripeError(client(other.secretKey).confirmationTokens.retrieve(a.id));

    const bank = await bankToken("000123456789");
    expect(bank.payment_method_preview?.us_bank_account).toMatchObject({
      bank_name: "STRIPE TEST BANK",
      last4: "6789",
      routing_number: "110000000",
      account_holder_type: "individual",
      account_type: "checking",
    });

    const invalid = await expectStripeError(cardToken("4242424242424243"));
    expect(invalid.statusCode).toBe(402);
    expect(invalid.code).toBe("incorrect_number");
  });

  it("creates tokens from the browser with the publishable key and CORS", async () => {
    const preflight = await fetch(`${emulator.url}/v1/confirmation_tokens`, { method: "OPTIONS" });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    const body = new URLSearchParams({
      key: emulator.account.publishableKey,
      "payment_method_data[type]": "card",
      "payment_method_data[card][wallet]": "google_pay",
      "payment_method_data[billing_details][name]": "Jenny Rosen",
      setup_future_usage: "off_session",
    });
    const res = await fetch(`${emulator.url}/v1/confirmation_tokens`, { method: "POST", body });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const token = (await res.json()) as Stripe.ConfirmationToken;
    expect(token.payment_method_preview?.card?.wallet?.type).toBe("google_pay");
    expect(token.payment_method_preview?.card?.last4).toBe("4242");
    expect(token.setup_future_usage).toBe("off_session");
  });
});

describe("payment intents", () => {
  it("charges a card, saves it to the customer, then charges it off-session", async () => {
    const customer = await stripe.customers.create({
      email: "ada@example.com",
      name: "Ada",
      metadata: { donorId: "d1" },
    });
    expect(customer.metadata).toEqual({ donorId: "d1" });
    const token = await cardToken("4242424242424242", {
      setup_future_usage: "off_session",
      return_url: RETURN_URL,
    });
    const pi = await stripe.paymentIntents.create({
      amount: 2500,
      currency: "usd",
      customer: customer.id,
      confirm: true,
      confirmation_token: token.id,
      setup_future_usage: "off_session",
      metadata: { formId: "f1" },
      expand: ["latest_charge", "payment_method"],
    });
    expect(pi.status).toBe("succeeded");
    expect(pi.amount_received).toBe(2500);
    expect(pi.metadata).toEqual({ formId: "f1" });
    const charge = pi.latest_charge as Stripe.Charge;
    expect(charge.id).toMatch(/^ch_/);
    expect(charge.status).toBe("succeeded");
    expect(charge.payment_method_details?.card?.last4).toBe("4242");
    const pm = pi.payment_method as Stripe.PaymentMethod;
    expect(pm.id).toMatch(/^pm_/);
    expect(pm.customer).toBe(customer.id);
    expect((await stripe.paymentMethods.retrieve(pm.id)).customer).toBe(customer.id);

    const reused = await expectStripeError(
      stripe.paymentIntents.create({
        amount: 500,
        currency: "usd",
        confirm: true,
        confirmation_token: token.id,
      }),
    );
    expect(reused.statusCode).toBe(400);
    expect(reused.param).toBe("confirmation_token");

    const offSession = await stripe.paymentIntents.create({
      amount: 1500,
      currency: "usd",
      customer: customer.id,
      payment_method: pm.id,
      off_session: true,
      confirm: true,
    });
    expect(offSession.status).toBe("succeeded");

    const stranger = await stripe.customers.create({ email: "x@example.com" });
    const notAttached = await expectStripeError(
      stripe.paymentIntents.create({
        amount: 1500,
        currency: "usd",
        customer: stranger.id,
        payment_method: pm.id,
        off_session: true,
        confirm: true,
      }),
    );
    expect(notAttached.statusCode).toBe(400);

    const types = emulator.events.map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining([
        "customer.created",
        "payment_intent.created",
        "payment_method.attached",
        "charge.succeeded",
        "payment_intent.succeeded",
      ]),
    );
  });

  it("goes through requires_payment_method → requires_confirmation → succeeded, and cancels", async () => {
    const pi = await stripe.paymentIntents.create({ amount: 1000, currency: "USD", description: "Gift" });
    expect(pi.status).toBe("requires_payment_method");
    expect(pi.currency).toBe("usd");
    expect(pi.client_secret).toMatch(new RegExp(`^${pi.id}_secret_`));
    expect(pi.automatic_payment_methods?.enabled).toBe(true);
    const updated = await stripe.paymentIntents.update(pi.id, {
      payment_method: "pm_card_mastercard",
      metadata: { a: "1" },
    });
    expect(updated.status).toBe("requires_confirmation");
    expect(updated.metadata).toEqual({ a: "1" });
    const noReturnUrl = await expectStripeError(stripe.paymentIntents.confirm(pi.id));
    expect(noReturnUrl.param).toBe("return_url");
    const confirmed = await stripe.paymentIntents.confirm(pi.id, { return_url: RETURN_URL });
    expect(confirmed.status).toBe("succeeded");
    const again = await expectStripeError(stripe.paymentIntents.confirm(pi.id, { return_url: RETURN_URL }));
    expect(again.code).toBe("payment_intent_unexpected_state");

    const other = await stripe.paymentIntents.create({ amount: 1000, currency: "usd" });
    const canceled = await stripe.paymentIntents.cancel(other.id, { cancellation_reason: "abandoned" });
    expect(canceled.status).toBe("canceled");
    expect(canceled.cancellation_reason).toBe("abandoned");

    const small = await expectStripeError(stripe.paymentIntents.create({ amount: 20, currency: "usd" }));
    expect(small.code).toBe("amount_too_small");
    const zero = await expectStripeError(stripe.paymentIntents.create({ amount: 0, currency: "usd" }));
    expect(zero.param).toBe("amount");
  });

  it("answers a decline with 402 and the PaymentIntent inside the error", async () => {
    const err = await expectStripeError(
      stripe.paymentIntents.create({
        amount: 2000,
        currency: "usd",
        payment_method: "pm_card_chargeDeclinedInsufficientFunds",
        allowed_payment_method_types: ["card"],
        confirm: true,
      }),
    );
    expect(err).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(err.statusCode).toBe(402);
    expect(err.type).toBe("StripeCardError");
    expect(err.rawType).toBe("card_error");
    expect(err.code).toBe("card_declined");
    expect(err.decline_code).toBe("insufficient_funds");
    expect(err.message).toBe("Your card has insufficient funds.");
    expect(err.charge).toMatch(/^ch_/);
    const pi = err.payment_intent as Stripe.PaymentIntent;
    expect(pi.status).toBe("requires_payment_method");
    expect(pi.allowed_payment_method_types).toEqual(["card"]);
    expect(pi.payment_method_types).toEqual(["card"]);
    expect(pi.last_payment_error?.decline_code).toBe("insufficient_funds");
    expect(pi.last_payment_error?.payment_method?.card?.last4).toBe("9995");
    expect((err.raw as { payment_intent: Stripe.PaymentIntent }).payment_intent.id).toBe(pi.id);
    // The failed attempt stays on the PaymentIntent.
    const stored = await stripe.paymentIntents.retrieve(pi.id);
    expect(stored.status).toBe("requires_payment_method");
    expect(stored.latest_charge).toBe(err.charge);
    expect(emulator.events.map((e) => e.type)).toEqual(
      expect.arrayContaining(["charge.failed", "payment_intent.payment_failed"]),
    );

    const token = await cardToken("4000000000000002", { return_url: RETURN_URL });
    const generic = await expectStripeError(
      stripe.paymentIntents.create({
        amount: 2000,
        currency: "usd",
        confirm: true,
        confirmation_token: token.id,
      }),
    );
    expect(generic.message).toBe("Your card was declined.");
    expect(generic.decline_code).toBe("generic_decline");

    const live = await expectStripeError(cardToken("4111111111111111", { return_url: RETURN_URL }));
    expect(live.statusCode).toBe(402);
    expect(live.decline_code).toBe("test_mode_live_card");
    expect(live.message).toMatch(
      /^Your card was declined\. Your request was in test mode, but used a non test \(live\) card\./,
    );
  });

  it("asks for 3-D Secure, then succeeds or fails as the test authenticates", async () => {
    const token = await cardToken("4000002760003184", { return_url: RETURN_URL });
    const pi = await stripe.paymentIntents.create({
      amount: 3000,
      currency: "usd",
      confirm: true,
      confirmation_token: token.id,
    });
    expect(pi.status).toBe("requires_action");
    expect(pi.next_action?.type).toBe("use_stripe_sdk");
    const done = emulator.completeAuthentication(pi.id, "succeed");
    expect(done.status).toBe("succeeded");
    const after = await stripe.paymentIntents.retrieve(pi.id, { expand: ["latest_charge"] });
    expect(after.status).toBe("succeeded");
    expect((after.latest_charge as Stripe.Charge).payment_method_details?.card?.three_d_secure?.result).toBe(
      "authenticated",
    );

    const token2 = await cardToken("4000002500003155", { return_url: RETURN_URL });
    const pi2 = await stripe.paymentIntents.create({
      amount: 3000,
      currency: "usd",
      confirm: true,
      confirmation_token: token2.id,
    });
    expect(pi2.status).toBe("requires_action");
    emulator.completeAuthentication(pi2.id, "fail");
    const failed = await stripe.paymentIntents.retrieve(pi2.id);
    expect(failed.status).toBe("requires_payment_method");
    expect(failed.last_payment_error?.code).toBe("payment_intent_authentication_failure");
    const failure = emulator.events.find((e) => e.type === "payment_intent.payment_failed");
    expect((failure?.data.object as { id: string } | undefined)?.id).toBe(pi2.id);
    expect(() => emulator.completeAuthentication(pi2.id, "succeed")).toThrow(/not waiting/);
  });

  it("refuses off-session charges that need authentication, naming the card in last_payment_error for an on-session retry", async () => {
    const customer = await stripe.customers.create({ email: "b@example.com" });
    const si = await stripe.setupIntents.create({
      customer: customer.id,
      payment_method: "pm_card_authenticationRequired",
      confirm: true,
      return_url: RETURN_URL,
    });
    expect(si.status).toBe("requires_action");
    emulator.completeAuthentication(si.id, "succeed");
    const saved = await stripe.setupIntents.retrieve(si.id);
    expect(saved.status).toBe("succeeded");
    const pmId = saved.payment_method as string;
    expect((await stripe.paymentMethods.retrieve(pmId)).customer).toBe(customer.id);

    const err = await expectStripeError(
      stripe.paymentIntents.create({
        amount: 1200,
        currency: "usd",
        customer: customer.id,
        payment_method: pmId,
        off_session: true,
        confirm: true,
      }),
    );
    expect(err.statusCode).toBe(402);
    expect(err.code).toBe("authentication_required");
    const pi = err.payment_intent as Stripe.PaymentIntent;
    expect(pi.status).toBe("requires_payment_method");
    expect(pi.last_payment_error?.code).toBe("authentication_required");
    // As on Stripe: the method is no longer on the PI, only in its last error, and must be passed again.
    expect(pi.payment_method).toBeNull();
    expect(pi.last_payment_error?.payment_method?.id).toBe(pmId);
    const bare = await expectStripeError(stripe.paymentIntents.confirm(pi.id, { return_url: RETURN_URL }));
    expect(bare.statusCode).toBe(400);
    expect(bare.message).toContain("missing a payment method");
    const retry = await stripe.paymentIntents.confirm(pi.id, {
      payment_method: pmId,
      return_url: RETURN_URL,
    });
    expect(retry.status).toBe("requires_action");

    // 4000002500003155: once set up (authenticated), off-session charges need no authentication.
    const si2 = await stripe.setupIntents.create({
      customer: customer.id,
      payment_method: "pm_card_authenticationRequiredOnSetup",
      confirm: true,
      return_url: RETURN_URL,
    });
    emulator.completeAuthentication(si2.id, "succeed");
    const pm2 = (await stripe.setupIntents.retrieve(si2.id)).payment_method as string;
    const ok = await stripe.paymentIntents.create({
      amount: 1200,
      currency: "usd",
      customer: customer.id,
      payment_method: pm2,
      off_session: true,
      confirm: true,
    });
    expect(ok.status).toBe("succeeded");
  });

  it("debits a bank account: processing, then settles as the test account number says", async () => {
    const token = await bankToken("000123456789", { return_url: RETURN_URL });
    const pi = await stripe.paymentIntents.create({
      amount: 5000,
      currency: "usd",
      confirm: true,
      confirmation_token: token.id,
      expand: ["latest_charge"],
    });
    expect(pi.status).toBe("processing");
    expect((pi.latest_charge as Stripe.Charge).status).toBe("pending");
    const settled = emulator.settleBankPayment(pi.id);
    expect(settled.status).toBe("succeeded");
    expect((await stripe.charges.retrieve(String(settled.latest_charge))).status).toBe("succeeded");

    const closed = await bankToken("000111111113", { return_url: RETURN_URL });
    const pi2 = await stripe.paymentIntents.create({
      amount: 5000,
      currency: "usd",
      confirm: true,
      confirmation_token: closed.id,
    });
    expect(pi2.status).toBe("processing");
    const failed = emulator.settleBankPayment(pi2.id);
    expect(failed.status).toBe("requires_payment_method");
    expect(failed.last_payment_error?.code).toBe("account_closed");
    const charge = await stripe.charges.retrieve(String(failed.latest_charge));
    expect(charge.status).toBe("failed");
    expect(charge.failure_code).toBe("account_closed");

    const poor = await bankToken("000222222227", { return_url: RETURN_URL });
    const pi3 = await stripe.paymentIntents.create({
      amount: 5000,
      currency: "usd",
      confirm: true,
      confirmation_token: poor.id,
    });
    expect(emulator.settleBankPayment(pi3.id).last_payment_error?.code).toBe("insufficient_funds");
    expect(emulator.events.filter((e) => e.type === "payment_intent.processing")).toHaveLength(3);
  });

  it("waits for microdeposits on manually entered bank accounts", async () => {
    const token = await bankToken("000123456789", { return_url: RETURN_URL }, true);
    const pi = await stripe.paymentIntents.create({
      amount: 5000,
      currency: "usd",
      confirm: true,
      confirmation_token: token.id,
    });
    expect(pi.status).toBe("requires_action");
    expect(pi.next_action?.type).toBe("verify_with_microdeposits");
    expect(pi.next_action?.verify_with_microdeposits?.microdeposit_type).toBe("descriptor_code");
    expect(pi.next_action?.verify_with_microdeposits?.hosted_verification_url).toContain(emulator.url);
    const wrong = await expectStripeError(
      stripe.paymentIntents.verifyMicrodeposits(pi.id, { descriptor_code: "SM00XX" }),
    );
    expect(wrong.statusCode).toBe(400);
    const verified = await stripe.paymentIntents.verifyMicrodeposits(pi.id, { descriptor_code: "SM11AA" });
    expect(verified.status).toBe("processing");
    expect(emulator.settleBankPayment(pi.id).status).toBe("succeeded");

    const other = await bankToken("000123456789", { return_url: RETURN_URL }, true);
    const pi2 = await stripe.paymentIntents.create({
      amount: 5000,
      currency: "usd",
      confirm: true,
      confirmation_token: other.id,
    });
    expect(emulator.verifyMicrodeposits(pi2.id).status).toBe("processing");
  });

  it("sets up cards with SetupIntents and declines with the SetupIntent in the error", async () => {
    const customer = await stripe.customers.create({ email: "c@example.com" });
    const si = await stripe.setupIntents.create({
      customer: customer.id,
      payment_method: "pm_card_chargeCustomerFail",
      confirm: true,
      return_url: RETURN_URL,
    });
    expect(si.status).toBe("succeeded");
    const err = await expectStripeError(
      stripe.paymentIntents.create({
        amount: 1000,
        currency: "usd",
        customer: customer.id,
        payment_method: si.payment_method as string,
        off_session: true,
        confirm: true,
      }),
    );
    expect(err.code).toBe("card_declined");

    const declined = await expectStripeError(
      stripe.setupIntents.create({
        customer: customer.id,
        payment_method: "pm_card_chargeDeclined",
        confirm: true,
        return_url: RETURN_URL,
      }),
    );
    expect(declined.statusCode).toBe(402);
    expect((declined.setup_intent as Stripe.SetupIntent).status).toBe("requires_payment_method");
    expect(emulator.events.some((e) => e.type === "setup_intent.setup_failed")).toBe(true);
  });
});

describe("idempotency and faults", () => {
  it("replays the same key with the same parameters and refuses other parameters", async () => {
    const params = { amount: 1000, currency: "usd", metadata: { formId: "f1" } };
    const first = await stripe.paymentIntents.create(params, { idempotencyKey: "key-1" });
    const second = await stripe.paymentIntents.create(params, { idempotencyKey: "key-1" });
    expect(second.id).toBe(first.id);
    expect(second.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect(first.lastResponse.headers["idempotent-replayed"]).toBeUndefined();
    expect(emulator.events.filter((e) => e.type === "payment_intent.created")).toHaveLength(1);
    expect(emulator.countRequests("POST", "/v1/payment_intents")).toBe(2);
    expect(emulator.requests.filter((r) => r.replayed)).toHaveLength(1);

    const err = await expectStripeError(
      stripe.paymentIntents.create({ ...params, amount: 2000 }, { idempotencyKey: "key-1" }),
    );
    expect(err).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(err.statusCode).toBe(400);
    expect(err.message).toBe(
      "Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than 'key-1' if you meant to execute a different request.",
    );

    // A decline is replayed too (same 402, same PaymentIntent) without charging again.
    const declineParams = {
      amount: 1000,
      currency: "usd",
      payment_method: "pm_card_chargeDeclined",
      allowed_payment_method_types: ["card"],
      confirm: true,
    };
    const d1 = await expectStripeError(
      stripe.paymentIntents.create(declineParams, { idempotencyKey: "key-2" }),
    );
    const d2 = await expectStripeError(
      stripe.paymentIntents.create(declineParams, { idempotencyKey: "key-2" }),
    );
    expect((d2.payment_intent as Stripe.PaymentIntent).id).toBe(
      (d1.payment_intent as Stripe.PaymentIntent).id,
    );
    expect(emulator.events.filter((e) => e.type === "charge.failed")).toHaveLength(1);

    // A request that failed validation is not saved: the key can be used again.
    await expectStripeError(
      stripe.paymentIntents.create(
        { amount: 1000, currency: "usd", confirm: true },
        { idempotencyKey: "key-3" },
      ),
    );
    const fixed = await stripe.paymentIntents.create(
      { amount: 1000, currency: "usd" },
      { idempotencyKey: "key-3" },
    );
    expect(fixed.status).toBe("requires_payment_method");
  });

  it("loses an answer after applying the request; a retry with the same key gets the first object", async () => {
    // stripe-node retries a reset connection once by itself (same key), so drop twice to see the error.
    emulator.faults.drop("POST", "/v1/payment_intents", 2);
    const params = { amount: 4200, currency: "usd" };
    const lost = await expectStripeError(stripe.paymentIntents.create(params, { idempotencyKey: "lost-1" }));
    expect(lost).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    expect(emulator.events.filter((e) => e.type === "payment_intent.created")).toHaveLength(1);
    const created = emulator.events[0].data.object as { id: string };

    const retry = await stripe.paymentIntents.create(params, { idempotencyKey: "lost-1" });
    expect(retry.id).toBe(created.id);
    expect(retry.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect(emulator.events.filter((e) => e.type === "payment_intent.created")).toHaveLength(1);

    // One drop: the SDK's own retry is answered by the replay.
    emulator.faults.drop("POST", "/v1/customers");
    const customer = await stripe.customers.create({ email: "d@example.com" });
    expect(customer.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect(emulator.events.filter((e) => e.type === "customer.created")).toHaveLength(1);
  });

  it("answers 500 without doing anything, and delays answers past a client timeout", async () => {
    emulator.faults.fail("POST", "/v1/customers");
    const err = await expectStripeError(
      stripe.customers.create({ email: "e@example.com" }, { idempotencyKey: "c-1" }),
    );
    expect(err).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(err.statusCode).toBe(500);
    const ok = await stripe.customers.create({ email: "e@example.com" }, { idempotencyKey: "c-1" });
    expect(ok.lastResponse.headers["idempotent-replayed"]).toBeUndefined();
    expect(emulator.events.filter((e) => e.type === "customer.created")).toHaveLength(1);

    emulator.faults.delay("GET", "/v1/account", 400);
    const slow = await expectStripeError(
      client(emulator.account.secretKey, { timeout: 100 }).accounts.retrieveCurrent(),
    );
    expect(slow).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    expect(slow.message).toMatch(/timeout/);
  });
});

describe("refunds and disputes", () => {
  async function paid(amount = 5000, card = "pm_card_visa") {
    return stripe.paymentIntents.create({
      amount,
      currency: "usd",
      payment_method: card,
      allowed_payment_method_types: ["card"],
      confirm: true,
    });
  }

  it("refunds partially, then fully, and refuses to refund more", async () => {
    const pi = await paid();
    const partial = await stripe.refunds.create({
      payment_intent: pi.id,
      amount: 2000,
      reason: "requested_by_customer",
    });
    expect(partial.id).toMatch(/^re_/);
    expect(partial.status).toBe("succeeded");
    expect(partial.amount).toBe(2000);
    let charge = await stripe.charges.retrieve(String(pi.latest_charge), { expand: ["refunds"] });
    expect(charge.amount_refunded).toBe(2000);
    expect(charge.refunded).toBe(false);
    expect(charge.refunds?.data.map((r) => r.id)).toEqual([partial.id]);

    const tooMuch = await expectStripeError(stripe.refunds.create({ payment_intent: pi.id, amount: 3001 }));
    expect(tooMuch.code).toBe("amount_too_large");
    expect(tooMuch.message).toBe(
      "Refund amount ($30.01) is greater than unrefunded amount on charge ($30.00)",
    );

    const rest = await stripe.refunds.create({ charge: String(pi.latest_charge) });
    expect(rest.amount).toBe(3000);
    charge = await stripe.charges.retrieve(String(pi.latest_charge));
    expect(charge.amount_refunded).toBe(5000);
    expect(charge.refunded).toBe(true);
    const again = await expectStripeError(stripe.refunds.create({ payment_intent: pi.id }));
    expect(again.code).toBe("charge_already_refunded");
    expect((await stripe.refunds.retrieve(rest.id)).status).toBe("succeeded");

    const refunded = emulator.events.filter((e) => e.type === "charge.refunded");
    expect(refunded).toHaveLength(2);
    expect((refunded[1].data.object as { amount_refunded: number }).amount_refunded).toBe(5000);
    expect(refunded[1].data.previous_attributes).toMatchObject({ amount_refunded: 2000, refunded: false });

    const dashboard = emulator.refundFromDashboard((await paid()).id, 1000);
    expect(dashboard.status).toBe("succeeded");
    const created = emulator.events.filter((e) => e.type === "refund.created").at(-1);
    expect(created?.request).toEqual({ id: null, idempotency_key: null });
  });

  it("keeps the currency and amount it was given, in the currency's smallest unit, on charges, refunds and disputes", async () => {
    const yen = await stripe.paymentIntents.create({
      amount: 500,
      currency: "JPY",
      payment_method: "pm_card_visa",
      allowed_payment_method_types: ["card"],
      confirm: true,
    });
    expect(yen).toMatchObject({ status: "succeeded", amount: 500, amount_received: 500, currency: "jpy" });
    const charge = await stripe.charges.retrieve(String(yen.latest_charge));
    expect(charge).toMatchObject({ amount: 500, currency: "jpy" });
    const refund = await stripe.refunds.create({ payment_intent: yen.id, amount: 200 });
    expect(refund).toMatchObject({ amount: 200, currency: "jpy" });
    const tooMuch = await expectStripeError(stripe.refunds.create({ payment_intent: yen.id, amount: 301 }));
    expect(tooMuch.message).toBe("Refund amount (¥301) is greater than unrefunded amount on charge (¥300)");
    const dispute = emulator.openDispute(yen.id, { amount: 300 });
    expect(dispute).toMatchObject({ amount: 300, currency: "jpy" });

    const small = await expectStripeError(stripe.paymentIntents.create({ amount: 49, currency: "jpy" }));
    expect(small.code).toBe("amount_too_small");
    expect(small.message).toBe("Amount must be at least ¥50 jpy");
    const euro = await stripe.paymentIntents.create({ amount: 2550, currency: "eur" });
    expect(euro).toMatchObject({ amount: 2550, currency: "eur" });
    expect(euro.payment_method_types).not.toContain("us_bank_account");
    const bank = await expectStripeError(
      stripe.paymentIntents.create({
        amount: 2550,
        currency: "eur",
        allowed_payment_method_types: ["us_bank_account"],
      }),
    );
    expect(bank.param).toBe("currency");
  });

  it("keeps bank refunds pending until settled", async () => {
    const token = await bankToken("000123456789", { return_url: RETURN_URL });
    const pi = await stripe.paymentIntents.create({
      amount: 5000,
      currency: "usd",
      confirm: true,
      confirmation_token: token.id,
    });
    emulator.settleBankPayment(pi.id);
    const refund = await stripe.refunds.create({ payment_intent: pi.id, amount: 1000 });
    expect(refund.status).toBe("pending");
    const failed = emulator.settleRefund(refund.id, "failed");
    expect(failed.status).toBe("failed");
    expect((await stripe.charges.retrieve(String(pi.latest_charge))).amount_refunded).toBe(0);
    expect(emulator.events.map((e) => e.type)).toEqual(
      expect.arrayContaining(["refund.created", "refund.failed", "refund.updated", "charge.refund.updated"]),
    );
  });

  it("opens, updates and closes disputes", async () => {
    const pi = await paid(5000, "pm_card_createDispute");
    const dispute = emulator.openDispute(pi.id);
    expect(dispute.id).toMatch(/^dp_/);
    expect(dispute.status).toBe("needs_response");
    expect(dispute.amount).toBe(5000);
    expect(dispute.charge).toBe(pi.latest_charge);
    expect((await stripe.charges.retrieve(String(pi.latest_charge))).disputed).toBe(true);
    const noRefund = await expectStripeError(stripe.refunds.create({ payment_intent: pi.id }));
    expect(noRefund.code).toBe("charge_disputed");
    expect(emulator.updateDispute(dispute.id, "under_review").status).toBe("under_review");
    expect(emulator.closeDispute(dispute.id, "won").status).toBe("won");
    expect(emulator.events.map((e) => e.type).filter((t) => t.startsWith("charge.dispute."))).toEqual([
      "charge.dispute.created",
      "charge.dispute.funds_withdrawn",
      "charge.dispute.updated",
      "charge.dispute.funds_reinstated",
      "charge.dispute.closed",
    ]);

    const lost = emulator.openDispute(String((await paid()).latest_charge), {
      reason: "product_not_received",
      amount: 100,
    });
    const viaApi = await stripe.disputes.update(lost.id, {
      evidence: { uncategorized_text: "losing_evidence" },
    });
    expect(viaApi.status).toBe("under_review");
    expect((await stripe.disputes.retrieve(lost.id)).status).toBe("lost");
  });

  it("opens the test card's dispute by itself shortly after the charge", async () => {
    const auto = await startStripeEmulator({ followUpDelayMs: 20 });
    try {
      const s = new Stripe(auto.account.secretKey, { ...auto.clientOptions() });
      const pi = await s.paymentIntents.create({
        amount: 5000,
        currency: "usd",
        payment_method: "pm_card_createDispute",
        allowed_payment_method_types: ["card"],
        confirm: true,
      });
      const event = await auto.waitForEvent("charge.dispute.created", { timeoutMs: 2000 });
      expect((event.data.object as { payment_intent: string }).payment_intent).toBe(pi.id);
    } finally {
      await auto.close();
    }
  });
});

describe("webhooks", () => {
  it("delivers signed events to the account's endpoints, verified by stripe.webhooks.constructEvent", async () => {
    const receiver = await startReceiver();
    try {
      const endpoint = await stripe.webhookEndpoints.create({
        url: receiver.url,
        enabled_events: ["payment_intent.succeeded", "charge.succeeded"],
        metadata: { purpose: "test" },
      });
      expect(endpoint.id).toMatch(/^we_/);
      expect(endpoint.secret).toMatch(/^whsec_/);
      expect(endpoint.status).toBe("enabled");
      expect((await stripe.webhookEndpoints.retrieve(endpoint.id)).secret).toBeUndefined();
      expect((await stripe.webhookEndpoints.list()).data.map((e) => e.id)).toEqual([endpoint.id]);

      const pi = await stripe.paymentIntents.create(
        {
          amount: 1000,
          currency: "usd",
          payment_method: "pm_card_visa",
          allowed_payment_method_types: ["card"],
          confirm: true,
        },
        { idempotencyKey: "wh-1" },
      );
      await emulator.webhooks.idle();
      expect(receiver.received).toHaveLength(2);
      const events = receiver.received.map((r) =>
        stripe.webhooks.constructEvent(r.body, r.signature, endpoint.secret ?? ""),
      );
      expect(events.map((e) => e.type)).toEqual(["charge.succeeded", "payment_intent.succeeded"]);
      const succeeded = events[1] as Stripe.PaymentIntentSucceededEvent;
      expect(succeeded.data.object.id).toBe(pi.id);
      expect(succeeded.data.object.status).toBe("succeeded");
      expect(succeeded.api_version).toBe(Stripe.API_VERSION);
      expect(succeeded.livemode).toBe(false);
      expect(succeeded.request?.idempotency_key).toBe("wh-1");
      expect(succeeded.id).toMatch(/^evt_/);
      expect(emulator.webhooks.deliveries.every((d) => d.status === 200)).toBe(true);
      expect((await stripe.events.retrieve(succeeded.id)).pending_webhooks).toBe(0);

      await stripe.webhookEndpoints.update(endpoint.id, { disabled: true });
      await stripe.customers.create({ email: "f@example.com" });
      await stripe.webhookEndpoints.del(endpoint.id);
      await emulator.webhooks.idle();
      expect(receiver.received).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });

  it("queues events in manual mode for delivery out of order, twice, or never", async () => {
    const receiver = await startReceiver();
    try {
      emulator.webhooks.mode = "manual";
      const endpoint = await stripe.webhookEndpoints.create({ url: receiver.url, enabled_events: ["*"] });
      const secret = endpoint.secret ?? "";
      await stripe.paymentIntents.create({
        amount: 1000,
        currency: "usd",
        payment_method: "pm_card_visa",
        allowed_payment_method_types: ["card"],
        confirm: true,
      });
      const pending = emulator.webhooks.pending();
      expect(pending.map((e) => e.type)).toEqual([
        "payment_intent.created",
        "charge.succeeded",
        "payment_intent.succeeded",
      ]);
      expect(receiver.received).toHaveLength(0);

      const [created, charged, succeeded] = pending;
      expect(await emulator.webhooks.deliver(succeeded.id)).toBe(200);
      expect(await emulator.webhooks.deliver(succeeded.id)).toBe(200);
      emulator.webhooks.drop(charged.id);
      expect(await emulator.webhooks.deliverAll()).toEqual([
        { eventId: created.id, type: created.type, status: 200 },
      ]);
      expect(emulator.webhooks.pending()).toHaveLength(0);
      const types = receiver.received.map(
        (r) => stripe.webhooks.constructEvent(r.body, r.signature, secret).type,
      );
      expect(types).toEqual([
        "payment_intent.succeeded",
        "payment_intent.succeeded",
        "payment_intent.created",
      ]);
    } finally {
      await receiver.close();
    }
  });

  it("signs hand-made payloads, including expired timestamps", () => {
    const payload = JSON.stringify({ id: "evt_test", object: "event", type: "payment_intent.succeeded" });
    const secret = "whsec_handmade";
    const header = emulator.sign(payload, secret);
    expect(stripe.webhooks.constructEvent(payload, header, secret).id).toBe("evt_test");
    expect(header).toBe(
      stripe.webhooks.generateTestHeaderString({
        payload,
        secret,
        timestamp: Number(header.slice(2, header.indexOf(","))),
      }),
    );
    const old = emulator.sign(payload, secret, Math.floor(Date.now() / 1000) - 3600);
    expect(() => stripe.webhooks.constructEvent(payload, old, secret)).toThrow(/tolerance/);
  });
});

describe("control API over HTTP", () => {
  it("settles, reports wallets and refuses bad calls, with CORS", async () => {
    const token = await bankToken("000123456789", { return_url: RETURN_URL });
    const pi = await stripe.paymentIntents.create({
      amount: 5000,
      currency: "usd",
      confirm: true,
      confirmation_token: token.id,
    });
    const call = (name: string, body: unknown) =>
      fetch(`${emulator.url}/_emulator/${name}`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    const res = await call("settleBankPayment", { paymentIntent: pi.id });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(((await res.json()) as { status: string }).status).toBe("succeeded");
    const again = await call("settleBankPayment", { paymentIntent: pi.id });
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: { message: string } }).error.message).toMatch(
      /not a processing/,
    );
    expect((await call("nope", {})).status).toBe(404);

    expect(await (await fetch(`${emulator.url}/_emulator/wallets`)).json()).toEqual({
      applePay: false,
      googlePay: false,
      sheet: "confirm",
    });
    await call("setWallets", { applePay: true });
    expect(emulator.wallets.applePay).toBe(true);

    const event = await emulator.waitForEvent("payment_intent.succeeded", {
      predicate: (e) => (e.data.object as { id: string }).id === pi.id,
    });
    expect(event.request).toEqual({ id: null, idempotency_key: null });
  });
});

describe("payment method domains and browser reads", () => {
  it("registers payment method domains", async () => {
    const pmd = await stripe.paymentMethodDomains.create({ domain_name: "donate.example.org" });
    expect(pmd.apple_pay.status).toBe("active");
    expect(pmd.google_pay.status).toBe("active");
    const list = await stripe.paymentMethodDomains.list({ domain_name: "donate.example.org" });
    expect(list.data.map((d) => d.id)).toEqual([pmd.id]);
  });

  it("lets the publishable key read an intent only with its client secret", async () => {
    const pi = await stripe.paymentIntents.create({
      amount: 1000,
      currency: "usd",
      metadata: { secret: "x" },
    });
    const pk = emulator.account.publishableKey;
    const url = (secret: string) =>
      `${emulator.url}/v1/payment_intents/${pi.id}?key=${pk}&client_secret=${encodeURIComponent(secret)}`;
    const ok = await fetch(url(pi.client_secret ?? ""));
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as Record<string, unknown>;
    expect(body.id).toBe(pi.id);
    expect(body.metadata).toBeUndefined();
    const bad = await fetch(url(`${pi.id}_secret_wrong`));
    expect(bad.status).toBe(400);
  });
});

describe("stand-in Stripe.js", () => {
  it("is served with CORS and parses as a classic script", async () => {
    for (const path of ["/v3/stripe.js", "/endive/stripe.js"]) {
      const res = await fetch(`${emulator.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/javascript/);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      const source = await res.text();
      expect(() => new Function(source)).not.toThrow();
      // The served copy knows where the emulator is, whatever URL the page loads it from.
      expect(source).toContain(JSON.stringify(emulator.url));
    }
  });

  it("collects a card in the Payment Element, makes a ConfirmationToken and handles 3-D Secure", async () => {
    const source = readFileSync(new URL("../support/stripe/stripe-js.js", import.meta.url), "utf8");
    const win = new Window({
      url: `${emulator.url}/checkout`,
      settings: { enableJavaScriptEvaluation: true, suppressInsecureJavaScriptEnvironmentWarning: true },
    });
    try {
      const doc = win.document;
      doc.body.innerHTML = '<form><div id="payment"></div><div id="express"></div></form>';
      const script = doc.createElement("script");
      script.textContent = source;
      doc.body.append(script);
      // biome-ignore lint/suspicious/noExplicitAny: the stand-in is untyped browser JavaScript
      const StripeJs = (win as any).Stripe;
      expect(StripeJs.version).toBe("endive");
      const stripeJs = StripeJs(emulator.account.publishableKey);
      expect(() => stripeJs.elements({ mode: "payment", currency: "usd" })).toThrow(/amount/);
      const elements = stripeJs.elements({
        mode: "payment",
        amount: 3000,
        currency: "usd",
        setupFutureUsage: "off_session",
      });
      const payment = elements.create("payment", { wallets: { applePay: "never", googlePay: "never" } });
      const ready = new Promise((resolve) => payment.on("ready", resolve));
      payment.mount("#payment");
      await ready;
      const tabs = [...doc.querySelectorAll("[role=tab]")].map((t) => t.textContent);
      expect(tabs).toEqual(["Card", "US bank account"]);
      for (const input of doc.querySelectorAll("#payment input")) {
        const label = doc.querySelector(`label[for="${input.id}"]`);
        expect(label?.textContent, `label for ${input.getAttribute("name")}`).toBeTruthy();
      }
      const invalid = await elements.submit();
      expect(invalid.error).toMatchObject({ type: "validation_error", code: "incomplete_number" });

      const fill = (name: string, value: string) => {
        const input = doc.querySelector(`#payment input[name="${name}"]`) as unknown as HTMLInputElement;
        input.value = value;
        input.dispatchEvent(new win.Event("input", { bubbles: true }) as unknown as Event);
      };
      const changes: { complete: boolean }[] = [];
      payment.on("change", (e: { complete: boolean }) => changes.push(e));
      fill("cardnumber", "4000002760003184");
      fill("exp-date", `12${String(new Date().getFullYear() + 2).slice(2)}`);
      fill("cvc", "123");
      fill("zip", "94107");
      expect(changes.at(-1)?.complete).toBe(true);
      expect(
        (doc.querySelector('#payment input[name="cardnumber"]') as unknown as HTMLInputElement).value,
      ).toBe("4000 0027 6000 3184");
      expect(await elements.submit()).toEqual({ selectedPaymentMethod: "card" });
      const { confirmationToken, error } = await stripeJs.createConfirmationToken({
        elements,
        params: { return_url: RETURN_URL, payment_method_data: { billing_details: { name: "Ada" } } },
      });
      expect(error).toBeUndefined();
      expect(confirmationToken.id).toMatch(/^ctoken_/);
      expect(confirmationToken.payment_method_preview?.card.last4).toBe("3184");
      expect(confirmationToken.setup_future_usage).toBe("off_session");

      const customer = await stripe.customers.create({ email: "g@example.com" });
      const pi = await stripe.paymentIntents.create({
        amount: 3000,
        currency: "usd",
        customer: customer.id,
        setup_future_usage: "off_session",
        confirm: true,
        confirmation_token: confirmationToken.id,
      });
      expect(pi.status).toBe("requires_action");
      const action = stripeJs.handleNextAction({ clientSecret: pi.client_secret });
      let button: HTMLButtonElement | null = null;
      for (let i = 0; i < 100 && !button; i++) {
        await new Promise((r) => setTimeout(r, 10));
        const dialog = doc.querySelector("[role=dialog]");
        button = [...(dialog?.querySelectorAll("button") ?? [])].find(
          (b) => b.textContent === "Complete authentication",
        ) as unknown as HTMLButtonElement | null;
      }
      expect(doc.querySelector("[role=dialog] h2")?.textContent).toBe("Test 3D Secure authentication");
      button?.click();
      const result = await action;
      expect(result.error).toBeUndefined();
      expect(result.paymentIntent.status).toBe("succeeded");
      expect(doc.querySelector("[role=dialog]")).toBeNull();
      expect((await stripe.paymentIntents.retrieve(pi.id)).status).toBe("succeeded");

      const retrieved = await stripeJs.retrievePaymentIntent(pi.client_secret);
      expect(retrieved.paymentIntent.id).toBe(pi.id);
    } finally {
      await win.happyDOM.close();
    }
  });

  it("offers wallets in the Express Checkout Element only when the emulator says they are available", async () => {
    const source = readFileSync(new URL("../support/stripe/stripe-js.js", import.meta.url), "utf8");
    const win = new Window({
      url: `${emulator.url}/checkout`,
      settings: { enableJavaScriptEvaluation: true, suppressInsecureJavaScriptEnvironmentWarning: true },
    });
    try {
      const doc = win.document;
      doc.body.innerHTML = '<div id="express"></div><div id="express2"></div>';
      const script = doc.createElement("script");
      script.textContent = source;
      doc.body.append(script);
      // biome-ignore lint/suspicious/noExplicitAny: the stand-in is untyped browser JavaScript
      const stripeJs = (win as any).Stripe(emulator.account.publishableKey);

      const none = stripeJs
        .elements({ mode: "payment", amount: 1000, currency: "usd" })
        .create("expressCheckout");
      const noneReady = new Promise<{ availablePaymentMethods: unknown }>((resolve) =>
        none.on("ready", resolve),
      );
      none.mount("#express");
      expect((await noneReady).availablePaymentMethods).toBeUndefined();
      expect(doc.querySelectorAll("#express button")).toHaveLength(0);

      emulator.setWallets({ googlePay: true });
      const elements = stripeJs.elements({ mode: "payment", amount: 1000, currency: "usd" });
      const express = elements.create("expressCheckout", { buttonType: { googlePay: "donate" } });
      const ready = new Promise<{ availablePaymentMethods: { googlePay: boolean; applePay: boolean } }>(
        (resolve) => express.on("ready", resolve),
      );
      express.mount("#express2");
      expect((await ready).availablePaymentMethods).toMatchObject({ googlePay: true, applePay: false });
      const button = doc.querySelector("#express2 button") as unknown as HTMLButtonElement;
      expect(button.textContent).toBe("Donate with Google Pay");
      express.on("click", (e: { resolve: () => void }) => e.resolve());
      const confirmed = new Promise<{ expressPaymentType: string; billingDetails: { name: string } }>(
        (resolve) => express.on("confirm", resolve),
      );
      button.click();
      const event = await confirmed;
      expect(event.expressPaymentType).toBe("google_pay");
      expect(event.billingDetails.name).toBe("Jenny Rosen");
      expect(await elements.submit()).toEqual({ selectedPaymentMethod: "google_pay" });
      const { confirmationToken } = await stripeJs.createConfirmationToken({
        elements,
        params: { return_url: RETURN_URL },
      });
      expect(confirmationToken.payment_method_preview?.card.wallet.type).toBe("google_pay");
      const pi = await stripe.paymentIntents.create({
        amount: 1000,
        currency: "usd",
        confirm: true,
        confirmation_token: confirmationToken.id,
      });
      expect(pi.status).toBe("succeeded");
    } finally {
      await win.happyDOM.close();
    }
  });
});

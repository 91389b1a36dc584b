import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runBillingAt } from "../../server/billing/run.js";
import { recoverInterruptedCheckouts } from "../../server/checkout/recovery.js";
import { sealStripeSecrets } from "../../server/processors/stripe/connection.js";
import { connectOrganizationStripe } from "../../server/processors/stripe/organizationStripe.js";
import { StripeProcessor } from "../../server/processors/stripe/processor.js";
import { getOrganization } from "../../server/store/organizations.js";
import { createForm, donor } from "../support/checkout.js";
import { type StripeTestApp, setupStripeApp } from "../support/stripeApp.js";
import { validForms } from "../support/testApp.js";

/**
 * Checkouts of an organization connected to its own Stripe account, against the local Stripe emulator: the
 * page sends a ConfirmationToken (never card data), the server makes and confirms the PaymentIntent, and
 * Stripe's answers (decline, 3-D Secure, bank processing) and webhooks become the same records as the
 * sandbox's.
 */

let s: StripeTestApp;
beforeEach(async () => {
  s = await setupStripeApp();
});
afterEach(async () => {
  await s.close();
});

async function give(formId: string, token: string, extra: Record<string, unknown> = {}, key?: string) {
  return s.t.request<Record<string, unknown>>("POST", `/api/forms/${formId}/checkout`, {
    key: null,
    body: { amount: 50, donor: donor("ada@example.org"), paymentMethod: { type: "token", token }, ...extra },
    headers: key ? { "Idempotency-Key": key } : {},
  });
}

async function payments() {
  return s.t.store.db.selectFrom("payments").selectAll().orderBy("created_at").execute();
}

const standard = () => ({ ...validForms.standard(), frequencies: ["ONE_TIME", "MONTHLY"] });

/**
 * A fresh app on a clock the test moves, with a form, whose next PaymentIntent confirmations Stripe applies
 * and whose answers are lost, every time (the package retries twice itself). `later()` moves the clock past
 * the time after which recovery takes an interrupted checkout.
 */
async function withLostConfirmations() {
  let now = Date.now();
  await s.close();
  s = await setupStripeApp({ now: () => now });
  const formId = await createForm(s.t, standard());
  s.emulator.faults.add({ method: "POST", path: "/v1/payment_intents/", kind: "drop", times: 3 });
  return {
    formId,
    later: () => {
      now += 6 * 60 * 1000;
    },
  };
}

describe("an organization on Stripe", () => {
  it("says so in GET /v1/organization, with the publishable key and never a secret", async () => {
    const res = await s.t.request<Record<string, unknown>>("GET", "/v1/organization");
    expect(res.status).toBe(200);
    expect(res.body.paymentProcessor).toMatchObject({
      name: "stripe",
      mode: "test",
      accountId: s.emulator.account.id,
      publishableKey: s.emulator.account.publishableKey,
      currency: "USD",
    });
    expect(res.text).not.toContain(s.emulator.account.secretKey);
    expect(res.text).not.toContain("whsec_");
  });

  it("keeps its secret key and webhook secret sealed in the database", async () => {
    const row = await s.t.store.db
      .selectFrom("organizations")
      .selectAll()
      .where("id", "=", s.t.org.id)
      .executeTakeFirstOrThrow();
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(s.emulator.account.secretKey);
    expect(stored).not.toContain(s.webhookSecret());
    expect(row.processor_secrets).toMatch(/^v1\./);
  });

  it("made its webhook endpoint at Stripe for this instance's URL and the events it handles", async () => {
    const endpoints = await s.stripe.webhookEndpoints.list();
    expect(endpoints.data).toHaveLength(1);
    expect(endpoints.data[0].url).toBe(`http://forms.test/stripe/webhooks/${s.t.org.id}`);
    expect(endpoints.data[0].enabled_events).toEqual(
      expect.arrayContaining(["payment_intent.succeeded", "charge.refunded", "charge.dispute.created"]),
    );
  });

  it("reconnected with a webhook secret of the operator's: the endpoint Almoner made is removed at Stripe", async () => {
    const [made] = (await s.stripe.webhookEndpoints.list()).data;
    const org = await getOrganization(s.t.store.db, s.t.org.id);
    if (!org) throw new Error("no organization");
    const deps = { db: s.t.store.db, secrets: s.t.deps.secrets, config: s.t.config, now: () => Date.now() };
    const { warnings } = await connectOrganizationStripe(
      deps,
      org,
      {
        secretKey: s.emulator.account.secretKey,
        publishableKey: s.emulator.account.publishableKey,
        webhookSecret: "whsec_operators_own_endpoint",
      },
      { type: "system" },
    );
    expect(warnings).toEqual([]);
    expect((await s.stripe.webhookEndpoints.list()).data.map((e) => e.id)).not.toContain(made.id);
  });

  it("offers the page Stripe's fields: publishable key, the module and the stand-in Stripe.js", async () => {
    const formId = await createForm(s.t, standard());
    const res = await s.t.request<{ payment: Record<string, unknown> }>("GET", `/api/forms/${formId}`, {
      key: null,
    });
    expect(res.body.payment).toMatchObject({
      processor: "stripe",
      publishableKey: s.emulator.account.publishableKey,
      livemode: false,
      module: expect.stringMatching(/^\/checkout\/stripe\.js/),
      jsUrl: s.emulator.stripeJsUrl,
    });
    const page = await s.t.app.request(`/donate/${formId}`);
    const csp = page.headers.get("Content-Security-Policy") ?? "";
    expect(csp).toContain("script-src 'self' https://js.stripe.com https://*.js.stripe.com");
    expect(csp).toContain("frame-src https://js.stripe.com https://*.js.stripe.com https://hooks.stripe.com");
    expect(csp).toContain("connect-src 'self' https://api.stripe.com");
  });
});

describe("a card gift on Stripe", () => {
  it("is confirmed with the token: COMPLETED, one PaymentIntent with our metadata and a customer", async () => {
    const formId = await createForm(s.t, standard());
    const res = await give(formId, await s.cardToken());
    expect(res.status, res.text).toBe(201);
    expect(res.body.payment).toMatchObject({ status: "COMPLETED", total: 50 });
    const [row] = await payments();
    expect(row).toMatchObject({
      status: "COMPLETED",
      processor: "stripe",
      card_brand: "visa",
      last4: "4242",
      payment_method_type: "card",
    });
    expect(row.processor_payment_id).toMatch(/^pi_/);
    const pi = await s.stripe.paymentIntents.retrieve(row.processor_payment_id ?? "");
    expect(pi).toMatchObject({ status: "succeeded", amount: 5000, currency: "usd" });
    expect(pi.metadata).toMatchObject({ almoner_payment: row.id, almoner_form: formId });
    expect(pi.customer).toMatch(/^cus_/);
    expect(pi.statement_descriptor_suffix).toBe("Test Org");
    expect(s.emulator.countRequests("POST", "/v1/payment_intents")).toBe(1);
    const keys = s.emulator.requests
      .filter((r) => r.method === "POST" && r.path.startsWith("/v1/payment_intents"))
      .map((r) => r.idempotencyKey);
    expect(keys).toEqual([`checkout:${row.id}:create`, `checkout:${row.id}:confirm`]);
  });

  it("refuses raw card details: the organization's processor takes them in its own fields only", async () => {
    const formId = await createForm(s.t, standard());
    const res = await s.t.request("POST", `/api/forms/${formId}/checkout`, {
      key: null,
      body: {
        amount: 50,
        donor: donor(),
        paymentMethod: { type: "card", number: "4242424242424242", expMonth: 12, expYear: 2034, cvc: "123" },
      },
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain("processor's own fields");
    expect(res.text).not.toContain("4242424242424242");
    expect(await payments()).toEqual([]);
    expect(s.emulator.countRequests("POST", "/v1/payment_intents")).toBe(0);
  });

  it("records a decline with Stripe's own message, and a new attempt after it is a new PaymentIntent", async () => {
    const formId = await createForm(s.t, standard());
    const declined = await give(formId, await s.cardToken("4000000000009995"), {}, "attempt-1");
    expect(declined.status).toBe(402);
    expect(declined.body).toMatchObject({
      error: "Your card has insufficient funds.",
      code: "insufficient_funds",
    });
    const ok = await give(formId, await s.cardToken(), {}, "attempt-2");
    expect(ok.status).toBe(201);
    expect((await payments()).map((p) => p.status)).toEqual(["FAILED", "COMPLETED"]);
    expect(s.emulator.countRequests("POST", "/v1/payment_intents")).toBe(2);
  });

  it("refuses a card over its cap of declines before Stripe confirms anything: the new PaymentIntent is cancelled", async () => {
    await s.close();
    s = await setupStripeApp({ env: { CARD_FAILURE_LIMIT: "1" } });
    const formId = await createForm(s.t, standard());
    const declined = await give(formId, await s.cardToken("4000000000009995"), {}, "capped-1");
    expect(declined.status).toBe(402);
    const confirmsBefore = s.emulator.requests.filter((r) => r.path.endsWith("/confirm")).length;
    const capped = await give(formId, await s.cardToken("4000000000009995"), {}, "capped-2");
    expect(capped.status).toBe(429);
    expect(String(capped.body.error)).toMatch(/declined too many times/);
    expect(s.emulator.requests.filter((r) => r.path.endsWith("/confirm")).length).toBe(confirmsBefore);
    expect(s.emulator.requests.filter((r) => r.path.endsWith("/cancel"))).toHaveLength(1);
    expect((await payments()).map((p) => p.status)).toEqual(["FAILED"]);
  });

  it("charges once for a double submission (the same Idempotency-Key)", async () => {
    const formId = await createForm(s.t, standard());
    const token = await s.cardToken();
    const answers = await Promise.all([give(formId, token, {}, "double"), give(formId, token, {}, "double")]);
    // The second is the first's replay, or told the first is still running.
    expect(answers.map((a) => a.status)).toContain(201);
    expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
    expect(await payments()).toHaveLength(1);
    expect(s.emulator.countRequests("POST", "/v1/payment_intents")).toBe(1);
  });

  it("asks for 3-D Secure (202 with the client secret), then records what the bank said", async () => {
    const formId = await createForm(s.t, standard());
    const res = await give(formId, await s.cardToken("4000002760003184"));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      status: "requires_action",
      clientSecret: expect.stringContaining("_secret_"),
    });
    const paymentId = String(res.body.paymentID);
    expect((await payments())[0].status).toBe("PROCESSING");
    const listed = await s.t.request<{ payments: unknown[] }>("GET", "/v1/payments");
    expect(listed.body.payments).toEqual([]);

    const [row] = await payments();
    s.emulator.completeAuthentication(row.processor_payment_id ?? "", "succeed");
    const done = await s.t.request<Record<string, unknown>>(
      "POST",
      `/api/forms/${formId}/checkout/${paymentId}/complete`,
      { key: null, body: {} },
    );
    expect(done.status).toBe(201);
    expect((await payments())[0].status).toBe("COMPLETED");
    // Asking again answers the same, charging nothing.
    const again = await s.t.request("POST", `/api/forms/${formId}/checkout/${paymentId}/complete`, {
      key: null,
      body: {},
    });
    expect(again.status).toBe(201);
  });

  it("records a failed 3-D Secure as a decline", async () => {
    const formId = await createForm(s.t, standard());
    const res = await give(formId, await s.cardToken("4000002760003184"));
    const [row] = await payments();
    s.emulator.completeAuthentication(row.processor_payment_id ?? "", "fail");
    const done = await s.t.request<Record<string, unknown>>(
      "POST",
      `/api/forms/${formId}/checkout/${String(res.body.paymentID)}/complete`,
      { key: null, body: {} },
    );
    expect(done.status).toBe(402);
    expect(done.body.code).toBe("authentication_required");
    expect((await payments())[0].status).toBe("FAILED");
  });

  it("finishes a checkout whose confirmation was lost on the way, by the PaymentIntent id stored first", async () => {
    const { formId, later } = await withLostConfirmations();
    const res = await give(formId, await s.cardToken());
    expect(res.status).toBe(503);
    expect(res.text).toContain("do not pay again");
    const [stuck] = await payments();
    expect(stuck.status).toBe("PROCESSING");
    expect(stuck.processor_payment_id).toMatch(/^pi_/);

    later();
    expect(await recoverInterruptedCheckouts(s.t.deps)).toBe(1);
    const [row] = await payments();
    expect(row.status).toBe("COMPLETED");
    expect(s.emulator.countRequests("POST", "/v1/payment_intents")).toBe(1);
  });

  it("records a checkout confirmed while recovery was cancelling it as COMPLETED, not as a decline", async () => {
    const { formId, later } = await withLostConfirmations();
    expect((await give(formId, await s.cardToken())).status).toBe(503);
    // Recovery's first look predates the confirmation landing (it sees nothing confirmed yet); its cancel
    // then finds the PaymentIntent succeeded.
    const processor = StripeProcessor.prototype;
    const real = processor.findCharge;
    processor.findCharge = async () => {
      processor.findCharge = real;
      return null;
    };
    try {
      later();
      expect(await recoverInterruptedCheckouts(s.t.deps)).toBe(1);
    } finally {
      processor.findCharge = real;
    }
    expect((await payments()).map((p) => p.status)).toEqual(["COMPLETED"]);
  });

  it("tells a retry with the same Idempotency-Key not to pay again, making no second payment", async () => {
    const formId = await createForm(s.t, standard());
    s.emulator.faults.add({ method: "POST", path: "/v1/payment_intents/", kind: "drop", times: 3 });
    const token = await s.cardToken();
    const first = await give(formId, token, {}, "lost-answer-1");
    expect(first.status).toBe(503);
    expect(first.body.paymentID).toMatch(/^pay_/);
    // The donor presses the button again (the page keeps the key after a 5xx): the first answer again.
    const retry = await give(formId, token, {}, "lost-answer-1");
    expect(retry.status).toBe(503);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(retry.body).toEqual(first.body);
    expect(await payments()).toHaveLength(1);
    expect(s.emulator.countRequests("POST", "/v1/payment_intents")).toBe(1);
  });
});

describe("a checkout Stripe refuses outright", () => {
  it("a confirmation Stripe refuses (a token not made to be saved, for a monthly gift) fails at once: 402, nothing held", async () => {
    const formId = await createForm(s.t, standard());
    const res = await give(formId, await s.cardToken(), { frequency: "MONTHLY" });
    expect(res.status, res.text).toBe(402);
    const [row] = await payments();
    expect(row).toMatchObject({ status: "FAILED", failure_code: "invalid_payment_method" });
    const pi = await s.stripe.paymentIntents.retrieve(row.processor_payment_id ?? "");
    expect(pi.status).toBe("canceled");
    expect(await s.t.store.db.selectFrom("subscriptions").selectAll().execute()).toEqual([]);
  });

  it("an amount above Stripe's largest charge is the donor's to change: 400, nothing recorded", async () => {
    const formId = await createForm(s.t, standard());
    const res = await give(formId, await s.cardToken(), { amount: 1_000_000 });
    expect(res.status, res.text).toBe(400);
    expect(res.text).toContain("above the largest payment");
    expect(await payments()).toEqual([]);
    // The quote says so before the donor submits; the largest charge itself is priced.
    const quote = (amount: number) =>
      s.t.request<Record<string, unknown>>("POST", `/api/forms/${formId}/quote`, {
        key: null,
        body: { amount },
      });
    const above = await quote(1_000_000);
    expect(above.status, above.text).toBe(400);
    expect(above.text).toContain("amount is above the largest payment this payment method takes in USD");
    expect((await quote(999_999.99)).status).toBe(200);
  });
});

describe("an organization whose Stripe key no longer works", () => {
  it("answers 503 with no detail, charging and recording nothing", async () => {
    const formId = await createForm(s.t, standard());
    const org = await s.t.store.db
      .selectFrom("organizations")
      .selectAll()
      .where("id", "=", s.t.org.id)
      .executeTakeFirstOrThrow();
    const revoked = sealStripeSecrets(s.t.deps.secrets, s.t.org.id, {
      secretKey: "sk_test_revokedrevoked1234",
      webhookSecret: null,
    });
    await s.t.store.db
      .updateTable("organizations")
      .set({ processor_secrets: revoked, updated_at: new Date().toISOString() })
      .where("id", "=", org.id)
      .execute();
    const res = await give(formId, await s.cardToken());
    expect(res.status).toBe(503);
    expect(res.text).not.toContain("sk_test");
    expect(await payments()).toEqual([]);
  });
});

describe("recurring gifts on Stripe", () => {
  it("save the method on the first payment and charge it off-session on the next billing date", async () => {
    const formId = await createForm(s.t, standard());
    const res = await give(
      formId,
      await s.cardToken("4242424242424242", { setupFutureUsage: "off_session" }),
      {
        frequency: "MONTHLY",
      },
    );
    expect(res.status, res.text).toBe(201);
    const sub = await s.t.store.db.selectFrom("subscriptions").selectAll().executeTakeFirstOrThrow();
    expect(sub).toMatchObject({ processor: "stripe", status: "ACTIVE" });
    expect(sub.payment_method_token).toMatch(/^pm_/);
    expect(sub.processor_customer).toMatch(/^cus_/);

    const run = await runBillingAt(s.t.store, s.t.config, Date.parse(sub.next_billing_at) + 1000);
    expect(run.errors).toEqual([]);
    expect(run.billing.charged).toBe(1);
    const charges = await payments();
    expect(charges.map((p) => p.status)).toEqual(["COMPLETED", "COMPLETED"]);
    const pi = await s.stripe.paymentIntents.retrieve(charges[1].processor_payment_id ?? "");
    expect(pi.customer).toBe(sub.processor_customer);
    expect(pi.payment_method).toBe(sub.payment_method_token);
  });
});

describe("a donor's saved method at Stripe", () => {
  it("cannot be charged by a checkout that names it with the donor's e-mail: refused, nothing charged", async () => {
    const formId = await createForm(s.t, standard());
    const first = await give(
      formId,
      await s.cardToken("4242424242424242", { setupFutureUsage: "off_session" }),
      { frequency: "MONTHLY" },
    );
    expect(first.status, first.text).toBe(201);
    const sub = await s.t.store.db.selectFrom("subscriptions").selectAll().executeTakeFirstOrThrow();
    expect(sub.payment_method_token).toMatch(/^pm_/);

    // Someone else, with no key, sends the saved method's id and the donor's address.
    const res = await give(formId, sub.payment_method_token, { amount: 900 });
    expect(res.status, res.text).toBe(400);
    expect(res.text).toContain("paymentMethod.token is not a valid payment method");
    expect((await payments()).map((p) => Number(p.amount_cents))).toEqual([5000]);
    const intents = await s.stripe.paymentIntents.list({ customer: sub.processor_customer ?? "" });
    expect(intents.data.map((pi) => pi.amount)).toEqual([5000]);
  });
});

describe("a donor whose Stripe customer was deleted", () => {
  it("gives again: a new customer is made and charged, the gift COMPLETED", async () => {
    const formId = await createForm(s.t, standard());
    expect((await give(formId, await s.cardToken())).status).toBe(201);
    const [kept] = await s.t.store.db.selectFrom("processor_customers").selectAll().execute();
    // Deleted at Stripe (the dashboard, an erasure request): the customer we kept is gone.
    await s.stripe.customers.del(kept.customer_id);

    const again = await give(formId, await s.cardToken());
    expect(again.status, again.text).toBe(201);
    expect(again.body).toMatchObject({ payment: { status: "COMPLETED" } });
    const customers = await s.t.store.db.selectFrom("processor_customers").selectAll().execute();
    expect(customers).toHaveLength(1);
    expect(customers[0].customer_id).not.toBe(kept.customer_id);
    const [, second] = await payments();
    const pi = await s.stripe.paymentIntents.retrieve(second.processor_payment_id ?? "");
    expect([pi.status, pi.customer]).toEqual(["succeeded", customers[0].customer_id]);
    expect((await payments()).map((p) => p.status)).toEqual(["COMPLETED", "COMPLETED"]);
    // The next gift uses the new customer as it is.
    expect((await give(formId, await s.cardToken())).status).toBe(201);
    expect(await s.t.store.db.selectFrom("processor_customers").selectAll().execute()).toEqual(customers);
  });
});

describe("bank payments on Stripe", () => {
  it("are PENDING while processing, and COMPLETED by Stripe's signed webhook days later", async () => {
    const formId = await createForm(s.t, standard());
    const res = await give(formId, await s.bankToken());
    expect(res.status, res.text).toBe(201);
    expect(res.body.payment).toMatchObject({ status: "PENDING" });
    const [row] = await payments();
    s.emulator.settleBankPayment(row.processor_payment_id ?? "");
    const delivered = await s.deliverEvents();
    expect(delivered.every((d) => d.status === 200)).toBe(true);
    expect((await payments())[0].status).toBe("COMPLETED");
    const events = await s.t.store.db.selectFrom("outbox_events").select("type").orderBy("id").execute();
    expect(events.map((e) => e.type)).toContain("donation.updated");
    const receipts = await s.t.store.db.selectFrom("email_outbox").select("payment_id").execute();
    expect(receipts.map((r) => r.payment_id)).toEqual([row.id]);
  });

  it("are FAILED when the debit bounces, with Stripe's code", async () => {
    const formId = await createForm(s.t, standard());
    await give(formId, await s.bankToken("000222222227"));
    const [row] = await payments();
    s.emulator.settleBankPayment(row.processor_payment_id ?? "");
    await s.deliverEvents();
    expect((await payments())[0]).toMatchObject({ status: "FAILED", failure_code: "insufficient_funds" });
  });

  it("waiting for microdeposit verification are PENDING and say so", async () => {
    const formId = await createForm(s.t, standard());
    const res = await give(formId, await s.bankToken("000123456789", { manual: true }));
    expect(res.status).toBe(201);
    expect(String(res.body.message)).toContain("verify your bank account");
    expect((await payments())[0]).toMatchObject({ status: "PENDING", failure_code: "verify_microdeposits" });
  });
});

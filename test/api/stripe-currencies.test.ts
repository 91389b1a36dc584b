import { afterEach, describe, expect, it } from "vitest";
import { runBillingAt } from "../../server/billing/run.js";
import { createForm, donor } from "../support/checkout.js";
import { type StripeTestApp, setupStripeApp } from "../support/stripeApp.js";
import { setupTestApp, validForms } from "../support/testApp.js";

/**
 * Stripe in the organization's currency: each payment is charged in its own currency, amounts sent in the
 * currency's minor units (EUR 25.50 → 2550, JPY 500 → 500; hundredths inside Almoner), whatever the Stripe
 * account's default currency; recurring charges keep the gift's currency, refunds and disputes the
 * payment's.
 */

let s: StripeTestApp | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

async function start(accountCurrency?: string): Promise<StripeTestApp> {
  s = await setupStripeApp(
    accountCurrency ? { emulator: { accounts: [{ defaultCurrency: accountCurrency }] } } : {},
  );
  return s;
}

async function setCurrency(app: StripeTestApp, currency: string) {
  const res = await app.t.request<{ currency: string }>("PUT", "/v1/organization", { body: { currency } });
  expect(res.status, res.text).toBe(200);
  expect(res.body.currency).toBe(currency);
}

/** A card gift's checkout, answered as it is. */
async function checkoutOf(
  app: StripeTestApp,
  formId: string,
  amount: number,
  extra: Record<string, unknown> = {},
) {
  return app.t.request<{
    payment: { paymentID: string; status: string; total: number };
    error?: string;
    details?: string[];
  }>("POST", `/api/forms/${formId}/checkout`, {
    key: null,
    body: {
      amount,
      donor: donor("ada@example.org"),
      paymentMethod: { type: "token", token: await app.cardToken() },
      ...extra,
    },
  });
}

/** A card gift that goes through. */
async function give(app: StripeTestApp, formId: string, amount: number, extra: Record<string, unknown> = {}) {
  const res = await checkoutOf(app, formId, amount, extra);
  expect(res.status, res.text).toBe(201);
  return res.body.payment;
}

async function row(app: StripeTestApp, id: string) {
  return app.t.store.db.selectFrom("payments").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

describe("connecting Stripe in another currency", () => {
  it("connects an account whose default currency is not USD, and a connected organization may change its currency", async () => {
    const app = await start("eur");
    const org = await app.t.request<{ currency: string; paymentProcessor: Record<string, unknown> }>(
      "GET",
      "/v1/organization",
    );
    expect(org.body.paymentProcessor).toMatchObject({ name: "stripe", currency: "EUR" });
    expect(org.body.currency).toBe("USD");
    await setCurrency(app, "JPY");
    await setCurrency(app, "EUR");
    const after = await app.t.request<{ paymentProcessor: Record<string, unknown> }>(
      "GET",
      "/v1/organization",
    );
    expect(after.body.paymentProcessor).toMatchObject({ name: "stripe", accountId: app.emulator.account.id });
  });
});

describe("gifts on Stripe in the organization's currency", () => {
  it("charges a EUR gift of 25.50 as a PaymentIntent of 2550 eur", async () => {
    const app = await start();
    await setCurrency(app, "EUR");
    const formId = await createForm(app.t, validForms.standard());
    const paid = await give(app, formId, 25.5);
    expect(paid).toMatchObject({ status: "COMPLETED", total: 25.5 });
    const stored = await row(app, paid.paymentID);
    expect(stored).toMatchObject({ currency: "EUR", amount_cents: 2550 });
    const pi = await app.stripe.paymentIntents.retrieve(stored.processor_payment_id ?? "");
    expect(pi).toMatchObject({ status: "succeeded", amount: 2550, currency: "eur", amount_received: 2550 });
    const view = await app.t.request<{ amount: number; currency: string }>(
      "GET",
      `/v1/payments/${paid.paymentID}`,
    );
    expect(view.body).toMatchObject({ amount: 25.5, currency: "EUR" });
  });

  it("charges a JPY gift of 500 yen as amount 500 jpy, and lists it as 500 JPY", async () => {
    const app = await start();
    await setCurrency(app, "JPY");
    const formId = await createForm(app.t, { ...validForms.standard(), oneTimeAmounts: [500, 1000] });
    const paid = await give(app, formId, 500);
    const stored = await row(app, paid.paymentID);
    // Hundredths inside, whole yen at Stripe.
    expect(stored).toMatchObject({ currency: "JPY", amount_cents: 50000, status: "COMPLETED" });
    const created = app.emulator.requests.filter(
      (r) => r.method === "POST" && r.path === "/v1/payment_intents",
    );
    expect(created).toHaveLength(1);
    const pi = await app.stripe.paymentIntents.retrieve(stored.processor_payment_id ?? "");
    expect(pi).toMatchObject({ status: "succeeded", amount: 500, currency: "jpy" });
    const list = await app.t.request<{ payments: Record<string, unknown>[] }>("GET", "/v1/payments");
    expect(list.status).toBe(200);
    expect(list.body.payments).toEqual([
      expect.objectContaining({
        paymentID: paid.paymentID,
        amount: 500,
        currency: "JPY",
        status: "COMPLETED",
      }),
    ]);
  });

  it("keeps a monthly gift's currency for its later charges, after the organization changed its own", async () => {
    const app = await start();
    await setCurrency(app, "EUR");
    const formId = await createForm(app.t, {
      ...validForms.standard(),
      frequencies: ["ONE_TIME", "MONTHLY"],
    });
    const res = await app.t.request("POST", `/api/forms/${formId}/checkout`, {
      key: null,
      body: {
        amount: 25.5,
        frequency: "MONTHLY",
        donor: donor("ada@example.org"),
        paymentMethod: {
          type: "token",
          token: await app.cardToken("4242424242424242", { setupFutureUsage: "off_session" }),
        },
      },
    });
    expect(res.status, res.text).toBe(201);
    await setCurrency(app, "JPY");
    const sub = await app.t.store.db.selectFrom("subscriptions").selectAll().executeTakeFirstOrThrow();
    expect(sub.currency).toBe("EUR");

    const run = await runBillingAt(app.t.store, app.t.config, Date.parse(sub.next_billing_at) + 1000);
    expect(run.errors).toEqual([]);
    expect(run.billing.charged).toBe(1);
    const charges = await app.t.store.db.selectFrom("payments").selectAll().orderBy("created_at").execute();
    expect(charges.map((p) => [p.status, p.currency, Number(p.amount_cents)])).toEqual([
      ["COMPLETED", "EUR", 2550],
      ["COMPLETED", "EUR", 2550],
    ]);
    const pi = await app.stripe.paymentIntents.retrieve(charges[1].processor_payment_id ?? "");
    expect(pi).toMatchObject({
      status: "succeeded",
      amount: 2550,
      currency: "eur",
      customer: sub.processor_customer,
    });
  });
});

describe("refunds and disputes on Stripe in the payment's currency", () => {
  it("refunds part of a EUR payment in cents of EUR, then the rest", async () => {
    const app = await start();
    await setCurrency(app, "EUR");
    const formId = await createForm(app.t, validForms.standard());
    const paid = await give(app, formId, 25.5);
    // The organization's currency changing later does not change the payment's.
    await setCurrency(app, "JPY");
    const part = await app.t.request<Record<string, unknown>>(
      "POST",
      `/v1/payments/${paid.paymentID}/refund`,
      {
        body: { amount: 10.25 },
      },
    );
    expect(part.status, part.text).toBe(200);
    expect(part.body).toMatchObject({
      refund: { amount: 10.25, status: "succeeded" },
      payment: { status: "COMPLETED", refundedAmount: 10.25, currency: "EUR" },
    });
    const rest = await app.t.request<Record<string, unknown>>(
      "POST",
      `/v1/payments/${paid.paymentID}/refund`,
    );
    expect(rest.body).toMatchObject({ refund: { amount: 15.25 }, payment: { status: "REFUNDED" } });
    const stored = await row(app, paid.paymentID);
    const refunds = await app.stripe.refunds.list({ payment_intent: stored.processor_payment_id ?? "" });
    expect(refunds.data.map((r) => [r.amount, r.currency]).sort()).toEqual([
      [1025, "eur"],
      [1525, "eur"],
    ]);
    // Stripe's own news of the refunds changes nothing more.
    await app.deliverEvents();
    expect(Number((await row(app, paid.paymentID)).refunded_cents)).toBe(2550);
  });

  it("refunds once when a refund's answer is lost and it is retried with its Idempotency-Key after Stripe's news", async () => {
    const app = await start();
    const formId = await createForm(app.t, validForms.standard());
    const paid = await give(app, formId, 50);
    const piId = (await row(app, paid.paymentID)).processor_payment_id ?? "";
    // Stripe makes the refund and its answer is lost, every time (the package retries twice itself).
    app.emulator.faults.add({ method: "POST", path: "/v1/refunds", kind: "drop", times: 3 });
    const request = { body: { amount: 10 }, headers: { "Idempotency-Key": "refund-ten" } };
    const lost = await app.t.request("POST", `/v1/payments/${paid.paymentID}/refund`, request);
    expect(lost.status).toBe(503);
    // Stripe's news of it arrives and is recorded; then the same request is sent again.
    await app.deliverEvents();
    expect(Number((await row(app, paid.paymentID)).refunded_cents)).toBe(1000);
    const retry = await app.t.request<Record<string, unknown>>(
      "POST",
      `/v1/payments/${paid.paymentID}/refund`,
      request,
    );
    expect(retry.status, retry.text).toBe(200);
    expect((await app.stripe.refunds.list({ payment_intent: piId })).data.map((r) => r.amount)).toEqual([
      1000,
    ]);
    expect(Number((await row(app, paid.paymentID)).refunded_cents)).toBe(1000);
  });

  it("records a refund whose charge cannot be read back afterwards by the refund's own amount", async () => {
    const app = await start();
    const formId = await createForm(app.t, validForms.standard());
    const paid = await give(app, formId, 50);
    app.emulator.faults.add({ method: "GET", path: "/v1/charges/", kind: "500", times: 3 });
    const res = await app.t.request<Record<string, unknown>>(
      "POST",
      `/v1/payments/${paid.paymentID}/refund`,
      {
        body: { amount: 10 },
      },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ payment: { refundedAmount: 10 } });
    expect(Number((await row(app, paid.paymentID)).refunded_cents)).toBe(1000);
  });

  it("refunds a JPY payment in whole yen, and reads refunds and disputes made at Stripe back in yen", async () => {
    const app = await start();
    await setCurrency(app, "JPY");
    const formId = await createForm(app.t, { ...validForms.standard(), oneTimeAmounts: [500, 3000] });
    const paid = await give(app, formId, 3000);
    const piId = (await row(app, paid.paymentID)).processor_payment_id ?? "";
    const part = await app.t.request<Record<string, unknown>>(
      "POST",
      `/v1/payments/${paid.paymentID}/refund`,
      {
        body: { amount: 1000 },
      },
    );
    expect(part.status, part.text).toBe(200);
    expect(part.body).toMatchObject({ refund: { amount: 1000 }, payment: { refundedAmount: 1000 } });
    expect((await app.stripe.refunds.list({ payment_intent: piId })).data.map((r) => r.amount)).toEqual([
      1000,
    ]);

    // A refund of ¥500 made in Stripe's dashboard.
    app.emulator.refundFromDashboard(piId, 500);
    await app.deliverEvents();
    expect(Number((await row(app, paid.paymentID)).refunded_cents)).toBe(150000);

    app.emulator.openDispute(piId, { reason: "fraudulent", amount: 1500 });
    await app.deliverEvents();
    const view = await app.t.request<{ refundedAmount: number; dispute: Record<string, unknown> }>(
      "GET",
      `/v1/payments/${paid.paymentID}`,
    );
    expect(view.body.refundedAmount).toBe(1500);
    expect(view.body.dispute).toMatchObject({ status: "needs_response", amount: 1500 });
  });
});

describe("a gift below Stripe's minimum charge for its currency", () => {
  it("is a 400 naming the currency's minimum (¥50, SEK 3, HUF 175), not a 503, and records nothing", async () => {
    const app = await start();
    const cases: [string, number, string][] = [
      ["JPY", 10, "¥50"],
      ["SEK", 2, "SEK 3"],
      ["HUF", 100, "HUF 175"],
    ];
    for (const [currency, amount, minimum] of cases) {
      await setCurrency(app, currency);
      const formId = await createForm(app.t, validForms.standard());
      const res = await checkoutOf(app, formId, amount);
      expect(res.status, res.text).toBe(400);
      expect(res.headers.get("retry-after")).toBeNull();
      // Intl writes a no-break space between a code and the number ("SEK 3").
      expect(res.body.details?.map((d) => d.replace(/\u00a0/g, " "))).toEqual([
        `amount must be at least ${minimum} for this payment method`,
      ]);
      expect(res.body.error).toBeTruthy();
    }
    const rows = await app.t.store.db.selectFrom("payments").select("id").execute();
    expect(rows).toEqual([]);
    // At the minimum, the gift goes through.
    await setCurrency(app, "JPY");
    const formId = await createForm(app.t, validForms.standard());
    expect(await give(app, formId, 50)).toMatchObject({ status: "COMPLETED", total: 50 });
  });
});

describe("a quote below Stripe's minimum charge for its currency", () => {
  it("is refused as the checkout would refuse it, before the donor submits; at the minimum it prices", async () => {
    const app = await start();
    await setCurrency(app, "JPY");
    const formId = await createForm(app.t, validForms.standard());
    const quote = (amount: number) =>
      app.t.request<{ total: number; details?: string[] }>("POST", `/api/forms/${formId}/quote`, {
        key: null,
        body: { amount },
      });
    const below = await quote(10);
    expect(below.status, below.text).toBe(400);
    expect(below.body.details).toEqual(["amount must be at least ¥50 for this payment method"]);
    const at = await quote(50);
    expect(at.status, at.text).toBe(200);
    expect(at.body.total).toBe(50);
  });

  it("a sandbox organization's quote is not held to Stripe's minimum", async () => {
    const t = await setupTestApp();
    try {
      const set = await t.request("PUT", "/v1/organization", { body: { currency: "JPY" } });
      expect(set.status, set.text).toBe(200);
      const formId = await createForm(t, validForms.standard());
      const res = await t.request<{ total: number }>("POST", `/api/forms/${formId}/quote`, {
        key: null,
        body: { amount: 10 },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.total).toBe(10);
    } finally {
      await t.close();
    }
  });
});

describe("a refund asked again without an Idempotency-Key", () => {
  async function refund(app: StripeTestApp, paymentId: string, amount: number) {
    const res = await app.t.request<{
      refund: { id: string; status: string };
      payment: { refundedAmount: number };
    }>("POST", `/v1/payments/${paymentId}/refund`, { body: { amount } });
    expect(res.status, res.text).toBe(200);
    return res.body;
  }

  it("is the same refund after a lost answer, and a new one once the first failed at Stripe", async () => {
    const app = await start();
    const formId = await createForm(app.t, validForms.standard());
    const paid = await give(app, formId, 50);
    const piId = (await row(app, paid.paymentID)).processor_payment_id ?? "";
    const first = await refund(app, paid.paymentID, 20);
    // As if the process had died after Stripe made the refund and before it was recorded: asked again, it
    // meets the same state, and so the same refund.
    await app.t.store.db
      .updateTable("payments")
      .set({ refunded_cents: 0 })
      .where("id", "=", paid.paymentID)
      .execute();
    const retried = await refund(app, paid.paymentID, 20);
    expect(retried.refund.id).toBe(first.refund.id);
    expect((await app.stripe.refunds.list({ payment_intent: piId })).data).toHaveLength(1);
    expect(Number((await row(app, paid.paymentID)).refunded_cents)).toBe(2000);

    // The card's bank sends the refund back: the refunded total is 0 again.
    app.emulator.settleRefund(first.refund.id, "failed");
    await app.deliverEvents();
    expect(Number((await row(app, paid.paymentID)).refunded_cents)).toBe(0);
    // The same refund asked again is a new refund at Stripe, and the money goes back.
    const again = await refund(app, paid.paymentID, 20);
    expect(again.refund.id).not.toBe(first.refund.id);
    expect(again.refund.status).toBe("succeeded");
    const refunds = (await app.stripe.refunds.list({ payment_intent: piId })).data;
    expect(refunds.map((r) => [r.id, r.status]).sort()).toEqual(
      [
        [first.refund.id, "failed"],
        [again.refund.id, "succeeded"],
      ].sort(),
    );
    expect(
      (await app.stripe.paymentIntents.retrieve(piId, { expand: ["latest_charge"] })).latest_charge,
    ).toMatchObject({
      amount_refunded: 2000,
    });
    expect(Number((await row(app, paid.paymentID)).refunded_cents)).toBe(2000);
    await app.deliverEvents();
    expect(Number((await row(app, paid.paymentID)).refunded_cents)).toBe(2000);
  });
});

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runBillingAt } from "../../server/billing/run.js";
import { type ChargeInput, ProcessorError } from "../../server/processors/port.js";
import { getOrganization } from "../../server/store/organizations.js";
import { giveMonthly, type StripeTestApp, setupStripeApp } from "../support/stripeApp.js";

/**
 * A recurring charge Stripe refuses outright (`invalid_request`: the saved card detached in Stripe's
 * dashboard, say; `amount_too_small`, `amount_too_large`) is a failed charge: the payment FAILED with what Stripe said, the gift
 * retried 1, 3 and 5 days later and then cancelled, as after a decline. Stripe out of reach leaves the
 * charge to the next pass, as before.
 */

let s: StripeTestApp;
beforeEach(async () => {
  s = await setupStripeApp();
});
afterEach(async () => {
  await s.close();
});

const DAY = 24 * 60 * 60 * 1000;

async function subscribe() {
  const token = await s.cardToken("4242424242424242", { setupFutureUsage: "off_session" });
  const { res } = await giveMonthly(s, token);
  if (res.status !== 201) throw new Error(`subscribe failed: ${res.status} ${res.text}`);
  return s.t.store.db.selectFrom("subscriptions").selectAll().executeTakeFirstOrThrow();
}

const charges = () =>
  s.t.store.db
    .selectFrom("payments")
    .selectAll()
    .where("charge_key", "like", "sub:%")
    .orderBy("charge_key")
    .execute();
const subscription = () => s.t.store.db.selectFrom("subscriptions").selectAll().executeTakeFirstOrThrow();
const events = async (type: string) =>
  (await s.t.store.db.selectFrom("outbox_events").select("type").where("type", "=", type).execute()).length;

describe("a recurring charge Stripe refuses", () => {
  it("after the card was detached: FAILED, retried 1, 3 and 5 days later, then the gift is cancelled", async () => {
    const sub = await subscribe();
    await s.stripe.paymentMethods.detach(sub.payment_method_token);
    let at = Date.parse(sub.next_billing_at) + 1000;
    const first = await runBillingAt(s.t.store, s.t.config, at);
    expect(first.errors).toEqual([]);
    expect(first.billing).toMatchObject({ failed: 1 });
    const [row] = await charges();
    expect(row).toMatchObject({ status: "FAILED", failure_code: "invalid_request" });
    expect(row.failure_message).toBeTruthy();
    let current = await subscription();
    expect(current).toMatchObject({ status: "ACTIVE", failed_attempts: 1 });
    expect(Date.parse(current.retry_at ?? "")).toBe(at + DAY);
    expect(await events("subscription.updated")).toBe(1);
    // Nothing was charged at Stripe.
    const intents = await s.stripe.paymentIntents.list({ customer: sub.processor_customer ?? "" });
    expect(intents.data.filter((pi) => pi.status === "succeeded")).toHaveLength(1);

    // The same pass again does not bill it: it waits for its retry.
    await runBillingAt(s.t.store, s.t.config, at + 1000);
    expect(await charges()).toHaveLength(1);

    for (const attempt of [2, 3, 4]) {
      at = Date.parse((await subscription()).retry_at ?? "") + 1000;
      const run = await runBillingAt(s.t.store, s.t.config, at);
      expect(run.errors).toEqual([]);
      expect(await charges()).toHaveLength(attempt);
    }
    current = await subscription();
    expect(current).toMatchObject({ status: "CANCELLED", failed_attempts: 4, retry_at: null });
    expect((await charges()).map((c) => c.status)).toEqual(["FAILED", "FAILED", "FAILED", "FAILED"]);
    expect(await events("subscription.cancelled")).toBe(1);
    expect(at - Date.parse(sub.next_billing_at)).toBeGreaterThanOrEqual(9 * DAY);
  });

  it("after the customer was deleted in Stripe: FAILED, the gift retrying, nothing charged", async () => {
    const sub = await subscribe();
    const customer = sub.processor_customer ?? "";
    expect(await s.stripe.customers.del(customer)).toMatchObject({ id: customer, deleted: true });
    const at = Date.parse(sub.next_billing_at) + 1000;
    const run = await runBillingAt(s.t.store, s.t.config, at);
    expect(run.errors).toEqual([]);
    expect(run.billing).toMatchObject({ failed: 1 });
    const [row] = await charges();
    expect(row).toMatchObject({ status: "FAILED", failure_code: "invalid_request" });
    expect(row.failure_message).toBeTruthy();
    expect(await subscription()).toMatchObject({ status: "ACTIVE", failed_attempts: 1 });
    expect(Date.parse((await subscription()).retry_at ?? "")).toBe(at + DAY);
    // Only the first gift's PaymentIntent succeeded at Stripe.
    const intents = await s.stripe.paymentIntents.list({ limit: 100 });
    expect(intents.data.filter((pi) => pi.status === "succeeded")).toHaveLength(1);
  });

  it("below Stripe's minimum (amount_too_small): FAILED with the minimum named, the gift retrying", async () => {
    const sub = await subscribe();
    await s.t.store.db
      .updateTable("subscriptions")
      .set({ amount_cents: 10 })
      .where("id", "=", sub.id)
      .execute();
    const run = await runBillingAt(s.t.store, s.t.config, Date.parse(sub.next_billing_at) + 1000);
    expect(run.errors).toEqual([]);
    const [row] = await charges();
    expect(row).toMatchObject({
      status: "FAILED",
      failure_code: "amount_too_small",
      processor_payment_id: null,
    });
    expect(row.failure_message).toContain("$0.50");
    expect(await subscription()).toMatchObject({ status: "ACTIVE", failed_attempts: 1 });
    expect(await events("donation.created")).toBe(2);
  });

  it("above Stripe's maximum (amount_too_large): FAILED, the gift retrying, never left in flight", async () => {
    const sub = await subscribe();
    // $1,000,000 (more than Stripe's $999,999.99), as a gift written before the API refused such amounts.
    await s.t.store.db
      .updateTable("subscriptions")
      .set({ amount_cents: 100_000_000 })
      .where("id", "=", sub.id)
      .execute();
    const run = await runBillingAt(s.t.store, s.t.config, Date.parse(sub.next_billing_at) + 1000);
    expect(run.errors).toEqual([]);
    const [row] = await charges();
    expect(row).toMatchObject({ status: "FAILED", failure_code: "amount_too_large" });
    expect(await subscription()).toMatchObject({ status: "ACTIVE", failed_attempts: 1 });
    // Not in flight: the organization may lower the amount, which the next charge takes.
    const lowered = await s.t.request("PUT", `/v1/subscriptions/${sub.id}`, { body: { amount: 30 } });
    expect(lowered.status, lowered.text).toBe(200);
  });

  it("an amount change the gift's processor would refuse at every renewal is a 400, the fee the donor covers counted", async () => {
    const sub = await subscribe();
    const put = (amount: number) => s.t.request("PUT", `/v1/subscriptions/${sub.id}`, { body: { amount } });
    const tooLarge = await put(1_000_000);
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body).toEqual({
      error: "Validation failed",
      details: ["amount is above the largest payment this payment method takes in USD"],
    });
    const tooSmall = await put(0.1);
    expect(tooSmall.status).toBe(400);
    expect(JSON.stringify(tooSmall.body)).toContain("$0.50");
    // With the fee covered, an amount just under the maximum goes over it.
    await s.t.store.db.updateTable("subscriptions").set({ cover_fees: 1 }).where("id", "=", sub.id).execute();
    expect((await put(999_999)).status).toBe(400);
    const fine = await put(30);
    expect(fine.status, fine.text).toBe(200);
    expect(Number((await subscription()).amount_cents)).toBe(3000);
  });

  it("for a reason that is not the donor's method (a parameter of ours, the account): no gift is failed; charged once Stripe takes it", async () => {
    const sub = await subscribe();
    // What would refuse every gift alike: failing (and in the end cancelling) each for it would end them all.
    s.emulator.faults.refuse("POST", "/v1/payment_intents", {
      message: "Invalid statement_descriptor_suffix: the value contains characters Stripe does not take.",
      param: "statement_descriptor_suffix",
      code: "parameter_invalid",
    });
    const due = Date.parse(sub.next_billing_at) + 1000;
    const run = await runBillingAt(s.t.store, s.t.config, due);
    expect(run.errors.length).toBeGreaterThan(0);
    expect(run.billing).toMatchObject({ failed: 0 });
    expect((await charges()).map((c) => c.status)).toEqual(["PROCESSING"]);
    expect(await subscription()).toMatchObject({ status: "ACTIVE", failed_attempts: 0, cycle: 0 });
    // Stripe takes it again (the cause mended): the same charge goes through, once.
    const next = await runBillingAt(s.t.store, s.t.config, due + 60_000);
    expect(next.errors).toEqual([]);
    expect((await charges()).map((c) => c.status)).toEqual(["COMPLETED"]);
    expect(await subscription()).toMatchObject({ status: "ACTIVE", failed_attempts: 0, cycle: 1 });
  });

  it("a confirmation refused for a reason not the donor's (the account): no gift is failed", async () => {
    const sub = await subscribe();
    // The PaymentIntent is made; confirming it is refused for the account itself.
    s.emulator.faults.refuse("POST", "/v1/payment_intents/", {
      message: "Your account cannot currently make charges.",
      code: "account_invalid",
    });
    const run = await runBillingAt(s.t.store, s.t.config, Date.parse(sub.next_billing_at) + 1000);
    expect(run.errors.length).toBeGreaterThan(0);
    expect(run.billing).toMatchObject({ failed: 0 });
    expect((await charges()).map((c) => c.status)).toEqual(["PROCESSING"]);
    expect(await subscription()).toMatchObject({ status: "ACTIVE", failed_attempts: 0 });
  });

  it("for the donor's method, named by Stripe's param: a failed charge, the gift retrying", async () => {
    const sub = await subscribe();
    s.emulator.faults.refuse("POST", "/v1/payment_intents", {
      message: "The PaymentMethod cannot be used: it was detached from its customer.",
      param: "payment_method",
    });
    await runBillingAt(s.t.store, s.t.config, Date.parse(sub.next_billing_at) + 1000);
    const [row] = await charges();
    expect(row).toMatchObject({ status: "FAILED", failure_code: "invalid_request" });
    expect(await subscription()).toMatchObject({ status: "ACTIVE", failed_attempts: 1 });
  });

  it("out of reach (a 500) is left PROCESSING for the next pass, the gift untouched", async () => {
    const sub = await subscribe();
    s.emulator.faults.add({ method: "POST", path: "/v1/payment_intents", kind: "500", times: 10 });
    const run = await runBillingAt(s.t.store, s.t.config, Date.parse(sub.next_billing_at) + 1000);
    expect(run.errors.length).toBeGreaterThan(0);
    const [row] = await charges();
    expect(row.status).toBe("PROCESSING");
    expect(await subscription()).toMatchObject({ status: "ACTIVE", failed_attempts: 0, cycle: 0 });
  });

  // A renewal in doubt is made again under a key of its own only when Stripe refuses its key as used with
  // other details (charges.ts): a request still in flight must never be taken for that.
  it("a charge Stripe is still working on under the same key (its 409) is an outage to retry, not a key reused with other details", async () => {
    const sub = await subscribe();
    const org = await getOrganization(s.t.store.db, s.t.org.id);
    if (!org) throw new Error("no organization");
    const processor = s.t.deps.processors.named("stripe", org);
    const input: ChargeInput = {
      amountCents: 1000,
      currency: "USD",
      paymentMethod: sub.payment_method_token,
      customer: sub.processor_customer ?? undefined,
      idempotencyKey: `sub:${sub.id}:1:1`,
      description: "Donation: in flight",
      offSession: true,
    };
    // Stripe holds the first request's key while it works on it, for longer than the client's retries.
    s.emulator.faults.delay("POST", "/v1/payment_intents", 5_000, { inFlight: true });
    const first = processor.charge(input);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second: unknown = await processor.charge(input).then(
      () => null,
      (err: unknown) => err,
    );
    expect(second).toBeInstanceOf(ProcessorError);
    expect(second).toMatchObject({ code: "unavailable" });
    // The first goes through, once; the second made nothing.
    expect((await first).status).toBe("succeeded");
    const intents = await s.stripe.paymentIntents.list({ customer: sub.processor_customer ?? "" });
    expect(intents.data.filter((pi) => pi.description === "Donation: in flight")).toHaveLength(1);
  });
});

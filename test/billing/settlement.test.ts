import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AppDeps } from "../../server/api/env.js";
import { SettlementWorker } from "../../server/billing/settlement.js";
import { openProcessors } from "../../server/processors/index.js";
import type { PaymentProcessor } from "../../server/processors/port.js";
import type { Store } from "../../server/store/database.js";
import { bank, checkout, createForm, donor } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";
import {
  at,
  eventsOf,
  paymentsOf,
  recurringForm,
  secondStore,
  subscribe,
  subscription,
  worker,
} from "./support.js";

type Json = Record<string, unknown>;

const START = at("2026-04-15T18:00:00Z");
/** The sandbox's bank settle time in these tests. */
const SETTLE_MS = 3600_000;

let clock = START;
let t: TestApp;
const cleanups: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  clock = START;
  t = await setupTestApp({
    now: () => clock,
    env: {
      CHECKOUT_LIMIT_PER_IP: "0",
      CHECKOUT_LIMIT_PER_FORM: "0",
      SANDBOX_BANK_SETTLE_SECONDS: String(SETTLE_MS / 1000),
    },
  });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await t.close();
});

function settler(deps: AppDeps = t.deps) {
  return new SettlementWorker({
    deps,
    onError: (err) => {
      throw err;
    },
  });
}

async function bankGift(accountNumber?: string): Promise<string> {
  const formId = await createForm(t, validForms.standard());
  const res = await checkout(t, formId, { amount: 40, donor: donor(), paymentMethod: bank(accountNumber) });
  expect(res.status).toBe(201);
  const payment = res.body.payment as { paymentID: string; status: string };
  expect(payment.status).toBe("PENDING");
  return payment.paymentID;
}

const payment = (id: string) =>
  t.store.db.selectFrom("payments").selectAll().where("id", "=", id).executeTakeFirstOrThrow();

/** The subscription as GET /v1/subscriptions/{id} shows it. */
const shown = async (id: string) => (await t.request<Json>("GET", `/v1/subscriptions/${id}`)).body;

/** Charges the subscription from now on to another sandbox bank account (as the update page would). */
async function useBankAccount(subscriptionId: string, accountNumber: string): Promise<void> {
  const made = await t.deps.processors.sandbox.createPaymentMethod(bank(accountNumber));
  if (!made.ok) throw new Error(`tokenizing failed: ${made.message}`);
  const setup = await t.deps.processors.sandbox.setupForFutureUse({ paymentMethod: made.method.token });
  if (setup.status !== "succeeded") throw new Error(`setup failed: ${setup.status}`);
  await t.store.db
    .updateTable("subscriptions")
    .set({ payment_method_token: setup.method.token })
    .where("id", "=", subscriptionId)
    .execute();
}

const receiptsFor = async (id: string) =>
  (await t.store.db.selectFrom("email_outbox").select("id").where("payment_id", "=", id).execute()).length;

describe("bank settlement", () => {
  it("leaves a bank payment PENDING until it settles, then records it COMPLETED with a receipt", async () => {
    const id = await bankGift();
    expect(await receiptsFor(id)).toBe(0);

    clock = START + SETTLE_MS - 1000;
    expect(await settler().runOnce()).toEqual({ completed: 0, failed: 0, pending: 1 });
    expect((await payment(id)).status).toBe("PENDING");

    clock = START + SETTLE_MS + 1000;
    // Polled a moment ago: not asked again within the re-poll interval.
    expect(await settler().runOnce()).toEqual({ completed: 0, failed: 0, pending: 0 });
    clock = START + SETTLE_MS + 120_000;
    expect(await settler().runOnce()).toEqual({ completed: 1, failed: 0, pending: 0 });
    expect(await payment(id)).toMatchObject({ status: "COMPLETED", failure_code: null });
    expect(await eventsOf(t.store.db, id)).toEqual(["donation.created", "donation.updated"]);
    expect(await receiptsFor(id)).toBe(1);

    clock += 3600_000;
    expect(await settler().runOnce()).toEqual({ completed: 0, failed: 0, pending: 0 });
    expect(await eventsOf(t.store.db, id)).toHaveLength(2);
  });

  it("gives back the tickets and promo-code use of a bounced bank payment, but not of one that clears", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "Adult", price: 50, quantity: 2 }],
      promoCodes: [{ code: "ONCE", discountType: "amount", discountValue: 5, quantity: 1 }],
    });
    const order = (accountNumber: string) =>
      checkout(t, formId, {
        tickets: [{ name: "Adult", quantity: 1 }],
        promoCode: "ONCE",
        donor: donor(),
        paymentMethod: bank(accountNumber),
      });
    const left = async () => {
      const view = await t.request("GET", `/api/forms/${formId}`, { key: null });
      return (view.body.tickets as { remaining: number }[])[0].remaining;
    };
    expect((await order("000111111116")).status).toBe(201); // will bounce
    expect(await left()).toBe(1);
    // The promo code's one use is held by the pending payment.
    expect((await order("000123456789")).status).toBe(400);

    clock = START + SETTLE_MS + 60_000;
    expect(await settler().runOnce()).toEqual({ completed: 0, failed: 1, pending: 0 });
    expect(await left()).toBe(2);
    const again = await order("000123456789");
    expect(again.status).toBe(201);
    expect(await left()).toBe(1);
    clock += SETTLE_MS + 60_000;
    expect(await settler().runOnce()).toEqual({ completed: 1, failed: 0, pending: 0 });
    expect(await left()).toBe(1);
  });

  it("records a bounced bank payment FAILED with the processor's code and message, without a receipt", async () => {
    const id = await bankGift("000111111116");
    clock = START + SETTLE_MS + 60_000;
    expect(await settler().runOnce()).toEqual({ completed: 0, failed: 1, pending: 0 });
    const row = await payment(id);
    expect(row).toMatchObject({ status: "FAILED", failure_code: "insufficient_funds" });
    expect(row.failure_message).toMatch(/insufficient funds/i);
    expect(await eventsOf(t.store.db, id)).toEqual(["donation.created", "donation.updated"]);
    expect(await receiptsFor(id)).toBe(0);
  });

  it("settles a recurring bank charge made by the billing worker", async () => {
    const sub = await subscribe(t, await recurringForm(t), { paymentMethod: bank() });
    clock = START + SETTLE_MS + 60_000;
    expect((await settler().runOnce()).completed).toBe(1);
    clock = at("2026-05-15T18:00:00Z");
    expect(await worker(t.deps).runOnce()).toEqual({ charged: 1, failed: 0, cancelled: 0, ended: 0 });
    const [, charge] = await paymentsOf(t.store.db, sub.id);
    expect(charge.status).toBe("PENDING");
    expect((await subscription(t.store.db, sub.id)).next_billing_at).toBe("2026-06-15T18:00:00.000Z");
    clock += SETTLE_MS + 60_000;
    expect(await settler().runOnce()).toEqual({ completed: 1, failed: 0, pending: 0 });
    expect((await payment(charge.id)).status).toBe("COMPLETED");
    expect(await receiptsFor(charge.id)).toBe(1);
  });

  it("a recurring gift paid by bank gets its lastBillingDate only when a charge clears (the charge's date)", async () => {
    const sub = await subscribe(t, await recurringForm(t), { paymentMethod: bank() });
    expect(await shown(sub.id)).toMatchObject({ status: "ACTIVE", lastBillingDate: null });
    clock = START + SETTLE_MS + 60_000;
    expect(await settler().runOnce()).toEqual({ completed: 1, failed: 0, pending: 0 });
    expect(await shown(sub.id)).toMatchObject({ status: "ACTIVE", lastBillingDate: "2026-04-15T18:00:00Z" });
    expect(await eventsOf(t.store.db, sub.id)).toEqual(["subscription.created", "subscription.updated"]);

    clock = at("2026-05-15T18:00:00Z");
    expect((await worker(t.deps).runOnce()).charged).toBe(1);
    expect(await shown(sub.id)).toMatchObject({
      lastBillingDate: "2026-04-15T18:00:00Z",
      nextBillingDate: "2026-06-15T18:00:00Z",
    });
    clock += SETTLE_MS + 60_000;
    expect(await settler().runOnce()).toEqual({ completed: 1, failed: 0, pending: 0 });
    expect(await shown(sub.id)).toMatchObject({ status: "ACTIVE", lastBillingDate: "2026-05-15T18:00:00Z" });
  });

  it("a recurring bank charge that bounces leaves lastBillingDate at the last successful charge and the subscription ACTIVE", async () => {
    const sub = await subscribe(t, await recurringForm(t), { paymentMethod: bank() });
    clock = START + SETTLE_MS + 60_000;
    await settler().runOnce();
    await useBankAccount(sub.id, "000111111116");
    clock = at("2026-05-15T18:00:00Z");
    expect((await worker(t.deps).runOnce()).charged).toBe(1);
    clock += SETTLE_MS + 60_000;
    expect(await settler().runOnce()).toEqual({ completed: 0, failed: 1, pending: 0 });
    const [, charge] = await paymentsOf(t.store.db, sub.id);
    expect(charge.status).toBe("FAILED");
    expect(await shown(sub.id)).toMatchObject({
      status: "ACTIVE",
      lastBillingDate: "2026-04-15T18:00:00Z",
      nextBillingDate: "2026-06-15T18:00:00Z",
    });
    expect(await eventsOf(t.store.db, sub.id)).not.toContain("subscription.cancelled");
  });

  it("a bounced first bank payment cancels its subscription, as a declined card never starts one", async () => {
    const sub = await subscribe(t, await recurringForm(t), { paymentMethod: bank("000111111116") });
    const contact = () => t.request<Json>("GET", `/v1/contacts/${sub.contact_id}`);
    expect((await contact()).body.hasActiveSubscription).toBe(true);
    expect(await shown(sub.id)).toMatchObject({ status: "ACTIVE", lastBillingDate: null });

    clock = START + SETTLE_MS + 60_000;
    expect(await settler().runOnce()).toEqual({ completed: 0, failed: 1, pending: 0 });
    expect(await shown(sub.id)).toMatchObject({
      status: "CANCELLED",
      lastBillingDate: null,
      nextBillingDate: null,
      cancelledAt: "2026-04-15T19:01:00Z",
    });
    expect(await eventsOf(t.store.db, sub.id)).toEqual(["subscription.created", "subscription.cancelled"]);
    expect((await contact()).body.hasActiveSubscription).toBe(false);
    const cancelled = await t.request<{ subscriptions: Json[] }>("GET", "/v1/subscriptions?status=CANCELLED");
    expect(cancelled.body.subscriptions.map((s) => s.id)).toEqual([sub.id]);

    clock = at("2026-05-15T18:00:00Z");
    expect(await worker(t.deps).runOnce()).toEqual({ charged: 0, failed: 0, cancelled: 0, ended: 0 });
    expect(await paymentsOf(t.store.db, sub.id)).toHaveLength(1);
  });

  it("keeps a subscription whose first debit bounces while a later charge of it is still pending", async () => {
    const sub = await subscribe(t, await recurringForm(t), {
      frequency: "DAILY",
      paymentMethod: bank("000111111116"),
    });
    // A day later the next charge is made while the first debit has not been settled yet.
    clock = START + 24 * 3600_000;
    expect(await worker(t.deps).runOnce()).toMatchObject({ charged: 1 });
    const payments = await paymentsOf(t.store.db, sub.id);
    expect(payments.map((p) => p.status)).toEqual(["PENDING", "PENDING"]);

    clock += 60_000;
    expect(await settler().runOnce()).toEqual({ completed: 0, failed: 1, pending: 1 });
    expect(await shown(sub.id)).toMatchObject({ status: "ACTIVE" });
    expect(await eventsOf(t.store.db, sub.id)).not.toContain("subscription.cancelled");
  });

  it("records each payment once when two workers on two connections poll at the same time", async () => {
    const ids = [];
    for (let i = 0; i < 8; i++) ids.push(await bankGift());
    const other: Store = await secondStore(t.store);
    cleanups.push(() => other.close());
    const otherDeps: AppDeps = {
      ...t.deps,
      store: other,
      processors: await openProcessors(other, t.config, t.deps.secrets, () => clock),
    };
    clock = START + SETTLE_MS + 60_000;
    // Worker A's first lookup lets worker B run a whole pass: B must leave A's batch alone.
    let meanwhile: Promise<{ completed: number }> | undefined;
    const b = new SettlementWorker({ deps: otherDeps, batchSize: 100 });
    const hooked: PaymentProcessor = Object.create(t.deps.processors.sandbox);
    hooked.retrievePayment = async (pid) => {
      meanwhile ??= b.runOnce();
      await meanwhile;
      return t.deps.processors.sandbox.retrievePayment(pid);
    };
    const a = new SettlementWorker({
      deps: { ...t.deps, processors: t.deps.processors.withSandbox(hooked) },
      batchSize: 3,
    });
    const first = await a.runOnce();
    const second = await meanwhile;
    expect(first.completed).toBe(3);
    expect(second?.completed).toBe(5);
    for (const id of ids) {
      expect((await payment(id)).status).toBe("COMPLETED");
      expect(await eventsOf(t.store.db, id)).toEqual(["donation.created", "donation.updated"]);
      expect(await receiptsFor(id)).toBe(1);
    }
  });

  it("runs on a timer and stops cleanly", async () => {
    const id = await bankGift();
    clock = START + SETTLE_MS + 60_000;
    const w = settler();
    w.start(10);
    for (let i = 0; i < 200 && (await payment(id)).status === "PENDING"; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await w.stop();
    expect((await payment(id)).status).toBe("COMPLETED");
  });
});

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AppDeps } from "../../server/api/env.js";
import { SettlementWorker } from "../../server/billing/settlement.js";
import type { PaymentProcessor } from "../../server/checkout/processor.js";
import { openProcessor } from "../../server/checkout/processorFactory.js";
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

  it("records each payment once when two workers on two connections poll at the same time", async () => {
    const ids = [];
    for (let i = 0; i < 8; i++) ids.push(await bankGift());
    const other: Store = await secondStore(t.store);
    cleanups.push(() => other.close());
    const otherDeps: AppDeps = {
      ...t.deps,
      store: other,
      processor: await openProcessor(other, t.config, () => clock),
    };
    clock = START + SETTLE_MS + 60_000;
    // Worker A's first lookup lets worker B run a whole pass: B must leave A's batch alone.
    let meanwhile: Promise<{ completed: number }> | undefined;
    const b = new SettlementWorker({ deps: otherDeps, batchSize: 100 });
    const hooked: PaymentProcessor = Object.create(t.deps.processor);
    hooked.retrievePayment = async (pid) => {
      meanwhile ??= b.runOnce();
      await meanwhile;
      return t.deps.processor.retrievePayment(pid);
    };
    const a = new SettlementWorker({ deps: { ...t.deps, processor: hooked }, batchSize: 3 });
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

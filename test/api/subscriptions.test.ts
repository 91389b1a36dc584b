import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AppDeps } from "../../server/api/env.js";
import type { PaymentProcessor } from "../../server/processors/port.js";
import { coverFeeCents, DEFAULT_FEE_RATE } from "../../shared/pricing/fees.js";
import {
  at,
  eventsOf,
  JAN_31,
  paymentsOf,
  recurringForm,
  subscribe,
  subscription,
  worker,
} from "../billing/support.js";
import { setupTestApp, type TestApp } from "../support/testApp.js";

/**
 * Subscriptions through /v1 (reads, cancel, amount changes, permissions), made by real recurring checkouts and
 * billed by the real BillingWorker.
 */

type Json = Record<string, unknown>;
interface SubPage {
  subscriptions: Json[];
  count: number;
  hasMore: boolean;
  lastEvaluatedKey?: string;
}

let clock = JAN_31;
let t: TestApp;

beforeEach(async () => {
  clock = JAN_31;
  t = await setupTestApp({
    now: () => clock,
    env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" },
  });
});
afterEach(() => t.close());

async function billAt(isoTime: string, deps: AppDeps = t.deps) {
  clock = at(isoTime);
  return worker(deps).runOnce();
}

const put = (id: string, body: unknown, key?: string) =>
  t.request<Json>("PUT", `/v1/subscriptions/${id}`, { body, key });

describe("GET /v1/subscriptions", () => {
  it("lists newest first, filters by status, and gets one with every documented field", async () => {
    const formId = await recurringForm(t, { title: "Monthly club", funds: ["Club", "Other"] });
    const a = await subscribe(t, formId, { amount: 10, fund: "Club", coverFees: true });
    clock += 1000;
    const b = await subscribe(t, formId, { amount: 20, frequency: "WEEKLY" });
    clock += 1000;
    const c = await subscribe(t, formId, { amount: 30, frequency: "ANNUALLY" });
    expect((await put(b.id, { status: "CANCELLED" })).status).toBe(200);

    const all = await t.request<SubPage>("GET", "/v1/subscriptions");
    expect(all.body).toMatchObject({ count: 3, hasMore: false });
    expect(all.body.subscriptions.map((s) => s.id)).toEqual([c.id, b.id, a.id]);
    const active = await t.request<SubPage>("GET", "/v1/subscriptions?status=ACTIVE");
    expect(active.body.subscriptions.map((s) => s.id)).toEqual([c.id, a.id]);
    const cancelled = await t.request<SubPage>("GET", "/v1/subscriptions?status=CANCELLED");
    expect(cancelled.body.subscriptions.map((s) => s.id)).toEqual([b.id]);
    const paged = await t.request<SubPage>("GET", "/v1/subscriptions?status=ACTIVE&limit=1");
    expect(paged.body).toMatchObject({ count: 1, hasMore: true });
    const next = await t.request<SubPage>(
      "GET",
      `/v1/subscriptions?status=ACTIVE&limit=1&lastEvaluatedKey=${paged.body.lastEvaluatedKey}`,
    );
    expect(next.body.subscriptions.map((s) => s.id)).toEqual([a.id]);
    // A cursor of the ACTIVE list is not one of the full list.
    const mixed = await t.request("GET", `/v1/subscriptions?lastEvaluatedKey=${paged.body.lastEvaluatedKey}`);
    expect(mixed.status).toBe(400);

    const one = await t.request<Json>("GET", `/v1/subscriptions/${a.id}`);
    expect(one.body).toEqual({
      id: a.id,
      status: "ACTIVE",
      amount: 10,
      currency: "USD",
      frequency: "MONTHLY",
      nextBillingDate: "2026-02-28T10:00:00Z",
      lastBillingDate: "2026-01-31T10:00:00Z",
      endBillingDate: null,
      coveredFee: true,
      formID: formId,
      contactId: a.contact_id,
      email: a.email,
      fund: "Club",
      paymentMethod: { type: "card", brand: "visa", last4: "4242" },
      createdAt: "2026-01-31T10:00:00Z",
      cancelledAt: null,
    });
    expect(all.body.subscriptions[2]).toEqual(one.body);
  });

  it("answers 400 for a bad status filter, limit or cursor, 404 for an unknown or malformed id", async () => {
    for (const q of [
      "status=cancelled",
      "status=PAUSED",
      "status=",
      "limit=0",
      "limit=101",
      "lastEvaluatedKey=!!",
    ]) {
      const res = await t.request("GET", `/v1/subscriptions?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error).toBe("Validation failed");
    }
    for (const id of ["sub_00000000000000000000000000", "sub_1", "pay_00000000000000000000000000"]) {
      expect((await t.request("GET", `/v1/subscriptions/${id}`)).status).toBe(404);
      expect((await put(id, { status: "CANCELLED" })).status).toBe(404);
    }
  });
});

describe("PUT /v1/subscriptions/{id}", () => {
  it("cancels: CANCELLED, no next billing date, subscription.cancelled, and never charged again", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    clock = at("2026-02-10T09:00:00Z");
    const res = await put(sub.id, { status: "CANCELLED" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: sub.id,
      status: "CANCELLED",
      nextBillingDate: null,
      cancelledAt: "2026-02-10T09:00:00Z",
      amount: 25,
    });
    expect(await eventsOf(t.store.db, sub.id)).toEqual(["subscription.created", "subscription.cancelled"]);

    for (const when of ["2026-02-28T10:00:00Z", "2026-03-31T10:00:00Z", "2027-01-31T10:00:00Z"])
      expect((await billAt(when)).charged).toBe(0);
    expect(await paymentsOf(t.store.db, sub.id)).toHaveLength(1);

    const again = await put(sub.id, { status: "CANCELLED" });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: "Subscription is cancelled" });
    expect((await put(sub.id, { amount: 5 })).status).toBe(409);
  });

  it("changes the amount: the next charge by the real billing worker uses it, covered fee recomputed", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId, { amount: 25, coverFees: true });
    clock += 1000;
    const res = await put(sub.id, { amount: 40.5 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: "ACTIVE",
      amount: 40.5,
      nextBillingDate: "2026-02-28T10:00:00Z",
    });
    expect(await eventsOf(t.store.db, sub.id)).toEqual(["subscription.created", "subscription.updated"]);
    // The same amount again changes nothing and says nothing.
    expect((await put(sub.id, { amount: 40.5 })).status).toBe(200);
    expect((await eventsOf(t.store.db, sub.id)).filter((e) => e === "subscription.updated")).toHaveLength(1);

    expect((await billAt("2026-02-28T10:00:00Z")).charged).toBe(1);
    const [first, second] = await paymentsOf(t.store.db, sub.id);
    expect(Number(first.amount_cents)).toBe(2500 + coverFeeCents(2500, DEFAULT_FEE_RATE));
    expect(Number(second.amount_cents)).toBe(4050 + coverFeeCents(4050, DEFAULT_FEE_RATE));
    expect(Number(second.fee_cents)).toBe(coverFeeCents(4050, DEFAULT_FEE_RATE));
    const listed = await t.request<{ payments: Json[] }>("GET", "/v1/payments");
    expect(listed.body.payments[0]).toMatchObject({
      subscriptionId: sub.id,
      amount: Number(second.amount_cents) / 100,
    });
  });

  it("takes amount and cancel together: both events, and no charge", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    clock += 1000;
    const res = await put(sub.id, { status: "CANCELLED", amount: 30 });
    expect(res.body).toMatchObject({ status: "CANCELLED", amount: 30 });
    // Both events of the update share its millisecond, so their ids do not order them.
    const [created, ...update] = await eventsOf(t.store.db, sub.id);
    expect(created).toBe("subscription.created");
    expect(update.sort()).toEqual(["subscription.cancelled", "subscription.updated"]);
    expect((await billAt("2026-02-28T10:00:00Z")).charged).toBe(0);
  });

  it("a cancel landing while a charge is at the processor keeps the subscription cancelled; nothing after it is charged", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    const inner = t.deps.processors.sandbox;
    const processor: PaymentProcessor = Object.create(inner);
    let cancelStatus = 0;
    processor.charge = async (input) => {
      cancelStatus = (await put(sub.id, { status: "CANCELLED" })).status;
      return inner.charge(input);
    };
    const tally = await billAt("2026-02-28T10:00:00Z", {
      ...t.deps,
      processors: t.deps.processors.withSandbox(processor),
    });
    expect(cancelStatus).toBe(200);
    expect(tally.charged).toBe(1);
    const row = await subscription(t.store.db, sub.id);
    expect(row.status).toBe("CANCELLED");
    expect(row.cycle).toBe(0);
    for (const when of ["2026-03-01T10:00:00Z", "2026-03-31T10:00:00Z", "2026-04-30T10:00:00Z"])
      expect((await billAt(when)).charged).toBe(0);
    expect(await paymentsOf(t.store.db, sub.id)).toHaveLength(2);
  });

  it("takes any amount of the checkout's range (1 to 1,000,000) with 2 decimals", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId, { amount: 25, coverFees: true });
    for (const amount of [1.5, 1_000_000, 1, 1.01]) {
      const res = await put(sub.id, { amount });
      expect(res.status, String(amount)).toBe(200);
      expect(res.body.amount).toBe(amount);
    }
    expect((await subscription(t.store.db, sub.id)).amount_cents).toBe(101);
    expect((await billAt("2026-02-28T10:00:00Z")).charged).toBe(1);
    const [, second] = await paymentsOf(t.store.db, sub.id);
    expect(Number(second.amount_cents)).toBe(101 + coverFeeCents(101, DEFAULT_FEE_RATE));
  });

  it("answers 400 listing the problem for bodies without a valid status or amount", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    const cases: [unknown, string][] = [
      [{}, 'body needs status ("CANCELLED") or amount'],
      [{ status: "ACTIVE" }, "status must be one of: CANCELLED"],
      [{ status: "cancelled" }, "status must be one of: CANCELLED"],
      [{ amount: 0 }, "amount must be greater than 0 and at most 1,000,000"],
      [{ amount: -5 }, "amount must be greater than 0 and at most 1,000,000"],
      [{ amount: -0.01 }, "amount must be greater than 0 and at most 1,000,000"],
      [{ amount: 1_000_000.01 }, "amount must be greater than 0 and at most 1,000,000"],
      [{ amount: 10.001 }, "amount must have at most 2 decimal places"],
      [{ amount: "10" }, "amount must be a number, not a string"],
      [{ amount: null }, "amount must be a number, not null"],
      [{ amount: 10, note: "x" }, "note is not a recognised field"],
    ];
    for (const [body, detail] of cases) {
      const res = await put(sub.id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.details, JSON.stringify(body)).toContain(detail);
    }
    expect((await t.request("PUT", `/v1/subscriptions/${sub.id}`, { rawBody: "{" })).body).toEqual({
      error: "Invalid JSON body",
    });
    expect((await subscription(t.store.db, sub.id)).amount_cents).toBe(2500);
    expect((await put(sub.id, { amount: 1_000_000 })).status).toBe(200);
    // Any amount above 0 (2 decimals), as the API promises, even below the checkout's own minimum.
    const small = await put(sub.id, { amount: 0.5 });
    expect(small.status, JSON.stringify(small.body)).toBe(200);
    expect((await subscription(t.store.db, sub.id)).amount_cents).toBe(50);
  });
});

describe("subscriptions: permissions and tenants", () => {
  it("needs subscriptions:read to read and subscriptions:write to change or send a link", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    const reader = await t.newOrg({ permissions: ["subscriptions:read"] });
    const none = await t.newOrg({ permissions: ["donations:read", "contacts:write"] });
    for (const path of ["/v1/subscriptions", `/v1/subscriptions/${sub.id}`]) {
      const res = await t.request("GET", path, { key: none.key });
      expect(res.body).toEqual({ error: "Missing permission: subscriptions:read" });
    }
    for (const [method, path, body] of [
      ["PUT", `/v1/subscriptions/${sub.id}`, { status: "CANCELLED" }],
      ["POST", `/v1/subscriptions/${sub.id}/payment-method-update-link`, {}],
    ] as const) {
      const res = await t.request(method, path, { body, key: reader.key });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: "Missing permission: subscriptions:write" });
    }
    expect((await subscription(t.store.db, sub.id)).status).toBe("ACTIVE");
  });

  it("answers 403 on another organization's subscription for every endpoint and never lists it", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    const other = await t.newOrg();
    expect((await t.request("GET", `/v1/subscriptions/${sub.id}`, { key: other.key })).status).toBe(403);
    expect((await put(sub.id, { status: "CANCELLED" }, other.key)).status).toBe(403);
    const link = await t.request("POST", `/v1/subscriptions/${sub.id}/payment-method-update-link`, {
      body: {},
      key: other.key,
    });
    expect(link.status).toBe(403);
    expect((await t.request<SubPage>("GET", "/v1/subscriptions", { key: other.key })).body.count).toBe(0);
    expect((await subscription(t.store.db, sub.id)).status).toBe("ACTIVE");
  });
});

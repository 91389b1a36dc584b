import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AppDeps } from "../../server/api/env.js";
import { openProcessors } from "../../server/processors/index.js";
import type { PaymentProcessor } from "../../server/processors/port.js";
import type { Store } from "../../server/store/database.js";
import { updateOrganization } from "../../server/store/organizations.js";
import { paymentDetails } from "../../server/store/payments.js";
import type { SubscriptionsTable } from "../../server/store/schema.js";
import { coverFeeCents, DEFAULT_FEE_RATE } from "../../shared/pricing/fees.js";
import { card, checkout, donor } from "../support/checkout.js";
import { ledgerCharges } from "../support/race.js";
import { dialect, setupTestApp, type TestApp } from "../support/testApp.js";
import {
  at,
  eventsOf,
  JAN_31,
  paymentsOf,
  recurringForm,
  secondStore,
  subscribe,
  subscription,
  worker,
} from "./support.js";

let clock = JAN_31;
let t: TestApp;
const cleanups: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  clock = JAN_31;
  t = await setupTestApp({
    now: () => clock,
    env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" },
  });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await t.close();
});

/** One billing pass at `isoTime` (the app's clock moves there too). */
async function billAt(
  isoTime: string,
  deps: AppDeps = t.deps,
  options: Partial<Parameters<typeof worker>[1]> = {},
) {
  clock = at(isoTime);
  return worker(deps, options).runOnce();
}

const none = { charged: 0, failed: 0, cancelled: 0, ended: 0 };

/** A processor whose `charge` runs `before` first (and may fail after charging). */
function wrapped(inner: PaymentProcessor, hooks: { before?: () => Promise<void>; failAfter?: boolean }) {
  const processor: PaymentProcessor = Object.create(inner);
  processor.charge = async (input) => {
    await hooks.before?.();
    const result = await inner.charge(input);
    if (hooks.failAfter) throw new Error("connection reset after the charge");
    return result;
  };
  return processor;
}

/** Swaps a subscription's method for a set-up test card (what the payment-method update page does). */
async function useCard(subId: string, number: string) {
  const created = await t.deps.processors.sandbox.createPaymentMethod(card(number));
  if (!created.ok) throw new Error(created.message);
  const setup = await t.deps.processors.sandbox.setupForFutureUse({ paymentMethod: created.method.token });
  if (setup.status !== "succeeded") throw new Error("set-up failed");
  await t.store.db
    .updateTable("subscriptions")
    .set({ payment_method_token: setup.method.token, last4: setup.method.last4 })
    .where("id", "=", subId)
    .execute();
}

describe("recurring billing", () => {
  it("bills a monthly gift made on Jan 31 on Feb 28 (not before), then on Mar 31", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    expect(sub.next_billing_at).toBe("2026-02-28T10:00:00.000Z");

    expect(await billAt("2026-02-28T09:59:59Z")).toEqual(none);
    expect(await paymentsOf(t.store.db, sub.id)).toHaveLength(1);

    expect(await billAt("2026-02-28T10:00:00Z")).toEqual({ ...none, charged: 1 });
    let after = await subscription(t.store.db, sub.id);
    expect(after).toMatchObject({
      status: "ACTIVE",
      cycle: 1,
      last_billing_at: "2026-02-28T10:00:00.000Z",
      next_billing_at: "2026-03-31T10:00:00.000Z",
      failed_attempts: 0,
      claim_token: null,
    });
    expect(await billAt("2026-03-15T00:00:00Z")).toEqual(none);
    expect(await billAt("2026-03-31T10:00:00Z")).toEqual({ ...none, charged: 1 });
    after = await subscription(t.store.db, sub.id);
    expect(after.next_billing_at).toBe("2026-04-30T10:00:00.000Z");

    const payments = await paymentsOf(t.store.db, sub.id);
    expect(payments).toHaveLength(3);
    const [first, feb, mar] = payments;
    expect(new Set(payments.map((p) => p.id)).size).toBe(3);
    for (const p of [feb, mar]) {
      expect(p).toMatchObject({
        status: "COMPLETED",
        frequency: "MONTHLY",
        subscription_id: sub.id,
        contact_id: sub.contact_id,
        amount_cents: 2500,
        fee_cents: 0,
        form_title: first.form_title,
        fund: first.fund,
        email: sub.email,
        first_name: "Ada",
        payment_method_type: "card",
        last4: "4242",
      });
      expect(p.processor_payment_id).toMatch(/^pi_sandbox_/);
    }
    expect(feb.created_at).toBe("2026-02-28T10:00:00.000Z");
    expect(feb.charge_key).toBe(`sub:${sub.id}:1:1`);
    expect(mar.charge_key).toBe(`sub:${sub.id}:2:1`);
    expect(paymentDetails(feb)).toMatchObject({
      cycle: 1,
      lines: [{ kind: "donation", label: "Monthly donation", amountCents: 2500, quantity: 1 }],
    });
    expect(paymentDetails(mar).cycle).toBe(2);

    expect(await eventsOf(t.store.db, feb.id)).toEqual(["donation.created"]);
    expect(await eventsOf(t.store.db, sub.id)).toEqual([
      "subscription.created",
      "subscription.updated",
      "subscription.updated",
    ]);
    const receipts = await t.store.db.selectFrom("email_outbox").select("payment_id").execute();
    expect(receipts.map((r) => r.payment_id).sort()).toEqual([first.id, feb.id, mar.id].sort());
  });

  it("charges one cycle per pass when billing has fallen behind, each from the anchor", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    expect(await billAt("2026-04-01T00:00:00Z")).toEqual({ ...none, charged: 1 });
    expect((await subscription(t.store.db, sub.id)).next_billing_at).toBe("2026-03-31T10:00:00.000Z");
    expect(await billAt("2026-04-01T00:00:00Z")).toEqual({ ...none, charged: 1 });
    expect((await subscription(t.store.db, sub.id)).next_billing_at).toBe("2026-04-30T10:00:00.000Z");
    expect(await billAt("2026-04-01T00:00:00Z")).toEqual(none);
  });

  it("adds the covered fee at the organization's fee rate", async () => {
    const sub = await subscribe(t, await recurringForm(t, { enableCoverFees: true }), { coverFees: true });
    expect(sub.cover_fees).toBe(1);
    await billAt("2026-02-28T10:00:00Z");
    const fee = coverFeeCents(2500, DEFAULT_FEE_RATE);
    const [, feb] = await paymentsOf(t.store.db, sub.id);
    expect(feb).toMatchObject({ amount_cents: 2500 + fee, fee_cents: fee, cover_fees: 1 });

    const rate = { percentBps: 500, fixedCents: 0 };
    await updateOrganization(t.store.db, t.org.id, { feeRate: rate }, Date.now());
    await billAt("2026-03-31T10:00:00Z");
    const [, , mar] = await paymentsOf(t.store.db, sub.id);
    expect(mar).toMatchObject({
      amount_cents: 2500 + coverFeeCents(2500, rate),
      fee_cents: coverFeeCents(2500, rate),
    });
  });

  it("charges the new amount after the amount changed", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    await t.store.db
      .updateTable("subscriptions")
      .set({ amount_cents: 4000 })
      .where("id", "=", sub.id)
      .execute();
    await billAt("2026-02-28T10:00:00Z");
    const [, feb] = await paymentsOf(t.store.db, sub.id);
    expect(feb.amount_cents).toBe(4000);
    expect(paymentDetails(feb).lines[0].amountCents).toBe(4000);
    expect((await subscription(t.store.db, sub.id)).amount_cents).toBe(4000);
  });

  it("never charges a cancelled subscription", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    await t.store.db
      .updateTable("subscriptions")
      .set({ status: "CANCELLED", cancelled_at: "2026-02-01T00:00:00.000Z" })
      .where("id", "=", sub.id)
      .execute();
    const charges = await ledgerCharges(t.store.db);
    expect(await billAt("2026-02-28T10:00:00Z")).toEqual(none);
    expect(await billAt("2026-06-01T00:00:00Z")).toEqual(none);
    expect(await paymentsOf(t.store.db, sub.id)).toHaveLength(1);
    expect(await ledgerCharges(t.store.db)).toBe(charges);
  });

  it("keeps a cancel that lands while the charge is in flight: the charge is recorded (lastBillingDate), the schedule is not", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    const cancel = async () => {
      await t.store.db
        .updateTable("subscriptions")
        .set({ status: "CANCELLED", cancelled_at: "2026-02-28T09:59:00.000Z" })
        .where("id", "=", sub.id)
        .execute();
    };
    const deps = {
      ...t.deps,
      processors: t.deps.processors.withSandbox(wrapped(t.deps.processors.sandbox, { before: cancel })),
    };
    expect(await billAt("2026-02-28T10:00:00Z", deps)).toEqual({ ...none, charged: 1 });
    const after = await subscription(t.store.db, sub.id);
    expect(after).toMatchObject({
      status: "CANCELLED",
      cancelled_at: "2026-02-28T09:59:00.000Z",
      cycle: 0,
      next_billing_at: sub.next_billing_at,
      last_billing_at: "2026-02-28T10:00:00.000Z",
      claim_token: null,
    });
    expect(await eventsOf(t.store.db, sub.id)).toEqual(["subscription.created", "subscription.updated"]);
    expect(await billAt("2026-03-31T10:00:00Z")).toEqual(none);
    expect((await paymentsOf(t.store.db, sub.id)).map((p) => p.status)).toEqual(["COMPLETED", "COMPLETED"]);
  });

  it("records a charge made before a crash once its gift is cancelled: the next pass settles it, charging nothing", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    const crashing = {
      ...t.deps,
      processors: t.deps.processors.withSandbox(wrapped(t.deps.processors.sandbox, { failAfter: true })),
    };
    const charges = await ledgerCharges(t.store.db);
    await billAt("2026-02-28T10:00:00Z", crashing, { leaseMs: 200, onError: () => {} });
    expect(await ledgerCharges(t.store.db)).toBe(charges + 1);
    expect((await paymentsOf(t.store.db, sub.id)).map((p) => p.status)).toEqual(["COMPLETED", "PROCESSING"]);
    // The donor cancels while that charge is unrecorded: no pass claims the gift again.
    await t.store.db
      .updateTable("subscriptions")
      .set({ status: "CANCELLED", cancelled_at: "2026-02-28T10:01:00.000Z" })
      .where("id", "=", sub.id)
      .execute();
    // Within five minutes the charge may still be another pass's: left alone.
    await billAt("2026-02-28T10:02:00Z");
    expect((await paymentsOf(t.store.db, sub.id))[1].status).toBe("PROCESSING");
    await billAt("2026-02-28T10:20:00Z");
    const payments = await paymentsOf(t.store.db, sub.id);
    expect(payments.map((p) => p.status)).toEqual(["COMPLETED", "COMPLETED"]);
    expect(await ledgerCharges(t.store.db)).toBe(charges + 1);
    expect(await eventsOf(t.store.db, payments[1].id)).toContain("donation.created");
    expect((await subscription(t.store.db, sub.id)).status).toBe("CANCELLED");
  });

  it("dates a charge when its outcome is recorded, so it lists above pages handed out while the processor ran", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    type Page = { payments: { paymentID: string; date: string }[]; lastEvaluatedKey?: string };
    let firstPage: Page | undefined;
    const slow = wrapped(t.deps.processors.sandbox, {
      // While the charge is with the processor, a gift comes in and a client reads the newest payment.
      before: async () => {
        clock = at("2026-02-28T10:02:00Z");
        const res = await checkout(t, formId, {
          frequency: "ONE_TIME",
          amount: 10,
          donor: donor(),
          paymentMethod: card(),
        });
        expect(res.status).toBe(201);
        firstPage = (await t.request<Page>("GET", "/v1/payments?limit=1")).body;
        clock = at("2026-02-28T10:03:00Z");
      },
    });
    const deps = { ...t.deps, processors: t.deps.processors.withSandbox(slow) };
    expect(await billAt("2026-02-28T10:00:00Z", deps)).toEqual({ ...none, charged: 1 });
    const charge = (await paymentsOf(t.store.db, sub.id))[1];
    expect(charge.created_at).toBe("2026-02-28T10:03:00.000Z");
    const newest = (await t.request<Page>("GET", "/v1/payments?limit=1")).body;
    expect(newest.payments.map((p) => [p.paymentID, p.date])).toEqual([[charge.id, "2026-02-28T10:03:00Z"]]);
    // The client paging on from the page it holds never needed it: it is above that page.
    const rest = (
      await t.request<Page>("GET", `/v1/payments?limit=100&lastEvaluatedKey=${firstPage?.lastEvaluatedKey}`)
    ).body;
    expect(rest.payments.map((p) => p.paymentID)).not.toContain(charge.id);
    expect(rest.payments).toHaveLength(1);
    expect((await subscription(t.store.db, sub.id)).last_billing_at).toBe("2026-02-28T10:03:00.000Z");
  });

  it("stops at the end date: the subscription is cancelled, not charged", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    await t.store.db
      .updateTable("subscriptions")
      .set({ end_billing_at: "2026-03-15T00:00:00.000Z" })
      .where("id", "=", sub.id)
      .execute();
    expect(await billAt("2026-02-28T10:00:00Z")).toEqual({ ...none, charged: 1 });
    expect(await billAt("2026-03-14T23:59:59Z")).toEqual(none);
    expect((await subscription(t.store.db, sub.id)).status).toBe("ACTIVE");
    expect(await billAt("2026-03-15T00:00:00Z")).toEqual({ ...none, ended: 1 });
    expect(await subscription(t.store.db, sub.id)).toMatchObject({
      status: "CANCELLED",
      cancelled_at: "2026-03-15T00:00:00.000Z",
    });
    expect(await billAt("2026-03-31T10:00:00Z")).toEqual(none);
    expect(await paymentsOf(t.store.db, sub.id)).toHaveLength(2);
    expect((await eventsOf(t.store.db, sub.id)).at(-1)).toBe("subscription.cancelled");
  });

  it("a pass as of a later moment queues its webhook deliveries on the real time, due at once", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    await t.store.db
      .updateTable("subscriptions")
      .set({ end_billing_at: "2026-03-15T00:00:00.000Z" })
      .where("id", "=", sub.id)
      .execute();
    await t.store.db
      .insertInto("webhooks")
      .values({
        id: "wh_as_of",
        organization_id: t.org.id,
        url: "https://hooks.example.org/in",
        events: JSON.stringify(["donation.created", "subscription.updated", "subscription.cancelled"]),
        status: "ACTIVE",
        description: "",
        secret: "whsec_test",
        success_count: 0,
        failure_count: 0,
        last_delivery_at: null,
        created_at: "2026-01-31T10:00:00.000Z",
        updated_at: "2026-01-31T10:00:00.000Z",
        deleted_at: null,
      })
      .execute();
    // `billing run --as-of` a later moment: the app's clock is that moment, the worker's wall clock the real time.
    const wall = at("2026-02-01T08:00:00Z");
    const passAt = (isoTime: string) => {
      clock = at(isoTime);
      return worker(t.deps, { wallClock: () => wall }).runOnce();
    };
    expect(await passAt("2026-02-28T10:00:00Z")).toEqual({ ...none, charged: 1 });
    expect(await passAt("2026-03-15T00:00:00Z")).toEqual({ ...none, ended: 1 });
    const queued = await t.store.db
      .selectFrom("webhook_deliveries as d")
      .innerJoin("outbox_events as e", "e.id", "d.event_id")
      .select(["e.type", "e.created_at as eventAt", "d.created_at", "d.next_attempt_at"])
      .where("d.webhook_id", "=", "wh_as_of")
      .orderBy("e.created_at")
      .orderBy("e.type")
      .execute();
    // The events are dated as of the pass; their deliveries by the real time, and due then.
    const real = "2026-02-01T08:00:00.000Z";
    expect(queued).toEqual(
      [
        ["donation.created", "2026-02-28T10:00:00.000Z"],
        ["subscription.updated", "2026-02-28T10:00:00.000Z"],
        ["subscription.cancelled", "2026-03-15T00:00:00.000Z"],
      ].map(([type, eventAt]) => ({ type, eventAt, created_at: real, next_attempt_at: real })),
    );
  });

  it("a receipt names the next payment only while it is still to come: a gift catching up names none", async () => {
    const sub = await subscribe(t, await recurringForm(t), { frequency: "DAILY" });
    const receiptOf = async (paymentId: string) =>
      (
        await t.store.db
          .selectFrom("email_outbox")
          .select("text_body")
          .where("payment_id", "=", paymentId)
          .executeTakeFirstOrThrow()
      ).text_body;
    // A pass two weeks late charges the day after the gift; the next one (the day after that) is long past.
    expect(await billAt("2026-02-14T10:00:00Z")).toEqual({ ...none, charged: 1 });
    const [, behind] = await paymentsOf(t.store.db, sub.id);
    expect(await receiptOf(behind.id)).not.toContain("Next payment");
    // On time: the next day is named.
    clock = JAN_31;
    const onTime = await subscribe(t, await recurringForm(t), {
      frequency: "DAILY",
      donor: donor("ontime@example.org"),
    });
    expect((await billAt("2026-02-01T10:30:00Z")).charged).toBeGreaterThanOrEqual(1);
    const [, charged] = await paymentsOf(t.store.db, onTime.id);
    expect(await receiptOf(charged.id)).toMatch(/Next payment\s+February 2, 2026/);
  });

  it("a subscription that ends on a billing date is charged that day, then ends", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    await t.store.db
      .updateTable("subscriptions")
      .set({ end_billing_at: "2026-03-31T10:00:00.000Z" })
      .where("id", "=", sub.id)
      .execute();
    expect(await billAt("2026-02-28T10:00:00Z")).toEqual({ ...none, charged: 1 });
    expect(await billAt("2026-03-31T10:00:00Z")).toEqual({ ...none, charged: 1 });
    expect(await billAt("2026-03-31T10:00:01Z")).toEqual({ ...none, ended: 1 });
    expect(await paymentsOf(t.store.db, sub.id)).toHaveLength(3);
  });

  it("retries a declined charge after 1, 3 and 5 days, then cancels", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    await useCard(sub.id, "4000000000000341");

    expect(await billAt("2026-02-28T10:00:00Z")).toEqual({ ...none, failed: 1 });
    expect(await subscription(t.store.db, sub.id)).toMatchObject({
      status: "ACTIVE",
      cycle: 0,
      failed_attempts: 1,
      retry_at: "2026-03-01T10:00:00.000Z",
      next_billing_at: "2026-02-28T10:00:00.000Z",
    });
    expect(await billAt("2026-03-01T09:59:59Z")).toEqual(none);
    expect(await billAt("2026-03-01T10:00:00Z")).toEqual({ ...none, failed: 1 });
    expect((await subscription(t.store.db, sub.id)).retry_at).toBe("2026-03-04T10:00:00.000Z");
    expect(await billAt("2026-03-04T09:00:00Z")).toEqual(none);
    expect(await billAt("2026-03-04T10:00:00Z")).toEqual({ ...none, failed: 1 });
    expect((await subscription(t.store.db, sub.id)).retry_at).toBe("2026-03-09T10:00:00.000Z");
    expect(await billAt("2026-03-09T10:00:00Z")).toEqual({ ...none, failed: 1, cancelled: 1 });
    expect(await subscription(t.store.db, sub.id)).toMatchObject({
      status: "CANCELLED",
      failed_attempts: 4,
      retry_at: null,
      cancelled_at: "2026-03-09T10:00:00.000Z",
    });
    expect(await billAt("2026-03-31T10:00:00Z")).toEqual(none);

    const failed = (await paymentsOf(t.store.db, sub.id)).slice(1);
    expect(failed.map((p) => [p.status, p.failure_code, p.charge_key])).toEqual(
      [1, 2, 3, 4].map((n) => ["FAILED", "card_declined", `sub:${sub.id}:1:${n}`]),
    );
    expect(failed.map((p) => p.created_at)).toEqual([
      "2026-02-28T10:00:00.000Z",
      "2026-03-01T10:00:00.000Z",
      "2026-03-04T10:00:00.000Z",
      "2026-03-09T10:00:00.000Z",
    ]);
    for (const p of failed) expect(await eventsOf(t.store.db, p.id)).toEqual(["donation.created"]);
    expect(await eventsOf(t.store.db, sub.id)).toEqual([
      "subscription.created",
      ...["subscription.updated", "subscription.updated", "subscription.updated"],
      "subscription.cancelled",
    ]);
    const receipts = await t.store.db.selectFrom("email_outbox").select("payment_id").execute();
    expect(receipts).toHaveLength(1);
  });

  it("shows a scheduled retry as the next billing date: the API, its CSV, the portal and webhook events", async () => {
    const email = "retrying@example.org";
    const sub = await subscribe(t, await recurringForm(t), { donor: donor(email) });
    await useCard(sub.id, "4000000000000341");
    expect(await billAt("2026-02-28T10:00:00Z")).toEqual({ ...none, failed: 1 });
    clock = at("2026-02-28T12:00:00Z");
    const retry = "2026-03-01T10:00:00Z";

    const one = await t.request<{ nextBillingDate: string }>("GET", `/v1/subscriptions/${sub.id}`);
    expect(one.body.nextBillingDate).toBe(retry);
    const list = await t.request<{ subscriptions: { id: string; nextBillingDate: string }[] }>(
      "GET",
      "/v1/subscriptions",
    );
    expect(list.body.subscriptions.find((s) => s.id === sub.id)?.nextBillingDate).toBe(retry);
    const csv = await t.request("GET", "/v1/subscriptions", { headers: { Accept: "text/csv" } });
    expect(csv.text).toContain("2026-03-01 10:00:00");
    expect(csv.text).not.toContain("2026-02-28 10:00:00");
    const changed = await t.request<{ nextBillingDate: string }>("PUT", `/v1/subscriptions/${sub.id}`, {
      body: { amount: 30 },
    });
    expect(changed.body.nextBillingDate).toBe(retry);

    // The webhook event of the failed charge says when the retry is due.
    const events = await t.store.db
      .selectFrom("outbox_events")
      .select(["type", "data"])
      .where("subject_id", "=", sub.id)
      .orderBy("id")
      .execute();
    expect(events.map((e) => e.type)).toEqual([
      "subscription.created",
      "subscription.updated",
      "subscription.updated",
    ]);
    expect(JSON.parse(events[1].data).nextBillingDate).toBe(retry);

    // The donor portal.
    const portal = `/api/manage/${t.org.id}`;
    expect((await t.request("POST", `${portal}/link`, { key: null, body: { email } })).status).toBe(202);
    const mail = await t.store.db
      .selectFrom("email_outbox")
      .select("text_body")
      .where("to_address", "=", email)
      .where("subject", "like", "Your link%")
      .executeTakeFirstOrThrow();
    const token = mail.text_body.match(/\?token=([A-Za-z0-9_-]+)/)?.[1];
    const session = await t.request("POST", `${portal}/session`, { key: null, body: { token } });
    expect(session.status, session.text).toBe(200);
    const gifts = await t.request<{ subscriptions: { nextBillingDate: string }[] }>(
      "GET",
      `${portal}/gifts`,
      {
        key: null,
        headers: { Cookie: (session.headers.get("Set-Cookie") ?? "").split(";")[0] },
      },
    );
    expect(gifts.body.subscriptions.map((s) => s.nextBillingDate)).toEqual([retry]);

    // Once the retry goes through, the next billing date is the schedule's again.
    await useCard(sub.id, "5555555555554444");
    expect(await billAt("2026-03-01T10:00:00Z")).toEqual({ ...none, charged: 1 });
    const after = await t.request<{ nextBillingDate: string }>("GET", `/v1/subscriptions/${sub.id}`);
    expect(after.body.nextBillingDate).toBe("2026-03-31T10:00:00Z");
  });

  it("a retry that succeeds resumes the schedule from the anchor", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    await useCard(sub.id, "4000000000000341");
    expect(await billAt("2026-02-28T10:00:00Z")).toEqual({ ...none, failed: 1 });
    await useCard(sub.id, "5555555555554444");
    expect(await billAt("2026-03-01T10:00:00Z")).toEqual({ ...none, charged: 1 });
    expect(await subscription(t.store.db, sub.id)).toMatchObject({
      cycle: 1,
      failed_attempts: 0,
      retry_at: null,
      last_billing_at: "2026-03-01T10:00:00.000Z",
      next_billing_at: "2026-03-31T10:00:00.000Z",
    });
    const last = (await paymentsOf(t.store.db, sub.id)).at(-1);
    expect(last).toMatchObject({ status: "COMPLETED", charge_key: `sub:${sub.id}:1:2`, last4: "4444" });
  });

  it("a pass interrupted after the processor charged is finished by a later pass without charging again", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    const errors: string[] = [];
    const crashing = {
      ...t.deps,
      processors: t.deps.processors.withSandbox(wrapped(t.deps.processors.sandbox, { failAfter: true })),
    };
    clock = at("2026-02-28T10:00:00Z");
    const first = worker(crashing, { leaseMs: 500, onError: (err) => errors.push(String(err)) });
    expect(await first.runOnce()).toEqual(none);
    expect(errors).toHaveLength(1);
    const charges = await ledgerCharges(t.store.db);
    const [, stuck] = await paymentsOf(t.store.db, sub.id);
    expect(stuck.status).toBe("PROCESSING");
    // Until the lease ends nobody else takes it.
    expect(await worker(t.deps).runOnce()).toEqual(none);
    await new Promise((resolve) => setTimeout(resolve, 550));
    expect(await worker(t.deps).runOnce()).toEqual({ ...none, charged: 1 });
    expect(await ledgerCharges(t.store.db)).toBe(charges);
    const payments = await paymentsOf(t.store.db, sub.id);
    expect(payments).toHaveLength(2);
    expect(payments[1]).toMatchObject({ id: stuck.id, status: "COMPLETED" });
    expect((await subscription(t.store.db, sub.id)).cycle).toBe(1);
  });

  it("bills daily, weekly and annual gifts on their own calendars", async () => {
    const formId = await recurringForm(t);
    const daily = await subscribe(t, formId, { frequency: "DAILY" });
    const weekly = await subscribe(t, formId, { frequency: "WEEKLY" });
    const annual = await subscribe(t, formId, { frequency: "ANNUALLY" });
    expect(await billAt("2026-02-01T10:00:00Z")).toEqual({ ...none, charged: 1 });
    expect(await billAt("2026-02-07T10:00:00Z")).toEqual({ ...none, charged: 2 });
    expect((await subscription(t.store.db, weekly.id)).next_billing_at).toBe("2026-02-14T10:00:00.000Z");
    expect((await subscription(t.store.db, daily.id)).next_billing_at).toBe("2026-02-03T10:00:00.000Z");
    expect((await subscription(t.store.db, annual.id)).next_billing_at).toBe("2027-01-31T10:00:00.000Z");
    const [, charge] = await paymentsOf(t.store.db, weekly.id);
    expect(charge.frequency).toBe("WEEKLY");
  });
});

describe("billing in several processes", () => {
  let other: Store;
  let otherDeps: AppDeps;
  let subs: SubscriptionsTable[];

  async function setup(count: number) {
    const formId = await recurringForm(t);
    subs = [];
    for (let i = 0; i < count; i++) subs.push(await subscribe(t, formId, { amount: 10 + i }));
    other = await secondStore(t.store);
    cleanups.push(() => other.close());
    otherDeps = {
      ...t.deps,
      store: other,
      processors: await openProcessors(other, t.config, t.deps.secrets, () => clock),
    };
  }

  async function expectEachChargedOnce(chargesBefore: number) {
    expect(await ledgerCharges(t.store.db)).toBe(chargesBefore + subs.length);
    for (const sub of subs) {
      const payments = await paymentsOf(t.store.db, sub.id);
      expect(payments.map((p) => p.status)).toEqual(["COMPLETED", "COMPLETED"]);
      expect(payments[1].amount_cents).toBe(sub.amount_cents);
      expect(await subscription(t.store.db, sub.id)).toMatchObject({ cycle: 1, claim_token: null });
    }
  }

  it("a second worker skips the rows the first has claimed, while the first is waiting on the processor", async () => {
    await setup(6);
    const before = await ledgerCharges(t.store.db);
    clock = at("2026-02-28T10:00:00Z");
    const b = worker(otherDeps);
    let meanwhile: Promise<unknown> | undefined;
    // The first charge of worker A runs all of worker B's pass. On SQLite this would block for good if
    // A held a transaction open across the processor call.
    const hooked = wrapped(t.deps.processors.sandbox, {
      before: async () => {
        meanwhile ??= b.runOnce();
        await meanwhile;
      },
    });
    const a = worker({ ...t.deps, processors: t.deps.processors.withSandbox(hooked) }, { batchSize: 2 });
    const first = await a.runOnce();
    expect(await meanwhile).toEqual({ ...none, charged: 4 });
    expect(first).toEqual({ ...none, charged: 2 });
    await expectEachChargedOnce(before);
  });

  it.skipIf(dialect === "sqlite")(
    "two workers on two connections running freely charge each due subscription exactly once",
    async () => {
      // (SQLite: better-sqlite3 waits for a lock synchronously, so two connections in one process cannot
      // interleave transactions; the CLI test runs several processes against SQLite instead.)
      await setup(12);
      const before = await ledgerCharges(t.store.db);
      clock = at("2026-02-28T10:00:00Z");
      const a = worker(t.deps, { batchSize: 2 });
      const b = worker(otherDeps, { batchSize: 2 });
      const results = await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
      expect(results.reduce((sum, r) => sum + r.charged, 0)).toBe(12);
      expect(results.every((r) => r.failed === 0)).toBe(true);
      await expectEachChargedOnce(before);
      expect(await Promise.all([a.runOnce(), b.runOnce()])).toEqual([none, none]);
    },
  );
});

describe("the worker loop", () => {
  it("runs passes on a timer and stop() waits for the pass in flight", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    clock = at("2026-02-28T10:00:00Z");
    const errors: unknown[] = [];
    const w = worker(t.deps, { onError: (err) => errors.push(err) });
    w.start(10);
    for (let i = 0; i < 200 && (await paymentsOf(t.store.db, sub.id)).length < 2; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await w.stop();
    expect(errors).toEqual([]);
    expect(await paymentsOf(t.store.db, sub.id)).toHaveLength(2);
  });

  it("reports a failing pass to onError and keeps running", async () => {
    const errors: string[] = [];
    const broken: AppDeps = { ...t.deps, store: { ...t.store, dialect: t.store.dialect, db: brokenDb() } };
    const w = worker(broken, { onError: (err, context) => errors.push(`${context}: ${String(err)}`) });
    w.start(5);
    for (let i = 0; i < 100 && errors.filter((e) => /^claiming/.test(e)).length < 2; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await w.stop();
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors.filter((e) => /^claiming subscriptions/.test(e)).length).toBeGreaterThanOrEqual(2);
  });
});

function brokenDb(): Store["db"] {
  return new Proxy(t.store.db, {
    get(target, prop, receiver) {
      if (prop === "updateTable")
        return () => {
          throw new Error("database is gone");
        };
      return Reflect.get(target, prop, receiver);
    },
  });
}

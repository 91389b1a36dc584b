import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { billingDate } from "../../server/billing/schedule.js";
import { SettlementWorker } from "../../server/billing/settlement.js";
import { isoAt } from "../../shared/time.js";
import { giveMonthly, type StripeTestApp, setupStripeApp } from "../support/stripeApp.js";

/**
 * A monthly gift paid by a US bank account entered by hand: Stripe sends microdeposits and attaches the
 * method to the donor's customer only once the donor verifies them, so the first payment waits PENDING
 * with no saved method. The gift starts when that payment completes, once, however often it is heard of.
 */

let s: StripeTestApp;
let now = Date.now();
const DAY = 24 * 60 * 60 * 1000;

beforeEach(async () => {
  now = Date.now();
  s = await setupStripeApp({ now: () => now });
});
afterEach(async () => {
  await s.close();
});

async function giveMonthlyByBank(account = "000123456789") {
  const token = await s.bankToken(account, { setupFutureUsage: "off_session", manual: true });
  const { res } = await giveMonthly(s, token);
  expect(res.status, res.text).toBe(201);
  return s.t.store.db.selectFrom("payments").selectAll().executeTakeFirstOrThrow();
}

const subscriptions = () => s.t.store.db.selectFrom("subscriptions").selectAll().execute();
const eventTypes = async () =>
  (await s.t.store.db.selectFrom("outbox_events").select("type").orderBy("id").execute()).map((e) => e.type);

describe("a monthly gift by bank account verified with microdeposits", () => {
  it("becomes a recurring gift when its first payment completes, dated from then, once", async () => {
    const row = await giveMonthlyByBank();
    expect(row).toMatchObject({
      status: "PENDING",
      failure_code: "verify_microdeposits",
      subscription_id: null,
    });
    expect(await subscriptions()).toHaveLength(0);
    const pi = row.processor_payment_id ?? "";

    now += 2 * DAY;
    s.emulator.verifyMicrodeposits(pi);
    await s.deliverEvents();
    now += 3 * DAY;
    s.emulator.settleBankPayment(pi);
    const completedAt = now;
    // The completion heard of twice: Stripe's webhook, and the settlement worker's poll.
    const pending = s.emulator.webhooks.pending();
    const delivered = await s.deliverEvents();
    expect(delivered.every((d) => d.status === 200)).toBe(true);
    for (const event of pending) await s.postEvent(JSON.stringify({ ...event, id: `${event.id}_again` }));
    await new SettlementWorker({ deps: s.t.deps, slowRepollMs: 1 }).runOnce();

    const after = await s.t.store.db.selectFrom("payments").selectAll().executeTakeFirstOrThrow();
    expect(after.status).toBe("COMPLETED");
    const subs = await subscriptions();
    expect(subs).toHaveLength(1);
    const [sub] = subs;
    expect(after.subscription_id).toBe(sub.id);
    const intent = await s.stripe.paymentIntents.retrieve(pi);
    const pm = await s.stripe.paymentMethods.retrieve(String(intent.payment_method));
    expect(pm.customer).toBeTruthy();
    const org = await s.t.store.db
      .selectFrom("organizations")
      .selectAll()
      .where("id", "=", s.t.org.id)
      .executeTakeFirstOrThrow();
    const zone = org.time_zone ?? "UTC";
    expect(sub).toMatchObject({
      status: "ACTIVE",
      frequency: "MONTHLY",
      contact_id: after.contact_id,
      amount_cents: 3000,
      payment_method_token: pm.id,
      payment_method_type: "bank",
      processor_customer: pm.customer,
      anchor_at: isoAt(completedAt),
      last_billing_at: isoAt(completedAt),
      next_billing_at: billingDate(isoAt(completedAt), "MONTHLY", 1, zone),
      failed_attempts: 0,
    });
    const types = await eventTypes();
    expect(types.filter((t) => t === "subscription.created")).toHaveLength(1);
    const updated = await s.t.store.db
      .selectFrom("outbox_events")
      .select("data")
      .where("type", "=", "donation.updated")
      .where("data", "like", '%"COMPLETED"%')
      .execute();
    expect(updated).toHaveLength(1);
    expect(updated[0].data).toContain(sub.id);
    const receipts = await s.t.store.db.selectFrom("email_outbox").select("payment_id").execute();
    expect(receipts.map((r) => r.payment_id)).toEqual([row.id]);
  });

  it("that bounces starts no gift", async () => {
    const row = await giveMonthlyByBank("000222222227");
    const pi = row.processor_payment_id ?? "";
    s.emulator.verifyMicrodeposits(pi);
    s.emulator.settleBankPayment(pi);
    await s.deliverEvents();
    const after = await s.t.store.db.selectFrom("payments").selectAll().executeTakeFirstOrThrow();
    expect(after).toMatchObject({ status: "FAILED", subscription_id: null });
    expect(await subscriptions()).toHaveLength(0);
  });
});

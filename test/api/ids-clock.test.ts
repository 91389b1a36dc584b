import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { card, checkout, createForm, donor } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";
import { ulidTime } from "../support/ulid.js";

/**
 * Ids read the injected clock: with the app's clock set far in the past, what a checkout, a new API key and
 * their webhook events are given ids at is that moment (a wall clock date would be years later).
 */

const PAST = Date.parse("2001-02-03T04:05:06.789Z");

let t: TestApp;
beforeEach(async () => {
  t = await setupTestApp({ now: () => PAST, env: { CHECKOUT_LIMIT_PER_IP: "0" } });
});
afterEach(async () => {
  await t.close();
});

describe(`ids are dated by the injected clock (${dialect})`, () => {
  it("a checkout's payment, gift and events, an API key and its request metrics", async () => {
    const formId = await createForm(t, { ...validForms.standard(), frequencies: ["ONE_TIME", "MONTHLY"] });
    const res = await checkout(t, formId, {
      amount: 25,
      frequency: "MONTHLY",
      donor: donor(),
      paymentMethod: card(),
    });
    expect(res.status, res.text).toBe(201);
    const { payment } = res.body as { payment: { paymentID: string; subscription: { id: string } } };
    const key = await t.request<{ keyId: string }>("POST", "/v1/keys", {
      body: { name: "Clock", permissions: ["forms:read"] },
    });
    expect(key.status, key.text).toBe(201);

    const { db } = t.store;
    const stored = await db.selectFrom("payments").select(["id", "subscription_id"]).execute();
    expect(stored).toEqual([{ id: payment.paymentID, subscription_id: payment.subscription.id }]);
    const events = await db.selectFrom("outbox_events").select(["id", "type"]).execute();
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(["form.created", "contact.created", "subscription.created", "donation.created"]),
    );
    await t.deps.metrics.flush();
    const metrics = await db.selectFrom("api_metrics").select("id").execute();
    expect(metrics.length).toBeGreaterThan(0);

    const ids = [
      payment.paymentID,
      payment.subscription.id,
      key.body.keyId,
      ...events.map((e) => e.id),
      ...metrics.map((m) => m.id),
    ];
    for (const id of ids) expect(new Date(ulidTime(id)).toISOString(), id).toBe(new Date(PAST).toISOString());
  });
});

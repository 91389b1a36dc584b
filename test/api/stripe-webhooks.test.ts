import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createForm, donor } from "../support/checkout.js";
import { inventorySold } from "../support/race.js";
import { type StripeTestApp, setupStripeApp } from "../support/stripeApp.js";
import { validForms } from "../support/testApp.js";

/**
 * Stripe's webhooks into POST /stripe/webhooks/<organizationId>: verified on the raw body with the
 * organization's secret, applied once each (by id and by what they say), in any order, through the same
 * transitions as the checkout; refunds and disputes made at Stripe reach the payment.
 */

let s: StripeTestApp;
beforeEach(async () => {
  s = await setupStripeApp();
});
afterEach(async () => {
  await s.close();
});

async function completedGift(amount = 50) {
  const formId = await createForm(s.t, validForms.standard());
  const res = await s.t.request<{ payment: { paymentID: string } }>("POST", `/api/forms/${formId}/checkout`, {
    key: null,
    body: { amount, donor: donor(), paymentMethod: { type: "token", token: await s.cardToken() } },
  });
  if (res.status !== 201) throw new Error(`checkout failed: ${res.status} ${res.text}`);
  await s.deliverEvents();
  return payment(res.body.payment.paymentID);
}

async function payment(id: string) {
  return s.t.store.db.selectFrom("payments").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

async function outboxTypes(subject: string) {
  const rows = await s.t.store.db
    .selectFrom("outbox_events")
    .select("type")
    .where("subject_id", "=", subject)
    .orderBy("id")
    .execute();
  return rows.map((r) => r.type);
}

/** The refunded amounts (major units) of the payment's donation.updated events, oldest first. */
async function updatedRefunds(subject: string) {
  const rows = await s.t.store.db
    .selectFrom("outbox_events")
    .select(["type", "data"])
    .where("subject_id", "=", subject)
    .orderBy("id")
    .execute();
  return rows
    .filter((r) => r.type === "donation.updated")
    .map((r) => (JSON.parse(r.data) as { refundedAmount: number }).refundedAmount);
}

/** A card checkout whose events Stripe has sent are held back (dropped from the queue) and returned. */
async function heldGift(amount = 50) {
  const formId = await createForm(s.t, validForms.standard());
  const res = await s.t.request<{ payment: { paymentID: string } }>("POST", `/api/forms/${formId}/checkout`, {
    key: null,
    body: { amount, donor: donor(), paymentMethod: { type: "token", token: await s.cardToken() } },
  });
  if (res.status !== 201) throw new Error(`checkout failed: ${res.status} ${res.text}`);
  return { row: await payment(res.body.payment.paymentID), events: holdEvents() };
}

/** The events queued for the app, taken out of the queue (a test delivers them when it chooses). */
function holdEvents() {
  const events = s.emulator.webhooks.pending();
  for (const event of events) s.emulator.webhooks.drop(event.id);
  return events;
}

/**
 * Delivers `event` with Stripe's answer to the app's next read of `path` held back `ms` after Stripe made
 * it; resolves (with the delivery still in flight: `late`) once that read has been answered at Stripe, so
 * that what the test changes at Stripe next is not in it: a delivery whose read is overtaken by a later one.
 */
async function deliverWithSlowRead(event: { id: string }, path: string, ms = 1500) {
  const reads = s.emulator.countRequests("GET", path);
  s.emulator.faults.delay("GET", path, ms, { after: true });
  const delivery = s.postEvent(JSON.stringify(event));
  for (let i = 0; s.emulator.countRequests("GET", path) === reads; i++) {
    if (i > 200) throw new Error(`the app never read ${path}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  // The read is handled as soon as its (empty) body is in; its answer is what Stripe had then.
  await new Promise((r) => setTimeout(r, 100));
  return { late: delivery };
}

async function bankGift() {
  const formId = await createForm(s.t, validForms.standard());
  const res = await s.t.request<{ payment: { paymentID: string } }>("POST", `/api/forms/${formId}/checkout`, {
    key: null,
    body: { amount: 40, donor: donor(), paymentMethod: { type: "token", token: await s.bankToken() } },
  });
  if (res.status !== 201) throw new Error(`checkout failed: ${res.status} ${res.text}`);
  return payment(res.body.payment.paymentID);
}

describe("verifying Stripe's deliveries", () => {
  it("refuses a delivery signed with another secret, changing nothing", async () => {
    const row = await bankGift();
    s.emulator.settleBankPayment(row.processor_payment_id ?? "");
    const [event] = s.emulator.webhooks.pending().filter((e) => e.type === "payment_intent.succeeded");
    const res = await s.postEvent(JSON.stringify(event), { secret: "whsec_not_the_right_one_0000" });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: expect.stringContaining("signature") });
    expect((await payment(row.id)).status).toBe("PENDING");
  });

  it("refuses a delivery older than five minutes (a replay)", async () => {
    const row = await bankGift();
    s.emulator.settleBankPayment(row.processor_payment_id ?? "");
    const [event] = s.emulator.webhooks.pending().filter((e) => e.type === "payment_intent.succeeded");
    const old = Math.floor(Date.now() / 1000) - 600;
    const res = await s.postEvent(JSON.stringify(event), { timestamp: old });
    expect(res.status).toBe(400);
    expect((await payment(row.id)).status).toBe("PENDING");
  });

  it("refuses a delivery without a signature, and one for an organization without Stripe", async () => {
    const res = await s.t.request("POST", `/stripe/webhooks/${s.t.org.id}`, {
      key: null,
      rawBody: JSON.stringify({ id: "evt_x", type: "payment_intent.succeeded", data: { object: {} } }),
    });
    expect(res.status).toBe(400);
    const other = await s.t.newOrg({ name: "On the sandbox" });
    const elsewhere = await s.postEvent("{}", { org: other });
    expect(elsewhere.status).toBe(404);
  });
  it("refuses a delivery larger than 512 KiB with 413, whether its length is declared or it comes in chunks", async () => {
    const big = `{"id":"evt_big","type":"ping","data":{"object":{}},"pad":"${"x".repeat(600 * 1024)}"}`;
    const declared = await s.postEvent(big);
    expect(declared.status).toBe(413);
    // Sent in chunks with no Content-Length: counted as it is read, refused once past the limit.
    let sent = 0;
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 4 * 1024 * 1024) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const res = await s.t.app.request(`/stripe/webhooks/${s.t.org.id}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Stripe-Signature": "t=1,v1=00" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: expect.stringContaining("too large") });
    // Reading stopped near the limit, not at the end of what the sender had.
    expect(sent).toBeLessThan(4 * 1024 * 1024);
  });
});

describe("applying Stripe's events", () => {
  it("applies an event once, however often it is delivered", async () => {
    const row = await bankGift();
    s.emulator.settleBankPayment(row.processor_payment_id ?? "");
    const [event] = s.emulator.webhooks.pending().filter((e) => e.type === "payment_intent.succeeded");
    const first = await s.postEvent(JSON.stringify(event));
    const second = await s.postEvent(JSON.stringify(event));
    expect(first.body).toMatchObject({ received: true, result: "applied" });
    expect(second.body).toMatchObject({ received: true, result: "duplicate" });
    expect((await payment(row.id)).status).toBe("COMPLETED");
    expect((await outboxTypes(row.id)).filter((t) => t === "donation.updated")).toHaveLength(1);
  });

  it("comes to the same state whatever order the events arrive in", async () => {
    const row = await bankGift();
    s.emulator.settleBankPayment(row.processor_payment_id ?? "");
    const events = s.emulator.webhooks.pending().reverse();
    for (const event of events) {
      s.emulator.webhooks.drop(event.id);
      expect((await s.postEvent(JSON.stringify(event))).status).toBe(200);
    }
    expect((await payment(row.id)).status).toBe("COMPLETED");
  });

  it("answers 200 and ignores events about payments that are not this organization's", async () => {
    const made = await s.stripe.paymentIntents.create({
      amount: 1000,
      currency: "usd",
      payment_method: "pm_card_visa",
      confirm: true,
      automatic_payment_methods: { enabled: true, allow_redirects: "never" },
    });
    const [event] = s.emulator.webhooks.pending().filter((e) => e.type === "payment_intent.succeeded");
    expect(event).toBeDefined();
    const res = await s.postEvent(JSON.stringify(event));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ result: "ignored" });
    expect(made.id).toMatch(/^pi_/);
    expect(await s.t.store.db.selectFrom("payments").selectAll().execute()).toEqual([]);
  });

  it("records a refund made in Stripe's dashboard: partial, then full (REFUNDED), each with donation.updated", async () => {
    const row = await completedGift(50);
    s.emulator.refundFromDashboard(row.processor_payment_id ?? "", 1500);
    await s.deliverEvents();
    expect(await payment(row.id)).toMatchObject({ status: "COMPLETED", refunded_cents: 1500 });
    s.emulator.refundFromDashboard(row.processor_payment_id ?? "");
    await s.deliverEvents();
    expect(await payment(row.id)).toMatchObject({ status: "REFUNDED", refunded_cents: 5000 });
    const view = await s.t.request<{ status: string; refundedAmount: number }>(
      "GET",
      `/v1/payments/${row.id}`,
    );
    expect(view.body).toMatchObject({ status: "REFUNDED", refundedAmount: 50 });
    expect((await outboxTypes(row.id)).filter((t) => t === "donation.updated")).toHaveLength(2);
  });

  it("shows a dispute on the payment as it opens and closes", async () => {
    const row = await completedGift(50);
    const dispute = s.emulator.openDispute(row.processor_payment_id ?? "", { reason: "fraudulent" });
    await s.deliverEvents();
    const opened = await s.t.request<{ dispute: Record<string, unknown> }>("GET", `/v1/payments/${row.id}`);
    expect(opened.body.dispute).toMatchObject({
      status: "needs_response",
      reason: "fraudulent",
      amount: 50,
      fundsWithdrawn: true,
    });
    s.emulator.closeDispute(dispute.id, "won");
    await s.deliverEvents();
    const closed = await s.t.request<{ dispute: Record<string, unknown> }>("GET", `/v1/payments/${row.id}`);
    expect(closed.body.dispute).toMatchObject({ status: "won", fundsWithdrawn: false });
    expect(await outboxTypes(row.id)).toContain("donation.updated");
  });
});

describe("refunds from our side on Stripe", () => {
  it("refund through Stripe with POST /v1/payments/{id}/refund, and Stripe's own news of it changes nothing more", async () => {
    const row = await completedGift(50);
    const part = await s.t.request<Record<string, unknown>>("POST", `/v1/payments/${row.id}/refund`, {
      body: { amount: 15, reason: "Donor asked" },
    });
    expect(part.status, part.text).toBe(200);
    expect(part.body).toMatchObject({
      refund: { amount: 15, status: "succeeded", id: expect.stringMatching(/^re_/) },
      payment: { status: "COMPLETED", refundedAmount: 15 },
    });
    await s.deliverEvents();
    expect((await payment(row.id)).refunded_cents).toBe(1500);
    const rest = await s.t.request<Record<string, unknown>>("POST", `/v1/payments/${row.id}/refund`);
    expect(rest.body).toMatchObject({
      refund: { amount: 35 },
      payment: { status: "REFUNDED", refundedAmount: 50 },
    });
    const again = await s.t.request("POST", `/v1/payments/${row.id}/refund`);
    expect(again.status).toBe(409);
    const refunds = await s.stripe.refunds.list({ payment_intent: row.processor_payment_id ?? "" });
    expect(refunds.data.map((r) => r.amount).sort()).toEqual([1500, 3500]);
  });
});

describe("late, repeated and out-of-order deliveries never move a payment backwards", () => {
  it("two partial refunds' charge.refunded in reverse order: the total never decreases, one donation.updated", async () => {
    const row = await completedGift(50);
    const pi = row.processor_payment_id ?? "";
    s.emulator.refundFromDashboard(pi, 1500);
    const [first] = holdEvents().filter((e) => e.type === "charge.refunded");
    // The earlier refund's event is delivered first, but Stripe's answer to its read comes back late...
    const { late } = await deliverWithSlowRead(first, `/v1/payment_intents/${pi}`);
    // ...after the second refund's event (the larger total) was delivered and recorded.
    s.emulator.refundFromDashboard(pi, 2000);
    await s.deliverEvents();
    expect(await payment(row.id)).toMatchObject({ status: "COMPLETED", refunded_cents: 3500 });
    const res = await late;
    expect(res.status, res.text).toBe(200);
    expect(await payment(row.id)).toMatchObject({ status: "COMPLETED", refunded_cents: 3500 });
    expect(await updatedRefunds(row.id)).toEqual([35]);
    // The same event again (same id): nothing.
    const again = await s.postEvent(JSON.stringify(first));
    expect(again.body).toMatchObject({ received: true, result: "duplicate" });
    expect(await updatedRefunds(row.id)).toEqual([35]);
  });

  it("payment_intent.succeeded read before a full refund and applied after it keeps the refund", async () => {
    const { row, events } = await heldGift(50);
    const pi = row.processor_payment_id ?? "";
    const succeeded = events.find((e) => e.type === "payment_intent.succeeded");
    if (!succeeded) throw new Error("no payment_intent.succeeded");
    const { late } = await deliverWithSlowRead(succeeded, `/v1/payment_intents/${pi}`);
    s.emulator.refundFromDashboard(pi);
    await s.deliverEvents();
    expect(await payment(row.id)).toMatchObject({ status: "REFUNDED", refunded_cents: 5000 });
    expect((await late).status).toBe(200);
    expect(await payment(row.id)).toMatchObject({ status: "REFUNDED", refunded_cents: 5000 });
    expect(await updatedRefunds(row.id)).toEqual([50]);
  });

  it("a dispute lost on an event order voids its tickets; one won leaves them valid", async () => {
    const formId = await createForm(s.t, {
      ...validForms.event(),
      tickets: [{ name: "Adult", price: 50, quantity: 10 }],
    });
    const buy = async () => {
      const bought = await s.t.request<{ payment: { paymentID: string } }>(
        "POST",
        `/api/forms/${formId}/checkout`,
        {
          key: null,
          body: {
            tickets: [{ name: "Adult", quantity: 2 }],
            donor: donor(),
            paymentMethod: { type: "token", token: await s.cardToken() },
          },
        },
      );
      expect(bought.status, bought.text).toBe(201);
      await s.deliverEvents();
      return payment(bought.body.payment.paymentID);
    };
    const voided = async (id: string) =>
      (
        await s.t.store.db.selectFrom("tickets").select("voided_at").where("payment_id", "=", id).execute()
      ).map((x) => x.voided_at !== null);
    const lost = await buy();
    const won = await buy();
    const lostDispute = s.emulator.openDispute(lost.processor_payment_id ?? "", { reason: "fraudulent" });
    const wonDispute = s.emulator.openDispute(won.processor_payment_id ?? "", { reason: "fraudulent" });
    await s.deliverEvents();
    // Open, the tickets still let their holders in: the dispute may yet be won.
    expect(await voided(lost.id)).toEqual([false, false]);
    s.emulator.closeDispute(lostDispute.id, "lost");
    s.emulator.closeDispute(wonDispute.id, "won");
    await s.deliverEvents();
    expect(await voided(lost.id)).toEqual([true, true]);
    expect(await voided(won.id)).toEqual([false, false]);
    // The door's list says so too.
    const tickets = await s.t.request<{ tickets: { status: string }[] }>(
      "GET",
      `/v1/forms/${formId}/tickets`,
    );
    expect(tickets.status, tickets.text).toBe(200);
    expect(tickets.body.tickets.map((t) => t.status).sort()).toEqual(["VALID", "VALID", "VOID", "VOID"]);
    // The gift stays recorded as it was, with its lost dispute.
    expect(await payment(lost.id)).toMatchObject({ status: "COMPLETED" });
  });

  it("a full refund of an event order that fails after the fact gives the order back its tickets and its seat", async () => {
    const formId = await createForm(s.t, {
      ...validForms.event(),
      tickets: [{ name: "Adult", price: 50, quantity: 1 }],
    });
    const bought = await s.t.request<{ payment: { paymentID: string } }>(
      "POST",
      `/api/forms/${formId}/checkout`,
      {
        key: null,
        body: {
          tickets: [{ name: "Adult", quantity: 1 }],
          donor: donor(),
          // A card whose refunds the emulator can fail later, as a closed card account's are.
          paymentMethod: { type: "token", token: await s.cardToken("4000000000005126") },
        },
      },
    );
    expect(bought.status, bought.text).toBe(201);
    await s.deliverEvents();
    const id = bought.body.payment.paymentID;
    const refunded = await s.t.request<{ refund: { id: string } }>("POST", `/v1/payments/${id}/refund`, {});
    expect(refunded.status, refunded.text).toBe(200);
    await s.deliverEvents();
    const tickets = () =>
      s.t.store.db.selectFrom("tickets").select("voided_at").where("payment_id", "=", id).execute();
    expect((await tickets()).map((x) => x.voided_at !== null)).toEqual([true]);
    expect(await inventorySold(s.t.store.db, formId, "ticket", "Adult")).toBe(0);

    s.emulator.settleRefund(refunded.body.refund.id, "failed");
    await s.deliverEvents();
    expect(await payment(id)).toMatchObject({ status: "COMPLETED", refunded_cents: 0 });
    expect((await tickets()).map((x) => x.voided_at)).toEqual([null]);
    expect(await inventorySold(s.t.store.db, formId, "ticket", "Adult")).toBe(1);
    // The seat is the buyer's again: the next buyer finds it sold out.
    const next = await s.t.request("POST", `/api/forms/${formId}/checkout`, {
      key: null,
      body: {
        tickets: [{ name: "Adult", quantity: 1 }],
        donor: donor(),
        paymentMethod: { type: "token", token: await s.cardToken() },
      },
    });
    expect(next.status).toBe(400);
  });

  it("refunds of the same amount asked for at once with different reasons: one refund per 200, the others 409, never a 503", async () => {
    const row = await completedGift(100);
    const answers = await Promise.all(
      ["a", "b", "c"].map((reason) =>
        s.t.request("POST", `/v1/payments/${row.id}/refund`, { body: { amount: 10, reason } }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(
      statuses.every((status) => status === 200 || status === 409),
      JSON.stringify(statuses),
    ).toBe(true);
    const made = await s.stripe.refunds.list({ payment_intent: row.processor_payment_id ?? "" });
    expect(made.data).toHaveLength(statuses.filter((status) => status === 200).length);
    for (const refused of answers.filter((a) => a.status === 409))
      expect(refused.body.error).toMatch(/being made at this moment/);
  });

  it("identical refunds asked for at once: each answer that says a refund was made made one at Stripe, the others say they made none", async () => {
    const row = await completedGift(100);
    const answers = await Promise.all(
      [1, 2, 3].map(() => s.t.request("POST", `/v1/payments/${row.id}/refund`, { body: { amount: 10 } })),
    );
    for (const a of answers) expect([200, 409]).toContain(a.status);
    const ok = answers.filter((a) => a.status === 200);
    const fresh = ok.filter((a) => a.headers.get("Idempotent-Replayed") === null);
    const replayed = ok.filter((a) => a.headers.get("Idempotent-Replayed") === "true");
    for (const again of replayed)
      expect((again.body as { message: string }).message).toMatch(/^No refund was made now/);
    // Requests that met the same state share one refund; one that came after a refund was recorded met a
    // new state and rightly made its own. Either way, the answers that say "refunded" count the refunds.
    const made = await s.stripe.refunds.list({ payment_intent: row.processor_payment_id ?? "" });
    expect(fresh).toHaveLength(made.data.length);
    expect(new Set(ok.map((a) => (a.body as { refund: { id: string } }).refund.id)).size).toBe(
      made.data.length,
    );
    const after = await s.t.request<{ refundedAmount: number }>("GET", `/v1/payments/${row.id}`);
    expect(after.body.refundedAmount).toBe(10 * made.data.length);
  });

  it("a charge refunded again to a total heard of before (a refund failed in between) is recorded", async () => {
    const row = await completedGift(50);
    const pi = row.processor_payment_id ?? "";
    const refund = s.emulator.refundFromDashboard(pi, 1500);
    await s.deliverEvents();
    expect(await payment(row.id)).toMatchObject({ status: "COMPLETED", refunded_cents: 1500 });
    s.emulator.settleRefund(refund.id, "failed");
    await s.deliverEvents();
    expect(await payment(row.id)).toMatchObject({ status: "COMPLETED", refunded_cents: 0 });
    // The same amount again: Stripe's charge.refunded says amount_refunded 1500 once more, and it is news.
    s.emulator.refundFromDashboard(pi, 1500);
    const delivered = await s.deliverEvents();
    expect(delivered.map((d) => d.body)).toContainEqual({ received: true, result: "applied" });
    expect(await payment(row.id)).toMatchObject({ status: "COMPLETED", refunded_cents: 1500 });
    expect(await updatedRefunds(row.id)).toEqual([15, 0, 15]);
  });

  it("payment_intent.processing or .payment_failed after the payment completed and was refunded change nothing", async () => {
    const row = await bankGift();
    const pi = row.processor_payment_id ?? "";
    const [processing] = holdEvents().filter((e) => e.type === "payment_intent.processing");
    expect(processing).toBeDefined();
    s.emulator.settleBankPayment(pi);
    await s.deliverEvents();
    expect((await payment(row.id)).status).toBe("COMPLETED");
    s.emulator.refundFromDashboard(pi);
    await s.deliverEvents();
    // Bank refunds stay pending at Stripe, and count in the charge's refunded total all the same.
    expect(await payment(row.id)).toMatchObject({ status: "REFUNDED", refunded_cents: 4000 });
    const before = await outboxTypes(row.id);
    const failed = {
      ...processing,
      id: `${processing.id}x`,
      type: "payment_intent.payment_failed",
      data: { ...processing.data, object: { ...processing.data.object, status: "requires_payment_method" } },
    };
    for (const event of [processing, failed]) {
      const res = await s.postEvent(JSON.stringify(event));
      expect(res.status, res.text).toBe(200);
    }
    expect(await payment(row.id)).toMatchObject({ status: "REFUNDED", refunded_cents: 4000 });
    expect(await outboxTypes(row.id)).toEqual(before);
  });

  it("a dispute event read before the dispute was won and applied after it does not reopen it", async () => {
    const row = await completedGift(50);
    const dispute = s.emulator.openDispute(row.processor_payment_id ?? "", { reason: "fraudulent" });
    const [created] = holdEvents().filter((e) => e.type === "charge.dispute.created");
    const { late } = await deliverWithSlowRead(created, `/v1/disputes/${dispute.id}`);
    s.emulator.closeDispute(dispute.id, "won");
    await s.deliverEvents();
    expect((await late).status).toBe(200);
    const view = await s.t.request<{ dispute: Record<string, unknown> }>("GET", `/v1/payments/${row.id}`);
    expect(view.body.dispute).toMatchObject({ status: "won", fundsWithdrawn: false });
  });

  it("a dispute on a payment refunded in full is shown, and the payment stays REFUNDED", async () => {
    const row = await completedGift(50);
    const pi = row.processor_payment_id ?? "";
    s.emulator.refundFromDashboard(pi);
    await s.deliverEvents();
    s.emulator.openDispute(pi, { reason: "fraudulent" });
    await s.deliverEvents();
    expect(await payment(row.id)).toMatchObject({ status: "REFUNDED", refunded_cents: 5000 });
    const view = await s.t.request<{ status: string; dispute: Record<string, unknown> }>(
      "GET",
      `/v1/payments/${row.id}`,
    );
    expect(view.body).toMatchObject({ status: "REFUNDED", dispute: { status: "needs_response" } });
  });
});

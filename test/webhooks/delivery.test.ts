import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WebhookDispatcher } from "../../server/webhooks/dispatcher.js";
import { emitEvent } from "../../server/webhooks/events.js";
import { verifyWebhookSignature } from "../../server/webhooks/signature.js";
import { closeInterruptedAttempts, pruneWebhookHistory } from "../../server/webhooks/store.js";
import { card, checkout, createForm, donor } from "../support/checkout.js";
import { dialect, validForms } from "../support/testApp.js";
import { type Receiver, sleep, startReceiver } from "./receiver.js";
import { allLogs, register, settled, setupWebhookTest, type WebhookTest } from "./support.js";

/**
 * Delivery to real HTTP receivers on 127.0.0.1: events caused through the API and the donor checkout
 * arrive signed, retried, paused, stopped and filtered as docs/webhooks.md says.
 */

describe(`webhook delivery (${dialect})`, () => {
  let w: WebhookTest;
  const receivers: Receiver[] = [];
  const receiver = async (opts?: Parameters<typeof startReceiver>[0]) => {
    const r = await startReceiver(opts);
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    w = await setupWebhookTest({ retryScheduleMs: [150, 150, 150] });
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  afterAll(() => w.close());

  const give = async (formId: string, email?: string) => {
    const res = await checkout(w.t, formId, { amount: 25, donor: donor(email), paymentMethod: card() });
    expect(res.status, res.text).toBe(201);
    return res.body as { payment: { id?: string; paymentID?: string } };
  };

  it("a gift on a form delivers donation.created and contact.created, signed as docs/webhooks.md's recipe verifies", async () => {
    const r = await receiver();
    const hook = await register(w.t, r, ["donation.created", "contact.created", "form.created"]);
    const formId = await createForm(w.t, validForms.standard());
    await give(formId, "signed@example.org");
    await r.waitFor((got) => got.length >= 3);
    await sleep(100);
    expect(r.received.map((x) => x.body.event).sort()).toEqual([
      "contact.created",
      "donation.created",
      "form.created",
    ]);
    for (const got of r.received) {
      expect(got.verified, got.raw).toBe(true);
      expect(
        verifyWebhookSignature({
          secret: hook.secret,
          body: got.raw,
          timestamp: got.headers["x-webhook-timestamp"] as string,
          signature: got.headers["x-webhook-signature"] as string,
          nowSeconds: Date.now() / 1000,
        }),
      ).toBe(true);
      expect(got.headers["content-type"]).toBe("application/json");
      expect(got.headers["x-webhook-id"]).toBe(got.body.id);
      expect(got.body.id).toMatch(/^evt_[0-9a-z]{26}$/);
      expect(Number.isInteger(got.body.createdAt)).toBe(true);
      expect(Math.abs(got.body.createdAt - Date.now() / 1000)).toBeLessThan(60);
      // A body signed with another secret, or altered, does not verify.
      expect(
        verifyWebhookSignature({
          secret: "whsec_other",
          body: got.raw,
          timestamp: got.headers["x-webhook-timestamp"] as string,
          signature: got.headers["x-webhook-signature"] as string,
          nowSeconds: Date.now() / 1000,
        }),
      ).toBe(false);
    }
    const donation = r.received.find((x) => x.body.event === "donation.created");
    expect(donation?.body.data).toMatchObject({ email: "signed@example.org", formID: formId });
    const contact = r.received.find((x) => x.body.event === "contact.created");
    expect(JSON.stringify(contact?.body.data)).toContain("signed@example.org");
    const form = r.received.find((x) => x.body.event === "form.created");
    expect(form?.body.data).toMatchObject({ formID: formId });

    const logs = await settled(w.t, hook.webhookId);
    expect(logs).toHaveLength(3);
    for (const log of logs) {
      expect(log).toMatchObject({
        webhookId: hook.webhookId,
        status: "SUCCESS",
        httpStatus: 200,
        attempt: 1,
        error: null,
      });
      expect(log.logId).toMatch(/^log_[0-9a-z]{26}$/);
      expect(typeof log.responseTime).toBe("number");
    }
    expect(new Set(logs.map((l) => l.eventId))).toEqual(new Set(r.received.map((x) => x.body.id)));
    const read = await w.t.request<{ successCount: number; failureCount: number; lastDeliveryAt: number }>(
      "GET",
      `/v1/webhooks/${hook.webhookId}`,
    );
    expect(read.body.successCount).toBe(3);
    expect(read.body.failureCount).toBe(0);
    expect(Math.abs(read.body.lastDeliveryAt - Date.now() / 1000)).toBeLessThan(60);
  });

  it("a receiver that fails twice then succeeds gets the event three times with one X-Webhook-ID; the log shows FAILED, FAILED, SUCCESS", async () => {
    const r = await receiver({ status: (n) => (n < 2 ? 503 : 200) });
    const hook = await register(w.t, r, ["form.created"]);
    await createForm(w.t, validForms.standard());
    await r.waitFor((got) => got.length >= 3);
    await sleep(400);
    expect(r.received).toHaveLength(3);
    expect(new Set(r.received.map((x) => x.headers["x-webhook-id"])).size).toBe(1);
    expect(r.received.every((x) => x.verified)).toBe(true);
    // The body is the same on every attempt; only the timestamp and signature are new.
    expect(new Set(r.received.map((x) => x.raw)).size).toBe(1);
    const logs = await settled(w.t, hook.webhookId);
    expect(logs.map((l) => [l.status, l.attempt, l.httpStatus])).toEqual([
      ["FAILED", 1, 503],
      ["FAILED", 2, 503],
      ["SUCCESS", 3, 200],
    ]);
    expect(logs[0].error).toMatch(/503/);
    expect((await allLogs(w.t, hook.webhookId, "FAILED")).map((l) => l.attempt)).toEqual([1, 2]);
    expect((await allLogs(w.t, hook.webhookId, "SUCCESS")).map((l) => l.attempt)).toEqual([3]);
    const read = await w.t.request<{ successCount: number; failureCount: number }>(
      "GET",
      `/v1/webhooks/${hook.webhookId}`,
    );
    expect([read.body.successCount, read.body.failureCount]).toEqual([1, 2]);
  });

  it("gives up after the last wait of the schedule: one attempt more than the schedule has waits", async () => {
    const r = await receiver({ status: () => 500 });
    const hook = await register(w.t, r, ["form.created"]);
    await createForm(w.t, validForms.standard());
    await r.waitFor((got) => got.length >= 4, 5000);
    await sleep(700);
    expect(r.received).toHaveLength(4);
    const logs = await settled(w.t, hook.webhookId);
    expect(logs.map((l) => l.attempt)).toEqual([1, 2, 3, 4]);
    expect(logs.every((l) => l.status === "FAILED")).toBe(true);
  });

  it("a receiver's answer with NUL characters is logged without them, and another webhook's outcome beside it is kept", async () => {
    const nul = await receiver({ status: () => 500, answer: () => "bad\u0000answer" });
    const fine = await receiver();
    const failing = await register(w.t, nul, ["form.created"]);
    const ok = await register(w.t, fine, ["form.created"]);
    await createForm(w.t, validForms.standard());
    await nul.waitFor((got) => got.length >= 4, 5000);
    const failed = await settled(w.t, failing.webhookId);
    expect(failed.map((l) => [l.status, l.httpStatus])).toEqual(Array(4).fill(["FAILED", 500]));
    expect(failed[0].error).toBe("HTTP 500: badanswer");
    expect((await settled(w.t, ok.webhookId)).map((l) => l.status)).toEqual(["SUCCESS"]);
    expect(fine.received).toHaveLength(1);
    // Given up after the schedule, as any failing receiver: no attempt beyond it.
    await sleep(700);
    expect(nul.received).toHaveLength(4);
  });

  it("a disabled webhook gets nothing during the pause, and only new events after it is enabled again", async () => {
    const r = await receiver();
    const hook = await register(w.t, r, ["form.created", "form.updated"]);
    const first = await createForm(w.t, validForms.standard());
    await r.waitFor((got) => got.length >= 1);
    const off = await w.t.request("PUT", `/v1/webhooks/${hook.webhookId}`, { body: { status: "DISABLED" } });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ webhook: { status: "DISABLED" } });
    const paused = await createForm(w.t, validForms.standard());
    await w.t.request("PUT", `/v1/forms/${first}`, { body: { description: "during the pause" } });
    await sleep(400);
    expect(r.received).toHaveLength(1);
    const on = await w.t.request("PUT", `/v1/webhooks/${hook.webhookId}`, { body: { status: "ACTIVE" } });
    expect(on.status).toBe(200);
    await sleep(300);
    expect(r.received).toHaveLength(1);
    const after = await createForm(w.t, validForms.standard());
    await r.waitFor((got) => got.length >= 2);
    await sleep(300);
    expect(r.received.map((x) => (x.body.data as { formID: string }).formID)).toEqual([first, after]);
    expect(r.received.map((x) => x.body.data.formID)).not.toContain(paused);
  });

  it("a deleted webhook gets nothing more, queued retries included, and later calls on it answer 410", async () => {
    const r = await receiver({ status: () => 500 });
    const slow = await setupWebhookTest({ retryScheduleMs: [600, 600, 600] });
    try {
      const hook = await register(slow.t, r, ["form.created"]);
      await createForm(slow.t, validForms.standard());
      await r.waitFor((got) => got.length >= 1);
      await settled(slow.t, hook.webhookId);
      const del = await slow.t.request("DELETE", `/v1/webhooks/${hook.webhookId}`);
      expect(del.status).toBe(200);
      expect(del.body).toEqual({
        message: "Webhook deleted successfully",
        webhookId: hook.webhookId,
        status: "DELETED",
      });
      await createForm(slow.t, validForms.standard());
      await sleep(1500);
      expect(r.received).toHaveLength(1);
      const pending = await slow.t.store.db
        .selectFrom("webhook_deliveries")
        .select("status")
        .where("webhook_id", "=", hook.webhookId)
        .execute();
      expect(pending.map((p) => p.status)).toEqual(["CANCELLED"]);
      for (const [method, body] of [
        ["GET", undefined],
        ["PUT", { status: "ACTIVE" }],
        ["DELETE", undefined],
      ] as const) {
        const res = await slow.t.request(method, `/v1/webhooks/${hook.webhookId}`, { body });
        expect(res.status, method).toBe(410);
      }
      // Its log stays readable.
      expect(await allLogs(slow.t, hook.webhookId)).toHaveLength(1);
    } finally {
      await slow.close();
    }
  });

  it("a webhook subscribed to contact.created only never receives any other kind", async () => {
    const r = await receiver();
    const all = await receiver();
    await register(w.t, r, ["contact.created"]);
    await register(w.t, all, [
      "contact.created",
      "contact.updated",
      "donation.created",
      "form.created",
      "form.updated",
    ]);
    const formId = await createForm(w.t, validForms.standard());
    await w.t.request("PUT", `/v1/forms/${formId}`, { body: { description: "changed" } });
    await give(formId, "only-contacts@example.org");
    await give(formId, "only-contacts@example.org");
    await give(formId, "second-contact@example.org");
    await all.waitFor((got) => got.filter((x) => x.body.event === "donation.created").length >= 3);
    await r.waitFor((got) => got.length >= 2);
    await sleep(300);
    expect(all.received.map((x) => x.body.event)).toEqual(
      expect.arrayContaining(["form.created", "form.updated", "donation.created", "contact.created"]),
    );
    expect(r.received.map((x) => x.body.event)).toEqual(["contact.created", "contact.created"]);
  });

  it("a delivery queued for a kind its webhook no longer lists (events changed as it was queued) is cancelled, not sent", async () => {
    const r = await receiver();
    const hook = await register(w.t, r, ["form.created"]);
    const db = w.t.store.db;
    // What a fan-out that read the webhook's old `events` leaves when it commits after the PUT that dropped
    // the kind: a due delivery of form.updated.
    const nowIso = new Date().toISOString();
    const eventId = await emitEvent(
      db,
      w.t.org.id,
      "form.updated",
      "frm_race",
      { formID: "frm_race" },
      Date.now(),
    );
    await db
      .insertInto("webhook_deliveries")
      .values({
        id: "dlv_race0000000000000000000000",
        organization_id: w.t.org.id,
        webhook_id: hook.webhookId,
        event_id: eventId,
        event_type: "form.updated",
        status: "PENDING",
        attempts: 0,
        next_attempt_at: nowIso,
        claimed_until: null,
        claim_token: null,
        created_at: nowIso,
        updated_at: nowIso,
      })
      .execute();
    // A later event of a listed kind: once it has arrived, the dispatcher has seen the earlier one too.
    await createForm(w.t, validForms.standard());
    await r.waitFor((got) => got.length >= 1);
    await sleep(300);
    expect(r.received.map((x) => x.body.event)).toEqual(["form.created"]);
    const race = await db
      .selectFrom("webhook_deliveries")
      .select(["status", "attempts", "claim_token"])
      .where("id", "=", "dlv_race0000000000000000000000")
      .executeTakeFirstOrThrow();
    expect(race).toEqual({ status: "CANCELLED", attempts: 0, claim_token: null });
    expect((await allLogs(w.t, hook.webhookId)).map((l) => l.eventType)).toEqual(["form.created"]);
  });

  it("lastDeliveryAt never moves back: a later attempt recorded first (by another process) stays the last", async () => {
    const r = await receiver();
    const hook = await register(w.t, r, ["form.created"]);
    const later = Date.now() + 3_600_000;
    await w.t.store.db
      .updateTable("webhooks")
      .set({ last_delivery_at: new Date(later).toISOString() })
      .where("id", "=", hook.webhookId)
      .execute();
    await createForm(w.t, validForms.standard());
    await r.waitFor((got) => got.length >= 1);
    await settled(w.t, hook.webhookId);
    const read = await w.t.request<{ successCount: number; lastDeliveryAt: number }>(
      "GET",
      `/v1/webhooks/${hook.webhookId}`,
    );
    expect(read.body.successCount).toBe(1);
    expect(read.body.lastDeliveryAt).toBe(Math.floor(later / 1000));
  });

  it("an answer that comes after its attempt was closed as interrupted replaces that record and is counted once", async () => {
    // The first answer comes late: meanwhile this process's claim lapses and another process claims the
    // delivery, closing this attempt as an interrupted failure (and counting it).
    const r = await receiver({ delayMs: (n) => (n === 0 ? 700 : 0) });
    const hook = await register(w.t, r, ["form.created"]);
    await createForm(w.t, validForms.standard());
    await r.waitFor((got) => got.length >= 1);
    const db = w.t.store.db;
    const delivery = await db
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("webhook_id", "=", hook.webhookId)
      .executeTakeFirstOrThrow();
    const nowIso = new Date().toISOString();
    await db.transaction().execute(async (trx) => {
      await trx
        .updateTable("webhook_deliveries")
        .set({ claim_token: "another-process", claimed_until: new Date(Date.now() + 60_000).toISOString() })
        .where("id", "=", delivery.id)
        .execute();
      await closeInterruptedAttempts(trx, [delivery.id], nowIso);
    });
    const counts = async () =>
      (
        await w.t.request<{ successCount: number; failureCount: number }>(
          "GET",
          `/v1/webhooks/${hook.webhookId}`,
        )
      ).body;
    expect(await counts()).toMatchObject({ successCount: 0, failureCount: 1 });

    // The answer arrives: the attempt did reach the receiver, and one attempt is one count.
    const deadline = Date.now() + 5000;
    let logs = await allLogs(w.t, hook.webhookId);
    while (logs[0]?.status !== "SUCCESS" && Date.now() < deadline) {
      await sleep(20);
      logs = await allLogs(w.t, hook.webhookId);
    }
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ status: "SUCCESS", httpStatus: 200 });
    expect(await counts()).toMatchObject({ successCount: 1, failureCount: 0 });
    // The other process's claim is its own: this late outcome did not settle the delivery under it.
    expect(
      await db
        .selectFrom("webhook_deliveries")
        .select(["status", "claim_token"])
        .where("id", "=", delivery.id)
        .executeTakeFirstOrThrow(),
    ).toEqual({ status: "PENDING", claim_token: "another-process" });
  });

  it("events from before a webhook was registered are never delivered to it", async () => {
    const before = await createForm(w.t, validForms.standard());
    const r = await receiver();
    await register(w.t, r, ["form.created"]);
    const after = await createForm(w.t, validForms.standard());
    await r.waitFor((got) => got.length >= 1);
    await sleep(300);
    expect(r.received.map((x) => x.body.data.formID)).toEqual([after]);
    expect(before).not.toBe(after);
  });

  it("one slow receiver does not hold up another: the fast one gets its events while the slow one still works", async () => {
    const slowReceiver = await receiver({ delayMs: () => 6000 });
    const fast = await receiver();
    await register(w.t, slowReceiver, ["form.created"]);
    await register(w.t, fast, ["form.created"]);
    const started = performance.now();
    for (let i = 0; i < 40; i++) await createForm(w.t, validForms.standard());
    await fast.waitFor((got) => got.length >= 40, 5000, "the fast receiver's 40 events");
    expect(performance.now() - started).toBeLessThan(5500);
    // The slow receiver has them in hand, 8 at a time (the test dispatcher's share), and has answered none yet.
    expect(slowReceiver.received.length).toBeGreaterThan(0);
    expect(slowReceiver.received.length).toBeLessThanOrEqual(8);
  });

  it("a redirect is not followed: the attempt fails", async () => {
    const target = await receiver();
    const r = await receiver({ status: () => 302, headers: { Location: target.url } });
    const hook = await register(w.t, r, ["form.updated"]);
    const formId = await createForm(w.t, validForms.standard());
    await w.t.request("PUT", `/v1/forms/${formId}`, { body: { description: "x" } });
    await r.waitFor((got) => got.length >= 1);
    const logs = await settled(w.t, hook.webhookId);
    expect(logs[0]).toMatchObject({ status: "FAILED", httpStatus: 302 });
    expect(logs[0].error).toMatch(/redirect/);
    expect(target.received).toHaveLength(0);
  });

  it("an answer later than the time limit is a failed attempt", async () => {
    const quick = await setupWebhookTest({ retryScheduleMs: [60_000], timeoutMs: 300 });
    try {
      const r = await receiver({ delayMs: () => 2000 });
      const hook = await register(quick.t, r, ["form.created"]);
      await createForm(quick.t, validForms.standard());
      await r.waitFor((got) => got.length >= 1);
      const logs = await settled(quick.t, hook.webhookId, 3000);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({ status: "FAILED", httpStatus: null, attempt: 1 });
      expect(logs[0].error).toMatch(/timed out/);
      expect(logs[0].responseTime).toBeGreaterThanOrEqual(290);
    } finally {
      await quick.close();
    }
  });

  it("an error answer whose body is still arriving at the time limit is logged with the receiver's status", async () => {
    const quick = await setupWebhookTest({ retryScheduleMs: [60_000], timeoutMs: 300 });
    // A receiver that answers 500 at once, then sends its body slowly, never finishing it.
    const open: http.ServerResponse[] = [];
    let arrive = () => {};
    const arrived = new Promise<void>((resolve) => {
      arrive = resolve;
    });
    const server = http.createServer((req, res) => {
      req.resume();
      arrive();
      res.writeHead(500, { "Content-Type": "text/plain" });
      res.write("overloaded, ");
      open.push(res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const made = await quick.t.request<{ webhookId: string }>("POST", "/v1/webhooks", {
        body: { url: `http://127.0.0.1:${port}/hooks/slow-body`, events: ["form.created"] },
      });
      expect(made.status, made.text).toBe(201);
      await createForm(quick.t, validForms.standard());
      await arrived;
      await new Promise((resolve) => setTimeout(resolve, 100));
      const logs = await settled(quick.t, made.body.webhookId, 3000);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({ status: "FAILED", httpStatus: 500, attempt: 1 });
      expect(logs[0].error).toBe("HTTP 500: overloaded,");
    } finally {
      for (const res of open) res.destroy();
      await new Promise((resolve) => server.close(resolve));
      await quick.close();
    }
  });

  it("a PUT that keeps the secret: deliveries after an update still verify with the secret from registration", async () => {
    const r = await receiver();
    const hook = await register(w.t, r, ["form.created"]);
    const other = await receiver();
    other.setSecret(hook.secret);
    const put = await w.t.request("PUT", `/v1/webhooks/${hook.webhookId}`, {
      body: { url: other.url, events: ["form.created", "form.updated"], description: "moved" },
    });
    expect(put.status).toBe(200);
    expect(put.text).not.toContain("whsec_");
    await createForm(w.t, validForms.standard());
    await other.waitFor((got) => got.length >= 1);
    expect(other.received[0].verified).toBe(true);
    expect(r.received).toHaveLength(0);
  });

  it("stopping the dispatcher cuts a stalled attempt short: logged FAILED as interrupted, due again at once for the next dispatcher", async () => {
    const own = await setupWebhookTest({ retryScheduleMs: [60_000] });
    try {
      let stalled = true;
      const r = await receiver({ delayMs: () => (stalled ? 30_000 : 0) });
      const hook = await register(own.t, r, ["form.created"]);
      await createForm(own.t, validForms.standard());
      await r.waitFor((got) => got.length >= 1);
      const stoppedIn = performance.now();
      await own.dispatcher.stop();
      expect(performance.now() - stoppedIn).toBeLessThan(2000);
      const logs = await allLogs(own.t, hook.webhookId);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({ status: "FAILED", attempt: 1 });
      expect(logs[0].error).toMatch(/interrupted/);
      stalled = false;
      // Not 60 s later, as a failure would wait: the next dispatcher delivers it at once.
      const next = new WebhookDispatcher({ deps: own.t.deps, pollMs: 20 });
      next.start(20);
      try {
        await r.waitFor((got) => got.some((x) => x.acked), 3000, "the delivery after the restart");
      } finally {
        await next.stop();
      }
      expect(new Set(r.received.map((x) => x.body.id)).size).toBe(1);
    } finally {
      await own.close();
    }
  });
});

describe(`an attempt cut off by a crash, whose delivery is cancelled before it is taken up (${dialect})`, () => {
  it("is closed FAILED as interrupted and counted when its webhook is deleted or stops taking its event; one a live process holds is left to it, and closed by the prune once that claim lapses", async () => {
    const own = await setupWebhookTest({ start: false });
    try {
      const r = await startReceiver();
      try {
        const db = own.t.store.db;
        /** A delivery of `hook` left as a killed process leaves it: attempt 1 under way, its log PENDING. */
        const cutOff = async (webhookId: string, claimedUntil: string, claimedBy: string | null = null) => {
          const delivery = await db
            .selectFrom("webhook_deliveries")
            .selectAll()
            .where("webhook_id", "=", webhookId)
            .where("status", "=", "PENDING")
            .where("attempts", "=", 0)
            .executeTakeFirstOrThrow();
          await db
            .updateTable("webhook_deliveries")
            .set({ attempts: 1, claim_token: "gone", claimed_until: claimedUntil, claimed_by: claimedBy })
            .where("id", "=", delivery.id)
            .execute();
          await db
            .insertInto("webhook_logs")
            .values({
              id: `log_${delivery.id.slice(-20)}`,
              organization_id: delivery.organization_id,
              webhook_id: webhookId,
              delivery_id: delivery.id,
              event_id: delivery.event_id,
              event_type: delivery.event_type,
              status: "PENDING",
              http_status: null,
              response_time_ms: null,
              attempt: 1,
              error: null,
              response_body: null,
              created_at: delivery.updated_at,
            })
            .execute();
          return delivery.id;
        };
        const logOf = (deliveryId: string) =>
          db
            .selectFrom("webhook_logs")
            .selectAll()
            .where("delivery_id", "=", deliveryId)
            .executeTakeFirstOrThrow();
        const failures = async (webhookId: string) =>
          Number(
            (
              await db
                .selectFrom("webhooks")
                .select("failure_count")
                .where("id", "=", webhookId)
                .executeTakeFirstOrThrow()
            ).failure_count,
          );
        const past = new Date(Date.now() - 60_000).toISOString();
        const future = new Date(Date.now() + 60_000).toISOString();

        const deleted = await register(own.t, r, ["form.created"]);
        await createForm(own.t, validForms.standard());
        const lapsed = await cutOff(deleted.webhookId, past);
        expect((await own.t.request("DELETE", `/v1/webhooks/${deleted.webhookId}`)).status).toBe(200);
        expect(await logOf(lapsed)).toMatchObject({
          status: "FAILED",
          error: expect.stringMatching(/interrupted/),
        });
        expect(await failures(deleted.webhookId)).toBe(1);

        const narrowed = await register(own.t, r, ["form.created", "form.updated"]);
        await createForm(own.t, validForms.standard());
        const dropped = await cutOff(narrowed.webhookId, past);
        const changed = await own.t.request("PUT", `/v1/webhooks/${narrowed.webhookId}`, {
          body: { events: ["form.updated"] },
        });
        expect(changed.status, changed.text).toBe(200);
        expect((await logOf(dropped)).status).toBe("FAILED");

        // Still within a live claim: its process records the answer itself.
        const held = await register(own.t, r, ["form.created"]);
        await createForm(own.t, validForms.standard());
        const inFlight = await cutOff(held.webhookId, future);
        expect((await own.t.request("DELETE", `/v1/webhooks/${held.webhookId}`)).status).toBe(200);
        expect((await logOf(inFlight)).status).toBe("PENDING");
        expect(await failures(held.webhookId)).toBe(0);

        // That process stops before recording the answer, and its claim lapses: the delivery is cancelled, so
        // no claim takes it up again; the dispatcher's periodic prune closes the attempt and counts it.
        await db
          .updateTable("webhook_deliveries")
          .set({ claimed_until: past })
          .where("id", "=", inFlight)
          .execute();
        const pruning = new WebhookDispatcher({ deps: own.t.deps, pollMs: 20, pruneMs: 20 });
        pruning.start(20);
        try {
          const deadline = Date.now() + 5000;
          while ((await logOf(inFlight)).status === "PENDING" && Date.now() < deadline) await sleep(20);
        } finally {
          await pruning.stop();
        }
        expect(await logOf(inFlight)).toMatchObject({
          status: "FAILED",
          error: expect.stringMatching(/interrupted/),
        });
        expect(await failures(held.webhookId)).toBe(1);
        expect(
          await db
            .selectFrom("webhook_deliveries")
            .select(["status", "claim_token", "claimed_until"])
            .where("id", "=", inFlight)
            .executeTakeFirstOrThrow(),
        ).toEqual({ status: "CANCELLED", claim_token: null, claimed_until: null });
        // Counted once: a later prune has nothing more to close.
        await pruneWebhookHistory(db, Date.now());
        expect(await failures(held.webhookId)).toBe(1);
        expect(await failures(deleted.webhookId)).toBe(1);
      } finally {
        await r.close();
      }
    } finally {
      await own.close();
    }
  });
});

import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WebhookDispatcher } from "../../server/webhooks/dispatcher.js";
import { postWebhook, RESPONSE_EXCERPT_CHARS } from "../../server/webhooks/post.js";
import { verifyWebhookSignature } from "../../server/webhooks/signature.js";
import type { AuditEntryOut } from "../../shared/schemas/auditLog.js";
import { createForm } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";
import { type Received, type Receiver, startReceiver } from "./receiver.js";
import { type LogRecord, register, settled } from "./support.js";

/**
 * The developers' page's webhooks: the delivery log shows each attempt's answer (status and the
 * start of the body); a delivery can be resent, as a new delivery of the same event that reaches the
 * receiver signed anew; the signing secret can be rotated, both secrets signing for 24 hours (on the app's
 * clock) and only the new one after, with no secret in the audit log.
 */

const HOUR = 3_600_000;

type Log = LogRecord & { deliveryId: string; responseBody: string | null };

describe(`webhook answers, resend and secret rotation (${dialect})`, () => {
  let t: TestApp;
  let dispatcher: WebhookDispatcher;
  /**
   * The dispatcher's app clock (deps.now, which judges a rotated-out secret's overlap) runs this far ahead
   * of the real one; the app that emits the events, and dates their deliveries, and the dispatcher's wall
   * clock (its claims, the signature's timestamp) stay real.
   */
  let offset = 0;
  const receivers: Receiver[] = [];
  const receiver = async (opts?: Parameters<typeof startReceiver>[0]) => {
    const r = await startReceiver(opts);
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    t = await setupTestApp({ env: { RATE_LIMIT_PER_HOUR: "1000000" } });
    dispatcher = new WebhookDispatcher({
      deps: { ...t.deps, now: () => Date.now() + offset },
      retryScheduleMs: [100],
      pollMs: 20,
    });
    dispatcher.start(20);
  });
  afterEach(async () => {
    offset = 0;
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  afterAll(async () => {
    await dispatcher.stop();
    await t.close();
  });

  const logsOf = async (webhookId: string) => (await settled(t, webhookId)) as Log[];
  const formCreated = (got: Received[]) => got.some((x) => x.body.event === "form.created");

  it("the log shows each attempt's delivery, status code and the start of the receiver's answer", async () => {
    const r = await receiver({ status: (n) => (n === 0 ? 500 : 200) });
    const hook = await register(t, r, ["form.created"]);
    await createForm(t, validForms.standard());
    await r.waitFor((got) => got.length >= 2);
    const logs = await logsOf(hook.webhookId);
    expect(logs.map((l) => [l.attempt, l.status, l.httpStatus, l.responseBody])).toEqual([
      [1, "FAILED", 500, "nope"],
      [2, "SUCCESS", 200, "ok"],
    ]);
    expect(logs[0].deliveryId).toMatch(/^dlv_[0-9a-z]{26}$/);
    expect(logs[1].deliveryId).toBe(logs[0].deliveryId);
    expect(logs[0].error).toBe("HTTP 500: nope");
  });

  it("a receiver's long answer is kept to its first 500 characters, a 2xx's as well as an error's", async () => {
    const long = "é".repeat(2000);
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(req.url === "/ok" ? 200 : 422, { "Content-Type": "text/plain; charset=utf-8" }).end(long);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const opts = { timeoutMs: 5000, policy: { guard: false }, signal: new AbortController().signal };
      const ok = await postWebhook(`${base}/ok`, {}, "{}", opts);
      const refused = await postWebhook(`${base}/no`, {}, "{}", opts);
      expect(ok).toMatchObject({
        ok: true,
        httpStatus: 200,
        responseBody: "é".repeat(RESPONSE_EXCERPT_CHARS),
      });
      expect(refused).toMatchObject({ ok: false, httpStatus: 422 });
      expect(refused.responseBody).toBe("é".repeat(RESPONSE_EXCERPT_CHARS));
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("resend: a new delivery of the same event and body reaches the receiver, signed, from attempt 1", async () => {
    const r = await receiver();
    const hook = await register(t, r, ["form.created"]);
    await createForm(t, validForms.standard());
    await r.waitFor(formCreated);
    const [first] = await logsOf(hook.webhookId);
    expect(first.status).toBe("SUCCESS");

    const res = await t.request<{ deliveryId: string; eventId: string; status: string }>(
      "POST",
      `/v1/webhooks/${hook.webhookId}/deliveries/${first.deliveryId}/resend`,
    );
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({ eventId: first.eventId, eventType: "form.created", status: "PENDING" });
    expect(res.body.deliveryId).not.toBe(first.deliveryId);

    await r.waitFor((got) => got.length >= 2);
    const [original, again] = r.received;
    expect(again.verified, again.raw).toBe(true);
    expect(again.raw).toBe(original.raw);
    expect(again.headers["x-webhook-id"]).toBe(first.eventId);

    const logs = await logsOf(hook.webhookId);
    expect(logs).toHaveLength(2);
    expect(logs[1]).toMatchObject({
      deliveryId: res.body.deliveryId,
      eventId: first.eventId,
      attempt: 1,
      status: "SUCCESS",
      httpStatus: 200,
    });
  });

  it("resend takes a log record's logId for its delivery, as a client holding only the logs' records has it", async () => {
    const r = await receiver();
    const hook = await register(t, r, ["form.created"]);
    await createForm(t, validForms.standard());
    await r.waitFor(formCreated);
    const [first] = await logsOf(hook.webhookId);
    expect(first.logId).toMatch(/^log_/);
    const res = await t.request<{ deliveryId: string; eventId: string }>(
      "POST",
      `/v1/webhooks/${hook.webhookId}/deliveries/${first.logId}/resend`,
    );
    expect(res.status, res.text).toBe(202);
    expect(res.body.eventId).toBe(first.eventId);
    await r.waitFor((got) => got.length >= 2);
    expect(r.received[1].raw).toBe(r.received[0].raw);
    // Another webhook's log record is not this webhook's delivery.
    const other = await register(t, await receiver(), ["contact.created"]);
    const foreign = await t.request(
      "POST",
      `/v1/webhooks/${other.webhookId}/deliveries/${first.logId}/resend`,
    );
    expect(foreign.status).toBe(404);
    const unknown = await t.request(
      "POST",
      `/v1/webhooks/${hook.webhookId}/deliveries/log_00000000000000000000000000/resend`,
    );
    expect(unknown.status).toBe(404);
  });

  it("resend refuses an unknown or foreign delivery (404), a paused webhook (409), a reader key (403)", async () => {
    const r = await receiver();
    const hook = await register(t, r, ["form.created"]);
    await createForm(t, validForms.standard());
    await r.waitFor(formCreated);
    const [log] = await logsOf(hook.webhookId);
    const resend = (webhookId: string, deliveryId: string, key?: string) =>
      t.request("POST", `/v1/webhooks/${webhookId}/deliveries/${deliveryId}/resend`, { key });

    expect((await resend(hook.webhookId, "dlv_00000000000000000000000000")).status).toBe(404);
    expect((await resend(hook.webhookId, "nonsense")).status).toBe(404);
    // A delivery of another of the organization's webhooks is not this webhook's.
    const other = await register(t, await receiver(), ["contact.created"]);
    expect((await resend(other.webhookId, log.deliveryId)).status).toBe(404);
    // Another organization cannot reach this webhook at all (403, as every webhook route answers).
    const stranger = await t.newOrg();
    expect((await resend(hook.webhookId, log.deliveryId, stranger.key)).status).toBe(403);
    const reader = await t.newOrg({ permissions: ["webhooks:read"] });
    expect((await resend(hook.webhookId, log.deliveryId, reader.key)).status).toBe(403);

    const paused = await t.request("PUT", `/v1/webhooks/${hook.webhookId}`, { body: { status: "DISABLED" } });
    expect(paused.status).toBe(200);
    expect((await resend(hook.webhookId, log.deliveryId)).status).toBe(409);
    await new Promise((done) => setTimeout(done, 150));
    expect(r.received).toHaveLength(1);
  });

  it("resend of an event kind the webhook no longer lists answers 409 and queues nothing", async () => {
    const r = await receiver();
    const hook = await register(t, r, ["form.created", "form.updated"]);
    await createForm(t, validForms.standard());
    await r.waitFor(formCreated);
    const [log] = await logsOf(hook.webhookId);
    const put = await t.request("PUT", `/v1/webhooks/${hook.webhookId}`, {
      body: { events: ["form.updated"] },
    });
    expect(put.status).toBe(200);

    const res = await t.request<{ error: string }>(
      "POST",
      `/v1/webhooks/${hook.webhookId}/deliveries/${log.deliveryId}/resend`,
    );
    expect(res.status, res.text).toBe(409);
    expect(res.body.error).toMatch(/no longer subscribes to form\.created/);
    const queued = await t.store.db
      .selectFrom("webhook_deliveries")
      .select("id")
      .where("webhook_id", "=", hook.webhookId)
      .execute();
    expect(queued.map((d) => d.id)).toEqual([log.deliveryId]);
    // Listed again, it can be resent.
    await t.request("PUT", `/v1/webhooks/${hook.webhookId}`, { body: { events: ["form.created"] } });
    const again = await t.request(
      "POST",
      `/v1/webhooks/${hook.webhookId}/deliveries/${log.deliveryId}/resend`,
    );
    expect(again.status, again.text).toBe(202);
    await r.waitFor((got) => got.length >= 2);
  });

  it("rotation: for 24 hours both secrets sign every delivery, then only the new one", async () => {
    const r = await receiver();
    const hook = await register(t, r, ["form.created"]);
    const oldSecret = hook.secret;

    const rotated = await t.request<{ secret: string; previousSecretExpiresAt: number }>(
      "POST",
      `/v1/webhooks/${hook.webhookId}/rotate-secret`,
    );
    expect(rotated.status, rotated.text).toBe(200);
    const newSecret = rotated.body.secret;
    expect(newSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(newSecret).not.toBe(oldSecret);
    // Unix seconds, as every webhook time.
    expect(Number.isInteger(rotated.body.previousSecretExpiresAt)).toBe(true);
    expect(rotated.body.previousSecretExpiresAt * 1000 - Date.now()).toBeGreaterThan(24 * HOUR - 5000);

    const check = (got: Received, secret: string) =>
      verifyWebhookSignature({
        secret,
        body: got.raw,
        timestamp: got.headers["x-webhook-timestamp"] as string,
        signature: got.headers["x-webhook-signature"] as string,
        nowSeconds: Date.now() / 1000,
      });

    // Within the 24 hours: two signatures; the documented verify accepts it with either secret.
    offset = 23 * HOUR;
    await createForm(t, validForms.standard());
    await r.waitFor((got) => got.length >= 1);
    const during = r.received[0];
    expect(during.headers["x-webhook-signature"]).toMatch(/^sha256=[0-9a-f]{64},sha256=[0-9a-f]{64}$/);
    expect(during.verified).toBe(true); // the receiver still holds the old secret
    expect(check(during, oldSecret)).toBe(true);
    expect(check(during, newSecret)).toBe(true);

    // After them: the new secret only.
    offset = 24 * HOUR + 1000;
    r.setSecret(newSecret);
    await createForm(t, validForms.standard());
    await r.waitFor((got) => got.length >= 2);
    const after = r.received[1];
    expect(after.headers["x-webhook-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(after.verified).toBe(true);
    expect(check(after, newSecret)).toBe(true);
    expect(check(after, oldSecret)).toBe(false);
  });

  it("rotation is in the audit log as webhook.updated without any secret; the secret is never read back", async () => {
    const r = await receiver();
    const hook = await register(t, r, ["form.created"]);
    const rotated = await t.request<{ secret: string }>(
      "POST",
      `/v1/webhooks/${hook.webhookId}/rotate-secret`,
    );
    expect(rotated.status).toBe(200);
    const log = await t.request<{ entries: AuditEntryOut[] }>(
      "GET",
      `/v1/audit-log?subjectType=webhook&subjectId=${hook.webhookId}`,
    );
    expect(log.status, log.text).toBe(200);
    const entry = log.body.entries.find((e) => e.action === "webhook.updated");
    expect(entry?.after).toMatchObject({ secretRotated: true });
    expect(log.text).not.toContain("whsec_");
    const read = await t.request("GET", `/v1/webhooks/${hook.webhookId}`);
    expect(read.text).not.toContain("whsec_");
    // Only those with webhooks:write may rotate.
    const reader = await t.newOrg({ permissions: ["webhooks:read"] });
    expect(
      (await t.request("POST", `/v1/webhooks/${hook.webhookId}/rotate-secret`, { key: reader.key })).status,
    ).toBe(403);
  });
});

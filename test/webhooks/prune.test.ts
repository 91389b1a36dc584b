import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookLogsTable } from "../../server/store/schema.js";
import { WebhookDispatcher } from "../../server/webhooks/dispatcher.js";
import { emitEvent } from "../../server/webhooks/events.js";
import { pruneWebhookHistory, WEBHOOK_HISTORY_RETENTION_MS } from "../../server/webhooks/store.js";
import { dialect, setupTestApp, type TestApp } from "../support/testApp.js";

/** The delivery log keeps 90 days; queued deliveries are never pruned, however old. */

/** A successful first attempt of a `form.created` delivery in the log, with the ids and time given. */
const insertLog = (
  t: TestApp,
  row: Pick<
    WebhookLogsTable,
    "id" | "organization_id" | "webhook_id" | "delivery_id" | "event_id" | "created_at"
  >,
) =>
  t.store.db
    .insertInto("webhook_logs")
    .values({
      ...row,
      event_type: "form.created",
      status: "SUCCESS",
      http_status: 200,
      response_time_ms: 3,
      attempt: 1,
      error: null,
    })
    .execute();

describe(`webhook history retention (${dialect})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp();
  });
  afterAll(() => t.close());

  it("drops log records and finished deliveries older than 90 days, keeps newer ones and anything still queued", async () => {
    const hook = await t.request<{ webhookId: string }>("POST", "/v1/webhooks", {
      body: { url: "https://example.org/x", events: ["form.created"] },
    });
    const now = Date.now();
    const old = new Date(now - WEBHOOK_HISTORY_RETENTION_MS - 60_000).toISOString();
    const recent = new Date(now - 60_000).toISOString();
    const eventIds: string[] = [];
    for (let i = 0; i < 3; i++)
      eventIds.push(await emitEvent(t.store.db, t.org.id, "form.created", `f${i}`, { formID: `f${i}` }, now));
    const deliveries = await t.store.db
      .selectFrom("webhook_deliveries")
      .select(["id", "event_id"])
      .where("webhook_id", "=", hook.body.webhookId)
      .execute();
    const byEvent = new Map(deliveries.map((d) => [d.event_id, d.id]));
    const set = async (eventId: string, status: string, updatedAt: string) =>
      t.store.db
        .updateTable("webhook_deliveries")
        .set({ status, updated_at: updatedAt })
        .where("id", "=", byEvent.get(eventId) as string)
        .execute();
    await set(eventIds[0], "SUCCESS", old);
    await set(eventIds[1], "PENDING", old);
    await set(eventIds[2], "FAILED", recent);
    for (const [id, createdAt] of [
      ["log_old", old],
      ["log_recent", recent],
    ])
      await insertLog(t, {
        id,
        organization_id: t.org.id,
        webhook_id: hook.body.webhookId,
        delivery_id: byEvent.get(eventIds[0]) as string,
        event_id: eventIds[0],
        created_at: createdAt,
      });

    await pruneWebhookHistory(t.store.db, now);

    const logs = await t.store.db.selectFrom("webhook_logs").select("id").execute();
    expect(logs.map((l) => l.id)).toEqual(["log_recent"]);
    const left = await t.store.db
      .selectFrom("webhook_deliveries")
      .select("event_id")
      .where("webhook_id", "=", hook.body.webhookId)
      .execute();
    expect(new Set(left.map((d) => d.event_id))).toEqual(new Set([eventIds[1], eventIds[2]]));
  });

  it("prunes soon after the dispatcher starts, not only an hour later (a process restarted often still prunes)", async () => {
    const org = await t.newOrg();
    const hook = await t.request<{ webhookId: string }>("POST", "/v1/webhooks", {
      key: org.key,
      body: { url: "https://example.org/z", events: ["form.created"] },
    });
    const now = Date.now();
    const eventId = await emitEvent(t.store.db, org.id, "form.created", "fz", { formID: "fz" }, now);
    const delivery = await t.store.db
      .selectFrom("webhook_deliveries")
      .select("id")
      .where("event_id", "=", eventId)
      .executeTakeFirstOrThrow();
    await t.store.db
      .updateTable("webhook_deliveries")
      .set({ status: "SUCCESS" })
      .where("id", "=", delivery.id)
      .execute();
    await insertLog(t, {
      id: "log_stale",
      organization_id: org.id,
      webhook_id: hook.body.webhookId,
      delivery_id: delivery.id,
      event_id: eventId,
      created_at: new Date(now - WEBHOOK_HISTORY_RETENTION_MS - 60_000).toISOString(),
    });
    const stale = () =>
      t.store.db.selectFrom("webhook_logs").select("id").where("id", "=", "log_stale").executeTakeFirst();
    // Hourly, as in production; the first prune comes after `firstPruneMs`.
    const dispatcher = new WebhookDispatcher({ deps: t.deps, pollMs: 50, firstPruneMs: 30 });
    dispatcher.start(50);
    try {
      const deadline = Date.now() + 5000;
      while ((await stale()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await dispatcher.stop();
    }
    expect(await stale()).toBeUndefined();
  });

  it("cancels a delivery queued for a webhook after its DELETE (a fan-out that read it just before), which nothing would claim", async () => {
    const org = await t.newOrg();
    const hook = await t.request<{ webhookId: string }>("POST", "/v1/webhooks", {
      key: org.key,
      body: { url: "https://example.org/gone", events: ["form.created"] },
    });
    const kept = await t.request<{ webhookId: string }>("POST", "/v1/webhooks", {
      key: org.key,
      body: { url: "https://example.org/kept", events: ["form.created"] },
    });
    const paused = await t.request<{ webhookId: string }>("POST", "/v1/webhooks", {
      key: org.key,
      body: { url: "https://example.org/paused", events: ["form.created"] },
    });
    expect(
      (
        await t.request("PUT", `/v1/webhooks/${paused.body.webhookId}`, {
          key: org.key,
          body: { status: "DISABLED" },
        })
      ).status,
    ).toBe(200);
    expect((await t.request("DELETE", `/v1/webhooks/${hook.body.webhookId}`, { key: org.key })).status).toBe(
      200,
    );
    const now = Date.now();
    const eventId = await emitEvent(t.store.db, org.id, "form.created", "fl", { formID: "fl" }, now);
    // The late fan-out's row, as it lands once the DELETE has committed; and one queued for the disabled
    // webhook before it was disabled (fan-outs pass disabled webhooks by).
    const iso = new Date(now).toISOString();
    for (const [id, webhookId] of [
      ["dlv_late", hook.body.webhookId],
      ["dlv_paused", paused.body.webhookId],
    ])
      await t.store.db
        .insertInto("webhook_deliveries")
        .values({
          id,
          organization_id: org.id,
          webhook_id: webhookId,
          event_id: eventId,
          event_type: "form.created",
          status: "PENDING",
          attempts: 0,
          next_attempt_at: iso,
          claimed_until: null,
          claim_token: null,
          created_at: iso,
          updated_at: iso,
        })
        .execute();

    await pruneWebhookHistory(t.store.db, now);

    const statuses = Object.fromEntries(
      (
        await t.store.db
          .selectFrom("webhook_deliveries")
          .select(["webhook_id", "status"])
          .where("event_id", "=", eventId)
          .execute()
      ).map((d) => [d.webhook_id, d.status]),
    );
    // The deleted webhook's is cancelled; a live one's and a disabled one's (sent once it is enabled) stay queued.
    expect(statuses).toEqual({
      [hook.body.webhookId]: "CANCELLED",
      [kept.body.webhookId]: "PENDING",
      [paused.body.webhookId]: "PENDING",
    });
  });

  it("drops events older than 90 days that no delivery needs, keeps newer ones and those still queued", async () => {
    const org = await t.newOrg();
    const hook = await t.request<{ webhookId: string }>("POST", "/v1/webhooks", {
      key: org.key,
      body: { url: "https://example.org/y", events: ["contact.created"] },
    });
    expect(hook.status).toBe(201);
    const now = Date.now();
    const old = new Date(now - WEBHOOK_HISTORY_RETENTION_MS - 60_000).toISOString();
    // Nobody subscribes to form.created here: no delivery. contact.created is queued for the webhook.
    const unneeded = await emitEvent(t.store.db, org.id, "form.created", "f-old", { formID: "f-old" }, now);
    const queued = await emitEvent(t.store.db, org.id, "contact.created", "c-old", { id: "c-old" }, now);
    const fresh = await emitEvent(t.store.db, org.id, "form.created", "f-new", { formID: "f-new" }, now);
    await t.store.db
      .updateTable("outbox_events")
      .set({ created_at: old })
      .where("id", "in", [unneeded, queued])
      .execute();

    await pruneWebhookHistory(t.store.db, now);

    const left = await t.store.db
      .selectFrom("outbox_events")
      .select("id")
      .where("organization_id", "=", org.id)
      .execute();
    expect(new Set(left.map((e) => e.id))).toEqual(new Set([queued, fresh]));
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CAPS } from "../../server/webhooks/dispatcher.js";
import { emitEvent } from "../../server/webhooks/events.js";
import type { EventType } from "../../shared/schemas/webhook.js";
import { dialect, type TestOrg } from "../support/testApp.js";
import { type Receiver, sleep, startReceiver } from "./receiver.js";
import { register, setupWebhookTest, type WebhookTest } from "./support.js";

/**
 * Receivers that never answer, with backlogs far beyond the in-flight caps, on the same host as receivers
 * that answer at once: the slow ones fill their webhooks', organizations' and the process's shares, and the
 * fast ones' deliveries still go out at once, long before the slow attempts reach their time limit
 * (docs/webhooks.md, "Delivery and retries").
 */

const TIMEOUT_MS = 8000;

describe(`slow receivers hold up only their own deliveries (${dialect})`, () => {
  let w: WebhookTest;
  let r: Receiver;

  beforeAll(async () => {
    // The dispatcher's own caps, as a server process has them.
    w = await setupWebhookTest({ timeoutMs: TIMEOUT_MS, dispatcher: { ...DEFAULT_CAPS } });
    // One host for all: an event marked slow is never answered (until the dispatcher gives up), others at once.
    r = await startReceiver({ delayMs: (_n, body) => (body.data.slow ? 60_000 : 0) });
  });
  afterAll(async () => {
    await w.close();
    await r.close();
  });

  const hooks = async (org: TestOrg, n: number, events: EventType[]) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await register(w.t, r, events, { key: org.key })).webhookId);
    return ids;
  };
  const emit = (org: TestOrg, type: EventType, n: number, data: Record<string, unknown>) =>
    w.t.store.db.transaction().execute(async (trx) => {
      for (let i = 0; i < n; i++)
        await emitEvent(trx, org.id, type, `frm_${i}`, { formID: `frm_${i}`, ...data }, Date.now());
    });
  const slowReceived = (org: string) => r.received.filter((x) => x.body.data.slow && x.body.data.org === org);
  const finishedAttempts = async (webhookIds: string[]) =>
    (
      await w.t.store.db
        .selectFrom("webhook_logs")
        .select("id")
        .where("webhook_id", "in", webhookIds)
        .where("status", "!=", "PENDING")
        .execute()
    ).length;

  it("webhooks that never answer fill their shares; a fast webhook of their organization and of another get theirs at once", async () => {
    const { perOrganization, concurrency } = DEFAULT_CAPS;
    const a = w.t.org;
    const b = await w.t.newOrg({ name: "Also slow" });
    const c = await w.t.newOrg({ name: "Fast" });
    const slowA = await hooks(a, 4, ["form.created"]);
    const slowB = await hooks(b, 4, ["form.created"]);
    await hooks(a, 1, ["form.updated"]);
    await hooks(c, 1, ["form.created"]);

    // 280 deliveries to each organization's slow webhooks: more than the process's share by far.
    await emit(a, "form.created", 70, { slow: true, org: "a" });
    await emit(b, "form.created", 70, { slow: true, org: "b" });
    await r.waitFor((got) => got.length >= concurrency, 5000, "the slow webhooks' attempts");
    await sleep(300);
    // Organization a has its share in flight and no more, whatever its backlog; b got the rest.
    expect(slowReceived("a")).toHaveLength(perOrganization);
    expect(slowReceived("b")).toHaveLength(concurrency - perOrganization);

    const sent = performance.now();
    await emit(a, "form.updated", 1, { org: "a" });
    await emit(c, "form.created", 1, { org: "c" });
    await r.waitFor(
      (got) => got.filter((x) => !x.body.data.slow).length >= 2,
      TIMEOUT_MS / 2,
      "the fast webhooks' deliveries",
    );
    const took = performance.now() - sent;
    // Every slow attempt is still waiting for its answer: the fast deliveries did not wait for them.
    expect(await finishedAttempts([...slowA, ...slowB])).toBe(0);
    expect(took).toBeLessThan(TIMEOUT_MS / 2);
    expect(r.received.filter((x) => !x.body.data.slow).map((x) => x.body.data.org)).toEqual(
      expect.arrayContaining(["a", "c"]),
    );
    // Nothing else started for the slow webhooks meanwhile.
    expect(r.received.filter((x) => x.body.data.slow)).toHaveLength(concurrency);
  });
});

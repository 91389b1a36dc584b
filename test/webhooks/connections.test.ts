import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { emitEvent } from "../../server/webhooks/events.js";
import { deliveryAgents, postWebhook } from "../../server/webhooks/post.js";
import { dialect } from "../support/testApp.js";
import { sleep } from "./receiver.js";
import { setupWebhookTest } from "./support.js";

/**
 * Connections to receivers are kept alive for reuse, but not for good: one left idle is closed after a
 * while, even by a receiver that never closes idle connections itself, and only so many are kept idle.
 */

/** A receiver that answers 200 at once and never closes a connection (no keep-alive timeout). */
async function neverClosing() {
  let requests = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      requests++;
      res.writeHead(200).end("ok");
    });
  });
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/never-closing`,
    requests: () => requests,
    connections: () => new Promise<number>((resolve) => server.getConnections((_err, n) => resolve(n))),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe(`connections to receivers (${dialect})`, () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it("deliveries to a receiver that never closes idle connections leave none open once the idle timeout has passed", async () => {
    const w = await setupWebhookTest({ dispatcher: { idleSocketMs: 300 } });
    cleanups.push(() => w.close());
    const r = await neverClosing();
    cleanups.push(() => r.close());
    const made = await w.t.request<{ webhookId: string }>("POST", "/v1/webhooks", {
      body: { url: r.url, events: ["form.created"] },
    });
    expect(made.status, made.text).toBe(201);
    await w.t.store.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 20; i++)
        await emitEvent(trx, w.t.org.id, "form.created", `frm_${i}`, { formID: `frm_${i}` }, Date.now());
    });
    const deadline = Date.now() + 5000;
    while (r.requests() < 20 && Date.now() < deadline) await sleep(10);
    expect(r.requests()).toBe(20);
    // Kept for reuse at first…
    expect(await r.connections()).toBeGreaterThan(0);
    // …closed once idle for the timeout (the dispatcher still running).
    const closing = Date.now() + 3000;
    while ((await r.connections()) > 0 && Date.now() < closing) await sleep(50);
    expect(await r.connections()).toBe(0);
  });

  it("only so many idle connections are kept, all receivers together, and they never hold up an attempt to another", async () => {
    const agents = deliveryAgents({ maxInFlight: 2, maxIdle: 2, idleMs: 60_000 });
    cleanups.push(async () => agents["http:"].destroy());
    const receivers = await Promise.all([1, 2, 3, 4].map(() => neverClosing()));
    for (const r of receivers) cleanups.push(() => r.close());
    const opts = { timeoutMs: 2000, policy: { guard: false }, signal: new AbortController().signal, agents };
    for (const r of receivers) {
      const result = await postWebhook(r.url, { "Content-Type": "application/json" }, "{}", opts);
      expect(result, result.error ?? "").toMatchObject({ ok: true, httpStatus: 200 });
      // At once: not queued behind the idle connections to the others.
      expect(result.responseTimeMs).toBeLessThan(1000);
    }
    await sleep(50);
    const open = await Promise.all(receivers.map((r) => r.connections()));
    expect(open.reduce((a, b) => a + b, 0)).toBe(2);
  });
});

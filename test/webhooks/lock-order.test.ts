import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { emitEvent } from "../../server/webhooks/events.js";
import { dialect, pgUrl } from "../support/testApp.js";
import { type Receiver, startReceiver } from "./receiver.js";
import { register, setupWebhookTest, type WebhookTest } from "./support.js";

/**
 * DELETE and PUT /v1/webhooks/{id} on a webhook whose deliveries the dispatcher is working on: the API and
 * the dispatcher lock the webhook tables' rows in one order (server/webhooks/store.ts), so neither ever
 * waits for a row the other holds while holding one the other waits for (a deadlock, which PostgreSQL
 * breaks by failing one of them: the API would answer 503). The PostgreSQL tests stop the dispatcher
 * inside its transaction at a chosen statement (a trigger waiting for an advisory lock this test holds),
 * so the interleaving is the same on every run.
 */

/** Retries due at once, so failing deliveries keep the dispatcher busy. */
const RETRY_AT_ONCE = Array.from({ length: 8 }, () => 0);

describe(`webhook changes while the dispatcher writes (${dialect})`, () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  });
  const webhookTest = async (opts: Parameters<typeof setupWebhookTest>[0]) => {
    const w = await setupWebhookTest(opts);
    cleanups.push(() => w.close());
    return w;
  };
  const receiver = async (opts?: Parameters<typeof startReceiver>[0]) => {
    const r = await startReceiver(opts);
    cleanups.push(() => r.close());
    return r;
  };

  /** Another connection to the test's database, as another process (or the test itself) has one. */
  const connect = async (w: WebhookTest) => {
    const client = new pg.Client({
      connectionString: pgUrl,
      options: `-c search_path=${w.t.database.pgSchema}`,
    });
    await client.connect();
    cleanups.push(() => client.end());
    return client;
  };

  /** The backends waiting for a lock `pid` holds. */
  const blockedBy = async (c: pg.Client, pid: number): Promise<number[]> =>
    (await c.query("select pid from pg_stat_activity where $1 = any(pg_blocking_pids(pid))", [pid])).rows.map(
      (r) => Number(r.pid),
    );
  const waitBlockedBy = async (c: pg.Client, pid: number, what: string, except: number[] = []) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const pids = (await blockedBy(c, pid)).filter((p) => !except.includes(p));
      if (pids.length) return pids[0];
      if (Date.now() > deadline) throw new Error(`nothing waits for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  /**
   * Makes the transactions whose writes to `table` match `when` (a trigger's WHEN condition) stop right
   * after that write, holding their locks, until `release()`. `paused()` resolves with the stopped
   * backend's pid.
   */
  const pauseAfter = async (w: WebhookTest, table: string, when: string) => {
    const c = await connect(w);
    const key = 1 + Math.floor(Math.random() * 2_000_000_000);
    const name = `pause_${table}`;
    await c.query(
      `create function ${name}() returns trigger language plpgsql as $$ begin perform pg_advisory_xact_lock_shared(${key}); return new; end $$`,
    );
    await c.query(
      `create trigger ${name} after update on ${table} for each row when (${when}) execute function ${name}()`,
    );
    await c.query("select pg_advisory_lock($1)", [key]);
    const self = Number((await c.query("select pg_backend_pid() as pid")).rows[0].pid);
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await c.query("select pg_advisory_unlock($1)", [key]);
    };
    cleanups.push(release);
    return { client: c, paused: () => waitBlockedBy(c, self, "the pause"), release };
  };

  /** Whether the webhook's row is free to lock right now (nobody holds it). */
  const webhookRowFree = async (c: pg.Client, webhookId: string) =>
    c.query("select id from webhooks where id = $1 for update nowait", [webhookId]).then(
      () => true,
      (err: { code?: string }) => {
        if (err.code === "55P03") return false;
        throw err;
      },
    );

  const deliveries = (w: WebhookTest, webhookId: string) =>
    w.t.store.db
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("webhook_id", "=", webhookId)
      .orderBy("id")
      .execute();
  const logs = (w: WebhookTest, webhookId: string) =>
    w.t.store.db.selectFrom("webhook_logs").selectAll().where("webhook_id", "=", webhookId).execute();
  const webhookRow = (w: WebhookTest, webhookId: string) =>
    w.t.store.db.selectFrom("webhooks").selectAll().where("id", "=", webhookId).executeTakeFirstOrThrow();

  it.skipIf(dialect !== "postgres")(
    "a DELETE while the dispatcher records a success waits for it, holding nothing it needs, and answers 200",
    async () => {
      const w = await webhookTest({});
      const r = await receiver();
      const hook = await register(w.t, r, ["form.created"]);
      const pause = await pauseAfter(w, "webhook_deliveries", "new.status = 'SUCCESS'");
      await emitEvent(w.t.store.db, w.t.org.id, "form.created", "frm_1", { formID: "frm_1" }, Date.now());
      // The dispatcher has written the delivery's success, not yet the webhook's count.
      const dispatcher = await pause.paused();
      const del = w.t.request("DELETE", `/v1/webhooks/${hook.webhookId}`);
      cleanups.push(() => pause.release().then(() => del));
      await waitBlockedBy(pause.client, dispatcher, "the dispatcher's delivery row");
      // The DELETE waits for the delivery row before it locks the webhook's, which the dispatcher locks next.
      expect(await webhookRowFree(pause.client, hook.webhookId)).toBe(true);
      await pause.release();
      const res = await del;
      expect(res.status, res.text).toBe(200);
      const [delivery] = await deliveries(w, hook.webhookId);
      expect(delivery.status).toBe("SUCCESS");
      expect((await logs(w, hook.webhookId)).map((l) => l.status)).toEqual(["SUCCESS"]);
      const row = await webhookRow(w, hook.webhookId);
      expect(row.status).toBe("DELETED");
      expect(Number(row.success_count)).toBe(1);
    },
  );

  it.skipIf(dialect !== "postgres")(
    "a PUT that drops the kind of a delivery whose failure the dispatcher is recording waits for it and answers 200; the retry is cancelled",
    async () => {
      const w = await webhookTest({ retryScheduleMs: [60_000] });
      const r = await receiver({ status: () => 500 });
      const hook = await register(w.t, r, ["form.created", "form.updated"]);
      // The failure's own write: its retry scheduled, the claim given back.
      const pause = await pauseAfter(
        w,
        "webhook_deliveries",
        "old.claim_token is not null and new.claim_token is null and new.status = 'PENDING'",
      );
      await emitEvent(w.t.store.db, w.t.org.id, "form.created", "frm_1", { formID: "frm_1" }, Date.now());
      const dispatcher = await pause.paused();
      const put = w.t.request("PUT", `/v1/webhooks/${hook.webhookId}`, {
        body: { events: ["form.updated"] },
      });
      cleanups.push(() => pause.release().then(() => put));
      await waitBlockedBy(pause.client, dispatcher, "the dispatcher's delivery row");
      expect(await webhookRowFree(pause.client, hook.webhookId)).toBe(true);
      await pause.release();
      const res = await put;
      expect(res.status, res.text).toBe(200);
      const [delivery] = await deliveries(w, hook.webhookId);
      expect(delivery).toMatchObject({ status: "CANCELLED", attempts: 1 });
      const logged = await logs(w, hook.webhookId);
      expect(logged.map((l) => [l.status, l.http_status])).toEqual([["FAILED", 500]]);
      const row = await webhookRow(w, hook.webhookId);
      expect(JSON.parse(row.events)).toEqual(["form.updated"]);
      expect(Number(row.failure_count)).toBe(1);
    },
  );

  it.skipIf(dialect !== "postgres")(
    "a DELETE while the dispatcher records a failure and a success of the webhook in one write answers 200 at once, with no deadlock to break",
    async () => {
      const w = await webhookTest({ retryScheduleMs: [60_000] });
      // Answers once both attempts have come, both at once (so one write records both): the delivery with
      // the lower id fails, the other succeeds. The write then updates the success before the failure.
      const waiting: { res: http.ServerResponse; eventId: string }[] = [];
      const server = http.createServer((req, res) => {
        let raw = "";
        req.setEncoding("utf8");
        req.on("data", (chunk: string) => {
          raw += chunk;
        });
        req.on("end", async () => {
          waiting.push({ res, eventId: JSON.parse(raw).id });
          if (waiting.length < 2) return;
          const [first] = await deliveries(w, hook.body.webhookId);
          for (const x of waiting) x.res.writeHead(x.eventId === first.event_id ? 500 : 200).end();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      cleanups.push(
        () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      );
      const { port } = server.address() as AddressInfo;
      const hook = await w.t.request<{ webhookId: string }>("POST", "/v1/webhooks", {
        body: { url: `http://127.0.0.1:${port}/hooks/both`, events: ["form.created"] },
      });
      expect(hook.status, hook.text).toBe(201);
      const pause = await pauseAfter(w, "webhook_deliveries", "new.status = 'SUCCESS'");
      await w.t.store.db.transaction().execute(async (trx) => {
        for (const id of ["frm_1", "frm_2"])
          await emitEvent(trx, w.t.org.id, "form.created", id, { formID: id }, Date.now());
      });
      const dispatcher = await pause.paused();
      const del = w.t.request("DELETE", `/v1/webhooks/${hook.body.webhookId}`);
      cleanups.push(() => pause.release().then(() => del));
      await waitBlockedBy(pause.client, dispatcher, "the dispatcher's delivery rows");
      const released = performance.now();
      await pause.release();
      const res = await del;
      expect(res.status, res.text).toBe(200);
      // Had each waited for a row the other held, PostgreSQL would have broken the deadlock only after
      // deadlock_timeout (1 s) of waiting, by failing one of them (the DELETE, run again then).
      expect(performance.now() - released).toBeLessThan(900);
      const [failed, succeeded] = await deliveries(w, hook.body.webhookId);
      expect([failed.status, succeeded.status]).toEqual(["CANCELLED", "SUCCESS"]);
      const row = await webhookRow(w, hook.body.webhookId);
      expect(row.status).toBe("DELETED");
      expect([Number(row.success_count), Number(row.failure_count)]).toEqual([1, 1]);
    },
  );

  it.skipIf(dialect !== "postgres")(
    "a DELETE while the dispatcher's claim closes an interrupted attempt waits for it and answers 200",
    async () => {
      const w = await webhookTest({ start: false });
      const r = await receiver();
      const hook = await register(w.t, r, ["form.created"]);
      await emitEvent(w.t.store.db, w.t.org.id, "form.created", "frm_1", { formID: "frm_1" }, Date.now());
      // As a process killed mid-attempt leaves it, its claim lapsed: the next claim closes that attempt.
      const [queued] = await deliveries(w, hook.webhookId);
      await w.t.store.db
        .updateTable("webhook_deliveries")
        .set({ attempts: 1, claim_token: "gone", claimed_until: new Date(Date.now() - 1000).toISOString() })
        .where("id", "=", queued.id)
        .execute();
      await w.t.store.db
        .insertInto("webhook_logs")
        .values({
          id: `log_cut_${queued.id}`,
          organization_id: queued.organization_id,
          webhook_id: hook.webhookId,
          delivery_id: queued.id,
          event_id: queued.event_id,
          event_type: queued.event_type,
          status: "PENDING",
          http_status: null,
          response_time_ms: null,
          attempt: 1,
          error: null,
          response_body: null,
          created_at: queued.updated_at,
        })
        .execute();
      // The claim has closed the attempt's log, not yet counted it in the webhook's failures.
      const pause = await pauseAfter(w, "webhook_logs", "new.status = 'FAILED' and old.status = 'PENDING'");
      w.dispatcher.start(20);
      const claim = await pause.paused();
      const del = w.t.request("DELETE", `/v1/webhooks/${hook.webhookId}`);
      cleanups.push(() => pause.release().then(() => del));
      await waitBlockedBy(pause.client, claim, "the claimed delivery row");
      expect(await webhookRowFree(pause.client, hook.webhookId)).toBe(true);
      await pause.release();
      const res = await del;
      expect(res.status, res.text).toBe(200);
      await w.dispatcher.stop();
      const [delivery] = await deliveries(w, hook.webhookId);
      expect(delivery.status).toBe("CANCELLED");
      const row = await webhookRow(w, hook.webhookId);
      expect(row.status).toBe("DELETED");
      const logged = await logs(w, hook.webhookId);
      expect(logged.find((l) => l.attempt === 1)).toMatchObject({
        status: "FAILED",
        error: expect.stringMatching(/interrupted/),
      });
      // Every closed attempt counted once (the second, if the claim got to send it, recorded by the dispatcher).
      expect(Number(row.failure_count) + Number(row.success_count)).toBe(
        logged.filter((l) => l.status !== "PENDING").length,
      );
    },
  );

  it.skipIf(dialect !== "postgres")(
    "a DELETE that loses a deadlock to a writer locking the other way round is run again, not answered 503",
    async () => {
      const w = await webhookTest({ start: false });
      const r = await receiver();
      const hook = await register(w.t, r, ["form.created"]);
      await emitEvent(w.t.store.db, w.t.org.id, "form.created", "frm_1", { formID: "frm_1" }, Date.now());
      const [queued] = await deliveries(w, hook.webhookId);
      // A writer that takes the webhook's row, then the delivery's: the reverse of the lock order.
      const other = await connect(w);
      const otherPid = Number((await other.query("select pg_backend_pid() as pid")).rows[0].pid);
      await other.query("begin");
      // The DELETE, which waits first, is the one PostgreSQL fails to break the deadlock.
      await other.query("set local deadlock_timeout = '30s'");
      await other.query("update webhooks set description = 'other' where id = $1", [hook.webhookId]);
      const del = w.t.request("DELETE", `/v1/webhooks/${hook.webhookId}`);
      cleanups.push(() => del);
      await waitBlockedBy(other, otherPid, "the other writer's webhook row");
      await other.query("update webhook_deliveries set updated_at = updated_at where id = $1", [queued.id]);
      await other.query("commit");
      const res = await del;
      expect(res.status, res.text).toBe(200);
      const [delivery] = await deliveries(w, hook.webhookId);
      expect(delivery.status).toBe("CANCELLED");
      const row = await webhookRow(w, hook.webhookId);
      expect(row).toMatchObject({ status: "DELETED", description: "other" });
    },
  );

  it("DELETE and PUT of webhooks with deliveries in flight answer 200 and leave every attempt counted once", async () => {
    const w = await webhookTest({ retryScheduleMs: RETRY_AT_ONCE, dispatcher: { perWebhook: 64 } });
    const r: Receiver = await receiver({ status: (n) => (n % 3 === 0 ? 200 : 500) });
    const statuses: number[] = [];
    const touched: string[] = [];
    for (let round = 0; round < 8; round++) {
      const hooks = await Promise.all(
        [0, 1, 2].map(() => register(w.t, r, ["form.created", "form.updated"])),
      );
      touched.push(...hooks.map((h) => h.webhookId));
      for (let i = 0; i < 10; i++)
        await w.t.store.db.transaction().execute(async (trx) => {
          for (let j = 0; j < 10; j++) {
            const id = `frm_${round}_${i}_${j}`;
            await emitEvent(
              trx,
              w.t.org.id,
              j % 2 ? "form.created" : "form.updated",
              id,
              { formID: id },
              Date.now(),
            );
          }
        });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const [a, b, c] = hooks;
      const changes = await Promise.all([
        w.t.request("DELETE", `/v1/webhooks/${a.webhookId}`),
        w.t.request("PUT", `/v1/webhooks/${b.webhookId}`, { body: { events: ["form.updated"] } }),
        w.t.request("DELETE", `/v1/webhooks/${c.webhookId}`),
      ]);
      statuses.push(...changes.map((x) => x.status));
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    await w.dispatcher.stop();
    const db = w.t.store.db;
    for (const webhookId of touched) {
      const row = await webhookRow(w, webhookId);
      const logged = await logs(w, webhookId);
      // Nothing left half done: every attempt recorded, and counted, once.
      expect(logged.filter((l) => l.status === "PENDING")).toEqual([]);
      expect(Number(row.success_count) + Number(row.failure_count)).toBe(logged.length);
      const queued = await db
        .selectFrom("webhook_deliveries")
        .select(["id", "event_type"])
        .where("webhook_id", "=", webhookId)
        .where("status", "=", "PENDING")
        .execute();
      if (row.status === "DELETED") expect(queued).toEqual([]);
      else expect(queued.filter((d) => d.event_type !== "form.updated")).toEqual([]);
    }
  }, 60_000);
});

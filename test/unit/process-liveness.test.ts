import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { recoverInterruptedCheckouts } from "../../server/checkout/recovery.js";
import type { MailMessage, MailTransport } from "../../server/mail/transport.js";
import { MailWorker } from "../../server/mail/worker.js";
import { claimRows, newLease, releaseClaims } from "../../server/store/claim.js";
import type { Store } from "../../server/store/database.js";
import { ProcessHeartbeat } from "../../server/store/processes.js";
import { at, recurringForm, subscribe, subscription, worker } from "../billing/support.js";
import { queueTestEmail } from "../mail/support.js";
import { card, checkout, createForm, donor } from "../support/checkout.js";
import { freshDatabase, setupTestApp, type TestDatabase, validForms } from "../support/testApp.js";
import { startReceiver } from "../webhooks/receiver.js";
import { register, setupWebhookTest } from "../webhooks/support.js";

/**
 * Process liveness (store/processes.ts) and the one claim mechanism (store/claim.ts), in one test process:
 * each "process" is a heartbeat of its own on its own connection pool. A heartbeat whose clock is frozen
 * stands for a process killed outright: its row stays and lapses. The real thing (servers killed with
 * SIGKILL) is test/process/dead-process-takeover.test.ts.
 */

const LIVENESS_MS = 1200;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A heartbeat that can be "killed": its clock stops, so its row lapses as a dead process's would. */
async function heartbeat(store: Store, machine: string | null = null) {
  let frozenAt: number | undefined;
  const beat = new ProcessHeartbeat(store, {
    livenessMs: LIVENESS_MS,
    beatMs: 200,
    machine,
    wallClock: () => frozenAt ?? Date.now(),
  });
  await beat.start();
  cleanups.push(() => beat.stop());
  return {
    id: beat.id,
    beat,
    kill: () => {
      frozenAt = Date.now();
    },
  };
}

async function twoStores(): Promise<[Store, Store]> {
  const database: TestDatabase = await freshDatabase();
  const a = await database.open();
  const b = await database.open();
  cleanups.push(() => database.drop());
  cleanups.push(() => a.close());
  cleanups.push(() => b.close());
  return [a, b];
}

const queue = (store: Store, to = "ada@example.org") => queueTestEmail(store.db, Date.now(), { to });
/** Claims the pending mail for the process `by` (none: a claim without a heartbeat) for `leaseMs`. */
const claimMail = (store: Store, by: string | null = null, leaseMs = 60_000) =>
  claimRows(store, {
    table: "email_outbox",
    where: (eb) => eb("status", "=", "PENDING"),
    orderBy: "next_attempt_at",
    limit: 10,
    lease: newLease(by, Date.now(), leaseMs),
  });

const outbox = (store: Store, id: string) =>
  store.db.selectFrom("email_outbox").selectAll().where("id", "=", id).executeTakeFirstOrThrow();

async function until(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out");
    await sleep(20);
  }
}

describe("claims and process liveness", () => {
  it("keeps a live process's claims past the liveness window, and frees a dead one's once its heartbeat lapses", async () => {
    const [a, b] = await twoStores();
    const pa = await heartbeat(a);
    const pb = await heartbeat(b);
    const id = await queue(a);
    expect((await claimMail(a, pa.id, 10 * 60_000)).map((r) => [r.id, r.claimed_by])).toEqual([[id, pa.id]]);
    // A lives on (it beats): its ten-minute lease holds, however long it takes.
    await sleep(LIVENESS_MS * 1.5);
    expect(await claimMail(b, pb.id, 10 * 60_000)).toEqual([]);
    // A dies: once its heartbeat lapses its rows are free, long before the lease would end.
    pa.kill();
    await sleep(LIVENESS_MS + 300);
    expect((await claimMail(b, pb.id, 10 * 60_000)).map((r) => [r.id, r.claimed_by])).toEqual([[id, pb.id]]);
    // A process that stops cleanly frees its claims at once (its row is deleted).
    await pb.beat.stop();
    expect((await claimMail(a, pa.id, 10 * 60_000)).map((r) => r.id)).toEqual([id]);
  });

  it("a claim without a process ends with its lease only", async () => {
    const [a, b] = await twoStores();
    await queue(a);
    const lease = newLease(undefined, Date.now(), 400);
    const first = await claimRows(a, {
      table: "email_outbox",
      where: (eb) => eb("status", "=", "PENDING"),
      orderBy: "next_attempt_at",
      limit: 10,
      lease,
    });
    expect(first.map((r) => r.claimed_by)).toEqual([null]);
    expect(await claimMail(b)).toEqual([]);
    await sleep(450);
    expect(await claimMail(b)).toHaveLength(1);
  });

  it("a released claim frees only the rows its token still holds, for another process at once", async () => {
    const [a, b] = await twoStores();
    const ids = [await queue(a, "one@example.org"), await queue(a, "two@example.org")];
    const held = await claimMail(a);
    expect(held.map((r) => r.id).sort()).toEqual([...ids].sort());
    const token = held[0].claim_token as string;
    // Another token (a claim that is not this one) gives nothing back.
    await releaseClaims(a, "email_outbox", ids, "not-the-claim");
    expect(await claimMail(b)).toEqual([]);
    await releaseClaims(a, "email_outbox", [ids[0]], token);
    await releaseClaims(a, "email_outbox", [], token);
    expect((await claimMail(b)).map((r) => r.id)).toEqual([ids[0]]);
  });

  it("a process starting on the same machine recognizes a dead one by its pid and takes its work at once", async () => {
    const [a, b] = await twoStores();
    const id = await queue(a);
    // A process that ran here and is gone (its pid is free), killed with its row still alive for an hour.
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid;
    const machine = `test-machine-${Math.random()}`;
    const far = new Date(Date.now() + 3_600_000).toISOString();
    const now = new Date().toISOString();
    await a.db
      .insertInto("processes")
      .values({
        id: "proc_dead",
        host: "here",
        pid: gone,
        machine,
        started_at: now,
        heartbeat_at: now,
        alive_until: far,
      })
      .execute();
    await a.db
      .updateTable("email_outbox")
      .set({ claim_token: "dead-token", claimed_until: far, claimed_by: "proc_dead" })
      .where("id", "=", id)
      .execute();
    // Another machine's process with the same pid is not touched: it cannot be seen from here.
    await a.db
      .insertInto("processes")
      .values({
        id: "proc_elsewhere",
        host: "there",
        pid: gone,
        machine: "another-machine",
        started_at: now,
        heartbeat_at: now,
        alive_until: far,
      })
      .execute();

    const sent: string[] = [];
    const transport: MailTransport = {
      async send(message: MailMessage) {
        sent.push(message.id);
      },
    };
    const restarted = await heartbeat(b, machine);
    const worker = new MailWorker({ store: b, transport, now: Date.now, processId: restarted.id });
    expect(await worker.runOnce()).toEqual({ sent: 1, failed: 0 });
    expect(sent).toEqual([id]);
    const ids = (await a.db.selectFrom("processes").select("id").execute()).map((r) => r.id).sort();
    expect(ids).toEqual(["proc_elsewhere", restarted.id].sort());
  });

  it("a receipt whose sending process died is sent by another; the dead one's late outcome is not recorded", async () => {
    const [a, b] = await twoStores();
    const pa = await heartbeat(a);
    const pb = await heartbeat(b);
    const id = await queue(a);
    let finishA = () => {};
    const hanging: MailTransport = {
      send: () =>
        new Promise<void>((resolve) => {
          finishA = resolve;
        }),
    };
    const sentByB: string[] = [];
    const quick: MailTransport = {
      async send(message) {
        sentByB.push(message.id);
      },
    };
    const workerA = new MailWorker({ store: a, transport: hanging, now: Date.now, processId: pa.id });
    const workerB = new MailWorker({ store: b, transport: quick, now: Date.now, processId: pb.id });
    const passA = workerA.runOnce();
    await until(async () => (await outbox(a, id)).claimed_by === pa.id);
    // A is slow but alive: B leaves its receipt alone.
    await sleep(LIVENESS_MS * 1.5);
    expect(await workerB.runOnce()).toEqual({ sent: 0, failed: 0 });
    pa.kill();
    await sleep(LIVENESS_MS + 300);
    expect(await workerB.runOnce()).toEqual({ sent: 1, failed: 0 });
    expect(sentByB).toEqual([id]);
    const sent = await outbox(a, id);
    expect(sent).toMatchObject({ status: "SENT", attempts: 1, claim_token: null, claimed_by: null });
    // A comes back from the dead and finishes its send: its token is gone, so nothing changes.
    finishA();
    expect(await passA).toEqual({ sent: 1, failed: 0 });
    expect(await outbox(a, id)).toEqual(sent);
  });
});

describe("an interrupted checkout and the process charging it", () => {
  it("is recovered as soon as the process is dead, not after five minutes; not while it lives", async () => {
    const t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0" } });
    cleanups.push(() => t.close());
    const other = await t.database.open();
    cleanups.push(() => other.close());
    const charging = await heartbeat(t.store);
    const recovering = await heartbeat(other);
    t.deps.processId = charging.id;
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "Adult", price: 50, quantity: 1 }],
    });
    // The charge goes through at the processor, then the process hangs before recording it.
    const processor = t.deps.processors.sandbox;
    const real = processor.charge.bind(processor);
    processor.charge = async (input, hooks) => {
      processor.charge = real;
      await real(input, hooks);
      return new Promise(() => {});
    };
    const order = { tickets: [{ name: "Adult", quantity: 1 }], donor: donor(), paymentMethod: card() };
    void checkout(t, formId, order);
    const payment = () =>
      t.store.db.selectFrom("payments").select(["status", "claimed_by"]).executeTakeFirst();
    await until(async () => (await payment())?.status === "PROCESSING");
    expect(await payment()).toEqual({ status: "PROCESSING", claimed_by: charging.id });

    const elsewhere = { ...t.deps, store: other, processId: recovering.id };
    expect(await recoverInterruptedCheckouts(elsewhere)).toBe(0); // its process is alive: still running
    charging.kill();
    await sleep(LIVENESS_MS + 300);
    expect(await recoverInterruptedCheckouts(elsewhere)).toBe(1);
    expect((await payment())?.status).toBe("COMPLETED");
    expect((await checkout(t, formId, order)).status).toBe(400); // the recovered order kept its seat
  });
});

describe("every worker claims the same way", () => {
  it("a webhook delivery held by a live process waits; once it is dead, another dispatcher delivers it", async () => {
    const w = await setupWebhookTest({ start: false });
    cleanups.push(() => w.close());
    const r = await startReceiver();
    cleanups.push(() => r.close());
    await register(w.t, r, ["form.created"]);
    const holder = await heartbeat(w.t.store);
    await createForm(w.t, validForms.standard());
    const held = await w.t.store.db
      .updateTable("webhook_deliveries")
      .set({
        claim_token: "held",
        claimed_until: new Date(Date.now() + 10 * 60_000).toISOString(),
        claimed_by: holder.id,
      })
      .returning("id")
      .execute();
    expect(held).toHaveLength(1);
    w.dispatcher.start(20);
    await sleep(LIVENESS_MS * 1.5);
    expect(r.received).toHaveLength(0);
    holder.kill();
    await r.waitFor((got) => got.some((x) => x.acked), 5000, "the delivery after its process died");
    expect(r.received).toHaveLength(1);
  });

  it("a subscription held by a live process is not billed by another; once it is dead, it is", async () => {
    let clock = Date.parse("2026-01-31T10:00:00Z");
    const t = await setupTestApp({ now: () => clock, env: { CHECKOUT_LIMIT_PER_IP: "0" } });
    cleanups.push(() => t.close());
    const sub = await subscribe(t, await recurringForm(t));
    const holder = await heartbeat(t.store);
    await t.store.db
      .updateTable("subscriptions")
      .set({
        claim_token: "held",
        claimed_until: new Date(Date.now() + 10 * 60_000).toISOString(),
        claimed_by: holder.id,
      })
      .where("id", "=", sub.id)
      .execute();
    clock = at("2026-02-28T10:00:00Z");
    const none = { charged: 0, failed: 0, cancelled: 0, ended: 0 };
    expect(await worker(t.deps).runOnce()).toEqual(none);
    holder.kill();
    await sleep(LIVENESS_MS + 300);
    expect(await worker(t.deps).runOnce()).toEqual({ ...none, charged: 1 });
    expect(await subscription(t.store.db, sub.id)).toMatchObject({ cycle: 1, claim_token: null });
  });
});

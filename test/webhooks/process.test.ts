import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createApiKey } from "../../server/store/keys.js";
import { createOrganization } from "../../server/store/organizations.js";
import {
  databaseUrlOf,
  killAll,
  type ServerProcess,
  startServer,
  type TempDir,
  tempDir,
} from "../support/processes.js";
import { dialect, freshDatabase, type TestDatabase, validForms } from "../support/testApp.js";
import { type Received, type Receiver, startReceiver } from "./receiver.js";

/**
 * Real server processes: events survive a SIGKILL of the process that was delivering them (at least once),
 * and on PostgreSQL two processes share the queue without delivering anything twice.
 */

interface Setup {
  db: TestDatabase;
  temp: TempDir;
  key: string;
  env: Record<string, string>;
}

async function setup(): Promise<Setup> {
  const db = await freshDatabase();
  const store = await db.open();
  let key: string;
  try {
    // An organization first, so the server seeds no demo data.
    const org = await createOrganization(store.db, { name: "Webhook Org" }, Date.now());
    key = (await createApiKey(store.db, { organizationId: org.id, sandbox: false }, Date.now())).key;
  } finally {
    await store.close();
  }
  const temp = tempDir();
  return {
    db,
    temp,
    key,
    env: {
      DATA_DIR: temp.dir,
      DATABASE_URL: databaseUrlOf(db),
      RATE_LIMIT_PER_HOUR: "10000000",
      WEBHOOK_RETRY_SCHEDULE: "0.2,0.5,1,1,1",
      PUBLIC_URL: "https://give.example.org",
      // The receiver is on 127.0.0.1.
      WEBHOOK_TARGET_GUARD: "off",
    },
  };
}

/** `count` POST /v1/forms, `parallel` at a time; returns the form ids. */
async function createForms(
  server: ServerProcess,
  key: string,
  count: number,
  parallel = 8,
): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      const res = await server.json<{ formID: string }>("POST", "/v1/forms", {
        key,
        body: validForms.standard(),
      });
      if (res.status !== 201) throw new Error(`form create: ${res.status} ${JSON.stringify(res.body)}`);
      ids.push(res.body.formID);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return ids;
}

async function registerOn(server: ServerProcess, key: string, receiver: Receiver): Promise<string> {
  const res = await server.json<{ webhookId: string; secret: string }>("POST", "/v1/webhooks", {
    key,
    body: { url: receiver.url, events: ["form.created"] },
  });
  if (res.status !== 201) throw new Error(`webhook: ${res.status}`);
  receiver.setSecret(res.body.secret);
  return res.body.webhookId;
}

/** Form ids of the events the receiver accepted (answered 2xx before the sender gave up). */
const acceptedFormIds = (received: Received[]) =>
  new Set(
    received
      .filter((r) => r.acked && r.answered < 300)
      .map((r) => (r.body.data as { formID: string }).formID),
  );

describe(`webhook delivery across server processes (${dialect})`, () => {
  let s: Setup | undefined;
  let receiver: Receiver | undefined;

  afterEach(async () => {
    await killAll();
    await receiver?.close();
    receiver = undefined;
    if (s) {
      await s.db.drop();
      s.temp.remove();
      s = undefined;
    }
  });
  afterAll(() => killAll());

  it("SIGKILL with 500 events queued to a stalled receiver: after a restart every event is accepted, signed", async () => {
    s = await setup();
    // Until the kill the receiver holds every request without answering (the attempts time out after 10 s).
    let stalled = true;
    receiver = await startReceiver({ delayMs: () => (stalled ? 60_000 : 0) });
    const first = await startServer(s.env);
    await registerOn(first, s.key, receiver);
    const forms = await createForms(first, s.key, 500);
    const seen = new Set(receiver.received.map((r) => r.body.id)).size;
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));
    // Queued for real: none accepted, most not even attempted when the process died.
    expect(acceptedFormIds(receiver.received).size).toBe(0);
    expect(seen).toBeLessThan(400);
    stalled = false;

    const second = await startServer(s.env);
    await receiver.waitFor((got) => acceptedFormIds(got).size >= 500, 90_000, "all 500 events accepted");
    expect(acceptedFormIds(receiver.received)).toEqual(new Set(forms));
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    // Each event is accepted once: what the dead process had in flight was never answered.
    expect(receiver.received.filter((r) => r.acked)).toHaveLength(500);

    // Nothing is left PENDING: the killed process's attempts (claimed for 15 s) were closed as interrupted
    // when they were retried.
    const deadline = Date.now() + 30_000;
    let pending = -1;
    while (Date.now() < deadline) {
      const res = await second.json<{ count: number }>("GET", "/v1/analytics/webhook-logs?status=PENDING", {
        key: s.key,
      });
      pending = res.body.count;
      if (pending === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(pending).toBe(0);
  }, 180_000);

  it.skipIf(dialect !== "postgres")(
    "two processes on one PostgreSQL share the queue: each event is delivered once",
    async () => {
      s = await setup();
      receiver = await startReceiver({ delayMs: () => 5 });
      const [a, b] = await Promise.all([startServer(s.env), startServer(s.env)]);
      await registerOn(a, s.key, receiver);
      const forms = [
        ...(await Promise.all([createForms(a, s.key, 150, 4), createForms(b, s.key, 150, 4)])).flat(),
      ];
      await receiver.waitFor((got) => got.length >= 300, 30_000, "300 events");
      await new Promise((r) => setTimeout(r, 1500));
      expect(acceptedFormIds(receiver.received)).toEqual(new Set(forms));
      expect(receiver.received).toHaveLength(300);
    },
    90_000,
  );
});

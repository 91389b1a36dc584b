import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../server/store/database.js";
import { createApiKey } from "../../server/store/keys.js";
import { createOrganization } from "../../server/store/organizations.js";
import { card, donor } from "../support/checkout.js";
import {
  databaseUrlOf,
  killAll,
  type ServerProcess,
  startServer,
  type TempDir,
  tempDir,
} from "../support/processes.js";
import { chargedPayments, inventorySold, ledgerCharges, paymentsByStatus, tally } from "../support/race.js";
import { dialect, pgUrl, validForms } from "../support/testApp.js";

/**
 * No overselling and no double charge across processes: two real servers share one database (a PostgreSQL
 * schema, or one SQLite file), and donors' checkouts reach either over HTTP. Stock taken by one process is
 * stock the other cannot sell; an Idempotency-Key seen by one process is honoured by the other. Each project
 * runs the half on its own database: the postgres project two processes on PostgreSQL, the sqlite project two
 * on SQLite.
 */

const SEATS = 100;
const ALREADY_SOLD = 50;
const BUYERS = 200;

type Json = Record<string, unknown>;

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

interface Shared {
  /** The DATABASE_URL both processes get. */
  url: string;
  /** Opens the same database from the test (migrated already). */
  open(): Promise<Store>;
  /** Removes the database (schema or file). */
  drop(): Promise<void>;
}

/** The tests, on whichever shared database `setup` makes. */
function raceAcrossProcesses(setup: (temp: TempDir) => Promise<Shared>) {
  let temp: TempDir;
  let shared: Shared | undefined;
  let store: Store;
  let key: string;
  let servers: [ServerProcess, ServerProcess];

  beforeAll(async () => {
    temp = tempDir();
    shared = await setup(temp);
    // Migrate and create the organization before the servers start, so that neither seeds the demo.
    store = await shared.open();
    const org = await createOrganization(store.db, { name: "Race Org" }, Date.now());
    key = (await createApiKey(store.db, { organizationId: org.id, sandbox: false }, Date.now())).key;
    const env = {
      DATA_DIR: temp.dir,
      DATABASE_URL: shared.url,
      PUBLIC_URL: "https://give.example.org",
      CHECKOUT_LIMIT_PER_IP: "0",
      CHECKOUT_LIMIT_PER_FORM: "0",
      CARD_FAILURE_LIMIT: "0",
    };
    servers = (await Promise.all([startServer(env), startServer(env)])) as [ServerProcess, ServerProcess];
  });

  afterAll(async () => {
    await Promise.all((servers ?? []).map((s) => s.stop()));
    await killAll();
    await store?.close();
    await shared?.drop();
    temp?.remove();
  });

  const buy = (server: ServerProcess, formId: string, body: Json, headers: Record<string, string> = {}) =>
    server.json<Json>("POST", `/api/forms/${formId}/checkout`, { body, headers });

  it("two distinct processes answer on the shared database", async () => {
    expect(servers[0].port).not.toBe(servers[1].port);
    for (const s of servers) expect((await s.json("GET", "/health")).body).toEqual({ status: "ok" });
  });

  it(`sells exactly the last ${SEATS - ALREADY_SOLD} seats when ${BUYERS} checkouts race across both processes`, async () => {
    const [a, b] = servers;
    const created = await a.json<{ formID: string }>("POST", "/v1/forms", {
      key,
      body: { ...validForms.event(), tickets: [{ name: "Adult", price: 50, quantity: SEATS }] },
    });
    expect(created.status).toBe(201);
    const formId = created.body.formID;
    // The first half goes in five orders of ten, on both processes.
    for (let i = 0; i < ALREADY_SOLD / 10; i++) {
      const res = await buy(servers[i % 2], formId, {
        tickets: [{ name: "Adult", quantity: 10 }],
        donor: donor(),
        paymentMethod: card(),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }

    const responses = await Promise.all(
      Array.from({ length: BUYERS }, (_, i) =>
        buy(servers[i % 2], formId, {
          tickets: [{ name: "Adult", quantity: 1 }],
          donor: donor(`racer-${i}@example.org`),
          paymentMethod: card(),
        }),
      ),
    );
    const counts = tally(responses.map((r) => r.status));
    expect(counts, JSON.stringify(counts)).toEqual({
      201: SEATS - ALREADY_SOLD,
      400: BUYERS - (SEATS - ALREADY_SOLD),
    });
    for (const r of responses.filter((x) => x.status === 400))
      expect(String(r.body.error)).toMatch(/sold out/i);
    // Both processes sold some of the last seats.
    const winners = responses.map((r, i) => (r.status === 201 ? i % 2 : -1)).filter((p) => p >= 0);
    expect(new Set(winners).size).toBe(2);

    expect(await paymentsByStatus(store.db, formId)).toEqual({
      COMPLETED: ALREADY_SOLD / 10 + SEATS - ALREADY_SOLD,
    });
    expect(await inventorySold(store.db, formId, "ticket", "Adult")).toBe(SEATS);
    const form = await b.json<{ tickets: { quantitySold: number }[] }>("GET", `/v1/forms/${formId}`, { key });
    expect(form.body.tickets[0].quantitySold).toBe(SEATS);
    for (const s of servers) {
      const view = await s.json<{ tickets: Json[] }>("GET", `/api/forms/${formId}`);
      expect(view.body.tickets[0]).toMatchObject({ remaining: 0, soldOut: true });
    }
  });

  it("charges once for a checkout retried with the same Idempotency-Key on the other process", async () => {
    const [a, b] = servers;
    const created = await b.json<{ formID: string }>("POST", "/v1/forms", {
      key,
      body: validForms.standard(),
    });
    expect(created.status).toBe(201);
    const formId = created.body.formID;
    const body = { amount: 25, donor: donor("retry@example.org"), paymentMethod: card() };

    const first = await buy(a, formId, body, { "Idempotency-Key": "submit-once" });
    expect(first.status).toBe(201);
    const retry = await buy(b, formId, body, { "Idempotency-Key": "submit-once" });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body).toEqual(first.body);

    // The same key reaching both processes at the same moment: still one charge.
    const both = await Promise.all(servers.map((s) => buy(s, formId, body, { "Idempotency-Key": "double" })));
    for (const r of both) expect([201, 409]).toContain(r.status);
    const paid = both.filter((r) => r.status === 201);
    expect(paid.length).toBeGreaterThan(0);
    expect(new Set(paid.map((r) => (r.body.payment as Json).paymentID)).size).toBe(1);
    for (const r of both.filter((x) => x.status === 409))
      expect(String(r.body.error)).toMatch(/in progress/i);
    const settled = await buy(b, formId, body, { "Idempotency-Key": "double" });
    expect(settled.status).toBe(201);
    expect((settled.body.payment as Json).paymentID).toBe((paid[0].body.payment as Json).paymentID);

    expect(await paymentsByStatus(store.db, formId)).toEqual({ COMPLETED: 2 });
    // Every payment of this database was charged exactly once by the shared sandbox ledger.
    expect(await ledgerCharges(store.db)).toBe(await chargedPayments(store.db));
  });

  it("edits a form on one process while checkouts sell its tickets on the other: every edit saved, no seat oversold", async () => {
    const [a, b] = servers;
    const tickets = (quantity: number) => [{ name: "Adult", price: 50, quantity }];
    const created = await a.json<{ formID: string }>("POST", "/v1/forms", {
      key,
      body: { ...validForms.event(), tickets: tickets(60) },
    });
    expect(created.status).toBe(201);
    const formId = created.body.formID;
    const buyers = Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        buy(b, formId, {
          tickets: [{ name: "Adult", quantity: 1 }],
          donor: donor(`editing-${i}@example.org`),
          paymentMethod: card(),
        }),
      ),
    );
    const edits: number[] = [];
    for (let k = 0; k < 20; k++) {
      const res = await a.json("PUT", `/v1/forms/${formId}`, {
        key,
        body: { description: `Edit ${k}`, tickets: tickets(60 + k) },
      });
      edits.push(res.status);
    }
    const sold = tally((await buyers).map((r) => r.status));
    // Each edit reads the sales, then writes: it waits its turn for the write lock instead of failing.
    expect(edits, JSON.stringify(edits)).toEqual(Array(20).fill(200));
    expect(
      Object.keys(sold).every((status) => status === "201" || status === "400"),
      JSON.stringify(sold),
    ).toBe(true);
    expect(await inventorySold(store.db, formId, "ticket", "Adult")).toBe(sold[201] ?? 0);
    expect(sold[201] ?? 0).toBeLessThanOrEqual(79);
  });

  it("leaves no payment PROCESSING", async () => {
    const processing = await store.db
      .selectFrom("payments")
      .select("id")
      .where("status", "=", "PROCESSING")
      .execute();
    expect(processing).toEqual([]);
  });
}

describe.skipIf(dialect !== "postgres")("two server processes on one PostgreSQL schema", () => {
  raceAcrossProcesses(async () => {
    const schema = `almoner_cr_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    await adminQuery(`create schema ${schema}`);
    return {
      url: databaseUrlOf({ url: pgUrl, pgSchema: schema }),
      open: () => openStore(pgUrl, { pgSchema: schema }),
      drop: () => adminQuery(`drop schema if exists ${schema} cascade`),
    };
  });
});

describe.skipIf(dialect !== "sqlite")("two server processes on one SQLite file", () => {
  raceAcrossProcesses(async (temp) => {
    const file = path.join(temp.dir, "shared.db");
    return { url: file, open: () => openStore(file), drop: async () => {} };
  });
});

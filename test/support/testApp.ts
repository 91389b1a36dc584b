import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { AppDeps } from "../../server/api/env.js";
import { createApp } from "../../server/app.js";
import { composeDeps } from "../../server/compose.js";
import { type Config, loadConfig } from "../../server/config.js";
import { type Db, openStore, type Store } from "../../server/store/database.js";
import { createApiKey } from "../../server/store/keys.js";
import { createOrganization } from "../../server/store/organizations.js";
import type { Permission } from "../../shared/enums.js";

/** The database this test run targets: the vitest project sets ALMONER_TEST_DB. */
export const dialect: "sqlite" | "postgres" =
  process.env.ALMONER_TEST_DB === "postgres" ? "postgres" : "sqlite";
export const pgUrl = process.env.ALMONER_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export interface TestDatabase {
  url: string;
  pgSchema?: string;
  open(): Promise<Store>;
  drop(): Promise<void>;
}

/** A fresh, empty database: a temporary SQLite file, or a new PostgreSQL schema dropped afterwards. */
export async function freshDatabase(): Promise<TestDatabase> {
  if (dialect === "postgres") {
    const schema = `almoner_t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    return {
      url: pgUrl,
      pgSchema: schema,
      open: () => openStore(pgUrl, { pgSchema: schema }),
      drop: async () => {
        const c = new pg.Client({ connectionString: pgUrl });
        await c.connect();
        await c.query(`drop schema if exists ${schema} cascade`);
        await c.end();
      },
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-test-"));
  const url = path.join(dir, "test.db");
  return {
    url,
    open: () => openStore(url),
    drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

export interface TestResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface TestOrg {
  id: string;
  key: string;
  keyId: string;
}

export interface TestApp {
  app: ReturnType<typeof createApp>;
  deps: AppDeps;
  store: Store;
  /** The database itself: `open()` gives another connection to it, as another process would have. */
  database: TestDatabase;
  config: Config;
  org: TestOrg;
  newOrg(opts?: { name?: string; permissions?: Permission[] }): Promise<TestOrg>;
  request<T = Record<string, unknown>>(
    method: string,
    path: string,
    opts?: { body?: unknown; rawBody?: string; key?: string | null; headers?: Record<string, string> },
  ): Promise<TestResponse<T>>;
  close(): Promise<void>;
}

/** The whole app on a fresh database, with one organization and an all-permission key. */
export async function setupTestApp(
  opts: { env?: Record<string, string>; now?: () => number } = {},
): Promise<TestApp> {
  const database = await freshDatabase();
  const store = await database.open();
  const config = loadConfig({
    PUBLIC_URL: "http://forms.test",
    DATA_DIR: os.tmpdir(),
    SECRETS_KEY: crypto.randomBytes(32).toString("hex"),
    // Tests' webhook receivers listen on 127.0.0.1, which the delivery guard refuses: off, as in development,
    // also for tests that set NODE_ENV=production.
    WEBHOOK_TARGET_GUARD: "off",
    ...opts.env,
  });
  const now = opts.now ?? Date.now;
  const deps: AppDeps = await composeDeps(store, config, now);
  const { metrics } = deps;
  const app = createApp(deps);

  const newOrg = async (o: { name?: string; permissions?: Permission[] } = {}): Promise<TestOrg> => {
    const org = await createOrganization(store.db, { name: o.name ?? "Test Org" }, Date.now());
    const { key, record } = await createApiKey(
      store.db,
      {
        organizationId: org.id,
        sandbox: false,
        permissions: o.permissions,
      },
      Date.now(),
    );
    return { id: org.id, key, keyId: record.keyId };
  };
  const org = await newOrg();

  return {
    app,
    deps,
    store,
    database,
    config,
    org,
    newOrg,
    async request(method, path, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      const key = o.key === undefined ? org.key : o.key;
      if (key !== null) headers.Authorization = `Bearer ${key}`;
      let body: string | undefined = o.rawBody;
      if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers["Content-Type"] ??= "application/json";
      }
      const res = await app.request(path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = text;
      }
      return { status: res.status, headers: res.headers, body: parsed as never, text };
    },
    async close() {
      await metrics.close();
      await store.close();
      await database.drop();
    },
  };
}

/** How many forms an organization has in the database (deleted ones included). */
export async function countForms(db: Db, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom("forms")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("organization_id", "=", organizationId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Minimal valid create bodies for each kind of form. */
export const validForms = {
  standard: () => ({ title: `Standard ${Math.random().toString(36).slice(2)}`, funds: ["General"] }),
  givingLevel: () => ({
    title: `Levels ${Math.random().toString(36).slice(2)}`,
    funds: ["General"],
    amountType: "giving_level",
    givingLevels: [{ title: "Friend", amount: 50, description: "" }],
  }),
  sponsorship: () => ({
    title: `Sponsor ${Math.random().toString(36).slice(2)}`,
    funds: ["Fair"],
    amountType: "sponsorship",
    sponsorshipGroups: [
      { groupTitle: "Booths", description: "", options: [{ optionTitle: "Gold", amount: 1000 }] },
    ],
  }),
  event: () => ({
    title: `Event ${Math.random().toString(36).slice(2)}`,
    funds: ["Gala"],
    formType: "event",
    tickets: [
      { name: "Adult", price: 50 },
      { name: "Table", price: 400, ticketType: "GROUP", groupSize: 8 },
    ],
  }),
};

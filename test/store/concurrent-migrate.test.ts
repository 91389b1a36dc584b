import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../server/config.js";
import { seedDemoIfEmpty } from "../../server/demo.js";
import type { Store } from "../../server/store/database.js";
import { LATEST_VERSION } from "../../server/store/migrations.js";
import { dialect, freshDatabase, pgUrl, type TestDatabase } from "../support/testApp.js";

/**
 * Several instances started at once on a fresh PostgreSQL database (docs/operations.md): each one starts.
 * (SQLite's stores are synchronous: several in one thread would wait on each other's lock; across
 * processes its write lock already takes them in turn.)
 */

let db: TestDatabase | undefined;
afterEach(async () => {
  await db?.drop();
  db = undefined;
});

/**
 * Another instance's hold of the schema's `name` lock, taken as the app takes it (the same key, from a
 * connection on the same schema); `release` ends it. Lets a test see that the app waits for the lock
 * rather than only hoping two starts collide.
 */
async function holdLock(schema: string, name: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  await client.query(`set search_path to ${schema}`);
  await client.query("begin");
  await client.query("select pg_advisory_xact_lock(hashtext($1 || current_schema()))", [`${name}:`]);
  return {
    async release() {
      await client.query("commit");
      await client.end();
    },
  };
}

/** Whether `promise` settles within `ms`. */
const settlesWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
  ]);

describe.skipIf(dialect !== "postgres")("first start of several instances at once on PostgreSQL", () => {
  it("a first start waits while another instance holds the schema's migration lock, then opens", async () => {
    db = await freshDatabase();
    const held = await holdLock(db.pgSchema as string, "almoner_migrate");
    const opening = db.open();
    try {
      expect(await settlesWithin(opening, 1_000)).toBe(false);
    } finally {
      await held.release();
    }
    const store = await opening;
    await store.close();
  });

  it("seeding the demo waits while another instance holds the demo's lock", async () => {
    db = await freshDatabase();
    const store = await db.open();
    try {
      const held = await holdLock(db.pgSchema as string, "almoner_demo");
      const seeding = seedDemoIfEmpty(store.db, loadConfig({}), () => Date.now());
      try {
        expect(await settlesWithin(seeding, 1_000)).toBe(false);
      } finally {
        await held.release();
      }
      expect(await seeding).toBeDefined();
    } finally {
      await store.close();
    }
  });

  it("six stores opened together on a fresh database all open, the schema at the latest version", async () => {
    db = await freshDatabase();
    const opened = await Promise.allSettled(Array.from({ length: 6 }, () => (db as TestDatabase).open()));
    const stores = opened.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
    try {
      expect(
        opened.filter((o) => o.status === "rejected").map((o) => String((o as PromiseRejectedResult).reason)),
      ).toEqual([]);
      const versions = await (stores[0] as Store).db
        .selectFrom("almoner_migrations")
        .select("version")
        .execute();
      expect(Math.max(...versions.map((v) => Number(v.version)))).toBe(LATEST_VERSION);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it("three instances seeding at once make one demo organization", async () => {
    db = await freshDatabase();
    const stores: Store[] = [];
    for (let i = 0; i < 3; i++) stores.push(await (db as TestDatabase).open());
    try {
      const config = loadConfig({});
      const made = await Promise.all(stores.map((s) => seedDemoIfEmpty(s.db, config, () => Date.now())));
      expect(made.filter((m) => m !== undefined)).toHaveLength(1);
      const orgs = await (stores[0] as Store).db.selectFrom("organizations").select("id").execute();
      expect(orgs).toHaveLength(1);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
});

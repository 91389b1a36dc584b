import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../server/config.js";
import { seedDemoIfEmpty } from "../../server/demo.js";
import type { Store } from "../../server/store/database.js";
import { LATEST_VERSION } from "../../server/store/migrations.js";
import { dialect, freshDatabase, type TestDatabase } from "../support/testApp.js";

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

describe.skipIf(dialect !== "postgres")("first start of several instances at once on PostgreSQL", () => {
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

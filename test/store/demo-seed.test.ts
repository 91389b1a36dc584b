import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../server/config.js";
import { seedDemoIfEmpty } from "../../server/demo.js";
import type { Store } from "../../server/store/database.js";
import { dialect, freshDatabase, type TestDatabase } from "../support/testApp.js";

/** The demo organization of a first start in development: one, however many instances start at once. */

let db: TestDatabase | undefined;
afterEach(async () => {
  await db?.drop();
  db = undefined;
});

describe.skipIf(dialect !== "postgres")("the demo of a first start on PostgreSQL", () => {
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

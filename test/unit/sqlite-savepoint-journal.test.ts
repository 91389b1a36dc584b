import fs from "node:fs";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { Store } from "../../server/store/database.js";
import { freshStoreForEachTest } from "../support/freshStore.js";
import { dialect } from "../support/testApp.js";

/**
 * Each job of SQLite's group commit runs in a savepoint (writeBatch.ts). SQLite keeps a savepoint's journal
 * (the pages' earlier contents) in memory up to 64 KB and then in a temporary file, which more than doubled
 * what a checkout wrote; the store keeps temporary data in memory (`temp_store = MEMORY`).
 */

/** Bytes this process has written through write(2) and friends so far (Linux). */
const written = () => Number(/^wchar: (\d+)$/m.exec(fs.readFileSync("/proc/self/io", "utf8"))?.[1]);

let store: Store;
freshStoreForEachTest((opened) => {
  store = opened;
});

describe.skipIf(dialect !== "sqlite" || !fs.existsSync("/proc/self/io"))("SQLite savepoint journals", () => {
  it("stay in memory: a group-commit job that changes 400 KB writes nothing before its commit", async () => {
    // Nothing committed is left for the background checkpoint to copy while we measure.
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.db);
    await sql`create table big (id integer primary key, v text not null)`.execute(store.db);
    await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 100)
      insert into big (v) select printf('%.4000c', 'x') from n`.execute(store.db);
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.db);
    // A group-commit job (its own savepoint) that changes every row: measured up to its commit.
    let duringJob = Number.NaN;
    await store.transact(async (trx) => {
      const before = written();
      await sql`update big set v = printf('%.4000c', 'y')`.execute(trx);
      duringJob = written() - before;
    });
    expect(duringJob).toBeLessThan(64 * 1024);
  });
});

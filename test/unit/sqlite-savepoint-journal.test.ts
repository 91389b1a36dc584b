import fs from "node:fs";
import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../server/store/database.js";
import { dialect, freshDatabase, type TestDatabase } from "../support/testApp.js";

/**
 * Each job of SQLite's group commit runs in a savepoint (writeBatch.ts). SQLite keeps a savepoint's journal
 * (the pages' earlier contents) in memory up to 64 KB and then in a temporary file, which more than doubled
 * what a checkout wrote; the store keeps temporary data in memory (`temp_store = MEMORY`).
 */

/** Bytes this process has written through write(2) and friends so far (Linux). */
const written = () => Number(/^wchar: (\d+)$/m.exec(fs.readFileSync("/proc/self/io", "utf8"))?.[1]);

let database: TestDatabase;
let store: Store;
beforeEach(async () => {
  database = await freshDatabase();
  store = await database.open();
});
afterEach(async () => {
  await store.close();
  await database.drop();
});

describe.skipIf(dialect !== "sqlite" || !fs.existsSync("/proc/self/io"))("SQLite savepoint journals", () => {
  it("stay in memory: a savepoint that changes 400 KB writes nothing until its transaction commits", async () => {
    // Nothing committed is left for the background checkpoint to copy while we measure.
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.db);
    await sql`create table big (id integer primary key, v text not null)`.execute(store.db);
    await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 100)
      insert into big (v) select printf('%.4000c', 'x') from n`.execute(store.db);
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.db);
    const before = written();
    await store.db.connection().execute(async (conn) => {
      await sql`begin immediate`.execute(conn);
      await sql`savepoint job`.execute(conn);
      await sql`update big set v = printf('%.4000c', 'y')`.execute(conn);
      await sql`release savepoint job`.execute(conn);
      await sql`rollback`.execute(conn);
    });
    expect(written() - before).toBeLessThan(64 * 1024);
  });
});

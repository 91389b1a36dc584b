import SQLite from "better-sqlite3";
import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../server/store/database.js";
import { dialect, freshDatabase, type TestDatabase } from "../support/testApp.js";

/**
 * Store.transact: on SQLite the transactions ready at the same time share one transaction, each in a
 * savepoint (writeBatch.ts); on PostgreSQL each is a transaction of its own. Either way each call is all or
 * nothing on its own, and its promise settles once its work is visible to other processes.
 */
describe("write transactions (Store.transact)", () => {
  let database: TestDatabase;
  let store: Store;
  let other: Store;

  beforeAll(async () => {
    database = await freshDatabase();
    store = await database.open();
    other = await database.open(); // another process's view of the same database
    await sql`create table grouped (id text primary key, n integer not null)`.execute(store.db);
  });
  afterAll(async () => {
    await other.close();
    await store.close();
    await database.drop();
  });
  beforeEach(async () => {
    await sql`delete from grouped`.execute(store.db);
  });

  const insert = (id: string, n = 1) =>
    store.transact(async (trx) => {
      await sql`insert into grouped (id, n) values (${id}, ${n})`.execute(trx);
      return id;
    });
  const ids = async (from: Store = store) =>
    (await sql<{ id: string }>`select id from grouped order by id`.execute(from.db)).rows.map((r) => r.id);

  it("settles each call only once its work is visible to another process", async () => {
    const seen = await Promise.all(
      ["a", "b", "c"].map((id) => insert(id).then(async () => (await ids(other)).includes(id))),
    );
    expect(seen).toEqual([true, true, true]);
  });

  it("a call that fails keeps none of its writes and fails alone; the others of its turn commit", async () => {
    const failing = store.transact(async (trx) => {
      await sql`insert into grouped (id, n) values (${"x"}, ${1})`.execute(trx);
      throw new Error("the job's own refusal");
    });
    const results = await Promise.allSettled([insert("a"), failing, insert("b")]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe("the job's own refusal");
    expect(await ids(other)).toEqual(["a", "b"]);
  });

  it("a database error in one call (a duplicate key) fails that call only", async () => {
    await insert("dup");
    const results = await Promise.allSettled([insert("a"), insert("dup"), insert("b")]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(await ids(other)).toEqual(["a", "b", "dup"]);
  });

  // On PostgreSQL the calls are transactions side by side (read committed): only SQLite's group runs them
  // one after another.
  it.skipIf(dialect === "postgres")(
    "SQLite: calls of one turn see each other's writes in order",
    async () => {
      const bump = () =>
        store.transact(async (trx) => {
          const row = (await sql<{ n: number }>`select n from grouped where id = ${"counter"}`.execute(trx))
            .rows[0];
          await sql`update grouped set n = ${Number(row.n) + 1} where id = ${"counter"}`.execute(trx);
          return Number(row.n) + 1;
        });
      await insert("counter", 0);
      const values = await Promise.all(Array.from({ length: 5 }, bump));
      expect([...values].sort()).toEqual([1, 2, 3, 4, 5]);
      const final = (
        await sql<{ n: number }>`select n from grouped where id = ${"counter"}`.execute(other.db)
      ).rows;
      expect(Number(final[0].n)).toBe(5);
    },
  );
  // A transaction that reads, then writes: if another connection could commit between the two, SQLite
  // would refuse the write (SQLITE_BUSY_SNAPSHOT), and the route would answer 503. Every transaction of
  // the store takes the write lock at its begin, so the other connection waits for it instead.
  it.skipIf(dialect === "postgres")(
    "SQLite: db.transaction() holds the write lock from its begin, so its write after a read is never overtaken",
    async () => {
      await insert("counter", 0);
      const raw = new SQLite(database.url, { timeout: 0 });
      let otherWrite: string | undefined;
      try {
        const n = await store.db.transaction().execute(async (trx) => {
          const row = (await sql<{ n: number }>`select n from grouped where id = ${"counter"}`.execute(trx))
            .rows[0];
          try {
            raw.prepare("insert into grouped (id, n) values ('raced', 1)").run();
            otherWrite = "committed";
          } catch (err) {
            otherWrite = (err as { code?: string }).code;
          }
          await sql`update grouped set n = ${Number(row.n) + 1} where id = ${"counter"}`.execute(trx);
          return Number(row.n) + 1;
        });
        expect(n).toBe(1);
        expect(otherWrite).toBe("SQLITE_BUSY");
      } finally {
        raw.close();
      }
      expect(await ids(other)).toEqual(["counter"]);
    },
  );
});

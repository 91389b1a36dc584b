import net from "node:net";
import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runAtCommit } from "../../server/store/atCommit.js";
import type { Store } from "../../server/store/database.js";
import { recordPgQueries } from "../support/pgQueries.js";
import { dialect, freshDatabase, type TestDatabase } from "../support/testApp.js";

/** The rows of `table`, as `db` sees them. */
async function countRows(db: Store["db"], table: "begun" | "held"): Promise<number> {
  return Number(
    (await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(db)).rows[0].n,
  );
}

/** Each query's first word and whether it cost a round trip of its own. */
const words = (sent: { text: string; roundTrip: boolean }[]) =>
  sent.map((q) => [q.text.trim().split(/\s+/)[0].toLowerCase(), q.roundTrip]);

/** The socket writes made while `work` runs, by socket. */
async function writesDuring(work: () => Promise<unknown>): Promise<Map<net.Socket, number>> {
  const writes = new Map<net.Socket, number>();
  const proto = net.Socket.prototype as unknown as Record<"_write" | "_writev", (...a: unknown[]) => unknown>;
  const originals = { _write: proto._write, _writev: proto._writev };
  for (const name of ["_write", "_writev"] as const)
    proto[name] = function (this: net.Socket, ...args: unknown[]) {
      writes.set(this, (writes.get(this) ?? 0) + 1);
      return originals[name].apply(this, args);
    };
  try {
    await work();
  } finally {
    proto._write = originals._write;
    proto._writev = originals._writev;
  }
  return writes;
}

/** The store's PostgreSQL statements (server/store/pgStatements.ts), each test on a database of its own. */
describe.skipIf(dialect !== "postgres")("the store's statements on PostgreSQL", () => {
  let database: TestDatabase;
  let store: Store;
  let other: Store;

  beforeEach(async () => {
    database = await freshDatabase();
    store = await database.open();
    other = await database.open(); // as another server process would be
  });
  afterEach(async () => {
    await other.close();
    await store.close();
    await database.drop();
  });

  /**
   * Data statements run as prepared statements. One prepared before another process changed the columns
   * of the table it reads goes stale; it must not fail the read that comes next.
   */
  describe("prepared statements after a schema change", () => {
    beforeEach(async () => {
      await sql`create table plan_change (id integer primary key)`.execute(store.db);
      await sql`insert into plan_change (id) values (1)`.execute(store.db);
    });

    const read = () =>
      sql<Record<string, unknown>>`select * from plan_change where id = ${1}`.execute(store.db);

    it("a read with * prepared before a column was added answers with the new column", async () => {
      for (let i = 0; i < 3; i++) expect((await read()).rows).toEqual([{ id: 1 }]);
      await sql`alter table plan_change add column note text`.execute(other.db);
      expect((await read()).rows).toEqual([{ id: 1, note: null }]);
      expect((await read()).rows).toEqual([{ id: 1, note: null }]);
    });

    it("inside a transaction the stale statement fails that transaction, and the next one succeeds", async () => {
      for (let i = 0; i < 3; i++) await read();
      await sql`alter table plan_change add column note text`.execute(other.db);
      const inTransaction = store.db
        .transaction()
        .execute((trx) =>
          sql<Record<string, unknown>>`select * from plan_change where id = ${1}`.execute(trx),
        );
      // The connection that prepared it may or may not be the transaction's: either it fails as stale, or
      // it answers with the new column.
      const outcome = await inTransaction.then(
        (r) => r.rows,
        (err: Error) => err.message,
      );
      if (typeof outcome === "string") expect(outcome).toMatch(/cached plan must not change result type/);
      else expect(outcome).toEqual([{ id: 1, note: null }]);
      const again = await store.db
        .transaction()
        .execute((trx) =>
          sql<Record<string, unknown>>`select * from plan_change where id = ${1}`.execute(trx),
        );
      expect(again.rows).toEqual([{ id: 1, note: null }]);
    });
  });

  /**
   * A transaction's `begin` is written with its first statement, in one write and one round trip. The
   * statement still runs inside the transaction whatever happens: it fails, the transaction has no
   * statement, or it asks for an isolation level.
   */
  describe("a transaction's begin", () => {
    beforeEach(async () => {
      await sql`create table begun (id integer primary key)`.execute(store.db);
    });

    const count = (db: Store["db"]) => countRows(db, "begun");

    it("is written in the same write as the first statement: two writes for begin, insert, commit", async () => {
      await count(store.db); // the pool's first connection is made before the recording
      const recording = recordPgQueries();
      const writes = await writesDuring(() =>
        store.db.transaction().execute((trx) => sql`insert into begun (id) values (${1})`.execute(trx)),
      ).finally(recording.stop);
      const ours = recording.sent.filter((q) => /begun|^\s*(begin|commit)\b/i.test(q.text));
      expect(words(ours)).toEqual([
        ["begin", true],
        ["insert", false],
        ["commit", true],
      ]);
      expect(writes.get(ours[0].client.connection.stream as net.Socket)).toBe(2);
      expect(await count(other.db)).toBe(1);
    });

    it("its first statement runs inside the transaction: nobody else sees it before the commit", async () => {
      let seenInside = -1;
      await store.db.transaction().execute(async (trx) => {
        await sql`insert into begun (id) values (${1})`.execute(trx);
        seenInside = await count(other.db);
      });
      expect(seenInside).toBe(0);
      expect(await count(other.db)).toBe(1);
    });

    it("a first statement that fails rolls the transaction back, and the connection serves the next one", async () => {
      const failing = store.db.transaction().execute(async (trx) => {
        await sql`insert into begun (id) values (${1})`.execute(trx);
        await sql`insert into begun (id) values (${1})`.execute(trx); // duplicate key
      });
      await expect(failing).rejects.toThrow(/duplicate key/);
      const unknownTable = store.db
        .transaction()
        .execute((trx) => sql`insert into no_such_table (id) values (${1})`.execute(trx));
      await expect(unknownTable).rejects.toThrow(/no_such_table/);
      expect(await count(other.db)).toBe(0);
      for (let i = 0; i < 12; i++)
        await store.db.transaction().execute((trx) => sql`insert into begun (id) values (${i})`.execute(trx));
      expect(await count(other.db)).toBe(12);
    });

    it("a transaction without a statement commits or rolls back without error", async () => {
      await expect(store.db.transaction().execute(async () => 7)).resolves.toBe(7);
      const thrown = store.db.transaction().execute(async () => {
        throw new Error("given up before any statement");
      });
      await expect(thrown).rejects.toThrow("given up before any statement");
      // Every connection of the pool is out of its transaction: each one takes a new one.
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          store.db.transaction().execute((trx) => sql`insert into begun (id) values (${i})`.execute(trx)),
        ),
      );
      expect(await count(other.db)).toBe(10);
    });

    it("keeps the isolation level the transaction asks for", async () => {
      const level = await store.db
        .transaction()
        .setIsolationLevel("serializable")
        .execute((trx) => sql<{ transaction_isolation: string }>`show transaction_isolation`.execute(trx));
      expect(level.rows[0].transaction_isolation).toBe("serializable");
    });
  });

  /**
   * A statement run at commit (runAtCommit) is held back and written with the transaction's next
   * statement, usually its commit: one round trip for both. It still runs inside the transaction, in the
   * order it was asked for, and if it fails the transaction fails with its error and keeps nothing.
   */
  describe("a statement run at commit", () => {
    beforeEach(async () => {
      await sql`create table held (id integer primary key, note text)`.execute(store.db);
    });

    const insert = (trx: Store["db"], id: number) =>
      runAtCommit(trx, sql`insert into held (id) values (${id})`.compile(trx));
    const count = (db: Store["db"]) => countRows(db, "held");
    const heldOrControl = (q: { text: string }) => /\bheld\b|^\s*(begin|commit|rollback)\b/i.test(q.text);

    it("is written with the commit: begin, a statement, the held insert and commit in two writes", async () => {
      await count(store.db); // the pool's first connection is made before the recording
      const recording = recordPgQueries();
      const writes = await writesDuring(() =>
        store.db.transaction().execute(async (trx) => {
          await sql`update held set note = ${"x"} where id = ${0}`.execute(trx);
          await insert(trx, 1);
        }),
      ).finally(recording.stop);
      const ours = recording.sent.filter(heldOrControl);
      expect(words(ours)).toEqual([
        ["begin", true],
        ["update", false],
        ["insert", true],
        ["commit", false],
      ]);
      expect(writes.get(ours[0].client.connection.stream as net.Socket)).toBe(2);
      expect(await count(other.db)).toBe(1);
    });

    it("runs inside the transaction: nobody else sees it before the commit, and it is not sent before", async () => {
      let seenInside = -1;
      const recording = recordPgQueries();
      await store.db
        .transaction()
        .execute(async (trx) => {
          await sql`update held set note = ${"x"} where id = ${0}`.execute(trx);
          await insert(trx, 1);
          expect(recording.sent.filter((q) => /insert into held/.test(q.text))).toHaveLength(0);
          seenInside = await count(other.db);
        })
        .finally(recording.stop);
      expect(seenInside).toBe(0);
      expect(await count(other.db)).toBe(1);
    });

    it("is sent ahead of the transaction's next statement, which sees its write", async () => {
      const recording = recordPgQueries();
      const seen = await store.db
        .transaction()
        .execute(async (trx) => {
          await insert(trx, 1);
          await insert(trx, 2);
          return count(trx);
        })
        .finally(recording.stop);
      expect(seen).toBe(2);
      expect(words(recording.sent.filter(heldOrControl))).toEqual([
        ["begin", true],
        ["insert", false],
        ["insert", false],
        ["select", false],
        ["commit", true],
      ]);
      expect(await count(other.db)).toBe(2);
    });

    it("that fails fails the transaction with its own error and keeps none of its writes", async () => {
      const failing = store.db.transaction().execute(async (trx) => {
        await sql`insert into held (id) values (${1})`.execute(trx);
        await insert(trx, 1); // duplicate key, found at commit
      });
      await expect(failing).rejects.toThrow(/duplicate key/);
      const thenRead = store.db.transaction().execute(async (trx) => {
        await insert(trx, 5);
        await insert(trx, 5); // duplicate key, found with the read that follows
        return count(trx);
      });
      await expect(thenRead).rejects.toThrow(/duplicate key/);
      expect(await count(other.db)).toBe(0);
      // The connections serve the next transactions.
      for (let i = 0; i < 12; i++) await store.db.transaction().execute((trx) => insert(trx, i));
      expect(await count(other.db)).toBe(12);
    });

    it("with a value node-pg cannot send fails the transaction's code at once, and nothing is committed", async () => {
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      const failing = store.db.transaction().execute(async (trx) => {
        await sql`insert into held (id) values (${1})`.execute(trx);
        await runAtCommit(trx, sql`insert into held (id, note) values (${2}, ${circular})`.compile(trx));
      });
      await expect(failing).rejects.toThrow(/circular/i);
      expect(await count(other.db)).toBe(0);
    });

    it("is dropped, never sent, when the transaction rolls back", async () => {
      const recording = recordPgQueries();
      const thrown = store.db.transaction().execute(async (trx) => {
        await sql`update held set note = ${"x"} where id = ${0}`.execute(trx);
        await insert(trx, 1);
        throw new Error("given up after the held insert");
      });
      await expect(thrown).rejects.toThrow("given up after the held insert");
      recording.stop();
      expect(recording.sent.filter((q) => /insert into held/.test(q.text))).toHaveLength(0);
      expect(await count(other.db)).toBe(0);
    });

    it("runs at once outside a transaction", async () => {
      await insert(store.db, 1);
      expect(await count(other.db)).toBe(1);
    });
  });
});

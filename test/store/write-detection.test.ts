import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { Store } from "../../server/store/database.js";
import { fixedQuery, insertRow } from "../../server/store/fixedQuery.js";
import type { Db } from "../../server/store/schema.js";
import { type Write, writesOf } from "../../server/store/writes.js";
import { freshStoreForEachTest } from "../support/freshStore.js";
import { dialect } from "../support/testApp.js";

/**
 * The store hears of its own writes from the query tree Kysely hands its driver (server/store/drivers.ts),
 * never from SQL text: on SQLite as each statement runs, on PostgreSQL once the statement or its
 * transaction has ended, committed or rolled back.
 */

let store: Store;
freshStoreForEachTest((opened) => {
  store = opened;
});

/** Every write the store reports from here on. */
function listen(): Write[] {
  const heard: Write[] = [];
  store.writes.on((write) => heard.push(write));
  return heard;
}

const bucket = (db: Db, keyId: string) =>
  db.insertInto("rate_limit_buckets").values({ key_id: keyId, bucket: 1, count: 1 });

const addOne = fixedQuery((db: Db, keyId: string) =>
  db.updateTable("rate_limit_buckets").set({ count: sql`count + 1` }).where("key_id", "=", keyId),
);

describe("writesOf", () => {
  it("reads the table and kind of a write from the query tree, and nothing from a read or raw SQL", () => {
    const db = store.db;
    expect(writesOf(bucket(db, "k").compile().query)).toEqual([
      { table: "rate_limit_buckets", kind: "insert" },
    ]);
    expect(writesOf(db.updateTable("forms as f").set({ title: "x" }).compile().query)).toEqual([
      { table: "forms", kind: "update" },
    ]);
    expect(writesOf(db.deleteFrom("api_keys").where("id", "=", "k").compile().query)).toEqual([
      { table: "api_keys", kind: "delete" },
    ]);
    expect(writesOf(db.selectFrom("forms").selectAll().compile().query)).toEqual([]);
    expect(writesOf(sql`update forms set title = 'x'`.compile(db).query)).toEqual([]);
    // A write inside a common table expression counts too.
    const cte = db
      .with("added", (qb) =>
        qb
          .insertInto("organizations")
          .values({ id: "o" } as never)
          .returning("id"),
      )
      .selectFrom("added")
      .selectAll()
      .compile().query;
    expect(writesOf(cte)).toEqual([{ table: "organizations", kind: "insert" }]);
    expect(writesOf(db.schema.dropTable("x").compile().query)).toEqual([{ table: "*", kind: "schema" }]);
  });
});

describe(`the store's own writes (${dialect})`, () => {
  it("are reported for builder queries, fixedQuery and insertRow, once the call has returned", async () => {
    const heard = listen();
    await bucket(store.db, "a").execute();
    expect(heard).toEqual([{ table: "rate_limit_buckets", kind: "insert" }]);
    await addOne(store.db, "a");
    expect(heard.at(-1)).toEqual({ table: "rate_limit_buckets", kind: "update" });
    await insertRow(store.db, "rate_limit_buckets", { key_id: "b", bucket: 1, count: 1 });
    expect(heard.at(-1)).toEqual({ table: "rate_limit_buckets", kind: "insert" });
    await store.db.selectFrom("rate_limit_buckets").selectAll().execute();
    expect(heard).toHaveLength(3);
  });

  it("are not read from raw SQL (writes to cached tables go through the query builder)", async () => {
    const heard = listen();
    await sql`insert into rate_limit_buckets (key_id, bucket, count) values ('raw', 1, 1)`.execute(store.db);
    expect(heard).toEqual([]);
  });

  it("move the written table's version, and only that table's", async () => {
    await store.changes.settled();
    const table = store.changes.version("rate_limit_buckets");
    const other = store.changes.version("webhook_logs");
    await bucket(store.db, "v").execute();
    expect(store.changes.version("rate_limit_buckets")).not.toBe(table);
    expect(store.changes.version("webhook_logs")).toBe(other);
  });
});

describe.runIf(dialect === "postgres")(
  "the store's own writes on PostgreSQL: reported when the transaction ends",
  () => {
    it("a committed transaction's writes once it has committed, not before", async () => {
      await store.changes.settled();
      const heard = listen();
      const before = store.changes.version("rate_limit_buckets");
      await store.db.transaction().execute(async (trx) => {
        await bucket(trx, "c").execute();
        await addOne(trx, "c");
        // Written, not yet committed: a read now must not keep its value under a version already moved.
        expect(heard).toEqual([]);
        expect(store.changes.version("rate_limit_buckets")).toBe(before);
      });
      expect(heard.map((w) => w.kind).sort()).toEqual(["insert", "update"]);
      expect(store.changes.version("rate_limit_buckets")).not.toBe(before);
    });

    it("a rolled-back transaction's writes once it has rolled back", async () => {
      await store.changes.settled();
      const heard = listen();
      const before = store.changes.version("rate_limit_buckets");
      await expect(
        store.db.transaction().execute(async (trx) => {
          await bucket(trx, "r").execute();
          expect(heard).toEqual([]);
          throw new Error("rolled back");
        }),
      ).rejects.toThrow("rolled back");
      expect(heard).toEqual([{ table: "rate_limit_buckets", kind: "insert" }]);
      expect(store.changes.version("rate_limit_buckets")).not.toBe(before);
      expect(await store.db.selectFrom("rate_limit_buckets").selectAll().execute()).toEqual([]);
    });
  },
);

describe.runIf(dialect === "sqlite")(
  "the store's own writes on SQLite: reported as each statement runs",
  () => {
    it("inside a transaction already (the one connection is held until it ends)", async () => {
      const heard = listen();
      await store.db.transaction().execute(async (trx) => {
        await bucket(trx, "s").execute();
        expect(heard).toEqual([{ table: "rate_limit_buckets", kind: "insert" }]);
      });
    });

    it("keeps one prepared statement per SQL text", async () => {
      // Same text, different values: both run, and the second finds the first's statement.
      await bucket(store.db, "p1").execute();
      await bucket(store.db, "p2").execute();
      const rows = await store.db
        .selectFrom("rate_limit_buckets")
        .select("key_id")
        .orderBy("key_id")
        .execute();
      expect(rows.map((r) => r.key_id)).toEqual(["p1", "p2"]);
    });
  },
);

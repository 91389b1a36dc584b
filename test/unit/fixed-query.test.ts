import { describe, expect, it } from "vitest";
import type { Db, Store } from "../../server/store/database.js";
import { fixedQuery, insertRow } from "../../server/store/fixedQuery.js";
import { freshStoreForEachTest } from "../support/freshStore.js";
import { dialect } from "../support/testApp.js";

/**
 * fixedQuery compiles a statement's shape once and binds each run's arguments; insertRow does the same per
 * table and set of columns. Each run must behave exactly like the Kysely query it was built from.
 */

let store: Store;

freshStoreForEachTest((opened) => {
  store = opened;
});

const ledgerRow = (key: string, value: string, expires = "9999-01-01T00:00:00.000Z") => ({
  key,
  value,
  expires_at: expires,
});

const liveValue = fixedQuery((db: Db, key: string, now: string) =>
  db.selectFrom("processor_ledger").select("value").where("key", "=", key).where("expires_at", ">", now),
);

describe(`fixedQuery (${dialect})`, () => {
  it("binds each run's own arguments, inside and outside transactions", async () => {
    await insertRow(store.db, "processor_ledger", ledgerRow("a", "first"));
    await insertRow(store.db, "processor_ledger", ledgerRow("b", "second", "2000-01-01T00:00:00.000Z"));
    const now = "2026-01-01T00:00:00.000Z";
    expect((await liveValue(store.db, "a", now)).rows).toEqual([{ value: "first" }]);
    expect((await liveValue(store.db, "b", now)).rows).toEqual([]);
    expect((await liveValue(store.db, "b", "1999-01-01T00:00:00.000Z")).rows).toEqual([{ value: "second" }]);
    await store.db.transaction().execute(async (trx) => {
      await insertRow(trx, "processor_ledger", ledgerRow("c", "third"));
      expect((await liveValue(trx, "c", now)).rows).toEqual([{ value: "third" }]);
    });
  });

  it("keeps values that are part of the shape, and refuses an argument that is not a parameter", async () => {
    await insertRow(store.db, "processor_ledger", ledgerRow("x", "kept"));
    const limited = fixedQuery((db: Db, key: string) =>
      db.selectFrom("processor_ledger").select("value").where("key", "=", key).where("value", "=", "kept"),
    );
    expect((await limited(store.db, "x")).rows).toEqual([{ value: "kept" }]);
    const ignoring = fixedQuery((db: Db, _unused: string) => db.selectFrom("processor_ledger").select("key"));
    await expect(ignoring(store.db, "y")).rejects.toThrow(/argument 0 is not a parameter/);
  });

  it("inserts rows of different column sets of one table, each with its own statement", async () => {
    await insertRow(store.db, "processor_ledger", ledgerRow("k1", "v1"));
    await insertRow(store.db, "processor_ledger", {
      value: "v2",
      key: "k2",
      expires_at: "9999-01-01T00:00:00.000Z",
    });
    const rows = await store.db.selectFrom("processor_ledger").selectAll().orderBy("key").execute();
    expect(rows.map((r) => [r.key, r.value])).toEqual([
      ["k1", "v1"],
      ["k2", "v2"],
    ]);
  });
});

import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../server/store/database.js";
import { dialect, freshDatabase, type TestDatabase } from "../support/testApp.js";

/**
 * The store runs its data statements as PostgreSQL prepared statements (pgStatements.ts). One prepared
 * before another process changed the columns of the table it reads goes stale; it must not fail the
 * read that comes next.
 */
describe.skipIf(dialect !== "postgres")("prepared statements on PostgreSQL after a schema change", () => {
  let database: TestDatabase;
  let store: Store;
  let other: Store;

  beforeEach(async () => {
    database = await freshDatabase();
    store = await database.open();
    other = await database.open(); // as another server process would be
    await sql`create table plan_change (id integer primary key)`.execute(store.db);
    await sql`insert into plan_change (id) values (1)`.execute(store.db);
  });
  afterEach(async () => {
    await other.close();
    await store.close();
    await database.drop();
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
      .execute((trx) => sql<Record<string, unknown>>`select * from plan_change where id = ${1}`.execute(trx));
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
      .execute((trx) => sql<Record<string, unknown>>`select * from plan_change where id = ${1}`.execute(trx));
    expect(again.rows).toEqual([{ id: 1, note: null }]);
  });
});

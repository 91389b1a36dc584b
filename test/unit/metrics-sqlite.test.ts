import { CompiledQuery, sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { Store } from "../../server/store/database.js";
import type { BackgroundWrites, Statements } from "../../server/store/dialect.js";
import { MetricsRecorder } from "../../server/store/metrics.js";
import type { ApiMetricsTable } from "../../server/store/schema.js";
import { freshStoreForEachTest } from "../support/freshStore.js";
import { dialect, type TestDatabase } from "../support/testApp.js";

/**
 * API metrics on SQLite: every API request writes a row, so the table is stored in its primary key's
 * b-tree (WITHOUT ROWID, migration 9; the rows already recorded survive it), and the rows are written by
 * the store's background thread (its own connection). Whatever happens there, every recorded row must end
 * up stored exactly once.
 */

let database: TestDatabase;
let store: Store;
freshStoreForEachTest((opened, fresh) => {
  store = opened;
  database = fresh;
});

const metric = (i: number): ApiMetricsTable => ({
  id: `met_${String(i).padStart(6, "0")}`,
  organization_id: "org",
  key_id: "key",
  endpoint: "/v1/forms",
  method: "GET",
  status_code: 200,
  response_time_us: i,
  created_at: new Date(1_800_000_000_000 + i).toISOString(),
});
const ids = (count: number) => Array.from({ length: count }, (_, i) => metric(i).id);

const storedIds = async () =>
  (await store.db.selectFrom("api_metrics").select("id").orderBy("id").execute()).map((r) => r.id);

async function tableSql(s: Store): Promise<string> {
  const { rows } = await sql<{
    sql: string;
  }>`select sql from sqlite_master where name = 'api_metrics'`.execute(s.db);
  return (rows[0]?.sql ?? "").toLowerCase();
}

/** A recorder whose background writes go through `run` (the store's own thread unless replaced). */
function recorderWith(run: BackgroundWrites["run"], errors: unknown[] = []): MetricsRecorder {
  return new MetricsRecorder({ ...store, background: { run, close: async () => {} } }, (err) =>
    errors.push(err),
  );
}

describe.skipIf(dialect !== "sqlite")("API metrics on SQLite", () => {
  it("is a WITHOUT ROWID table on a new database", async () => {
    expect(await tableSql(store)).toContain("without rowid");
  });

  it("keeps the recorded rows when a version 8 database is migrated", async () => {
    // A database as version 8 left it: api_metrics a rowid table, holding a row.
    await sql`drop table api_metrics`.execute(store.db);
    await sql`create table api_metrics (id text not null, organization_id text not null, key_id text not null,
      endpoint text not null, method text not null, status_code integer not null, response_time_us bigint not null,
      created_at text not null, constraint api_metrics_by_org_pk primary key (organization_id, created_at, id))`.execute(
      store.db,
    );
    await store.db.insertInto("api_metrics").values(metric(0)).execute();
    await store.db.deleteFrom("almoner_migrations").where("version", "=", 9).execute();
    await store.close();

    const migrated = await database.open();
    try {
      expect(await tableSql(migrated)).toContain("without rowid");
      expect(await migrated.db.selectFrom("api_metrics").selectAll().execute()).toEqual([metric(0)]);
    } finally {
      await migrated.close();
    }
  });

  it("stores every row through the background thread, visible once flush resolves", async () => {
    const background = store.background;
    if (!background) throw new Error("expected a background thread on a SQLite file");
    const written: number[] = [];
    const recorder = recorderWith(async (statements) => {
      await background.run(statements);
      written.push(statements.length);
    });
    for (let i = 0; i < 250; i++) recorder.record(metric(i));
    await recorder.flush();
    expect(written).toEqual([3]); // 100 rows a statement
    expect(await storedIds()).toEqual(ids(250));
    await recorder.close();
  });

  it("writes the rest itself, each row once, when the background write fails part-way", async () => {
    const errors: unknown[] = [];
    // The first statement is stored, then the thread "fails".
    const recorder = recorderWith(async (statements: Statements) => {
      const [text, params] = statements[0];
      await store.db.executeQuery(CompiledQuery.raw(text, params));
      throw new Error("background thread gone");
    }, errors);
    for (let i = 0; i < 250; i++) recorder.record(metric(i));
    await recorder.flush();
    expect(errors).toEqual([]);
    expect(await storedIds()).toEqual(ids(250));
    await recorder.close();
  });
});

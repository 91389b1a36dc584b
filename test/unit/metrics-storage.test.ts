import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openStore } from "../../server/store/database.js";
import { dialect } from "../support/testApp.js";

/**
 * Migration 9 stores SQLite's api_metrics in its primary key's b-tree (WITHOUT ROWID): every API request
 * writes a row, and so it is written once instead of twice. The rows already recorded must survive it.
 */

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-metrics-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const row = {
  id: "met_01",
  organization_id: "org",
  key_id: "key",
  endpoint: "/v1/forms",
  method: "GET",
  status_code: 200,
  response_time_us: 120,
  created_at: "2026-11-24T00:00:00.000Z",
};

async function tableSql(file: string): Promise<string> {
  const store = await openStore(file);
  try {
    const { rows } = await sql<{
      sql: string;
    }>`select sql from sqlite_master where name = 'api_metrics'`.execute(store.db);
    return rows[0]?.sql ?? "";
  } finally {
    await store.close();
  }
}

describe.skipIf(dialect !== "sqlite")("api_metrics storage on SQLite", () => {
  it("is a WITHOUT ROWID table on a new database", async () => {
    expect((await tableSql(path.join(dir, "new.db"))).toLowerCase()).toContain("without rowid");
  });

  it("keeps the recorded rows when a version 8 database is migrated", async () => {
    const file = path.join(dir, "old.db");
    // A database as version 8 left it: api_metrics a rowid table, holding a row.
    const store = await openStore(file);
    await sql`drop table api_metrics`.execute(store.db);
    await sql`create table api_metrics (id text not null, organization_id text not null, key_id text not null,
      endpoint text not null, method text not null, status_code integer not null, response_time_us bigint not null,
      created_at text not null, constraint api_metrics_by_org_pk primary key (organization_id, created_at, id))`.execute(
      store.db,
    );
    await store.db.insertInto("api_metrics").values(row).execute();
    await store.db.deleteFrom("almoner_migrations").where("version", "=", 9).execute();
    await store.close();

    expect((await tableSql(file)).toLowerCase()).toContain("without rowid");
    const again = await openStore(file);
    try {
      expect(await again.db.selectFrom("api_metrics").selectAll().execute()).toEqual([row]);
    } finally {
      await again.close();
    }
  });
});

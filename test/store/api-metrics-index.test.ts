import { CompiledQuery, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../server/store/database.js";
import { metricsPageQuery } from "../../server/store/metrics.js";
import { dialect, freshDatabase, type TestDatabase } from "../support/testApp.js";

/**
 * One key's API metrics (`GET /v1/analytics/api-metrics` called with a key, or a staff session's `keyId`)
 * are read from the index of migration 26, in the list's order: a key that is rarely used costs a few index
 * entries, not a walk of its organization's whole history (which the table's primary key would be).
 */
describe("the index of API metrics by key", () => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await freshDatabase();
    store = await database.open();
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  /** The plan of `query` as text (PostgreSQL with sequential scans off, as they win on an empty table). */
  async function plan(query: CompiledQuery): Promise<string> {
    const explained = (prefix: string) => CompiledQuery.raw(`${prefix} ${query.sql}`, [...query.parameters]);
    if (dialect === "postgres")
      return store.db.transaction().execute(async (trx) => {
        await sql`set local enable_seqscan = off`.execute(trx);
        const { rows } = await trx.executeQuery<{ "QUERY PLAN": string }>(explained("explain"));
        return rows.map((r) => r["QUERY PLAN"]).join("\n");
      });
    const { rows } = await store.db.executeQuery<{ detail: string }>(explained("explain query plan"));
    return rows.map((r) => r.detail).join("\n");
  }

  it.each([
    ["the first page", undefined],
    ["a later page", { sort: "2026-01-01T00:00:00.000Z", id: "met_1" }],
  ])("reads %s of one key's metrics from the index, in its order", async (_label, after) => {
    const text = await plan(metricsPageQuery(store.db, "org_1", { keyId: "key_1" }, 51, after).compile());
    expect(text).toContain("api_metrics_key_created");
    // The organization's rows are not walked: the table is read only by the page's keys.
    if (dialect === "sqlite")
      expect(text).toMatch(/PRIMARY KEY \(organization_id=\? AND created_at=\? AND id=\?\)/);
    // No sort of the key's rows: they come from the index in the list's order.
    expect(text).not.toMatch(
      dialect === "postgres" ? /->\s*Sort\b[\s\S]*api_metrics_key_created/ : /TEMP B-TREE/,
    );
  });
});

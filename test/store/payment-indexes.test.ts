import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../server/store/database.js";
import { dialect, freshDatabase, type TestDatabase } from "../support/testApp.js";

/**
 * The card-testing guard's count and a recurring gift's payments are read from partial indexes, which hold
 * only the rows those queries ask for (FAILED payments; payments of a recurring gift), so a checkout's
 * writes maintain fewer indexes. A query uses a partial index only when its conditions imply the index's.
 */
describe("partial indexes of payments", () => {
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
  async function plan(query: string): Promise<string> {
    if (dialect === "postgres")
      return store.db.transaction().execute(async (trx) => {
        await sql`set local enable_seqscan = off`.execute(trx);
        const { rows } = await sql<{ "QUERY PLAN": string }>`explain ${sql.raw(query)}`.execute(trx);
        return rows.map((r) => r["QUERY PLAN"]).join("\n");
      });
    const { rows } = await sql<{ detail: string }>`explain query plan ${sql.raw(query)}`.execute(store.db);
    return rows.map((r) => r.detail).join("\n");
  }

  it("counts a card's declines from the index of FAILED payments", async () => {
    const text = await plan(
      "select count(*) from payments where fingerprint = 'fp_1' and created_at > '2026-01-01' and status = 'FAILED'",
    );
    expect(text).toContain("payments_card_declines");
  });

  it("reads one recurring gift's payments from the index of payments that have one", async () => {
    const text = await plan(
      "select id from payments where subscription_id = 'sub_1' order by created_at desc, id desc limit 10",
    );
    expect(text).toContain("payments_subscription_created");
  });
});

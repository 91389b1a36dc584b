import { isPostgres, storedByPrimaryKey } from "../dialect.js";
import { type AnyTrx, type Migration, rebuildApiMetrics } from "./shared.js";

/** SQLite: API metrics stored in their primary key's b-tree only (WITHOUT ROWID). */
export const sqliteApiMetricsInKeyOrder: Migration = {
  version: 9,
  name: "api metrics stored in key order on SQLite",
  async up(trx: AnyTrx) {
    // Every API request writes a metric row: stored in its primary key's b-tree only (WITHOUT ROWID), a
    // row is written once instead of twice (a quarter less time per row on the bench machine).
    if (isPostgres(trx)) return;
    await rebuildApiMetrics(trx, "api_metrics_by_key", (table) => storedByPrimaryKey(trx, table));
  },
};

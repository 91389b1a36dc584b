import type { AnyTrx, Migration } from "./shared.js";

/**
 * API metrics indexed by key in the list's order: the metrics of one key (what `GET
 * /v1/analytics/api-metrics` answers a key, or a staff session's `?keyId=`) are read from this index
 * instead of walking the organization's whole history for a key that is rarely used. Its rows are the
 * table's, so every request writes one more index entry.
 */
export const apiMetricsByKey: Migration = {
  version: 26,
  name: "api metrics of one key, newest first, read from an index",
  async up(trx: AnyTrx) {
    await trx.schema
      .createIndex("api_metrics_key_created")
      .on("api_metrics")
      .columns(["organization_id", "key_id", "created_at", "id"])
      .execute();
  },
};

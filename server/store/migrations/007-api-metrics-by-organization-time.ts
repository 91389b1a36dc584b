import { type AnyTrx, type Migration, rebuildApiMetrics } from "./shared.js";

/** API metrics keyed by (organization, time, id) instead of by id. */
export const apiMetricsKeyedByOrganizationTime: Migration = {
  version: 7,
  name: "api metrics keyed by organization and time only",
  async up(trx: AnyTrx) {
    // Every API request writes a metric: keyed by the list's own order, a row updates one index instead
    // of two (the id alone was never looked up).
    await rebuildApiMetrics(trx, "api_metrics_by_org", (table) => table);
  },
};

import type { Db } from "./database.js";
import { afterPosition } from "./keyset.js";
import type { ApiMetricsTable } from "./schema.js";

/**
 * API request metrics. Requests add to an in-memory batch that is written every 250 ms (or at 500
 * records), so recording never waits on the database; a read of the metrics flushes first.
 */
export class MetricsRecorder {
  private batch: ApiMetricsTable[] = [];
  private writing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly onError: (err: unknown) => void = (err) =>
      console.error("api metrics write failed:", err),
  ) {
    this.timer = setInterval(() => void this.flush(), 250);
    this.timer.unref();
  }

  record(metric: ApiMetricsTable): void {
    this.batch.push(metric);
    if (this.batch.length >= 500) void this.flush();
  }

  /** Writes everything recorded so far; resolves when it is stored. */
  flush(): Promise<void> {
    const rows = this.batch;
    this.batch = [];
    this.writing = this.writing.then(async () => {
      if (rows.length === 0) return;
      try {
        for (let i = 0; i < rows.length; i += 100) {
          await this.db
            .insertInto("api_metrics")
            .values(rows.slice(i, i + 100))
            .execute();
        }
      } catch (err) {
        this.onError(err);
      }
    });
    return this.writing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

/** One page of an organization's metrics, newest first, after the keyset position `after`. */
export async function listMetrics(
  db: Db,
  organizationId: string,
  limit: number,
  after?: { sort: string; id: string },
): Promise<ApiMetricsTable[]> {
  let query = db.selectFrom("api_metrics").selectAll().where("organization_id", "=", organizationId);
  if (after) query = query.where((eb) => afterPosition(eb, "created_at", after));
  return query.orderBy("created_at", "desc").orderBy("id", "desc").limit(limit).execute();
}

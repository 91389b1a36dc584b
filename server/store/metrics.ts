import { CompiledQuery } from "kysely";
import type { Db, Store } from "./database.js";
import { isPostgres, type Statements, valuesList } from "./dialect.js";
import { afterPosition } from "./keyset.js";
import { KeyUseNotes } from "./keyUses.js";
import type { ApiMetricsTable } from "./schema.js";

const COLUMNS = [
  "id",
  "organization_id",
  "key_id",
  "endpoint",
  "method",
  "status_code",
  "response_time_us",
  "created_at",
] as const satisfies readonly (keyof ApiMetricsTable)[];
const ROWS_PER_STATEMENT = 100;

/**
 * API request metrics. Requests add to an in-memory batch that is written every 250 ms (or at 1,000
 * records), so recording never waits on the database; a read of the metrics flushes first. The batch is
 * one flat array of the rows' values in column order, the insert's parameters as they are sent: a request
 * leaves no object behind to outlive a few garbage collections, and nothing is copied again to write it
 * (docs/benchmarks.md). On a SQLite file the rows are written by the store's background thread
 * (dialect.ts), so that the serving thread spends no time on them; elsewhere, or if that thread is
 * unavailable, in one transaction here. Every request of the API makes a record, so the insert skips
 * Kysely's query building: its text is made once per row count, with the dialect's placeholders. The
 * records also give each API key's last use (keyUses.ts), written with the same batch.
 */
export class MetricsRecorder {
  /** The recorded rows' values, COLUMNS.length per row. */
  private values: unknown[] = [];
  private writing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  private readonly keyUses = new KeyUseNotes();

  private readonly statements = new Map<number, string>();

  constructor(
    private readonly store: Store,
    private readonly onError: (err: unknown) => void = (err) =>
      console.error("api metrics write failed:", err),
  ) {
    this.timer = setInterval(() => void this.flush(), 250);
    this.timer.unref();
  }

  record(metric: ApiMetricsTable): void {
    const values = this.values;
    for (const column of COLUMNS) values.push(metric[column]);
    this.keyUses.note(metric.key_id, metric.created_at);
    if (values.length >= 1000 * COLUMNS.length) void this.flush();
  }

  /** Writes everything recorded so far; resolves when it is stored. */
  flush(): Promise<void> {
    const values = this.values;
    this.values = [];
    const keyUses = this.keyUses.take(this.store.dialect);
    this.writing = this.writing.then(async () => {
      if (values.length === 0 && !keyUses) return;
      const statements: Statements = [];
      const perStatement = ROWS_PER_STATEMENT * COLUMNS.length;
      for (let i = 0; i < values.length; i += perStatement) {
        const params = values.slice(i, i + perStatement);
        statements.push([this.insertText(params.length / COLUMNS.length), params]);
      }
      if (keyUses) statements.push(keyUses);
      const background = this.store.background;
      if (background) {
        try {
          await background.run(statements);
          return;
        } catch {
          // Not written there (or not all): written here; rows already stored are skipped (insertText).
        }
      }
      try {
        await this.store.db.transaction().execute(async (trx) => {
          for (const [text, params] of statements) await trx.executeQuery(CompiledQuery.raw(text, params));
        });
      } catch (err) {
        this.onError(err);
      }
    });
    return this.writing;
  }

  private insertText(rows: number): string {
    let text = this.statements.get(rows);
    if (!text) {
      // A row's id is unique: one already stored (by a write that failed part-way) is skipped, not refused.
      text = `insert into api_metrics (${COLUMNS.join(", ")}) values ${valuesList(this.store.dialect, rows, COLUMNS.length)} on conflict do nothing`;
      this.statements.set(rows, text);
    }
    return text;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

/**
 * One page of an organization's metrics, newest first, after the keyset position `after`; with `keyId`,
 * only that key's.
 */
export function listMetrics(
  db: Db,
  organizationId: string,
  filter: { keyId?: string },
  limit: number,
  after?: { sort: string; id: string },
): Promise<ApiMetricsTable[]> {
  return metricsPageQuery(db, organizationId, filter, limit, after).execute();
}

/**
 * listMetrics' query. One key's page is read from the index of migration 26. On SQLite, which keeps no
 * statistics here and, asked for the rows directly, walks the primary key instead (that is the
 * organization's whole history for a key that is rarely used), the page's keys (created_at, id) are found
 * in that index alone, then its rows read from the table by those keys; PostgreSQL's planner chooses the
 * index itself.
 */
export function metricsPageQuery(
  db: Db,
  organizationId: string,
  filter: { keyId?: string },
  limit: number,
  after?: { sort: string; id: string },
) {
  const { keyId } = filter;
  if (keyId === undefined || isPostgres(db)) {
    let query = db.selectFrom("api_metrics").selectAll().where("organization_id", "=", organizationId);
    if (keyId !== undefined) query = query.where("key_id", "=", keyId);
    if (after) query = query.where((eb) => afterPosition(eb, "created_at", after));
    return query.orderBy("created_at", "desc").orderBy("id", "desc").limit(limit);
  }
  let keys = db
    .selectFrom("api_metrics")
    .select(["created_at", "id"])
    .where("organization_id", "=", organizationId)
    .where("key_id", "=", keyId);
  if (after) keys = keys.where((eb) => afterPosition(eb, "created_at", after));
  const page = keys.orderBy("created_at", "desc").orderBy("id", "desc").limit(limit).as("page");
  return db
    .selectFrom(page)
    .innerJoin("api_metrics as m", (join) =>
      join
        .on("m.organization_id", "=", organizationId)
        .onRef("m.created_at", "=", "page.created_at")
        .onRef("m.id", "=", "page.id"),
    )
    .selectAll("m")
    .orderBy("page.created_at", "desc")
    .orderBy("page.id", "desc");
}

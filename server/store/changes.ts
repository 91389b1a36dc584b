import type SQLite from "better-sqlite3";
import { type Kysely, sql } from "kysely";
import type pg from "pg";

/**
 * Tells in-process caches when the rows they copied may have changed. A table's version moves with every
 * write this process makes to it through the query builder (the store's driver reads the table from the
 * query's tree: drivers.ts, writes.ts; on SQLite as the statement runs, on PostgreSQL once it has
 * committed), and when another process sharing the database (another server, the CLI) has committed a
 * change to a cached table. On SQLite, triggers on those tables move a counter (installSqliteChangeCounter)
 * that is read to tell. That read is a read transaction, too costly to make per request
 * (docs/benchmarks.md), so it is made at most once per CHECK_EVERY_MS: another process's commit is seen by
 * every request that starts more than that after it, which is sooner than any client can learn of the
 * commit and ask again.
 *
 * On PostgreSQL (PgChangeFeed) other processes' commits are heard through LISTEN: a statement trigger on each
 * cached table sends a notification when a transaction that changed it commits, whatever wrote it (a
 * server, the CLI, psql). While the listening connection is not up, nothing is served from memory.
 */
export interface ChangeFeed {
  /** Changes whenever `table`'s rows may have changed. Compare with ===. */
  version(table: string): number;
  /** Resolves once every change committed before the call shows in version(). */
  settled(): Promise<void>;
  /** This process wrote `table` ("*": anything may have changed); told by the store's driver. */
  wrote(table: string): void;
  close(): void;
}

/** How long a check for other processes' commits holds. */
const CHECK_EVERY_MS = 1;

/**
 * The tables whose rows processes keep in memory (readCache.ts users): PostgreSQL notifies changes to these.
 * Writes to them go through the query builder (writes.ts), so that this process hears of its own.
 */
export const CACHED_TABLES = ["api_keys", "forms", "organizations"] as const;
export type CachedTable = (typeof CACHED_TABLES)[number];

/**
 * Versions drawn from one counter that only counts up: a table's version is the tick of its last change
 * or of the last change to everything, whichever is later, so two different states never share a version
 * (a sum of separate counters could, once large enough to lose precision).
 */
class TableVersions {
  private tick = 0;
  private everything = 0;
  private readonly tables = new Map<string, number>();

  current(table: string): number {
    const own = this.tables.get(table) ?? 0;
    return Math.max(own, this.everything);
  }

  /** `table` changed ("*": anything may have). */
  changed(table: string): void {
    if (table === "*") this.everything = ++this.tick;
    else this.tables.set(table, ++this.tick);
  }

  /** A version no kept value has or will have: what version() answers while changes cannot be heard. */
  unheard(): number {
    this.everything = ++this.tick;
    return this.everything;
  }
}

/** SQLite: the one-row table whose counter the cached tables' triggers move (installSqliteChangeCounter). */
const SQLITE_COUNTER = "almoner_cache_versions";

/**
 * SQLite: a counter that every change to a cached table moves, by triggers, whichever connection makes
 * it. Other processes' changes are seen by reading it (its value differs), and only theirs to these
 * tables: commits elsewhere (checkouts, metrics, the background thread's writes) leave caches alone. Run by
 * migration 10.
 */
export async function installSqliteChangeCounter<DB>(db: Kysely<DB>): Promise<void> {
  await sql`create table ${sql.table(SQLITE_COUNTER)} (id integer primary key, version integer not null)`.execute(
    db,
  );
  await sql`insert into ${sql.table(SQLITE_COUNTER)} (id, version) values (1, 0)`.execute(db);
  for (const table of CACHED_TABLES)
    for (const event of ["insert", "update", "delete"])
      await sql`create trigger ${sql.id(`${table}_${event}_counted`)} after ${sql.raw(event)} on ${sql.table(table)}
        begin update ${sql.table(SQLITE_COUNTER)} set version = version + 1 where id = 1; end`.execute(db);
}

export class SqliteChangeFeed implements ChangeFeed {
  private readonly versions = new TableVersions();
  private checkedAt = Number.NEGATIVE_INFINITY;
  private lastCounter: number | undefined;
  private counter: SQLite.Statement<[], number> | null = null;

  constructor(private readonly db: SQLite.Database) {}

  version(table: string): number {
    const now = performance.now();
    if (now - this.checkedAt >= CHECK_EVERY_MS) this.check(now);
    return this.versions.current(table);
  }

  /** A write statement of this process is about to run (the store's driver tells, drivers.ts). */
  wrote(table: string): void {
    this.versions.changed(table);
  }

  settled(): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, CHECK_EVERY_MS + 1));
  }

  close(): void {}

  private check(now: number): void {
    this.checkedAt = now;
    try {
      // Prepared at first use: the feed is made before the migrations that create the counter.
      this.counter ??= this.db
        .prepare<[], number>(`select version from ${SQLITE_COUNTER} where id = 1`)
        .pluck();
      const value = this.db.open ? this.counter.get() : undefined;
      if (value !== undefined && value === this.lastCounter) return;
      this.lastCounter = value;
    } catch {
      // No counter yet, or a busy or closed database: counted as changed, so nothing stale is served.
      this.lastCounter = undefined;
    }
    this.versions.changed("*");
  }
}

/** The channel the triggers of installChangeNotifications notify on; each payload is "<schema>.<table>". */
export const PG_CHANGE_CHANNEL = "almoner_changes";
/** How long after losing the listening connection the next attempt waits (requests meanwhile read the database). */
const LISTEN_RETRY_MS = 1000;
const SYNC_PREFIX = "!sync ";
/** How long a notification sent to itself may take to come back before the connection is not trusted. */
const HANDSHAKE_MS = 2000;

/**
 * PostgreSQL: statement triggers on the cached tables notify PG_CHANGE_CHANNEL; a notification is sent when
 * the transaction commits, whatever made it. Run by migration 8.
 */
export async function installChangeNotifications<DB>(db: Kysely<DB>): Promise<void> {
  await sql`create or replace function almoner_notify_change() returns trigger language plpgsql as $$
    begin
      perform pg_notify(${sql.lit(PG_CHANGE_CHANNEL)}, tg_table_schema || '.' || tg_table_name);
      return null;
    end $$`.execute(db);
  for (const table of CACHED_TABLES)
    await sql`create trigger ${sql.id(`${table}_notify_change`)}
      after insert or update or delete or truncate on ${sql.table(table)}
      for each statement execute function almoner_notify_change()`.execute(db);
}

/**
 * PostgreSQL's change feed. Other processes' commits arrive as notifications on a connection of its own
 * that LISTENs (opened at the first question, so a CLI command that caches nothing never opens it); this
 * process's writes are reported by the store's driver once they are committed (drivers.ts). Until the
 * listening connection is up, and whenever it drops (it is tried again after LISTEN_RETRY_MS), every
 * version() answer is new, so caches read the database and keep nothing.
 */
export class PgChangeFeed implements ChangeFeed {
  private readonly versions = new TableVersions();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private live = false;
  private schema = "";
  private retryAt = 0;
  private closed = false;
  private readonly syncId = `${process.pid}-${Math.random().toString(36).slice(2)}`;
  private syncCount = 0;
  private readonly syncs = new Map<string, () => void>();

  /** The listening connection's application_name, as pg_stat_activity shows it. */
  readonly applicationName = `almoner changes ${this.syncId}`;

  constructor(private readonly newClient: (applicationName: string) => pg.Client) {}

  /** Whether other processes' changes are being heard (and caches are on). */
  get listening(): boolean {
    return this.live;
  }

  version(table: string): number {
    if (this.live) return this.versions.current(table);
    this.listen();
    return this.versions.unheard();
  }

  /** A write this process made to `table` has committed (or rolled back). */
  wrote(table: string): void {
    this.versions.changed(table);
  }

  async settled(): Promise<void> {
    if (!this.live) {
      this.listen();
      await this.connecting;
    }
    const client = this.client;
    if (this.live && client) await this.roundTrip(client);
  }

  close(): void {
    this.closed = true;
    const client = this.client;
    this.client = null;
    this.stopped();
    void client?.end().catch(() => {});
  }

  private listen(): void {
    if (this.client || this.closed || performance.now() < this.retryAt) return;
    const client = this.newClient(this.applicationName);
    this.client = client;
    client.on("notification", (message) => this.heard(message.payload));
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    this.connecting = (async () => {
      try {
        await client.connect();
        const { rows } = await client.query<{ schema: string | null }>("select current_schema() as schema");
        await client.query(`listen ${PG_CHANGE_CHANNEL}`);
        // Heard back before it is trusted: through a pooler that does not carry notifications it never is.
        if (!(await this.roundTrip(client))) throw new Error("no notification came back");
        if (this.client !== client) return;
        this.schema = rows[0]?.schema ?? "";
        this.versions.changed("*");
        this.live = true;
      } catch {
        this.lost(client);
      }
    })();
  }

  /**
   * Sends a notification to itself and waits for it (at most HANDSHAKE_MS): notifications arrive in commit
   * order, so once it is heard, every commit made before it was sent has been heard too.
   */
  private async roundTrip(client: pg.Client): Promise<boolean> {
    const id = `${this.syncId}-${++this.syncCount}`;
    let timer: NodeJS.Timeout | undefined;
    const heard = new Promise<boolean>((resolve) => {
      this.syncs.set(id, () => resolve(true));
      timer = setTimeout(() => resolve(false), HANDSHAKE_MS);
    });
    try {
      await client.query("select pg_notify($1, $2)", [PG_CHANGE_CHANNEL, SYNC_PREFIX + id]);
      return await heard;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
      this.syncs.delete(id);
    }
  }

  private heard(payload: string | undefined): void {
    if (!payload) return;
    if (payload.startsWith(SYNC_PREFIX)) {
      const id = payload.slice(SYNC_PREFIX.length);
      this.syncs.get(id)?.();
      return;
    }
    const dot = payload.indexOf(".");
    if (dot > 0 && payload.slice(0, dot) === this.schema) this.versions.changed(payload.slice(dot + 1));
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    this.retryAt = performance.now() + LISTEN_RETRY_MS;
    if (this.live)
      console.error("Lost the PostgreSQL change notifications: caches are off until they are back");
    this.stopped();
    void client.end().catch(() => {});
  }

  private stopped(): void {
    this.live = false;
    this.versions.changed("*");
    for (const resolve of this.syncs.values()) resolve();
    this.syncs.clear();
  }
}

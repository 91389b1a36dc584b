import fs from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import SQLite from "better-sqlite3";
import {
  type CreateTableBuilder,
  type Dialect,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
} from "kysely";
import pg from "pg";
import { StartupError } from "../errors.js";
import { type ChangeFeed, PgChangeFeed, SqliteChangeFeed } from "./changes.js";
import {
  PostgresStoreAdapter,
  PostgresStoreDriver,
  SqliteStoreAdapter,
  SqliteStoreDriver,
} from "./drivers.js";
import { StoreWrites } from "./writes.js";

/**
 * Everything that differs between SQLite and PostgreSQL lives here: opening a connection, tuning it,
 * and recognising a unique-constraint violation (and, in changes.ts and drivers.ts, hearing of writes).
 * Queries elsewhere are portable Kysely.
 */

export type DialectName = "sqlite" | "postgres";

export interface DialectHandle {
  name: DialectName;
  dialect: Dialect;
  /** A readable description for logs, without credentials. */
  describe: string;
  /** What lets in-process caches know of writes (see changes.ts). */
  changes: ChangeFeed;
  /** This store's own writes through the query builder, as its driver sees them (writes.ts). */
  writes: StoreWrites;
  /** Writes that may run off the serving thread (SQLite files), or null. */
  background: BackgroundWrites | null;
}

export function parseDatabaseUrl(url: string): { name: DialectName; target: string } {
  if (/^postgres(ql)?:\/\//i.test(url)) return { name: "postgres", target: url };
  if (url.startsWith("sqlite:")) return sqliteFile(url.slice("sqlite:".length).replace(/^\/\/(?=\/)/, ""));
  if (url === ":memory:" || /^(\.{0,2}\/|[A-Za-z0-9_])[^:]*$/.test(url)) return sqliteFile(url);
  const scheme = url.split(":")[0];
  throw new StartupError(
    `Invalid setting DATABASE_URL: unknown scheme "${scheme}:" (use a SQLite file path, sqlite:<path>, or postgres://user@host:port/database)`,
  );
}

/**
 * A SQLite database's file. No file (`sqlite:` with nothing after it, as a template such as
 * `sqlite:${DB_PATH}` gives when the variable is unset) and `:memory:` are refused: SQLite would open a
 * database that vanishes when the process ends, and every gift taken meanwhile with it.
 */
function sqliteFile(target: string): { name: DialectName; target: string } {
  if (target.trim() === "" || target === ":memory:")
    throw new StartupError(
      `Invalid setting DATABASE_URL: ${target.trim() === "" ? "no SQLite file named" : "an in-memory SQLite database loses everything when the server stops"} (use a file path such as sqlite:./data/almoner.db, or leave DATABASE_URL unset for $DATA_DIR/almoner.db)`,
    );
  return { name: "sqlite", target };
}

export function openDialect(url: string, opts: { pgSchema?: string } = {}): DialectHandle {
  const { name, target } = parseDatabaseUrl(url);
  if (name === "sqlite") {
    let db: SQLite.Database;
    try {
      fs.mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
      db = new SQLite(target);
      // The first read of the file: one that is not a SQLite database is refused here.
      db.pragma("journal_mode = WAL");
    } catch (err) {
      throw new StartupError(`Cannot open the SQLite database at ${target}: ${(err as Error).message}`);
    }
    db.pragma("synchronous = NORMAL");
    // Savepoint journals (each job of a group commit runs in a savepoint: writeBatch.ts) and temporary
    // b-trees in memory: on disk, a large savepoint journal spills to a temporary file and multiplies the
    // bytes a checkout writes (docs/benchmarks.md).
    db.pragma("temp_store = MEMORY");
    // The WAL is checkpointed by a timer (CHECKPOINT_EVERY_MS) rather than by page count: the same copying
    // with far fewer fsyncs (docs/benchmarks.md).
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
    db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
    const background = new BackgroundConnection(path.resolve(target));
    const checkpoints = setInterval(() => background.checkpoint(db), CHECKPOINT_EVERY_MS);
    checkpoints.unref();
    db.pragma("busy_timeout = 5000");
    db.pragma("foreign_keys = ON");
    // SQLite's lower() knows only ASCII: the lists' searches fold case with this one, as PostgreSQL's
    // lower() does under UTF-8 (listFilters.ts), so that "élodie" finds "Élodie".
    db.function("unicode_lower", { deterministic: true }, (text: unknown) =>
      typeof text === "string" ? text.toLowerCase() : text,
    );
    const changes = new SqliteChangeFeed(db);
    const writes = new StoreWrites();
    writes.on((write) => changes.wrote(write.table));
    const onClose = () => {
      clearInterval(checkpoints);
      void background.close();
    };
    const dialect: Dialect = {
      createAdapter: () => new SqliteStoreAdapter(),
      createDriver: () => new SqliteStoreDriver(db, (write) => writes.report(write), onClose),
      createQueryCompiler: () => new SqliteQueryCompiler(),
      createIntrospector: (kysely) => new SqliteIntrospector(kysely),
    };
    return { name, dialect, describe: `SQLite ${target}`, changes, writes, background };
  }
  // `?schema=name` picks the PostgreSQL schema (search_path) the tables live in.
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(target);
  } catch {
    // Never the text itself: it holds the database's password.
    throw new StartupError(
      "Invalid setting DATABASE_URL: not a valid postgres:// URL (characters such as / # ? @ % in the password must be percent-encoded)",
    );
  }
  const schema = opts.pgSchema ?? parsedUrl.searchParams.get("schema") ?? undefined;
  parsedUrl.searchParams.delete("schema");
  if (schema !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema))
    throw new StartupError(`Invalid setting DATABASE_URL: schema "${schema}" must be a plain identifier`);
  const connection = {
    connectionString: parsedUrl.toString(),
    connectionTimeoutMillis: 5000,
    options: schema ? `-c search_path=${schema}` : undefined,
  };
  const changes = new PgChangeFeed(
    (applicationName) => new pg.Client({ ...connection, keepAlive: true, application_name: applicationName }),
  );
  const pool = new pg.Pool({
    ...connection,
    max: 10,
    // A query is written without waiting for the answer to the one before it (pgStatements.ts sends a
    // transaction's `begin` with its first statement).
    pipeline: true,
    types: {
      getTypeParser: (oid: number, format?: "text" | "binary") => {
        // int8 (bigint, count(*)): integer cents and counts fit in a double's 53 bits.
        if (oid === 20) return (value: string) => Number.parseInt(value, 10);
        return pg.types.getTypeParser(oid, format);
      },
    } as pg.CustomTypesConfig,
  });
  const writes = new StoreWrites();
  writes.on((write) => changes.wrote(write.table));
  const dialect: Dialect = {
    createAdapter: () => new PostgresStoreAdapter(),
    createDriver: () => new PostgresStoreDriver(pool, (write) => writes.report(write)),
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createIntrospector: (kysely) => new PostgresIntrospector(kysely),
  };
  parsedUrl.password = "";
  const where = `PostgreSQL ${parsedUrl.host}${parsedUrl.pathname}${schema ? ` (schema ${schema})` : ""}`;
  return { name, dialect, describe: where, changes, writes, background: null };
}

export function isPostgres<DB>(db: Kysely<DB>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * SQLite: a table stored in its primary key's order (WITHOUT ROWID), so that a row is written into one
 * b-tree instead of a rowid table and its key's index. PostgreSQL has no such choice: unchanged.
 */
export function storedByPrimaryKey<DB, T extends string, C extends string>(
  db: Kysely<DB>,
  table: CreateTableBuilder<T, C>,
): CreateTableBuilder<T, C> {
  return isPostgres(db) ? table : table.modifyEnd(sql`without rowid`);
}

const CHECKPOINT_EVERY_MS = 1000;
/** SQLite's own checkpoint stays as a backstop, at a size the timer normally never lets the WAL reach. */
const BACKSTOP_CHECKPOINT_PAGES = 20_000;

/** Write statements as [SQL text with ? placeholders, parameters]. */
export type Statements = [string, unknown[]][];

/** Writes that need not run on the serving thread (SQLite files only; see BackgroundConnection). */
export interface BackgroundWrites {
  /**
   * Runs the statements on the background thread's connection, each in a transaction of its own, and
   * resolves once all are committed. Rejects if one fails (the ones before it stay committed) or the
   * thread is not available: the caller then writes them itself.
   */
  run(statements: Statements): Promise<void>;
  /**
   * Closes the thread's connection and ends the thread; resolves once it has (its connection's files are
   * then no longer written). Called again, the same promise.
   */
  close(): Promise<void>;
}

/**
 * A worker thread with a SQLite connection of its own, for work that must not stall the serving thread:
 * WAL checkpoints (a PASSIVE checkpoint copies committed pages into the database file and flushes it,
 * whose fsync stalled every request on the serving thread) and the API metrics' inserts (every request
 * writes a row). Its commits do not count as changes for the read caches, which watch a counter that only
 * the cached tables' triggers move (changes.ts). The thread starts at first use; if it cannot start, or
 * stops, the serving connection does that work itself as before.
 */
class BackgroundConnection implements BackgroundWrites {
  private worker: Worker | null = null;
  private checkpointing = false;
  private failed = false;
  private nextId = 0;
  private closed: Promise<void> | null = null;
  private readonly pending = new Map<number, { resolve(): void; reject(err: Error): void }>();

  constructor(private readonly file: string) {}

  checkpoint(fallback?: SQLite.Database): void {
    const worker = this.started();
    if (!worker) {
      if (fallback) checkpoint(fallback);
      return;
    }
    if (this.checkpointing) return;
    this.checkpointing = true;
    worker.postMessage(null);
  }

  run(statements: Statements): Promise<void> {
    const worker = this.started();
    if (!worker) return Promise.reject(new Error("the background SQLite thread is not running"));
    const id = ++this.nextId;
    // Held open while writes are in flight, so that a process ending meanwhile still stores them.
    if (this.pending.size === 0) worker.ref();
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, statements });
    });
  }

  close(): Promise<void> {
    if (!this.closed) {
      const worker = this.worker;
      this.worker = null;
      this.failed = true;
      this.closed = worker
        ? new Promise<void>((resolve) => {
            worker.once("exit", () => resolve());
            // Held by the event loop until it is gone: a process waiting for this (a command ending) must
            // not run out of things to do and exit, with code 0, before it has.
            worker.ref();
            worker.postMessage("close");
          })
        : Promise.resolve();
      this.abandon(new Error("the background SQLite thread was closed"));
    }
    return this.closed;
  }

  private started(): Worker | null {
    if (this.failed) return null;
    try {
      this.worker ??= this.start();
      return this.worker;
    } catch (err) {
      console.error("SQLite background thread did not start:", (err as Error).message);
      this.failed = true;
      return null;
    }
  }

  private start(): Worker {
    const worker = new Worker(new URL("./backgroundThread.mjs", import.meta.url), {
      workerData: { file: this.file },
    });
    worker.unref();
    worker.on("message", (message: { checkpointed?: string | null; id?: number; error?: string | null }) => {
      if (message.id === undefined) {
        this.checkpointing = false;
        if (message.checkpointed) console.error("SQLite checkpoint failed:", message.checkpointed);
        return;
      }
      const waiting = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (this.pending.size === 0) worker.unref();
      if (message.error) waiting?.reject(new Error(message.error));
      else waiting?.resolve();
    });
    worker.on("error", (err) => console.error("SQLite background thread failed:", err.message));
    worker.on("exit", () => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.failed = true;
      this.abandon(new Error("the background SQLite thread stopped"));
    });
    return worker;
  }

  private abandon(err: Error): void {
    for (const waiting of this.pending.values()) waiting.reject(err);
    this.pending.clear();
  }
}

/**
 * Copies committed pages back into the database file without waiting on other processes. A checkpoint
 * cannot run inside this connection's own open transaction, so then it tries again a few ms later.
 */
export function checkpoint(db: SQLite.Database, retries = 100): void {
  if (!db.open) return;
  if (db.inTransaction) {
    if (retries > 0) setTimeout(() => checkpoint(db, retries - 1), 5).unref();
    return;
  }
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch (err) {
    // Busy: the next round catches up; anything else is worth a line in the log.
    const code = (err as { code?: string }).code;
    if (code !== "SQLITE_BUSY" && code !== "SQLITE_LOCKED" && db.open)
      console.error("SQLite checkpoint failed:", (err as Error).message);
  }
}

/** `(?, ?), (?, ?)` (SQLite) or `($1, $2), ($3, $4)` (PostgreSQL): the values of a many-row insert. */
export function valuesList(dialect: DialectName, rows: number, columns: number): string {
  const tuples: string[] = [];
  for (let r = 0; r < rows; r++) {
    const marks: string[] = [];
    for (let c = 1; c <= columns; c++) marks.push(dialect === "sqlite" ? "?" : `$${r * columns + c}`);
    tuples.push(`(${marks.join(", ")})`);
  }
  return tuples.join(", ");
}

export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}

/**
 * Holds `name`'s lock of the current PostgreSQL schema until the transaction ends, so that processes doing
 * the same once-only work (making the first tables, the demo) take turns; SQLite's write transaction is
 * alone already, so there it does nothing.
 */
export async function holdSchemaLock<DB>(trx: Kysely<DB>, name: string): Promise<void> {
  if (isPostgres(trx))
    await sql`select pg_advisory_xact_lock(hashtext(${`${name}:`} || current_schema()))`.execute(trx);
}

/**
 * A transaction that lost a race for a lock and was rolled back whole: a deadlock or a serialization failure
 * on PostgreSQL, SQLite's write lock held by another process past the wait. Nothing of it was written, so
 * the request may simply be sent again.
 */
export function isLockConflict(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === "40P01" || code === "40001" || code === "SQLITE_BUSY" || code === "SQLITE_BUSY_SNAPSHOT";
}

/** One clear line for a database failure at start-up. */
export function describeDatabaseError(err: unknown, where: string): string {
  const e = err as { code?: string; message?: string };
  if (e.code === "ECONNREFUSED" || e.code === "ENOTFOUND" || e.code === "ETIMEDOUT" || e.code === "EAI_AGAIN")
    return `Cannot reach the database at ${where} (${e.code}): check DATABASE_URL and that the server is running`;
  if (e.code === "3F000")
    return `The database at ${where} has no schema this user may create tables in: create the schema, or grant USAGE and CREATE on it`;
  if (e.code === "42501")
    return `The database user may not change ${where}: ${e.message} (grant it CREATE rights)`;
  if (e.code === "3D000" || e.code === "28000" || e.code === "28P01")
    return `The database at ${where} refused the connection: ${e.message}`;
  return `Database error on ${where}: ${e.message ?? String(err)}`;
}

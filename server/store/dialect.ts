import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { Worker } from "node:worker_threads";
import SQLite from "better-sqlite3";
import {
  type CreateTableBuilder,
  type Dialect,
  type Kysely,
  PostgresAdapter,
  PostgresDialect,
  SqliteDialect,
  sql,
} from "kysely";
import pg from "pg";
import { StartupError } from "../errors.js";
import { type ChangeFeed, PgChangeFeed, SqliteChangeFeed, watchWrites, writtenTable } from "./changes.js";

/**
 * Everything that differs between SQLite and PostgreSQL lives here: opening a connection, tuning it,
 * and recognising a unique-constraint violation (and, in changes.ts, hearing of writes). Queries elsewhere
 * are portable Kysely.
 */

export type DialectName = "sqlite" | "postgres";

export interface DialectHandle {
  name: DialectName;
  dialect: Dialect;
  /** A readable description for logs, without credentials. */
  describe: string;
  /** What lets in-process caches know of writes (see changes.ts). */
  changes: ChangeFeed;
  /** Writes that may run off the serving thread (SQLite files), or null. */
  background: BackgroundWrites | null;
}

export function parseDatabaseUrl(url: string): { name: DialectName; target: string } {
  if (/^postgres(ql)?:\/\//i.test(url)) return { name: "postgres", target: url };
  if (url.startsWith("sqlite:"))
    return { name: "sqlite", target: url.slice("sqlite:".length).replace(/^\/\/(?=\/)/, "") };
  if (url === ":memory:" || /^(\.{0,2}\/|[A-Za-z0-9_])[^:]*$/.test(url))
    return { name: "sqlite", target: url };
  const scheme = url.split(":")[0];
  throw new StartupError(
    `Invalid setting DATABASE_URL: unknown scheme "${scheme}:" (use a SQLite file path, sqlite:<path>, or postgres://user@host:port/database)`,
  );
}

export function openDialect(url: string, opts: { pgSchema?: string } = {}): DialectHandle {
  const { name, target } = parseDatabaseUrl(url);
  if (name === "sqlite") {
    if (target !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
    let db: SQLite.Database;
    try {
      db = new SQLite(target);
    } catch (err) {
      throw new StartupError(`Cannot open the SQLite database at ${target}: ${(err as Error).message}`);
    }
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    // Savepoint journals (each job of a group commit runs in a savepoint: writeBatch.ts) and temporary
    // b-trees in memory: on disk, a savepoint's journal went to a temporary file once it passed 64 KB, which
    // more than doubled the bytes a checkout writes (25 vs 11 pages' worth per checkout, bench machine).
    db.pragma("temp_store = MEMORY");
    // Checkpoint the WAL once a second instead of at every 1,000 pages: the same copying, but one fsync a
    // second rather than one per few hundred writes (+35% checkouts per second on the bench machine).
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
    db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
    const background = target === ":memory:" ? null : new BackgroundConnection(path.resolve(target));
    const checkpoints = setInterval(() => background?.checkpoint(db), CHECKPOINT_EVERY_MS);
    checkpoints.unref();
    db.pragma("busy_timeout = 5000");
    db.pragma("foreign_keys = ON");
    const changes = new SqliteChangeFeed(db);
    const onClose = () => {
      clearInterval(checkpoints);
      background?.close();
    };
    return {
      name,
      dialect: new SqliteDialect({ database: withStatementCache(db, changes, onClose) }),
      describe: `SQLite ${target}`,
      changes,
      background,
    };
  }
  // `?schema=name` picks the PostgreSQL schema (search_path) the tables live in.
  const parsedUrl = new URL(target);
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
    types: {
      getTypeParser: (oid: number, format?: "text" | "binary") => {
        // int8 (bigint, count(*)): integer cents and counts fit in a double's 53 bits.
        if (oid === 20) return (value: string) => Number.parseInt(value, 10);
        return pg.types.getTypeParser(oid, format);
      },
    } as pg.CustomTypesConfig,
  });
  pool.on("connect", (client) => watchWrites(client, changes));
  parsedUrl.password = "";
  const where = `PostgreSQL ${parsedUrl.host}${parsedUrl.pathname}${schema ? ` (schema ${schema})` : ""}`;
  return { name, dialect: new PostgresDialect({ pool }), describe: where, changes, background: null };
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

/** Starts a write transaction holding the write lock from the start (see writeBatch.ts). */
export const BEGIN_WRITE = "begin immediate";

const CHECKPOINT_EVERY_MS = 1000;
/** SQLite's own checkpoint stays as a backstop, at a size the timer normally never lets the WAL reach. */
const BACKSTOP_CHECKPOINT_PAGES = 20_000;

/**
 * The background thread's script: its own connection; "close" ends it; null asks for one PASSIVE
 * checkpoint; { id, statements } runs write statements, each in a transaction of its own, and answers
 * with the id (and the error, if one failed: the ones before it are committed).
 */
const BACKGROUND_WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file);
db.pragma("busy_timeout = 5000");
db.pragma("synchronous = NORMAL");
const prepared = new Map();
parentPort.on("message", (message) => {
  if (message === "close") {
    db.close();
    process.exit(0);
  }
  if (message === null) {
    try {
      db.pragma("wal_checkpoint(PASSIVE)");
      parentPort.postMessage({ checkpointed: null });
    } catch (err) {
      parentPort.postMessage({ checkpointed: err && err.code === "SQLITE_BUSY" ? null : String(err && err.message) });
    }
    return;
  }
  try {
    for (const [text, params] of message.statements) {
      let statement = prepared.get(text);
      if (!statement) {
        statement = db.prepare(text);
        if (prepared.size >= 100) prepared.clear();
        prepared.set(text, statement);
      }
      statement.run(params);
    }
    parentPort.postMessage({ id: message.id, error: null });
  } catch (err) {
    parentPort.postMessage({ id: message.id, error: String((err && err.message) || err) });
  }
});
`;

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

  /** Closes the thread's connection and ends it (asynchronously: nothing waits for it). */
  close(): void {
    const worker = this.worker;
    this.worker = null;
    this.failed = true;
    worker?.postMessage("close");
    this.abandon(new Error("the background SQLite thread was closed"));
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
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    const worker = new Worker(BACKGROUND_WORKER, { eval: true, workerData: { driver, file: this.file } });
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

/**
 * Kysely prepares every query anew; better-sqlite3 statements can be reused, and preparing is a tenth of a
 * request's cost. Queries are built from a fixed set of shapes, so a bounded cache by SQL text suffices.
 */
function withStatementCache(
  db: SQLite.Database,
  changes: SqliteChangeFeed,
  onClose: () => void,
): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = db.prepare.bind(db);
  const close = () => {
    onClose();
    return db.close();
  };
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === "close") return close;
      if (prop !== "prepare") return Reflect.get(target, prop, receiver);
      return (sql: string) => {
        let statement = cache.get(sql);
        if (!statement) {
          statement = prepare(sql);
          const table = writtenTable(sql);
          if (table !== null) statement = announcingWrites(statement, () => changes.wrote(table));
          if (cache.size >= 500) cache.clear();
          cache.set(sql, statement);
        }
        return statement;
      };
    },
  });
}

/** A write statement that tells the change feed each time it runs (a statement runs synchronously). */
function announcingWrites(statement: SQLite.Statement, wrote: () => void): SQLite.Statement {
  return new Proxy(statement, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop !== "run" && prop !== "all" && prop !== "get" && prop !== "iterate") return value.bind(target);
      return (...args: unknown[]) => {
        wrote();
        return value.apply(target, args);
      };
    },
  });
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

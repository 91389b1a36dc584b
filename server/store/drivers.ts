import type SQLite from "better-sqlite3";
import {
  AbortedTransactionError,
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  PostgresAdapter,
  type QueryCompiler,
  type QueryResult,
  SelectQueryNode,
  SqliteAdapter,
  SqliteDriver,
  type TransactionSettings,
} from "kysely";
import type pg from "pg";
import { isAtCommit } from "./atCommit.js";
import { type AtCommit, NamingClient, StatementNames } from "./pgStatements.js";
import { rootWriteOf, type Write, writesOf } from "./writes.js";

/** Starts a SQLite write transaction holding the write lock from its start (see beginTransaction below). */
export const BEGIN_WRITE = "begin immediate";

/**
 * The store's Kysely drivers: Kysely's own for SQLite with what the store adds around it, and one of the
 * store's own for PostgreSQL over node-pg's pool. Both tell the store's listeners (writes.ts) of every
 * write made through the query builder, read from the query's tree; the SQLite one also keeps its prepared
 * statements, and the PostgreSQL one names its statements and holds some back (pgStatements.ts).
 */

/**
 * Per-store compiled shapes of fixedQuery and insertRow (fixedQuery.ts), kept on the store's dialect
 * adapter, which every Kysely instance and transaction of the store shares and no other store has.
 */
export interface CompiledShapes {
  readonly compiledShapes: Map<unknown, unknown>;
}

export class SqliteStoreAdapter extends SqliteAdapter implements CompiledShapes {
  readonly compiledShapes = new Map<unknown, unknown>();
}

export class PostgresStoreAdapter extends PostgresAdapter implements CompiledShapes {
  readonly compiledShapes = new Map<unknown, unknown>();
}

/** Prepared statements kept per connection at most; queries come in a fixed set of shapes. */
const MAX_STATEMENTS = 500;

/**
 * SQLite's one connection, with its prepared statements kept by SQL text: Kysely prepares every query
 * anew, and preparing is a good part of a request's cost (docs/benchmarks.md). Writes are reported as
 * each statement runs (before it does): the connection is one, held by a transaction from its begin to
 * its end, so no read of this process runs between a write and its commit or rollback, and a read that
 * began before the report keeps nothing (ReadCache compares versions before and after it reads).
 */
class SqliteStatementConnection implements DatabaseConnection {
  private readonly statements = new Map<string, SQLite.Statement>();

  constructor(
    private readonly db: SQLite.Database,
    private readonly wrote: (write: Write) => void,
  ) {}

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    try {
      for (const write of writesOf(compiled.query)) this.wrote(write);
      const statement = this.prepare(compiled.sql);
      if (statement.reader) return Promise.resolve({ rows: statement.all(compiled.parameters) as R[] });
      const { changes, lastInsertRowid } = statement.run(compiled.parameters);
      return Promise.resolve({
        numAffectedRows: changes == null ? undefined : BigInt(changes),
        insertId: lastInsertRowid == null ? undefined : BigInt(lastInsertRowid),
        rows: [],
      });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(compiled.query)) throw new Error("SQLite streams select queries only");
    for (const row of this.prepare(compiled.sql).iterate(compiled.parameters)) yield { rows: [row as R] };
  }

  private prepare(text: string): SQLite.Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      if (this.statements.size >= MAX_STATEMENTS) this.statements.clear();
      this.statements.set(text, statement);
    }
    return statement;
  }
}

/**
 * Kysely's SQLite driver (its connection lock, transactions and savepoints) over the store's own
 * connection (SqliteStatementConnection). `onDestroy` runs as the store closes, before the database does.
 */
export class SqliteStoreDriver implements Driver {
  private readonly inner: SqliteDriver;
  private readonly connection: SqliteStatementConnection;

  constructor(
    db: SQLite.Database,
    wrote: (write: Write) => void,
    private readonly onDestroy: () => void,
  ) {
    this.inner = new SqliteDriver({ database: db });
    this.connection = new SqliteStatementConnection(db, wrote);
  }

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.inner.acquireConnection();
    return this.connection;
  }

  /**
   * Every transaction takes the write lock at its begin (waiting out other connections' writes), so one
   * that reads before it writes never finds its snapshot overtaken by another connection's commit, which
   * SQLite answers with SQLITE_BUSY_SNAPSHOT at the write. SQLite has no isolation levels or access modes
   * to set: the settings are Kysely's to refuse.
   */
  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(BEGIN_WRITE));
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]) {
    return this.inner.savepoint(connection, name, compile);
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]) {
    return this.inner.rollbackToSavepoint(connection, name, compile);
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]) {
    return this.inner.releaseSavepoint(connection, name, compile);
  }

  releaseConnection(): Promise<void> {
    return this.inner.releaseConnection();
  }

  async destroy(): Promise<void> {
    this.onDestroy();
    await this.inner.destroy();
  }
}

/**
 * A pool connection that reports its writes once they have ended: a statement outside a transaction when
 * it completes, a transaction's statements when its commit (or rollback) completes (PostgresStoreDriver
 * tells it where transactions begin and end). A read that started before then and kept its value keeps
 * it under a version that the report moves past, so it is not served again.
 */
class WatchedConnection implements DatabaseConnection {
  private inTransaction = false;
  private readonly pending = new Map<string, Write>();
  /** Set when a rollback failed: the connection's state is unknown, so it is closed, not reused. */
  broken = false;

  constructor(
    readonly client: NamingClient,
    private readonly wrote: (write: Write) => void,
  ) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const writes = writesOf(compiled.query);
    if (this.inTransaction && isAtCommit(compiled)) {
      // Held for the commit: its own table counts as written only if it changed a row (a fan-out to no
      // webhook wakes no dispatcher); the tables of its WITH clauses, always. writesOf lists its own first.
      const own = rootWriteOf(compiled.query);
      for (const write of own ? writes.slice(1) : writes) this.note(write);
      return this.run<R>(compiled, {
        answered: ({ rowCount }) => {
          if (own && rowCount !== 0) this.note(own);
        },
      });
    }
    if (writes.length === 0) return this.run<R>(compiled);
    if (this.inTransaction) {
      for (const write of writes) this.note(write);
      return this.run<R>(compiled);
    }
    try {
      return await this.run<R>(compiled);
    } finally {
      for (const write of writes) this.wrote(write);
    }
  }

  private note(write: Write): void {
    this.pending.set(`${write.kind} ${write.table}`, write);
  }

  /** The statement's result as Kysely takes it (the affected rows' count of a write). */
  private async run<R>(compiled: CompiledQuery, atCommit?: AtCommit): Promise<QueryResult<R>> {
    const { command, rowCount, rows } = await this.client.query<R>(
      compiled.sql,
      compiled.parameters,
      atCommit,
    );
    const counted =
      command === "INSERT" || command === "UPDATE" || command === "DELETE" || command === "MERGE";
    return {
      numAffectedRows: counted && rowCount !== null ? BigInt(rowCount) : undefined,
      rows: rows ?? [],
    };
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("the store does not stream PostgreSQL queries");
  }

  /** Runs transaction control (`begin`, `commit`, `rollback`), answering with PostgreSQL's command tag. */
  async control(text: string): Promise<string> {
    return (await this.client.query(text, [])).command;
  }

  began(): void {
    this.inTransaction = true;
    this.pending.clear();
  }

  ended(): void {
    this.inTransaction = false;
    const writes = [...this.pending.values()];
    this.pending.clear();
    for (const write of writes) this.wrote(write);
  }
}

/**
 * The store's PostgreSQL driver: connections from node-pg's pool, their statements named and some held
 * back to be written with the next (pgStatements.ts), their writes reported (WatchedConnection).
 * Savepoints are not used on PostgreSQL, so it has none.
 */
export class PostgresStoreDriver implements Driver {
  /** The names given to statement texts, one set for every connection of the pool. */
  private readonly names = new StatementNames();
  private readonly watched = new WeakMap<pg.PoolClient, WatchedConnection>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly wrote: (write: Write) => void,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.pool.connect();
    let connection = this.watched.get(client);
    if (!connection) {
      connection = new WatchedConnection(new NamingClient(client, this.names), this.wrote);
      this.watched.set(client, connection);
    }
    return connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const watched = asWatched(connection);
    let text = "begin";
    if (settings.isolationLevel || settings.accessMode) {
      text = "start transaction";
      if (settings.isolationLevel) text += ` isolation level ${settings.isolationLevel}`;
      if (settings.accessMode) text += ` ${settings.accessMode}`;
    }
    await watched.control(text);
    watched.began();
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const watched = asWatched(connection);
    try {
      // PostgreSQL answers `commit` with ROLLBACK when a statement before it failed; Kysely then sends no
      // rollback of its own. (A statement held for the commit that failed fails it with its own error.)
      if ((await watched.control("commit")) === "ROLLBACK") throw new AbortedTransactionError();
    } finally {
      watched.ended();
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const watched = asWatched(connection);
    try {
      await watched.control("rollback");
    } catch (err) {
      watched.broken = true;
      throw err;
    } finally {
      watched.ended();
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const watched = asWatched(connection);
    const broken = watched.broken;
    watched.broken = false;
    watched.client.release(broken);
  }

  destroy(): Promise<void> {
    return this.pool.end();
  }
}

function asWatched(connection: DatabaseConnection): WatchedConnection {
  if (!(connection instanceof WatchedConnection)) throw new Error("not a connection of this driver");
  return connection;
}

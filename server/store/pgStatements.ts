import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from "kysely";
import type pg from "pg";

/**
 * PostgreSQL prepared statements for the store's queries. node-pg sends a query without a name as an
 * unnamed statement, which PostgreSQL parses and plans again on every run; a named one is parsed once per
 * connection and then only bound and run. Queries come in a fixed set of shapes (the query builder's, with
 * parameters for every value), so each distinct data statement's text gets a name, the first time this
 * pool sees it, up to MAX_NAMED texts (beyond them, statements run unnamed as before). Transaction control
 * and schema changes always run unnamed. PostgreSQL's backends had been spending a good part of every
 * checkout parsing and planning (docs/benchmarks.md).
 *
 * A prepared statement whose result's columns change under it (another process's migration adds one to a
 * table it reads with `*`) fails with "cached plan must not change result type". Its text then gets a new
 * name, prepared afresh on its next run; outside a transaction that run is made at once, so the caller
 * never sees the failure (inside one the transaction has failed already, and the caller's error stands).
 *
 * A transaction's `begin` is not sent on its own: it goes out in the same write as the transaction's first
 * statement (the pool's clients run in pipeline mode, so a query is written before the one ahead of it is
 * answered), and the two cost one round trip instead of two. On a connection that is idle, `begin` cannot
 * fail without the connection failing too, so the statement never runs outside its transaction; the
 * statement's answer waits for the `begin`'s, and a failed `begin` fails the statement with its error.
 */

/** Distinct texts named at most per pool: each connection keeps each one it runs, on both sides. */
const MAX_NAMED = 1000;

const DATA_STATEMENT = /^\s*(select|insert|update|delete|with)\b/i;

/** The names given to statement texts: one per text, the same on every connection of the pool. */
export class StatementNames {
  private readonly names = new Map<string, string>();
  /** Names given so far: a renewed text never takes a name back. */
  private given = 0;

  constructor(private readonly max = MAX_NAMED) {}

  /** The statement's name, or undefined when it runs unnamed. */
  of(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < this.max && DATA_STATEMENT.test(text)) {
      name = `almoner_${this.given++}`;
      this.names.set(text, name);
    }
    return name;
  }

  /** A new name for a text whose prepared statement went stale (its result's columns changed). */
  renew(text: string): string | undefined {
    if (!this.names.has(text)) return undefined;
    const name = `almoner_${this.given++}`;
    this.names.set(text, name);
    return name;
  }
}

/** PostgreSQL's answer to a prepared statement whose result's columns changed since it was prepared. */
function isStalePlan(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  return e?.code === "0A000" && /cached plan must not change result type/i.test(e.message ?? "");
}

const BEGINS = /^\s*(begin|start\s+transaction)\b/i;
/** What a deferred `begin` answers at once (its real answer comes with the next statement's). */
const BEGUN = { command: "BEGIN", rowCount: null, rows: [] } as unknown as PostgresQueryResult<never>;
const ENDS = /^\s*(commit|rollback|end|abort)\b(?!\s+to\b)/i;

/** A pool client whose data statements run as named statements (StatementNames). */
class NamingClient implements PostgresPoolClient {
  /** Whether a transaction is open on the connection (every statement passes here). */
  private inTransaction = false;
  /** A `begin` not sent yet: it is written with the transaction's first statement. */
  private deferredBegin: string | null = null;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly names: StatementNames,
  ) {}

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(
    what: string | PostgresCursor<R>,
    parameters?: ReadonlyArray<unknown>,
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof what !== "string") throw new Error("the store does not stream PostgreSQL queries");
    const text = what;
    const values = [...(parameters ?? [])];
    if (BEGINS.test(text)) {
      this.inTransaction = true;
      if (values.length === 0 && this.client.pipeline && this.client.getTransactionStatus() === "I") {
        this.deferredBegin = text;
        return Promise.resolve(BEGUN);
      }
    } else if (ENDS.test(text)) this.inTransaction = false;
    const begin = this.deferredBegin;
    this.deferredBegin = null;
    if (begin !== null) return this.behind(begin, () => this.named<R>(text, values));
    return this.named<R>(text, values);
  }

  /** Sends `begin` and the statement `send` writes in one write; answers with the statement's result. */
  private behind<R>(
    begin: string,
    send: () => Promise<PostgresQueryResult<R>>,
  ): Promise<PostgresQueryResult<R>> {
    const stream = this.client.connection.stream;
    stream.cork();
    let begun: Promise<unknown>;
    let result: Promise<PostgresQueryResult<R>>;
    try {
      begun = this.client.query(begin);
      result = send();
    } finally {
      stream.uncork();
    }
    // The statement's error reaches the caller through `then` below, unless the `begin` failed first.
    result.catch(() => {});
    return begun.then(() => result);
  }

  /** Runs a statement, under its prepared statement's name when it has one. */
  private named<R>(text: string, values: unknown[]): Promise<PostgresQueryResult<R>> {
    const run = (name: string | undefined) =>
      (name
        ? this.client.query({ name, text, values })
        : this.client.query({ text, values })) as unknown as Promise<PostgresQueryResult<R>>;
    const name = this.names.of(text);
    if (name === undefined) return run(undefined);
    const inTransaction = this.inTransaction;
    return run(name).catch((err: unknown) => {
      if (!isStalePlan(err)) throw err;
      const renewed = this.names.renew(text);
      if (inTransaction) throw err;
      return run(renewed);
    });
  }

  release(destroy?: boolean): void {
    this.client.release(destroy);
  }
}

/** `pool` as Kysely's PostgreSQL driver takes it, its clients naming their statements. */
export function namingPool(pool: pg.Pool, names = new StatementNames()): PostgresPool {
  const clients = new WeakMap<pg.PoolClient, NamingClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let naming = clients.get(client);
      if (!naming) {
        naming = new NamingClient(client, names);
        clients.set(client, naming);
      }
      return naming;
    },
    end: () => pool.end(),
  };
}

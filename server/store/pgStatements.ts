import pg from "pg";

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
 *
 * A statement asked to run at commit (`atCommit`: a write whose answer the transaction does not read, such
 * as an event for the webhook outbox) is held back too, and written with whatever the transaction sends
 * next: its `commit` (one round trip for both), or a statement that follows it, so the statements still
 * run in the order they were asked for. A held statement that fails fails what it was sent with (the
 * `commit` then rolls the transaction back, as PostgreSQL does after a failed statement), with its own
 * error; a `rollback` drops what is held. Outside a transaction it runs at once.
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
const ENDS = /^\s*(commit|rollback|end|abort)\b(?!\s+to\b)/i;
const ROLLS_BACK = /^\s*(rollback|abort)\b/i;

/** pg's answer to one query, as the store's driver reads it. */
export interface PgResult<R> {
  command: string;
  rowCount: number | null;
  rows: R[];
}

/** What a held `begin` or statement answers at once (its real answer comes with what follows it). */
const HELD = Object.freeze({ command: "HELD", rowCount: null, rows: [] }) as PgResult<never>;

/** What a statement held for the commit is told once it has run. */
export interface AtCommit {
  answered(result: PgResult<unknown>): void;
}

/** A statement written later, behind what comes next on the connection. */
interface Held {
  text: string;
  values: unknown[];
  atCommit: AtCommit;
}

/**
 * node-pg's conversion of a parameter to what it sends (a Date, array or object to text), which it makes
 * as it writes the statement; not in its type declarations.
 */
const prepareValue = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils
  .prepareValue;

/** A connection's statements: named (StatementNames), with `begin` and statements to run at commit held. */
export class NamingClient {
  /** Whether a transaction is open on the connection (every statement passes here). */
  private inTransaction = false;
  /** A `begin` not sent yet: it is written with the transaction's first statement. */
  private deferredBegin: string | null = null;
  /** Statements to run at commit, not sent yet: written before the next statement, in order. */
  private held: Held[] = [];

  constructor(
    private readonly client: pg.PoolClient,
    private readonly names: StatementNames,
  ) {}

  /** Runs a statement; with `atCommit` inside a transaction, holds it back (see above). */
  query<R>(text: string, parameters: ReadonlyArray<unknown>, atCommit?: AtCommit): Promise<PgResult<R>> {
    const values = [...parameters];
    if (BEGINS.test(text)) {
      this.inTransaction = true;
      if (values.length === 0 && this.client.pipeline && this.client.getTransactionStatus() === "I") {
        this.deferredBegin = text;
        return Promise.resolve(HELD);
      }
    } else if (ENDS.test(text)) {
      this.inTransaction = false;
      // Nothing held was sent: there is nothing of it to undo.
      if (ROLLS_BACK.test(text)) this.held = [];
    } else if (atCommit && this.inTransaction && this.client.pipeline) {
      // Converted now, so that a value node-pg cannot send fails the transaction's code here; converted
      // as it is written, it would fail on the client alone, and the commit written behind it would stand.
      this.held.push({ text, values: values.map(prepareValue), atCommit });
      return Promise.resolve(HELD);
    }
    const begin = this.deferredBegin;
    const held = this.held;
    this.deferredBegin = null;
    if (held.length) this.held = [];
    const send = () => {
      const sent = this.named<R>(text, values);
      if (atCommit) sent.then((answer) => atCommit.answered(answer)).catch(() => {});
      return sent;
    };
    if (begin === null && held.length === 0) return send();
    return this.behind(begin, held, send);
  }

  /**
   * Sends `begin` (when given), the held statements and the statement `send` writes, in one write; answers
   * with the statement's result, or the error of the first of them that failed.
   */
  private behind<R>(
    begin: string | null,
    held: Held[],
    send: () => Promise<PgResult<R>>,
  ): Promise<PgResult<R>> {
    const stream = this.client.connection.stream;
    const ahead: Promise<unknown>[] = [];
    let result: Promise<PgResult<R>>;
    stream.cork();
    try {
      if (begin !== null) ahead.push(this.client.query(begin));
      for (const statement of held) {
        // Inside the transaction, whatever has been asked for since: never run again on its own.
        const sent = this.named(statement.text, statement.values, true);
        sent.then((answer) => statement.atCommit.answered(answer)).catch(() => {});
        ahead.push(sent);
      }
      result = send();
    } finally {
      stream.uncork();
    }
    // Each error reaches the caller through the chain below, the first one sent first.
    for (const sent of ahead) sent.catch(() => {});
    result.catch(() => {});
    return ahead
      .reduce<Promise<unknown>>((chain, sent) => chain.then(() => sent), Promise.resolve())
      .then(() => result);
  }

  /**
   * Runs a statement, under its prepared statement's name when it has one; one whose prepared statement
   * went stale is run again at once unless it is part of a transaction.
   */
  private named<R>(
    text: string,
    values: unknown[],
    inTransaction = this.inTransaction,
  ): Promise<PgResult<R>> {
    const run = (name: string | undefined) =>
      (name
        ? this.client.query({ name, text, values })
        : this.client.query({ text, values })) as unknown as Promise<PgResult<R>>;
    const name = this.names.of(text);
    if (name === undefined) return run(undefined);
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

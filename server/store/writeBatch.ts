import { type Kysely, sql } from "kysely";
import { BEGIN_WRITE } from "./drivers.js";
import type { Database, Db } from "./schema.js";

/** Runs `work` in a write transaction of its own (or, on SQLite, in a savepoint of a shared one). */
export type Transact = <T>(work: (trx: Db) => Promise<T>) => Promise<T>;

interface Job {
  work: (trx: Db) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** Jobs per shared transaction at most, so that one commit never waits on a very long queue. */
const MAX_JOBS = 64;

/**
 * Group commit for SQLite. Its one connection runs write transactions one after another anyway, and each
 * commit writes every page it changed to the WAL: transactions that are ready together (the checkouts
 * of one turn of the event loop) run in one transaction instead, each in its own savepoint, so that a
 * job that fails rolls back its own work only, and the pages they share (the ends of the same indexes)
 * are written once. Each job's promise settles only after the shared commit, so a result is never
 * reported before it is durable; if the commit fails, every job of the batch fails with it. A job must
 * use only its `trx` (the batch holds the one connection) and never wait on anything but the database.
 */
export function batchedTransactions(db: Kysely<Database>): Transact {
  let queue: Job[] = [];
  let scheduled = false;
  let running: Promise<void> = Promise.resolve();

  // One connection for the whole batch; BEGIN IMMEDIATE takes the write lock first (waiting out other
  // processes' writes), so that a job that reads before it writes never finds its snapshot overtaken.
  const runBatch = (jobs: Job[]) =>
    db.connection().execute(async (conn) => {
      const settled: { ok: boolean; value: unknown }[] = [];
      try {
        await sql.raw(BEGIN_WRITE).execute(conn);
      } catch (err) {
        for (const job of jobs) job.reject(err);
        return;
      }
      try {
        for (const job of jobs) {
          await sql`savepoint job`.execute(conn);
          try {
            settled.push({ ok: true, value: await job.work(conn) });
          } catch (err) {
            settled.push({ ok: false, value: err });
            await sql`rollback to savepoint job`.execute(conn);
          }
          await sql`release savepoint job`.execute(conn);
        }
        await sql`commit`.execute(conn);
      } catch (err) {
        await sql`rollback`.execute(conn).catch(() => {});
        for (const job of jobs) job.reject(err);
        return;
      }
      for (const [i, job] of jobs.entries()) {
        if (settled[i].ok) job.resolve(settled[i].value);
        else job.reject(settled[i].value);
      }
    });

  const flush = () => {
    scheduled = false;
    while (queue.length) {
      const jobs = queue.slice(0, MAX_JOBS);
      queue = queue.slice(MAX_JOBS);
      running = running.then(() => runBatch(jobs));
    }
  };

  return <T>(work: (trx: Db) => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (scheduled) return;
      scheduled = true;
      setImmediate(flush);
    });
}

/** One transaction per call: PostgreSQL, where each takes a connection of the pool and runs alongside others. */
export function separateTransactions(db: Kysely<Database>): Transact {
  return (work) => db.transaction().execute(work);
}

import { Kysely } from "kysely";
import { StartupError } from "../errors.js";
import type { ChangeFeed } from "./changes.js";
import { type BackgroundWrites, type DialectName, describeDatabaseError, openDialect } from "./dialect.js";
import { migrate } from "./migrations.js";
import { RateLimits } from "./rateLimits.js";
import { ReadCaches } from "./readCache.js";
import type { Database, Db } from "./schema.js";
import { batchedTransactions, separateTransactions, type Transact } from "./writeBatch.js";
import type { StoreWrites } from "./writes.js";

export type { Db } from "./schema.js";

/**
 * One database and everything this process keeps about it: its caches, its rate-limit leases, the
 * listeners to its writes. Nothing of it is shared with another store, even of the same database.
 */
export interface Store {
  db: Db;
  dialect: DialectName;
  describe: string;
  /** Writes that in-process caches must hear of (changes.ts). */
  changes: ChangeFeed;
  /** This process's writes through the store's query builder, as they happen (writes.ts). */
  writes: StoreWrites;
  /** Rows of the cached tables kept in memory (readCache.ts). */
  caches: ReadCaches;
  /** The per-key request budgets and this process's leases of them (rateLimits.ts). */
  rateLimits: RateLimits;
  /** Writes that may run off the serving thread (SQLite files: API metrics), or null. */
  background: BackgroundWrites | null;
  /**
   * A write transaction for hot paths (checkouts): grouped with others ready at the same time on SQLite
   * (see writeBatch.ts), a transaction of its own on PostgreSQL. The work must use only `trx`.
   */
  transact: Transact;
  close(): Promise<void>;
}

/** Opens the database named by `url`, brings its schema up to date, and returns it. */
export async function openStore(url: string, opts: { pgSchema?: string } = {}): Promise<Store> {
  const handle = openDialect(url, opts);
  const db = new Kysely<Database>({ dialect: handle.dialect });
  try {
    await migrate(db);
  } catch (err) {
    handle.changes.close();
    await db.destroy().catch(() => {});
    if (err instanceof StartupError) throw err;
    throw new StartupError(describeDatabaseError(err, handle.describe));
  }
  return {
    db,
    dialect: handle.name,
    describe: handle.describe,
    changes: handle.changes,
    writes: handle.writes,
    caches: new ReadCaches(handle.changes),
    rateLimits: new RateLimits(db),
    background: handle.background,
    transact: handle.name === "sqlite" ? batchedTransactions(db) : separateTransactions(db),
    close: async () => {
      handle.changes.close();
      await db.destroy();
      // The SQLite background thread's connection is closed by then too: wait until it has let go of the files.
      await handle.background?.close();
    },
  };
}

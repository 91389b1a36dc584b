import { sql } from "kysely";
import type { Db } from "./database.js";
import { isLockConflict } from "./dialect.js";

/**
 * Runs `work` again when it loses a race for a lock (a deadlock, a serialization failure, a busy database):
 * up to `tries` times in all, waiting `waitMs` × the attempt before each retry; the last conflict is
 * thrown. `work` must leave nothing behind when it fails: a whole transaction, or a savepoint
 * (`inSavepoint`).
 */
export async function retryingLockConflicts<T>(
  work: () => Promise<T>,
  tries: number,
  waitMs: number,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (!isLockConflict(err) || attempt >= tries) throw err;
      await new Promise((resolve) => setTimeout(resolve, waitMs * attempt));
    }
  }
}

/**
 * Runs `work` (statements of `trx`) in a savepoint: when it fails, its writes are undone and its locks given
 * up, and whatever came before in the transaction stays.
 */
export async function inSavepoint<T>(trx: Db, name: string, work: () => Promise<T>): Promise<T> {
  const savepoint = sql.id(name);
  await sql`savepoint ${savepoint}`.execute(trx);
  try {
    const result = await work();
    await sql`release savepoint ${savepoint}`.execute(trx);
    return result;
  } catch (err) {
    await sql`rollback to savepoint ${savepoint}`.execute(trx);
    await sql`release savepoint ${savepoint}`.execute(trx);
    throw err;
  }
}

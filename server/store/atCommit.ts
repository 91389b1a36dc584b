import type { CompiledQuery } from "kysely";
import type { Db } from "./schema.js";

/** A statement marked to run at its transaction's commit (runAtCommit). */
interface AtCommitQuery extends CompiledQuery {
  readonly runAtCommit: true;
}

/**
 * Runs `compiled`, a write whose answer the transaction does not read, as part of `trx` by the time it
 * commits. On PostgreSQL inside a transaction it is held back and written with whatever the transaction
 * sends next, usually its `commit`, so the two cost one round trip (pgStatements.ts); if it fails, the
 * transaction fails with its error when that is sent. Anywhere else it runs at once. Either way, any
 * statement the transaction runs after it sees its write. The promise resolves once it is sent or held.
 */
export async function runAtCommit(trx: Db, compiled: CompiledQuery): Promise<void> {
  const marked: AtCommitQuery = { ...compiled, runAtCommit: true };
  await trx.executeQuery(marked);
}

/** Whether the store's driver may hold `compiled` back until its transaction's next statement. */
export function isAtCommit(compiled: CompiledQuery): boolean {
  return (compiled as Partial<AtCommitQuery>).runAtCommit === true;
}

import { isoAt } from "../../shared/time.js";
import type { Db, Store } from "./database.js";
import { fixedQuery } from "./fixedQuery.js";
import { writeOne } from "./writeOne.js";

/**
 * The sandbox processor's memory (idempotency keys, refunds) in the database, so that every server process
 * sharing it sees the same charges and refunds, across restarts too. Entries without a time to live keep
 * a far-future expiry, so one text comparison decides whether any entry is live.
 */

/** The latest time `toISOString` writes with a four-digit year, which keeps ISO text in time order. */
const FOREVER_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const iso = (ms: number) => isoAt(Math.min(ms, FOREVER_MS));

/** One statement: insert, or take over an entry that has expired; a live entry is left alone. */
const putUnlessLive = fixedQuery((db: Db, key: string, value: string, expiresAt: string, nowIso: string) =>
  db
    .insertInto("processor_ledger")
    .values({ key, value, expires_at: expiresAt })
    .onConflict((oc) =>
      oc
        .column("key")
        .doUpdateSet((eb) => ({
          value: eb.ref("excluded.value"),
          expires_at: eb.ref("excluded.expires_at"),
        }))
        .where("processor_ledger.expires_at", "<=", nowIso),
    )
    .returning("value"),
);

export class DatabaseLedger {
  constructor(
    private readonly store: Pick<Store, "db" | "dialect" | "transact">,
    private readonly now: () => number,
  ) {}

  async get(key: string): Promise<string | undefined> {
    const row = await this.store.db
      .selectFrom("processor_ledger")
      .select("value")
      .where("key", "=", key)
      .where("expires_at", ">", iso(this.now()))
      .executeTakeFirst();
    return row?.value;
  }

  async putIfAbsent(key: string, value: string, ttlMs?: number): Promise<string> {
    if (ttlMs !== undefined && !(ttlMs >= 0))
      throw new RangeError(`ttlMs must be a non-negative number, not ${ttlMs}`);
    // Each attempt is one statement (grouped with the checkouts' own writes on SQLite); a live entry found
    // instead is read after it, and one pruned in between is simply tried again.
    for (;;) {
      const nowMs = this.now();
      const nowIso = iso(nowMs);
      const expires = ttlMs === undefined ? iso(FOREVER_MS) : iso(nowMs + ttlMs);
      const {
        rows: [written],
      } = await writeOne(this.store, (db) => putUnlessLive(db, key, value, expires, nowIso));
      if (written) return written.value;
      const kept = await this.store.db
        .selectFrom("processor_ledger")
        .select("value")
        .where("key", "=", key)
        .executeTakeFirst();
      if (kept) return kept.value;
    }
  }
}

/** Deletes expired entries; returns how many. */
export async function pruneLedger(db: Db, nowMs: number): Promise<number> {
  const result = await db
    .deleteFrom("processor_ledger")
    .where("expires_at", "<=", iso(nowMs))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

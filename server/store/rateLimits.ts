import { sql } from "kysely";
import type { Db } from "./database.js";

/**
 * A rolling one-hour request budget per API key, kept in the database so that every server process
 * shares it. Requests are counted in one-minute buckets; a request's place in the window is the
 * atomic count of its own bucket plus the sum of the 59 buckets before it.
 */

const WINDOW_MINUTES = 60;

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds at which the oldest counted request leaves the window. */
  reset: number;
  retryAfterSeconds: number;
}

/** Requests counted in the window's earlier minutes, and the oldest of those minutes. */
interface PastBuckets {
  total: number;
  oldest: number | null;
}

/** Sums of past buckets never change once their minute is over, so each process may remember them. */
const pastCache = new Map<string, PastBuckets>();

async function pastBuckets(db: Db, keyId: string, bucket: number): Promise<PastBuckets> {
  const cacheKey = `${keyId}:${bucket}`;
  const cached = pastCache.get(cacheKey);
  if (cached) return cached;
  const row = await db
    .selectFrom("rate_limit_buckets")
    .select([sql<number | null>`sum(count)`.as("total"), sql<number | null>`min(bucket)`.as("oldest")])
    .where("key_id", "=", keyId)
    .where("bucket", ">", bucket - WINDOW_MINUTES)
    .where("bucket", "<", bucket)
    .where("count", ">", 0)
    .executeTakeFirst();
  const value = { total: Number(row?.total ?? 0), oldest: row?.oldest == null ? null : Number(row.oldest) };
  if (pastCache.size > 10_000) pastCache.clear();
  pastCache.set(cacheKey, value);
  return value;
}

interface PendingHit {
  keyId: string;
  bucket: number;
  limit: number;
  nowMs: number;
  resolve(result: RateLimitResult): void;
  reject(err: unknown): void;
}

/**
 * Counts requests in groups: every hit that arrives before the event loop next gets round to it joins one
 * write per key and minute (`count + n`), instead of one write each. The database stays the only tally,
 * so processes sharing it still share one exact budget; the n hits of a group take the n positions the
 * write returned, in arrival order, exactly as n single writes would have.
 */
class RateLimitBatcher {
  private pending: PendingHit[] = [];
  private scheduled = false;

  constructor(private readonly db: Db) {}

  hit(keyId: string, limit: number, nowMs: number): Promise<RateLimitResult> {
    return new Promise<RateLimitResult>((resolve, reject) => {
      this.pending.push({ keyId, bucket: Math.floor(nowMs / 60_000), limit, nowMs, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    const hits = this.pending;
    this.pending = [];
    this.scheduled = false;
    const groups = new Map<string, PendingHit[]>();
    for (const hit of hits) {
      const id = `${hit.keyId}\u0000${hit.bucket}`;
      const group = groups.get(id);
      if (group) group.push(hit);
      else groups.set(id, [hit]);
    }
    // One order for every process, so that two transactions never wait on each other's rows in turn.
    const ordered = [...groups.values()].sort((a, b) =>
      a[0].keyId === b[0].keyId ? a[0].bucket - b[0].bucket : a[0].keyId < b[0].keyId ? -1 : 1,
    );
    let settled: RateLimitResult[][];
    try {
      // Past minutes are read before any write: a SQLite transaction that reads first and writes second
      // fails at once (SQLITE_BUSY) when another process has written meanwhile, without waiting its turn.
      const pasts: PastBuckets[] = [];
      for (const group of ordered) pasts.push(await pastBuckets(this.db, group[0].keyId, group[0].bucket));
      settled =
        ordered.length === 1
          ? [await countGroup(this.db, ordered[0], pasts[0])]
          : await this.db.transaction().execute(async (trx) => {
              const out: RateLimitResult[][] = [];
              for (const [g, group] of ordered.entries()) out.push(await countGroup(trx, group, pasts[g]));
              return out;
            });
    } catch (err) {
      for (const hit of hits) hit.reject(err);
      return;
    }
    // Settled only once counted for good (after the commit when there were several groups).
    for (const [g, group] of ordered.entries())
      for (const [i, hit] of group.entries()) hit.resolve(settled[g][i]);
  }
}

/** Adds a group of hits (one key, one minute) to its bucket; each hit's result, from its own place. */
async function countGroup(db: Db, group: PendingHit[], past: PastBuckets): Promise<RateLimitResult[]> {
  const { keyId, bucket } = group[0];
  const row = await db
    .insertInto("rate_limit_buckets")
    .values({ key_id: keyId, bucket, count: group.length })
    .onConflict((oc) =>
      oc
        .columns(["key_id", "bucket"])
        .doUpdateSet({ count: sql`rate_limit_buckets.count + ${group.length}` }),
    )
    .returning("count")
    .executeTakeFirstOrThrow();
  const first = past.total + Number(row.count) - group.length + 1;
  const reset = ((past.oldest ?? bucket) + WINDOW_MINUTES) * 60;
  const results = group.map((hit, i) => {
    const position = first + i;
    return {
      allowed: position <= hit.limit,
      limit: hit.limit,
      remaining: Math.max(0, hit.limit - position),
      reset,
      retryAfterSeconds: Math.max(1, reset - Math.floor(hit.nowMs / 1000)),
    };
  });
  // A refused request does not use up the budget.
  const refused = results.filter((r) => !r.allowed).length;
  if (refused > 0)
    await db
      .updateTable("rate_limit_buckets")
      .set({ count: sql`count - ${refused}` })
      .where("key_id", "=", keyId)
      .where("bucket", "=", bucket)
      .execute();
  return results;
}

const batchers = new WeakMap<Db, RateLimitBatcher>();

/** Counts one request against `keyId`'s rolling hour and says whether it is within `limit`. */
export function hitRateLimit(db: Db, keyId: string, limit: number, nowMs: number): Promise<RateLimitResult> {
  let batcher = batchers.get(db);
  if (!batcher) {
    batcher = new RateLimitBatcher(db);
    batchers.set(db, batcher);
  }
  return batcher.hit(keyId, limit, nowMs);
}

export async function pruneRateLimits(db: Db, nowMs: number): Promise<void> {
  const bucket = Math.floor(nowMs / 60_000);
  await db
    .deleteFrom("rate_limit_buckets")
    .where("bucket", "<=", bucket - WINDOW_MINUTES * 2)
    .execute();
}

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

/** Sums of past buckets never change once their minute is over, so each process may remember them. */
const pastCache = new Map<string, { total: number; oldest: number | null }>();

async function pastBuckets(db: Db, keyId: string, bucket: number) {
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

export async function hitRateLimit(
  db: Db,
  keyId: string,
  limit: number,
  nowMs: number,
): Promise<RateLimitResult> {
  const bucket = Math.floor(nowMs / 60_000);
  const past = await pastBuckets(db, keyId, bucket);
  const row = await db
    .insertInto("rate_limit_buckets")
    .values({ key_id: keyId, bucket, count: 1 })
    .onConflict((oc) =>
      oc.columns(["key_id", "bucket"]).doUpdateSet({ count: sql`rate_limit_buckets.count + 1` }),
    )
    .returning("count")
    .executeTakeFirstOrThrow();
  const position = past.total + Number(row.count);
  const oldest = past.oldest ?? bucket;
  const reset = (oldest + WINDOW_MINUTES) * 60;
  const allowed = position <= limit;
  if (!allowed) {
    // A refused request does not use up the budget.
    await db
      .updateTable("rate_limit_buckets")
      .set({ count: sql`count - 1` })
      .where("key_id", "=", keyId)
      .where("bucket", "=", bucket)
      .execute();
  }
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - position),
    reset,
    retryAfterSeconds: Math.max(1, reset - Math.floor(nowMs / 1000)),
  };
}

export async function pruneRateLimits(db: Db, nowMs: number): Promise<void> {
  const bucket = Math.floor(nowMs / 60_000);
  await db
    .deleteFrom("rate_limit_buckets")
    .where("bucket", "<=", bucket - WINDOW_MINUTES * 2)
    .execute();
}

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
 * Places in a key's current minute that this process has already counted in the database and hands out
 * without another write. A lease is taken only while plenty of the budget is left (at most 1/32 of what
 * remained, and never more than MAX_LEASE places), lasts LEASE_MS at most and never outlives its minute;
 * its unused places are then given back. Near the limit every request is counted on its own.
 */
interface Lease {
  bucket: number;
  limit: number;
  /** The next position to hand out, and the first one past the lease. */
  next: number;
  end: number;
  reset: number;
  /** performance.now() when it was taken. */
  takenAt: number;
}

const MAX_LEASE = 64;
const LEASE_SHARE = 32;
const LEASE_MS = 1000;

/** What a request's place in the window means for it. */
function resultAt(position: number, limit: number, reset: number, nowMs: number): RateLimitResult {
  return {
    allowed: position <= limit,
    limit,
    remaining: Math.max(0, limit - position),
    reset,
    retryAfterSeconds: Math.max(1, reset - Math.floor(nowMs / 1000)),
  };
}

/**
 * Counts requests in groups: every hit that arrives before the event loop next gets round to it joins one
 * write per key and minute (`count + n`), instead of one write each, and that write may also take a lease
 * of places for the key's next requests. The database stays the only tally, so processes sharing it still
 * share one budget; the n hits of a group take the n positions the write returned, in arrival order,
 * exactly as n single writes would have.
 */
class RateLimitBatcher {
  private pending: PendingHit[] = [];
  private scheduled = false;
  private readonly leases = new Map<string, Lease>();
  /** Remaining budget per key as of its last write: how large a lease may be. */
  private readonly lastRemaining = new Map<string, number>();
  /** Unused places of ended leases, given back at the next write. */
  private returns: { keyId: string; bucket: number; count: number }[] = [];
  private sweeper: NodeJS.Timeout | null = null;

  constructor(private readonly db: Db) {}

  hit(keyId: string, limit: number, nowMs: number): RateLimitResult | Promise<RateLimitResult> {
    const bucket = Math.floor(nowMs / 60_000);
    const lease = this.leases.get(keyId);
    if (lease) {
      if (lease.bucket === bucket && lease.limit === limit && performance.now() - lease.takenAt < LEASE_MS) {
        const position = lease.next++;
        if (lease.next >= lease.end) this.leases.delete(keyId);
        return resultAt(position, limit, lease.reset, nowMs);
      }
      this.endLease(keyId, lease);
    }
    return new Promise<RateLimitResult>((resolve, reject) => {
      this.pending.push({ keyId, bucket, limit, nowMs, resolve, reject });
      this.schedule();
    });
  }

  /** Gives back every lease's unused places now (at shutdown). */
  async release(): Promise<void> {
    for (const [keyId, lease] of this.leases) this.endLease(keyId, lease);
    await this.flush();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  private endLease(keyId: string, lease: Lease): void {
    this.leases.delete(keyId);
    if (lease.end > lease.next)
      this.returns.push({ keyId, bucket: lease.bucket, count: lease.end - lease.next });
  }

  /** Ends leases past LEASE_MS while the process is idle, so their places are not held much longer. */
  private sweepSoon(): void {
    if (this.sweeper) return;
    this.sweeper = setTimeout(() => {
      this.sweeper = null;
      const now = performance.now();
      for (const [keyId, lease] of this.leases)
        if (now - lease.takenAt >= LEASE_MS) this.endLease(keyId, lease);
      if (this.returns.length) this.schedule();
      if (this.leases.size) this.sweepSoon();
    }, LEASE_MS / 4);
    this.sweeper.unref();
  }

  private async flush(): Promise<void> {
    const hits = this.pending;
    const returns = this.returns;
    this.pending = [];
    this.returns = [];
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
    let counted: Counted[];
    try {
      // Past minutes are read before any write: a SQLite transaction that reads first and writes second
      // fails at once (SQLITE_BUSY) when another process has written meanwhile, without waiting its turn.
      const pasts: PastBuckets[] = [];
      for (const group of ordered) pasts.push(await pastBuckets(this.db, group[0].keyId, group[0].bucket));
      const wanted = ordered.map((group) => this.leaseSize(group));
      const write = async (db: Db) => {
        for (const r of returns) await giveBack(db, r.keyId, r.bucket, r.count);
        const out: Counted[] = [];
        for (const [g, group] of ordered.entries())
          out.push(await countGroup(db, group, pasts[g], wanted[g]));
        return out;
      };
      counted =
        ordered.length + returns.length === 1
          ? await write(this.db)
          : await this.db.transaction().execute((trx) => write(trx));
    } catch (err) {
      for (const hit of hits) hit.reject(err);
      return;
    }
    // Settled only once counted for good (after the commit when there were several groups).
    for (const [g, group] of ordered.entries()) {
      const { results, lease, remaining } = counted[g];
      const { keyId, limit } = group[0];
      this.lastRemaining.set(keyId, remaining);
      if (lease) {
        const old = this.leases.get(keyId);
        if (old) this.endLease(keyId, old);
        this.leases.set(keyId, { ...lease, limit, takenAt: performance.now() });
        this.sweepSoon();
      }
      for (const [i, hit] of group.entries()) hit.resolve(results[i]);
    }
    if (this.returns.length) this.schedule();
  }

  /** Places to lease beyond the group's own: none until this process has seen the key's remaining budget. */
  private leaseSize(group: PendingHit[]): number {
    const remaining = this.lastRemaining.get(group[0].keyId);
    if (remaining === undefined) return 0;
    return Math.min(MAX_LEASE, Math.floor((remaining - group.length) / LEASE_SHARE));
  }
}

interface Counted {
  results: RateLimitResult[];
  lease: { bucket: number; next: number; end: number; reset: number } | null;
  /** The key's remaining budget after this write. */
  remaining: number;
}

async function giveBack(db: Db, keyId: string, bucket: number, count: number): Promise<void> {
  await db
    .updateTable("rate_limit_buckets")
    .set({ count: sql`count - ${count}` })
    .where("key_id", "=", keyId)
    .where("bucket", "=", bucket)
    .execute();
}

/**
 * Adds a group of hits (one key, one minute) and `extra` leased places to its bucket; each hit's result,
 * from its own place, and the lease of the places after them that are within the limit.
 */
async function countGroup(db: Db, group: PendingHit[], past: PastBuckets, extra: number): Promise<Counted> {
  const { keyId, bucket, limit } = group[0];
  const taken = group.length + Math.max(0, extra);
  const row = await db
    .insertInto("rate_limit_buckets")
    .values({ key_id: keyId, bucket, count: taken })
    .onConflict((oc) =>
      oc.columns(["key_id", "bucket"]).doUpdateSet({ count: sql`rate_limit_buckets.count + ${taken}` }),
    )
    .returning("count")
    .executeTakeFirstOrThrow();
  const first = past.total + Number(row.count) - taken + 1;
  const reset = ((past.oldest ?? bucket) + WINDOW_MINUTES) * 60;
  const results = group.map((hit, i) => resultAt(first + i, limit, reset, hit.nowMs));
  // Places past the limit (refused hits, leased places beyond it) do not use up the budget.
  const kept = Math.max(0, Math.min(taken, limit - first + 1));
  if (kept < taken) await giveBack(db, keyId, bucket, taken - kept);
  return {
    results,
    lease: kept > group.length ? { bucket, next: first + group.length, end: first + kept, reset } : null,
    remaining: kept > 0 ? limit - (first + kept - 1) : 0,
  };
}

const batchers = new WeakMap<Db, RateLimitBatcher>();

/**
 * Counts one request against `keyId`'s rolling hour and says whether it is within `limit`: at once when
 * a lease of this process covers it, else once the database has counted it.
 */
export function hitRateLimit(
  db: Db,
  keyId: string,
  limit: number,
  nowMs: number,
): RateLimitResult | Promise<RateLimitResult> {
  let batcher = batchers.get(db);
  if (!batcher) {
    batcher = new RateLimitBatcher(db);
    batchers.set(db, batcher);
  }
  return batcher.hit(keyId, limit, nowMs);
}

/** Gives back the unused places of this process's leases (before the store closes). */
export async function releaseRateLimitLeases(db: Db): Promise<void> {
  await batchers.get(db)?.release();
}

export async function pruneRateLimits(db: Db, nowMs: number): Promise<void> {
  const bucket = Math.floor(nowMs / 60_000);
  await db
    .deleteFrom("rate_limit_buckets")
    .where("bucket", "<=", bucket - WINDOW_MINUTES * 2)
    .execute();
}

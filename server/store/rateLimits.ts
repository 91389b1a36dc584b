import { sql } from "kysely";
import { fixedQuery } from "./fixedQuery.js";
import type { Db } from "./schema.js";

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

/**
 * Sums of past buckets stop changing a few seconds into the next minute (once every process has given
 * back its leases of the minute before, see Lease), so each process may remember them from then on.
 */
const PAST_SETTLED_MS = 5000;
/** Remembered sums at most (per store). */
const MAX_PAST = 10_000;

async function pastBuckets(
  db: Db,
  remembered: Map<string, PastBuckets>,
  keyId: string,
  bucket: number,
  nowMs: number,
): Promise<PastBuckets> {
  const cacheKey = `${keyId}:${bucket}`;
  const cached = remembered.get(cacheKey);
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
  if (nowMs - bucket * 60_000 < PAST_SETTLED_MS) return value;
  if (remembered.size > MAX_PAST) remembered.clear();
  remembered.set(cacheKey, value);
  return value;
}

interface PendingHit {
  nowMs: number;
  resolve(result: RateLimitResult): void;
  reject(err: unknown): void;
}

/** What one write counts for one key and minute: the hits waiting, and whether to lease places too. */
interface Group {
  keyId: string;
  bucket: number;
  /** The clock when the group was begun. */
  nowMs: number;
  limit: number;
  hits: PendingHit[];
  lease: boolean;
}

/**
 * Places in a key's current minute that this process has already counted in the database and hands out
 * without another write. Places are leased only while plenty of the budget is left (at most 1/32 of what
 * remained, and never more than MAX_LEASE at a time), and more are leased when half are used, so that a
 * busy key rarely waits on a write. A lease lasts LEASE_MS at most and never outlives its minute; its
 * unused places are then given back. Near the limit every request is counted on its own.
 */
interface Lease {
  bucket: number;
  limit: number;
  reset: number;
  /** Leased positions, [first, past the last), handed out in order. */
  ranges: [number, number][];
  /** performance.now() when it was taken. */
  takenAt: number;
  refilling: boolean;
}

const MAX_LEASE = 256;
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

const leftIn = (lease: Lease) => lease.ranges.reduce((n, [from, to]) => n + to - from, 0);

/**
 * A store's rate limits (the store owns one: database.ts), counting requests in groups: every hit that
 * arrives before the event loop next gets round to it joins one write per key and minute (`count + n`),
 * instead of one write each, and that write may also lease places for the key's next requests. The
 * database stays the only tally, so processes sharing it still share one budget; the n hits of a group
 * take the n positions the write returned, in arrival order, exactly as n single writes would have.
 */
export class RateLimits {
  private pending = new Map<string, Group>();
  private scheduled = false;
  private flushing = false;
  private flight: Promise<void> = Promise.resolve();
  private readonly leases = new Map<string, Lease>();
  /** Remaining budget per key as of its last write: how large a lease may be. */
  private readonly lastRemaining = new Map<string, number>();
  /** Unused places of ended leases, given back at the next write. */
  private returns: { keyId: string; bucket: number; count: number }[] = [];
  private sweeper: NodeJS.Timeout | null = null;
  /** Set by release(): no more leases (the store is closing). */
  private releasing = false;
  /** Sums of settled past minutes (see PAST_SETTLED_MS). */
  private readonly past = new Map<string, PastBuckets>();

  constructor(private readonly db: Db) {}

  /**
   * Counts one request against `keyId`'s rolling hour and says whether it is within `limit`: at once when
   * a lease of this process covers it, else once the database has counted it.
   */
  hit(keyId: string, limit: number, nowMs: number): RateLimitResult | Promise<RateLimitResult> {
    const leased = this.fromLease(keyId, limit, nowMs);
    if (leased) return leased;
    return new Promise<RateLimitResult>((resolve, reject) => {
      this.group(keyId, nowMs, limit).hits.push({ nowMs, resolve, reject });
      this.schedule();
    });
  }

  /** A place from this process's lease of `keyId`, or undefined (nothing is counted then). */
  fromLease(keyId: string, limit: number, nowMs: number): RateLimitResult | undefined {
    const lease = this.leases.get(keyId);
    if (!lease) return undefined;
    const bucket = Math.floor(nowMs / 60_000);
    if (lease.bucket !== bucket || lease.limit !== limit || performance.now() - lease.takenAt >= LEASE_MS) {
      this.endLease(keyId, lease);
      return undefined;
    }
    const range = lease.ranges[0];
    const position = range[0]++;
    if (range[0] >= range[1]) lease.ranges.shift();
    const left = leftIn(lease);
    if (left === 0) this.leases.delete(keyId);
    if (!lease.refilling && left * 2 < MAX_LEASE) {
      lease.refilling = true;
      this.group(keyId, nowMs, limit).lease = true;
      this.schedule();
    }
    return resultAt(position, limit, lease.reset, nowMs);
  }

  /** Gives back every lease's unused places now (at shutdown). */
  async release(): Promise<void> {
    this.releasing = true;
    await this.flight;
    for (const [keyId, lease] of this.leases) this.endLease(keyId, lease);
    await this.flush();
  }

  private group(keyId: string, nowMs: number, limit: number): Group {
    const bucket = Math.floor(nowMs / 60_000);
    const id = `${keyId}\u0000${bucket}`;
    let group = this.pending.get(id);
    if (!group) {
      group = { keyId, bucket, nowMs, limit, hits: [], lease: false };
      this.pending.set(id, group);
    }
    return group;
  }

  /** One write at a time: what arrives meanwhile waits for the next (see flush). */
  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  /**
   * Hits that waited while a write was under way take places from a lease it brought, in arrival order,
   * before any later write: so one process hands out positions in order (Remaining counts down).
   */
  private serveWaiting(): void {
    for (const [id, group] of this.pending) {
      while (group.hits.length) {
        const place = this.fromLease(group.keyId, group.limit, group.hits[0].nowMs);
        if (!place) break;
        group.hits.shift()?.resolve(place);
      }
      if (!group.hits.length && !group.lease) this.pending.delete(id);
    }
  }

  private endLease(keyId: string, lease: Lease): void {
    if (this.leases.get(keyId) === lease) this.leases.delete(keyId);
    const count = leftIn(lease);
    lease.ranges = [];
    if (count > 0) this.returns.push({ keyId, bucket: lease.bucket, count });
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

  private flush(): Promise<void> {
    if (this.flushing) return this.flight.then(() => this.flush());
    this.flushing = true;
    this.flight = this.write().finally(() => {
      this.flushing = false;
      this.serveWaiting();
      if (this.pending.size || this.returns.length) this.schedule();
    });
    return this.flight;
  }

  private async write(): Promise<void> {
    const returns = this.returns;
    // One order for every process, so that two transactions never wait on each other's rows in turn.
    const groups = [...this.pending.values()].sort((a, b) =>
      a.keyId === b.keyId ? a.bucket - b.bucket : a.keyId < b.keyId ? -1 : 1,
    );
    this.pending = new Map();
    this.returns = [];
    this.scheduled = false;
    let counted: Counted[];
    try {
      // Given back first, so that the past minutes read next no longer count those places.
      if (returns.length)
        await this.db.transaction().execute(async (trx) => {
          for (const r of returns) await giveBack(trx, r.keyId, r.bucket, r.count);
        });
      // Past minutes are read before any write: a SQLite transaction that reads first and writes second
      // fails at once (SQLITE_BUSY) when another process has written meanwhile, without waiting its turn.
      const pasts: PastBuckets[] = [];
      for (const group of groups)
        pasts.push(await pastBuckets(this.db, this.past, group.keyId, group.bucket, group.nowMs));
      const extras = groups.map((group) => this.leaseSize(group));
      const write = async (db: Db) => {
        const out: Counted[] = [];
        for (const [g, group] of groups.entries()) out.push(await countGroup(db, group, pasts[g], extras[g]));
        return out;
      };
      counted =
        groups.length <= 1 ? await write(this.db) : await this.db.transaction().execute((trx) => write(trx));
    } catch (err) {
      for (const group of groups) {
        const lease = this.leases.get(group.keyId);
        if (lease) lease.refilling = false;
        for (const hit of group.hits) hit.reject(err);
      }
      return;
    }
    // Settled only once counted for good (after the commit when there were several groups).
    for (const [g, group] of groups.entries()) {
      const { results, leased, remaining } = counted[g];
      if (remaining !== null) this.lastRemaining.set(group.keyId, remaining);
      this.addLease(group, leased, counted[g].reset);
      for (const [i, hit] of group.hits.entries()) hit.resolve(results[i]);
    }
  }

  private addLease(group: Group, leased: [number, number] | null, reset: number): void {
    const lease = this.leases.get(group.keyId);
    const usable = lease && lease.bucket === group.bucket && lease.limit === group.limit;
    if (lease) lease.refilling = false;
    if (!leased) return;
    if (usable) lease.ranges.push(leased);
    else {
      if (lease) this.endLease(group.keyId, lease);
      const { bucket, limit } = group;
      this.leases.set(group.keyId, {
        bucket,
        limit,
        reset,
        ranges: [leased],
        takenAt: performance.now(),
        refilling: false,
      });
      this.sweepSoon();
    }
  }

  /**
   * Places to lease beyond the group's own: none unless asked for (a first hit with no lease, or a lease
   * half used) and until this process has seen the key's remaining budget.
   */
  private leaseSize(group: Group): number {
    const remaining = this.lastRemaining.get(group.keyId);
    const wanted = group.lease || !this.leases.has(group.keyId);
    if (remaining === undefined || !wanted || this.releasing) return 0;
    return Math.max(0, Math.min(MAX_LEASE, Math.floor((remaining - group.hits.length) / LEASE_SHARE)));
  }
}

interface Counted {
  results: RateLimitResult[];
  leased: [number, number] | null;
  reset: number;
  /** The key's remaining budget after this write (null when nothing was written). */
  remaining: number | null;
}

// The two writes of every lease, compiled once (fixedQuery.ts).
const giveBack = fixedQuery((db: Db, keyId: string, bucket: number, count: number) =>
  db
    .updateTable("rate_limit_buckets")
    .set({ count: sql`count - ${count}` })
    .where("key_id", "=", keyId)
    .where("bucket", "=", bucket),
);

const addToBucket = fixedQuery((db: Db, keyId: string, bucket: number, taken: number) =>
  db
    .insertInto("rate_limit_buckets")
    .values({ key_id: keyId, bucket, count: taken })
    .onConflict((oc) =>
      oc.columns(["key_id", "bucket"]).doUpdateSet({ count: sql`rate_limit_buckets.count + ${taken}` }),
    )
    .returning("count"),
);

/**
 * Adds a group's hits and `extra` leased places to its key's bucket; each hit's result, from its own
 * place, and the range of leased places after them that are within the limit.
 */
async function countGroup(db: Db, group: Group, past: PastBuckets, extra: number): Promise<Counted> {
  const { keyId, bucket, limit, hits } = group;
  const taken = hits.length + extra;
  if (taken === 0) return { results: [], leased: null, reset: 0, remaining: null };
  const [row] = (await addToBucket(db, keyId, bucket, taken)).rows;
  if (!row) throw new Error("the rate-limit bucket's upsert returned no row");
  const first = past.total + Number(row.count) - taken + 1;
  const reset = ((past.oldest ?? bucket) + WINDOW_MINUTES) * 60;
  const results = hits.map((hit, i) => resultAt(first + i, limit, reset, hit.nowMs));
  // Places past the limit (refused hits, leased places beyond it) do not use up the budget.
  const kept = Math.max(0, Math.min(taken, limit - first + 1));
  if (kept < taken) await giveBack(db, keyId, bucket, taken - kept);
  return {
    results,
    leased: kept > hits.length ? [first + hits.length, first + kept] : null,
    reset,
    remaining: kept > 0 ? limit - (first + kept - 1) : 0,
  };
}

export async function pruneRateLimits(db: Db, nowMs: number): Promise<void> {
  const bucket = Math.floor(nowMs / 60_000);
  await db
    .deleteFrom("rate_limit_buckets")
    .where("bucket", "<=", bucket - WINDOW_MINUTES * 2)
    .execute();
}

/**
 * Events counted in the same one-minute buckets, without a limit of their own (failed promo codes): one
 * more now. `countInWindow` reads how many the rolling hour holds.
 */
export async function countEvent(db: Db, keyId: string, nowMs: number): Promise<void> {
  const bucket = Math.floor(nowMs / 60_000);
  await db
    .insertInto("rate_limit_buckets")
    .values({ key_id: keyId, bucket, count: 1 })
    .onConflict((oc) =>
      oc
        .columns(["key_id", "bucket"])
        .doUpdateSet((eb) => ({ count: eb("rate_limit_buckets.count", "+", 1) })),
    )
    .execute();
}

/** How many events `keyId` has in the rolling hour, and in how many seconds the oldest of them leaves it. */
export async function countInWindow(
  db: Db,
  keyId: string,
  nowMs: number,
): Promise<{ count: number; retryAfterSeconds: number }> {
  const bucket = Math.floor(nowMs / 60_000);
  const row = await db
    .selectFrom("rate_limit_buckets")
    .select([sql<number | null>`sum(count)`.as("total"), sql<number | null>`min(bucket)`.as("oldest")])
    .where("key_id", "=", keyId)
    .where("bucket", ">", bucket - WINDOW_MINUTES)
    .where("count", ">", 0)
    .executeTakeFirst();
  const oldest = row?.oldest == null ? bucket : Number(row.oldest);
  const leaves = (oldest + WINDOW_MINUTES) * 60_000;
  return {
    count: Number(row?.total ?? 0),
    retryAfterSeconds: Math.max(1, Math.ceil((leaves - nowMs) / 1000)),
  };
}

import type { CachedTable, ChangeFeed } from "./changes.js";

/**
 * Copies of rows one table holds, kept while the change feed says the table has not changed. A value is
 * stored only when no write to the table happened while it was being read, so a read that raced a write
 * is used once and not kept. Values are shared between requests: callers must not modify them.
 */
export class ReadCache<V> {
  private readonly entries = new Map<string, { value: V; version: number }>();

  constructor(
    private readonly changes: ChangeFeed,
    private readonly table: string,
    private readonly maxEntries = 10_000,
  ) {}

  /** The value kept for `key` if it is still current; never reads the database. */
  peek(key: string): V | undefined {
    const hit = this.entries.get(key);
    return hit && hit.version === this.changes.version(this.table) ? hit.value : undefined;
  }

  async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const version = this.changes.version(this.table);
    const hit = this.entries.get(key);
    if (hit && hit.version === version) return hit.value;
    const value = await load();
    if (value === undefined) {
      this.entries.delete(key);
      return value;
    }
    if (this.changes.version(this.table) === version) {
      if (this.entries.size >= this.maxEntries && !this.entries.has(key)) this.entries.clear();
      this.entries.set(key, { value: FREEZE ? deepFreeze(value) : value, version });
    }
    return value;
  }
}

/** Outside production, kept values are frozen, so that code modifying a shared record fails its tests. */
const FREEZE = process.env.NODE_ENV !== "production";

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
  return value;
}

/**
 * A store's read caches, one per cached table, made on first use. Owned by the store (database.ts), so
 * that two stores in one process never share a kept row.
 */
export class ReadCaches {
  private readonly caches = new Map<CachedTable, ReadCache<unknown>>();

  constructor(private readonly changes: ChangeFeed) {}

  /** The cache of `table`'s rows; every caller of one table keeps the same kind of value. */
  of<V>(table: CachedTable): ReadCache<V> {
    let cache = this.caches.get(table);
    if (!cache) {
      cache = new ReadCache<unknown>(this.changes, table);
      this.caches.set(table, cache);
    }
    return cache as ReadCache<V>;
  }
}

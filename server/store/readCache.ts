import type { ChangeFeed } from "./changes.js";

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

/** One cache per store and purpose, made on first use. */
export function cacheFor<S extends object, V>(
  caches: WeakMap<S, ReadCache<V>>,
  store: S,
  make: () => ReadCache<V>,
): ReadCache<V> {
  let cache = caches.get(store);
  if (!cache) {
    cache = make();
    caches.set(store, cache);
  }
  return cache;
}

/**
 * What the sandbox processor remembers: idempotency keys (24 h, as Stripe) and refunds. `putIfAbsent` is
 * atomic: the first writer wins and everyone gets its value. The database ledger (`store/processorLedger.ts`, a table that fits this shape)
 * shares it between processes; the one here is per process.
 */
export interface SandboxLedger {
  get(key: string): Promise<string | undefined>;
  putIfAbsent(key: string, value: string, ttlMs?: number): Promise<string>;
}

/** The default ledger: a Map with expiry, swept now and then. Per process. */
export function memoryLedger(now: () => number = Date.now): SandboxLedger {
  const entries = new Map<string, { value: string; expiresAt: number }>();
  let writes = 0;
  const live = (key: string) => {
    const entry = entries.get(key);
    if (entry && entry.expiresAt <= now()) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };
  return {
    async get(key) {
      return live(key)?.value;
    },
    async putIfAbsent(key, value, ttlMs) {
      const existing = live(key);
      if (existing) return existing.value;
      entries.set(key, { value, expiresAt: ttlMs === undefined ? Number.POSITIVE_INFINITY : now() + ttlMs });
      if (++writes % 1000 === 0) for (const k of [...entries.keys()]) live(k);
      return value;
    },
  };
}

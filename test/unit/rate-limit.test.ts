import { describe, expect, it } from "vitest";
import type { Store } from "../../server/store/database.js";
import { freshStoreForEachTest } from "../support/freshStore.js";
import type { TestDatabase } from "../support/testApp.js";

/**
 * The shared rate-limit tally counts hits that arrive together in one write per key; each hit must still
 * get the place in the window it would have had alone, and refused hits must not use up the budget.
 */

let database: TestDatabase;
let store: Store;
const NOW = Date.UTC(2026, 10, 23, 12, 30, 15);

freshStoreForEachTest((opened, fresh) => {
  store = opened;
  database = fresh;
});

async function storedCount(keyId: string): Promise<number> {
  const rows = await store.db
    .selectFrom("rate_limit_buckets")
    .select("count")
    .where("key_id", "=", keyId)
    .execute();
  return rows.reduce((n, r) => n + Number(r.count), 0);
}

describe("rate limits, many hits at once", () => {
  it("admits exactly the limit out of 30 simultaneous hits, each with its own Remaining, and stores only those", async () => {
    const results = await Promise.all(
      Array.from({ length: 30 }, () => store.rateLimits.hit("key_a", 20, NOW)),
    );
    const allowed = results.filter((r) => r.allowed);
    expect(allowed).toHaveLength(20);
    expect(allowed.map((r) => r.remaining).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, i) => i),
    );
    for (const r of results.filter((r) => !r.allowed)) {
      expect(r.remaining).toBe(0);
      expect(r.retryAfterSeconds).toBeGreaterThan(0);
    }
    expect(await storedCount("key_a")).toBe(20);
    // The budget is spent: a later hit is refused, and still not counted.
    expect((await store.rateLimits.hit("key_a", 20, NOW + 1000)).allowed).toBe(false);
    expect(await storedCount("key_a")).toBe(20);
  });

  it("keeps keys apart when their hits arrive together", async () => {
    const keys = ["key_b", "key_c", "key_d"];
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => store.rateLimits.hit(keys[i % 3], 3, NOW)),
    );
    for (const [k, key] of keys.entries()) {
      const mine = results.filter((_, i) => i % 3 === k);
      expect(mine.map((r) => r.allowed)).toEqual([true, true, true, false]);
      expect(mine.map((r) => r.remaining)).toEqual([2, 1, 0, 0]);
      expect(await storedCount(key)).toBe(3);
    }
  });

  it("counts hits of earlier minutes of the hour in each hit's place", async () => {
    await Promise.all(Array.from({ length: 4 }, () => store.rateLimits.hit("key_e", 10, NOW - 120_000)));
    const results = await Promise.all(
      Array.from({ length: 8 }, () => store.rateLimits.hit("key_e", 10, NOW)),
    );
    expect(results.map((r) => r.remaining)).toEqual([5, 4, 3, 2, 1, 0, 0, 0]);
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true, true, false, false]);
    // Reset is when the oldest counted minute leaves the hour.
    const oldestMinute = Math.floor((NOW - 120_000) / 60_000);
    expect(results[0].reset).toBe((oldestMinute + 60) * 60);
  });
});

describe("rate limits, leases far from the limit", () => {
  async function hits(on: Store, keyId: string, limit: number, n: number) {
    const out = [];
    for (let i = 0; i < n; i++) out.push(await on.rateLimits.hit(keyId, limit, NOW));
    return out;
  }

  it("counts down one by one while most hits are answered from a lease, and stores exactly the hits once released", async () => {
    const results = await hits(store, "key_l", 1000, 200);
    expect(results.every((r) => r.allowed)).toBe(true);
    expect(results.map((r) => r.remaining)).toEqual(Array.from({ length: 200 }, (_, i) => 999 - i));
    // The tally includes the places leased ahead of use...
    expect(await storedCount("key_l")).toBeGreaterThan(200);
    // ...and only the used ones once the lease is given back.
    await store.rateLimits.release();
    expect(await storedCount("key_l")).toBe(200);
    expect((await store.rateLimits.hit("key_l", 1000, NOW)).remaining).toBe(799);
  });

  it("hands out places in order while more are being leased: one after another, Remaining falls by one", async () => {
    // Small leases (a few places each), so that hits often find the lease empty while the next one is
    // being written (on PostgreSQL, where writes take a round trip).
    const remaining: number[] = [];
    for (let i = 0; i < 150; i++) {
      remaining.push((await store.rateLimits.hit("key_p", 200, NOW)).remaining);
      await new Promise((r) => setImmediate(r));
    }
    expect(remaining).toEqual(Array.from({ length: 150 }, (_, i) => 199 - i));
  });

  it("admits exactly the limit, one after another, and never leases past it", async () => {
    const results = await hits(store, "key_m", 300, 320);
    expect(results.filter((r) => r.allowed)).toHaveLength(300);
    expect(results.slice(0, 300).every((r) => r.allowed)).toBe(true);
    expect(await storedCount("key_m")).toBe(300);
  });

  it("shares one budget between two processes taking turns: exactly the limit is admitted", async () => {
    const other = await database.open();
    try {
      let admitted = 0;
      for (let i = 0; i < 260; i++) {
        const on = i % 2 === 0 ? store : other;
        if ((await on.rateLimits.hit("key_n", 240, NOW)).allowed) admitted++;
      }
      expect(admitted).toBe(240);
      expect(await storedCount("key_n")).toBe(240);
    } finally {
      await other.close();
    }
  });

  it("gives a lease's unused places back about a second after it was taken, without further hits", async () => {
    await hits(store, "key_o", 1000, 5);
    expect(await storedCount("key_o")).toBeGreaterThan(5);
    // A second and a bit; a busy machine may run the sweep late, so look a few times.
    let count = 0;
    for (let i = 0; i < 20 && count !== 5; i++) {
      await new Promise((r) => setTimeout(r, 250));
      count = await storedCount("key_o");
    }
    expect(count).toBe(5);
  });
});

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ChargeInput, PaymentMethod } from "../../server/processors/port.js";
import { memoryLedger } from "../../server/processors/sandbox/ledger.js";
import { SandboxProcessor } from "../../server/processors/sandbox/processor.js";
import type { Store } from "../../server/store/database.js";
import { DatabaseLedger, pruneLedger } from "../../server/store/processorLedger.js";
import { freshDatabase, type TestDatabase } from "../support/testApp.js";

const SECRET = "test-secret-0123456789abcdef";
const START = Date.UTC(2026, 3, 15, 18, 32, 0);
const DAY = 86_400_000;

let clock = START;
const now = () => clock;
let database: TestDatabase;
/** Two connections to one database, as two server processes would have. */
let one: Store;
let two: Store;

beforeEach(async () => {
  clock = START;
  database = await freshDatabase();
  one = await database.open();
  two = await database.open();
});

afterEach(async () => {
  await one.close();
  await two.close();
  await database.drop();
});

describe("database ledger", () => {
  it("keeps the first value written under a key", async () => {
    const ledger = new DatabaseLedger(one, now);
    expect(await ledger.get("k")).toBeUndefined();
    expect(await ledger.putIfAbsent("k", "first")).toBe("first");
    expect(await ledger.putIfAbsent("k", "second")).toBe("first");
    expect(await ledger.get("k")).toBe("first");
    expect(await new DatabaseLedger(two, now).get("k")).toBe("first");
    expect(await ledger.putIfAbsent("other", "x", DAY)).toBe("x");
  });

  it("gives all 50 concurrent writers of one key the same value, from either process", async () => {
    const ledgers = [new DatabaseLedger(one, now), new DatabaseLedger(two, now)];
    const values = Array.from({ length: 50 }, (_, i) => `value-${i}`);
    const results = await Promise.all(
      values.map((value, i) => ledgers[i % 2].putIfAbsent("race", value, i % 3 === 0 ? undefined : DAY)),
    );
    expect(new Set(results).size).toBe(1);
    expect(values).toContain(results[0]);
    expect(await ledgers[0].get("race")).toBe(results[0]);
    expect(await ledgers[1].get("race")).toBe(results[0]);
    const rows = await one.db.selectFrom("processor_ledger").selectAll().execute();
    expect(rows).toHaveLength(1);
  });

  it("forgets an entry when its time is up, and lets a new value take its place", async () => {
    const ledger = new DatabaseLedger(one, now);
    expect(await ledger.putIfAbsent("k", "old", 1000)).toBe("old");
    clock = START + 999;
    expect(await ledger.get("k")).toBe("old");
    expect(await ledger.putIfAbsent("k", "new", 1000)).toBe("old");
    clock = START + 1000;
    expect(await ledger.get("k")).toBeUndefined();
    expect(await ledger.putIfAbsent("k", "new", 1000)).toBe("new");
    expect(await ledger.get("k")).toBe("new");
    clock = START + 1999;
    expect(await ledger.putIfAbsent("k", "newer")).toBe("new");
    clock = START + 2000;
    expect(await ledger.putIfAbsent("k", "forever")).toBe("forever");
    clock = Date.UTC(9000, 0, 1);
    expect(await ledger.get("k")).toBe("forever");
    expect(await ledger.putIfAbsent("k", "later")).toBe("forever");
  });

  it("lets exactly one of many concurrent writers replace an expired entry", async () => {
    const ledgers = [new DatabaseLedger(one, now), new DatabaseLedger(two, now)];
    await ledgers[0].putIfAbsent("k", "stale", 10);
    clock = START + 10;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => ledgers[i % 2].putIfAbsent("k", `fresh-${i}`, DAY)),
    );
    expect(new Set(results).size).toBe(1);
    expect(results[0]).toMatch(/^fresh-\d+$/);
  });

  it("treats a zero time to live as already expired, and refuses a negative or NaN one", async () => {
    const ledger = new DatabaseLedger(one, now);
    expect(await ledger.putIfAbsent("k", "gone", 0)).toBe("gone");
    expect(await ledger.get("k")).toBeUndefined();
    expect(await ledger.putIfAbsent("k", "kept", Number.POSITIVE_INFINITY)).toBe("kept");
    clock = Date.UTC(9999, 0, 1);
    expect(await ledger.get("k")).toBe("kept");
    await expect(ledger.putIfAbsent("x", "v", -1)).rejects.toThrow(RangeError);
    await expect(ledger.putIfAbsent("x", "v", Number.NaN)).rejects.toThrow(RangeError);
  });

  it("prunes expired entries only", async () => {
    const ledger = new DatabaseLedger(one, now);
    await ledger.putIfAbsent("short", "a", 1000);
    await ledger.putIfAbsent("long", "b", DAY);
    await ledger.putIfAbsent("forever", "c");
    expect(await pruneLedger(one.db, START + 999)).toBe(0);
    expect(await pruneLedger(one.db, START + 1000)).toBe(1);
    expect(await pruneLedger(two.db, START + 2 * DAY)).toBe(1);
    const keys = await one.db.selectFrom("processor_ledger").select("key").execute();
    expect(keys.map((r) => r.key)).toEqual(["forever"]);
    clock = START + 2 * DAY;
    expect(await ledger.putIfAbsent("short", "again", 1000)).toBe("again");
  });
});

describe("the sandbox processor over a database ledger", () => {
  const card = {
    type: "card" as const,
    number: "4242424242424242",
    expMonth: 12,
    expYear: 2030,
    cvc: "123",
  };

  async function tokenize(p: SandboxProcessor): Promise<PaymentMethod> {
    const result = await p.createPaymentMethod(card);
    if (!result.ok) throw new Error(`tokenization failed: ${result.code}`);
    return result.method;
  }

  const chargeInput = (method: PaymentMethod, idempotencyKey: string): ChargeInput => ({
    amountCents: 2500,
    currency: "USD",
    paymentMethod: method.token,
    idempotencyKey,
    description: "Donation to Spring Appeal",
    offSession: false,
  });

  it("charges once for a key repeated in another process", async () => {
    const a = new SandboxProcessor({ secret: SECRET, now, ledger: new DatabaseLedger(one, now) });
    const b = new SandboxProcessor({ secret: SECRET, now, ledger: new DatabaseLedger(two, now) });
    const method = await tokenize(a);
    const first = await a.charge(chargeInput(method, "order-1"));
    expect(first.status).toBe("succeeded");
    const retried = await b.charge(chargeInput(method, "order-1"));
    expect(retried).toEqual(first);
    const other = await b.charge(chargeInput(method, "order-2"));
    expect(other.processorPaymentId).not.toBe(first.processorPaymentId);

    // Without a shared ledger the same retry would have been a second charge.
    const c = new SandboxProcessor({ secret: SECRET, now, ledger: memoryLedger(now) });
    expect((await c.charge(chargeInput(method, "order-1"))).processorPaymentId).not.toBe(
      first.processorPaymentId,
    );
  });

  it("charges once when both processes get the same key at the same time", async () => {
    const processors = [one, two].map(
      (store) => new SandboxProcessor({ secret: SECRET, now, ledger: new DatabaseLedger(store, now) }),
    );
    const method = await tokenize(processors[0]);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => processors[i % 2].charge(chargeInput(method, "order-race"))),
    );
    expect(new Set(results.map((r) => r.processorPaymentId)).size).toBe(1);
    expect(results[0].status).toBe("succeeded");
  });

  it("charges afresh once the key has expired after 24 hours", async () => {
    const a = new SandboxProcessor({ secret: SECRET, now, ledger: new DatabaseLedger(one, now) });
    const method = await tokenize(a);
    const first = await a.charge(chargeInput(method, "order-1"));
    clock = START + DAY - 1;
    expect((await a.charge(chargeInput(method, "order-1"))).processorPaymentId).toBe(
      first.processorPaymentId,
    );
    clock = START + DAY;
    expect((await a.charge(chargeInput(method, "order-1"))).processorPaymentId).not.toBe(
      first.processorPaymentId,
    );
  });

  it("shares refunds between processes, and never refunds more than was paid", async () => {
    const a = new SandboxProcessor({ secret: SECRET, now, ledger: new DatabaseLedger(one, now) });
    const b = new SandboxProcessor({ secret: SECRET, now, ledger: new DatabaseLedger(two, now) });
    const paid = await a.charge(chargeInput(await tokenize(a), "order-1"));
    const id = paid.processorPaymentId as string;
    const results = await Promise.all(
      [a, b, a, b].map((p) => p.refund({ processorPaymentId: id, amountCents: 1000 })),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(2);
    expect((await b.retrievePayment(id))?.refundedCents).toBe(2000);
    expect((await a.retrievePayment(id))?.refundedCents).toBe(2000);
  });
});

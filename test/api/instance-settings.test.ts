import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SandboxProcessor } from "../../server/processors/sandbox/processor.js";
import type { Store } from "../../server/store/database.js";
import { getOrCreateSetting, sandboxSecret } from "../../server/store/settings.js";
import { freshDatabase, type TestDatabase } from "../support/testApp.js";

let database: TestDatabase;
/** Two connections to one database, as two server processes would have. */
let one: Store;
let two: Store;

beforeEach(async () => {
  database = await freshDatabase();
  one = await database.open();
  two = await database.open();
});

afterEach(async () => {
  await one.close();
  await two.close();
  await database.drop();
});

describe("instance settings", () => {
  it("creates a value once and returns it from then on", async () => {
    let made = 0;
    const create = () => `value-${++made}`;
    expect(await getOrCreateSetting(one.db, "greeting", create)).toBe("value-1");
    expect(await getOrCreateSetting(one.db, "greeting", create)).toBe("value-1");
    expect(await getOrCreateSetting(two.db, "greeting", create)).toBe("value-1");
    expect(made).toBe(1);
    expect(await getOrCreateSetting(two.db, "other", create)).toBe("value-2");
  });

  it("gives every concurrent first caller, in either process, the same value", async () => {
    let made = 0;
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        getOrCreateSetting([one, two][i % 2].db, "race", () => `v${made++}`),
      ),
    );
    expect(new Set(results).size).toBe(1);
    expect(results[0]).toMatch(/^v\d+$/);
    const rows = await one.db.selectFrom("instance_settings").selectAll().where("key", "=", "race").execute();
    expect(rows).toEqual([{ key: "race", value: results[0] }]);
  });
});

describe("the sandbox secret", () => {
  it("is 32 random bytes in base64url, made once per database and shared by its processes", async () => {
    const [a, b, c] = await Promise.all([
      sandboxSecret(one.db),
      sandboxSecret(two.db),
      sandboxSecret(one.db),
    ]);
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a, "base64url")).toHaveLength(32);
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect(await sandboxSecret(two.db)).toBe(a);

    const elsewhere = await freshDatabase();
    const store = await elsewhere.open();
    try {
      expect(await sandboxSecret(store.db)).not.toBe(a);
    } finally {
      await store.close();
      await elsewhere.drop();
    }
  });

  it("lets a processor in one process read tokens made in another", async () => {
    const made = new SandboxProcessor({ secret: await sandboxSecret(one.db) });
    const read = new SandboxProcessor({ secret: await sandboxSecret(two.db) });
    const result = await made.createPaymentMethod({
      type: "card",
      number: "4242424242424242",
      expMonth: 12,
      expYear: 2030,
      cvc: "123",
    });
    if (!result.ok) throw new Error(result.code);
    expect(await read.retrievePaymentMethod(result.method.token)).toEqual(result.method);
  });
});

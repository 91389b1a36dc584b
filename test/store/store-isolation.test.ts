import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../server/store/database.js";
import { findFormCached, insertForm, peekForm } from "../../server/store/forms.js";
import { createApiKey, findKeyBySecretCached, peekKeyBySecret } from "../../server/store/keys.js";
import { createOrganization } from "../../server/store/organizations.js";
import type { Write } from "../../server/store/writes.js";
import { onDeliveriesQueued } from "../../server/webhooks/wake.js";
import { formSchema } from "../../shared/schemas/form.js";
import { dialect, freshDatabase, type TestDatabase, validForms } from "../support/testApp.js";

/**
 * Two stores in one process (two databases) share nothing this process keeps: read caches, rate-limit
 * leases and remembered sums, listeners to writes, compiled statement shapes.
 */

let databases: TestDatabase[];
let a: Store;
let b: Store;
beforeAll(async () => {
  databases = [await freshDatabase(), await freshDatabase()];
  [a, b] = await Promise.all(databases.map((d) => d.open()));
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await Promise.all(databases.map((d) => d.drop()));
});

const NOW = Date.UTC(2026, 10, 23, 12, 30, 15);

describe(`two stores in one process (${dialect})`, () => {
  it("count rate limits apart, past minutes included", async () => {
    // Ten hits in the minute before on A; then a hit now on each, on the same key id.
    for (let i = 0; i < 10; i++) await a.rateLimits.hit("key_same", 100, NOW - 60_000);
    expect((await a.rateLimits.hit("key_same", 100, NOW)).remaining).toBe(89);
    expect((await b.rateLimits.hit("key_same", 100, NOW)).remaining).toBe(99);
    await a.rateLimits.release();
    await b.rateLimits.release();
  });

  it("keep their read caches apart", async () => {
    expect(a.caches).not.toBe(b.caches);
    const org = await createOrganization(a.db, { name: "A" }, Date.now());
    const config = formSchema({ allowHttpImages: true }).parse(validForms.standard());
    const form = await insertForm(a.db, org.id, config, new Date().toISOString());
    await a.changes.settled();
    expect((await findFormCached(a, form.id))?.id).toBe(form.id);
    expect(peekForm(a, form.id)?.id).toBe(form.id);
    expect(peekForm(b, form.id)).toBeUndefined();
    expect(await findFormCached(b, form.id)).toBeUndefined();

    const { key } = await createApiKey(a.db, { organizationId: org.id, sandbox: true }, Date.now());
    expect((await findKeyBySecretCached(a, key))?.organizationId).toBe(org.id);
    expect(peekKeyBySecret(b, key)).toBeUndefined();
  });

  it("hear only their own writes, and wake only their own delivery listeners", async () => {
    const heardA: Write[] = [];
    const heardB: Write[] = [];
    const stopA = a.writes.on((w) => heardA.push(w));
    const stopB = b.writes.on((w) => heardB.push(w));
    let wokenA = 0;
    let wokenB = 0;
    const unwakeA = onDeliveriesQueued(a, () => wokenA++);
    const unwakeB = onDeliveriesQueued(b, () => wokenB++);
    try {
      await createOrganization(b.db, { name: "B" }, Date.now());
      expect(heardA).toEqual([]);
      expect(heardB).toEqual([{ table: "organizations", kind: "insert" }]);
      // An insert into webhook_deliveries (here one its foreign keys refuse: the wake-up is only a hint).
      const delivery = {
        id: "dlv_x",
        organization_id: "org_x",
        webhook_id: "wh_missing",
        event_id: "evt_missing",
        event_type: "payment.succeeded",
        status: "PENDING",
        attempts: 0,
        next_attempt_at: new Date().toISOString(),
        claimed_until: null,
        claim_token: null,
        created_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
      };
      await expect(b.db.insertInto("webhook_deliveries").values(delivery).execute()).rejects.toThrow();
      expect(wokenB).toBe(1);
      expect(wokenA).toBe(0);
    } finally {
      stopA();
      stopB();
      unwakeA();
      unwakeB();
    }
  });

  it("compile fixed statement shapes each for itself", () => {
    const shapes = (s: Store) =>
      (s.db.getExecutor().adapter as unknown as { compiledShapes: Map<unknown, unknown> }).compiledShapes;
    expect(shapes(a)).toBeInstanceOf(Map);
    expect(shapes(a)).not.toBe(shapes(b));
  });
});

import { describe, expect, it } from "vitest";
import { dialect } from "../support/testApp.js";
import {
  at,
  clockedApp,
  JAN_31,
  paymentsOf,
  recurringForm,
  subscribe,
  subscription,
  worker,
} from "./support.js";

/**
 * Gifts a pass cannot charge (their organization disconnected the processor that holds their method) stay
 * due; they must not keep every other gift from being billed. Released at once, they were the oldest due
 * and came first in every pass, and once they filled a pass's batches no other gift was charged again.
 */
describe(`gifts that cannot be charged (${dialect})`, () => {
  const app = clockedApp();

  it("leave the next passes to the other gifts: a gift due after them is billed", async () => {
    const formId = await recurringForm(app.t);
    // 41 gifts at a processor this organization has not connected: each pass fails to charge them.
    const stuck: string[] = [];
    for (let i = 0; i < 41; i++) stuck.push((await subscribe(app.t, formId)).id);
    await app.t.store.db
      .updateTable("subscriptions")
      .set({ processor: "stripe" })
      .where("id", "in", stuck)
      .execute();
    // A gift that can be charged, due an hour after them.
    app.now = JAN_31 + 3_600_000;
    const healthy = await subscribe(app.t, formId);

    // A batch of 1 stands for the default 25: a pass claims at most 40 batches, so 41 stuck gifts fill one.
    const errors: string[] = [];
    for (const time of ["2026-03-01T00:00:00Z", "2026-03-01T00:01:00Z"]) {
      app.now = at(time);
      await worker(app.t.deps, { batchSize: 1, onError: (err) => errors.push(String(err)) }).runOnce();
    }
    expect(errors.length).toBeGreaterThanOrEqual(40);
    expect((await paymentsOf(app.t.store.db, healthy.id)).length).toBe(2);
    expect((await subscription(app.t.store.db, healthy.id)).cycle).toBe(1);
    // The others are still due, untouched, with no charge in flight.
    for (const id of stuck.slice(0, 3)) {
      expect(await paymentsOf(app.t.store.db, id)).toHaveLength(1);
      expect((await subscription(app.t.store.db, id)).cycle).toBe(0);
    }
  });
});

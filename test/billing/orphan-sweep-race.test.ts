import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { settleOrphanedCharges } from "../../server/billing/orphanedCharges.js";
import type { PaymentProcessor } from "../../server/processors/port.js";
import { ProcessorError } from "../../server/processors/port.js";
import { ledgerCharges } from "../support/race.js";
import { dialect, setupTestApp, type TestApp } from "../support/testApp.js";
import { at, JAN_31, paymentsOf, recurringForm, subscribe, worker } from "./support.js";

/**
 * A renewal whose charge an earlier pass left PROCESSING (the processor was out of reach) is made again by
 * a later pass. Meanwhile the donor may cancel, and another process's sweep of orphaned charges (charges
 * of ended gifts untouched for 5 minutes) may run: money must never move for a payment recorded as not
 * charged.
 */
describe(`a renewal retried while orphaned charges are swept (${dialect})`, () => {
  let clock = JAN_31;
  let t: TestApp;
  beforeEach(async () => {
    clock = JAN_31;
    t = await setupTestApp({
      now: () => clock,
      env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" },
    });
  });
  afterEach(async () => t.close());

  /** A gift whose renewal a pass left PROCESSING at 10:00 on February 28. */
  async function leftProcessing() {
    const sub = await subscribe(t, await recurringForm(t));
    const down: PaymentProcessor = Object.create(t.deps.processors.sandbox);
    down.charge = async () => {
      throw new ProcessorError("unavailable", "processor down");
    };
    clock = at("2026-02-28T10:00:00Z");
    await worker(
      { ...t.deps, processors: t.deps.processors.withSandbox(down) },
      { leaseMs: 50, onError: () => {} },
    ).runOnce();
    expect((await paymentsOf(t.store.db, sub.id)).map((p) => p.status)).toEqual(["COMPLETED", "PROCESSING"]);
    await new Promise((resolve) => setTimeout(resolve, 100)); // the short lease lapses
    return sub;
  }

  /** The next pass, ten minutes later, with `meanwhile` run as the processor begins the charge. */
  async function retryWith(meanwhile: () => Promise<void>) {
    clock = at("2026-02-28T10:10:00Z");
    const inner = t.deps.processors.sandbox;
    const racing: PaymentProcessor = Object.create(inner);
    racing.charge = async (input, hooks) => {
      await meanwhile();
      return inner.charge(input, hooks);
    };
    const before = await ledgerCharges(t.store.db);
    await worker(
      { ...t.deps, processors: t.deps.processors.withSandbox(racing) },
      { onError: () => {} },
    ).runOnce();
    return (await ledgerCharges(t.store.db)) - before;
  }

  it("the sweep leaves the charge being made alone: it is charged once and recorded COMPLETED", async () => {
    const sub = await leftProcessing();
    const charged = await retryWith(async () => {
      const res = await t.request("PUT", `/v1/subscriptions/${sub.id}`, { body: { status: "CANCELLED" } });
      expect(res.status, res.text).toBe(200);
      await settleOrphanedCharges(t.deps, clock, Date.now());
    });
    const [, renewal] = await paymentsOf(t.store.db, sub.id);
    expect(charged).toBe(1);
    expect(renewal.status).toBe("COMPLETED");
  });

  it("a charge whose payment was settled meanwhile is refused before money moves", async () => {
    const sub = await leftProcessing();
    const charged = await retryWith(async () => {
      await t.request("PUT", `/v1/subscriptions/${sub.id}`, { body: { status: "CANCELLED" } });
      // A sweep that judged the row stale (a run with a later --as-of, say) settles it as not charged.
      await settleOrphanedCharges(t.deps, clock + 3_600_000, Date.now());
    });
    const [, renewal] = await paymentsOf(t.store.db, sub.id);
    expect(renewal.status).toBe("FAILED");
    expect(charged).toBe(0);
  });
});

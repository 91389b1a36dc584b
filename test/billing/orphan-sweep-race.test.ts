import { describe, expect, it } from "vitest";
import { settleOrphanedCharges } from "../../server/billing/orphanedCharges.js";
import type { PaymentProcessor } from "../../server/processors/port.js";
import { ProcessorError } from "../../server/processors/port.js";
import { card } from "../support/checkout.js";
import { ledgerCharges } from "../support/race.js";
import { dialect } from "../support/testApp.js";
import { at, clockedApp, paymentsOf, recurringForm, subscribe, worker } from "./support.js";

/**
 * A renewal whose charge an earlier pass left PROCESSING (the processor was out of reach) is made again by
 * a later pass. Meanwhile the donor may cancel, and another process's sweep of orphaned charges (charges
 * of ended gifts untouched for 5 minutes) may run: money must never move for a payment recorded as not
 * charged.
 */
describe(`a renewal retried while orphaned charges are swept (${dialect})`, () => {
  const app = clockedApp();

  /** A gift whose renewal a pass left PROCESSING at 10:00 on February 28. */
  async function leftProcessing() {
    const sub = await subscribe(app.t, await recurringForm(app.t));
    const down: PaymentProcessor = Object.create(app.t.deps.processors.sandbox);
    down.charge = async () => {
      throw new ProcessorError("unavailable", "processor down");
    };
    app.now = at("2026-02-28T10:00:00Z");
    await worker(
      { ...app.t.deps, processors: app.t.deps.processors.withSandbox(down) },
      { leaseMs: 50, onError: () => {} },
    ).runOnce();
    expect((await paymentsOf(app.t.store.db, sub.id)).map((p) => p.status)).toEqual([
      "COMPLETED",
      "PROCESSING",
    ]);
    await new Promise((resolve) => setTimeout(resolve, 100)); // the short lease lapses
    return sub;
  }

  /** The next pass, ten minutes later, with `meanwhile` run as the processor begins the charge. */
  async function retryWith(meanwhile: () => Promise<void>) {
    app.now = at("2026-02-28T10:10:00Z");
    const inner = app.t.deps.processors.sandbox;
    const racing: PaymentProcessor = Object.create(inner);
    racing.charge = async (input, hooks) => {
      await meanwhile();
      return inner.charge(input, hooks);
    };
    const before = await ledgerCharges(app.t.store.db);
    await worker(
      { ...app.t.deps, processors: app.t.deps.processors.withSandbox(racing) },
      { onError: () => {} },
    ).runOnce();
    return (await ledgerCharges(app.t.store.db)) - before;
  }

  it("the sweep leaves the charge being made alone: it is charged once and recorded COMPLETED", async () => {
    const sub = await leftProcessing();
    const charged = await retryWith(async () => {
      const res = await app.t.request("PUT", `/v1/subscriptions/${sub.id}`, {
        body: { status: "CANCELLED" },
      });
      expect(res.status, res.text).toBe(200);
      await settleOrphanedCharges(app.t.deps, app.now, Date.now());
    });
    const [, renewal] = await paymentsOf(app.t.store.db, sub.id);
    expect(charged).toBe(1);
    expect(renewal.status).toBe("COMPLETED");
  });

  it("a charge whose payment was settled meanwhile is refused before money moves", async () => {
    const sub = await leftProcessing();
    const charged = await retryWith(async () => {
      await app.t.request("PUT", `/v1/subscriptions/${sub.id}`, { body: { status: "CANCELLED" } });
      // A sweep that judged the row stale (a run with a later --as-of, say) settles it as not charged.
      await settleOrphanedCharges(app.t.deps, app.now + 3_600_000, Date.now());
    });
    const [, renewal] = await paymentsOf(app.t.store.db, sub.id);
    expect(renewal.status).toBe("FAILED");
    expect(charged).toBe(0);
  });

  it("a run as of a later date (billing run --as-of) leaves a charge of minutes ago alone: staleness is judged on the real clock", async () => {
    const sub = await leftProcessing();
    const res = await app.t.request("PUT", `/v1/subscriptions/${sub.id}`, { body: { status: "CANCELLED" } });
    expect(res.status, res.text).toBe(200);
    const written = at("2026-02-28T10:00:00Z");
    const monthLater = written + 30 * 24 * 3_600_000;
    // A minute after the charge was written (another process may be making it right now): left alone.
    expect(await settleOrphanedCharges(app.t.deps, monthLater, written + 60_000)).toBe(0);
    expect((await paymentsOf(app.t.store.db, sub.id)).map((p) => p.status)).toEqual([
      "COMPLETED",
      "PROCESSING",
    ]);
    // Untouched for more than five minutes of real time: settled as the processor reports it (not made).
    expect(await settleOrphanedCharges(app.t.deps, monthLater, written + 6 * 60_000)).toBe(1);
    expect((await paymentsOf(app.t.store.db, sub.id)).map((p) => p.status)).toEqual(["COMPLETED", "FAILED"]);
  });

  it("a charge whose payment names another of the processor's payments by now (another process's try) is refused before money moves", async () => {
    const sub = await leftProcessing();
    const charged = await retryWith(async () => {
      // Another process, whose claim outlived this one's, stored its own try on the payment meanwhile.
      await app.t.store.db
        .updateTable("payments")
        .set({ processor_payment_id: "pay_another_process" })
        .where("subscription_id", "=", sub.id)
        .where("status", "=", "PROCESSING")
        .execute();
    });
    expect(charged).toBe(0);
    const [, renewal] = await paymentsOf(app.t.store.db, sub.id);
    expect(renewal).toMatchObject({ status: "PROCESSING", processor_payment_id: "pay_another_process" });
  });

  it("a try made meanwhile by another process with the card replaced since is found, not made again with the new card", async () => {
    const sub = await leftProcessing();
    // The donor saves another card (taken here from a second gift of theirs).
    const other = await subscribe(app.t, await recurringForm(app.t), {
      paymentMethod: card("5555555555554444"),
    });
    await app.t.store.db
      .updateTable("subscriptions")
      .set({
        payment_method_token: other.payment_method_token,
        last4: other.last4,
        card_brand: other.card_brand,
      })
      .where("id", "=", sub.id)
      .execute();
    const [, inDoubt] = await paymentsOf(app.t.store.db, sub.id);

    // Another process (its claim lapsed) charges the attempt with the old card just after this pass asked.
    app.now = at("2026-02-28T10:10:00Z");
    const sandbox = app.t.deps.processors.sandbox;
    const racing: PaymentProcessor = Object.create(sandbox);
    let asked = 0;
    racing.findCharge = async (ref) => {
      if (asked++ === 0) {
        await sandbox.charge({
          amountCents: Number(inDoubt.amount_cents),
          currency: inDoubt.currency,
          paymentMethod: sub.payment_method_token,
          idempotencyKey: inDoubt.charge_key,
          description: "Donation",
          offSession: true,
        });
        return null;
      }
      return sandbox.findCharge(ref);
    };
    const before = await ledgerCharges(app.t.store.db);
    await worker(
      { ...app.t.deps, processors: app.t.deps.processors.withSandbox(racing) },
      { onError: () => {} },
    ).runOnce();
    // One charge in all, the other process's, recorded with the card it was made with.
    expect((await ledgerCharges(app.t.store.db)) - before).toBe(1);
    const [, renewal] = await paymentsOf(app.t.store.db, sub.id);
    expect(renewal).toMatchObject({ status: "COMPLETED", last4: sub.last4 });
  });
});

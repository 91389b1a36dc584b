import { describe, expect, it } from "vitest";
import { ORPHAN_REST_MS, settleOrphanedCharges } from "../../server/billing/orphanedCharges.js";
import type { PaymentProcessor } from "../../server/processors/port.js";
import { ProcessorError } from "../../server/processors/port.js";
import { dialect, type TestApp } from "../support/testApp.js";
import { at, clockedApp, JAN_31, paymentsOf, subscribe, worker } from "./support.js";

/**
 * The sweep of orphaned charges (renewals an interrupted pass left PROCESSING on gifts cancelled since)
 * takes the oldest rows first, a page at a time. An organization whose processor cannot be asked keeps its
 * rows, and must not keep every other organization's waiting behind them.
 */
describe(`the sweep of orphaned charges, when one organization's processor fails (${dialect})`, () => {
  const app = clockedApp();

  /** A cancelled gift of the organization `key` belongs to, whose renewal a pass left PROCESSING at `when`. */
  async function orphan(t: TestApp, key: string, when: string) {
    app.now = JAN_31; // the gift starts on January 31, so its renewal is due on February 28
    const form = await t.request<{ formID: string }>("POST", "/v1/forms", {
      key,
      body: { title: `Monthly ${when}`, funds: ["General"], frequencies: ["ONE_TIME", "MONTHLY"] },
    });
    expect(form.status, form.text).toBe(201);
    const sub = await subscribe(t, form.body.formID);
    const down: PaymentProcessor = Object.create(t.deps.processors.sandbox);
    down.charge = async () => {
      throw new ProcessorError("unavailable", "processor down");
    };
    app.now = at(when);
    await worker(
      { ...t.deps, processors: t.deps.processors.withSandbox(down) },
      { leaseMs: 50, onError: () => {} },
    ).runOnce();
    await new Promise((resolve) => setTimeout(resolve, 80)); // the short lease lapses
    const cancelled = await t.request("PUT", `/v1/subscriptions/${sub.id}`, {
      key,
      body: { status: "CANCELLED" },
    });
    expect(cancelled.status, cancelled.text).toBe(200);
    const [, renewal] = await paymentsOf(t.store.db, sub.id);
    expect(renewal.status).toBe("PROCESSING");
    return renewal;
  }

  /**
   * The app's dependencies with a processor that looks charges up as the sandbox does, except that a
   * lookup `fails` names (by its charge key) throws that error; `asked` lists the keys looked up.
   */
  function lookingUp(t: TestApp, fails: (chargeKey: string) => Error | undefined) {
    const sandbox = t.deps.processors.sandbox;
    const picky: PaymentProcessor = Object.create(sandbox);
    const asked: string[] = [];
    picky.findCharge = async (ref) => {
      asked.push(ref.idempotencyKey);
      const failure = fails(ref.idempotencyKey);
      if (failure) throw failure;
      return sandbox.findCharge(ref);
    };
    return { deps: { ...t.deps, processors: t.deps.processors.withSandbox(picky) }, asked };
  }

  const status = async (t: TestApp, id: string) =>
    (await t.store.db.selectFrom("payments").select("status").where("id", "=", id).executeTakeFirstOrThrow())
      .status;

  it("settles another organization's row hidden behind a full page of the failing one's, in the same sweep", async () => {
    const t = app.t;
    const other = await t.newOrg({ name: "Other Org" });
    // The failing organization's two rows are the oldest; the page holds two.
    const stuck = [
      await orphan(t, t.org.key, "2026-02-28T10:00:00Z"),
      await orphan(t, t.org.key, "2026-02-28T10:01:00Z"),
    ];
    const waiting = await orphan(t, other.key, "2026-02-28T10:02:00Z");

    // The processor cannot be asked about the failing organization's charges (its account disconnected).
    const { deps, asked } = lookingUp(t, (key) =>
      stuck.some((row) => row.charge_key === key)
        ? new ProcessorError("unavailable", "account disconnected")
        : undefined,
    );
    const resting = new Map<string, number>();
    app.now = at("2026-02-28T11:00:00Z");
    await expect(settleOrphanedCharges(deps, app.now, Date.now(), { limit: 2, resting })).rejects.toThrow(
      "account disconnected",
    );
    expect(await status(t, waiting.id)).toBe("FAILED"); // never charged: settled as not charged
    expect(await Promise.all(stuck.map((row) => status(t, row.id)))).toEqual(["PROCESSING", "PROCESSING"]);
    // The failing organization was asked about once, then set aside (its second row not tried again).
    expect(asked.filter((key) => key === stuck[0].charge_key)).toHaveLength(1);
    expect(asked).not.toContain(stuck[1].charge_key);
    expect(resting.get(t.org.id)).toBe(app.now + ORPHAN_REST_MS);

    // While it rests, a sweep does not ask its processor; once the rest is over, it is asked again.
    asked.length = 0;
    app.now += ORPHAN_REST_MS - 1;
    await settleOrphanedCharges(deps, app.now, Date.now(), { limit: 2, resting });
    expect(asked).toEqual([]);
    app.now += 1;
    await expect(settleOrphanedCharges(deps, app.now, Date.now(), { limit: 2, resting })).rejects.toThrow();
    expect(asked).toEqual([stuck[0].charge_key]);
  });

  it("a row that fails for a reason of its own waits alone: its organization's other rows are settled", async () => {
    const t = app.t;
    const odd = await orphan(t, t.org.key, "2026-02-28T10:00:00Z");
    const next = await orphan(t, t.org.key, "2026-02-28T10:01:00Z");
    const { deps } = lookingUp(t, (key) =>
      key === odd.charge_key ? new Error("this row's own trouble") : undefined,
    );
    const resting = new Map<string, number>();
    app.now = at("2026-02-28T11:00:00Z");
    await expect(settleOrphanedCharges(deps, app.now, Date.now(), { limit: 1, resting })).rejects.toThrow(
      "this row's own trouble",
    );
    expect(await status(t, odd.id)).toBe("PROCESSING");
    expect(await status(t, next.id)).toBe("FAILED");
    expect(resting.size).toBe(0);
  });
});

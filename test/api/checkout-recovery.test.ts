import { afterEach, describe, expect, it } from "vitest";
import { recoverInterruptedCheckouts } from "../../server/checkout/recovery.js";
import { card, checkout, createForm, donor } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

let t: TestApp;
afterEach(async () => {
  await t.close();
});

/**
 * Makes the next charge hang forever, after (or instead of) reaching the processor: a process dying
 * mid-checkout, between its committed PROCESSING payment and the record of the outcome.
 */
function interruptNextCharge(app: TestApp, chargeFirst: boolean) {
  const processor = app.deps.processors.sandbox;
  const real = processor.charge.bind(processor);
  processor.charge = async (input, hooks) => {
    processor.charge = real;
    // Either the whole charge, or only its first step: the payment made and its id stored, no money moved.
    if (chargeFirst) await real(input, hooks);
    else await hooks?.created?.("pi_sandbox_never_charged");
    return new Promise(() => {});
  };
}

async function status(app: TestApp) {
  return app.store.db.selectFrom("payments").select(["status", "contact_id"]).executeTakeFirstOrThrow();
}

describe("interrupted checkouts", () => {
  it("records a checkout whose charge went through before the process stopped", async () => {
    let now = Date.parse("2026-03-01T12:00:00Z");
    t = await setupTestApp({ now: () => now, env: { CHECKOUT_LIMIT_PER_IP: "0" } });
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "Adult", price: 50, quantity: 1 }],
    });
    interruptNextCharge(t, true);
    void checkout(t, formId, {
      tickets: [{ name: "Adult", quantity: 1 }],
      donor: donor(),
      paymentMethod: card(),
    });
    await new Promise((r) => setTimeout(r, 200));
    expect((await status(t)).status).toBe("PROCESSING");
    expect(await recoverInterruptedCheckouts(t.deps)).toBe(0); // still young: may be running
    now += 6 * 60 * 1000;
    expect(await recoverInterruptedCheckouts(t.deps)).toBe(1);
    const row = await status(t);
    expect(row.status).toBe("COMPLETED");
    expect(row.contact_id).not.toBeNull();
    const again = await checkout(t, formId, {
      tickets: [{ name: "Adult", quantity: 1 }],
      donor: donor(),
      paymentMethod: card(),
    });
    expect(again.status).toBe(400); // the recovered order kept its seat
  });

  it("fails a checkout that never reached the processor and gives its stock back, charging nothing", async () => {
    let now = Date.parse("2026-03-01T12:00:00Z");
    t = await setupTestApp({ now: () => now, env: { CHECKOUT_LIMIT_PER_IP: "0" } });
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "Adult", price: 50, quantity: 1 }],
    });
    interruptNextCharge(t, false);
    void checkout(t, formId, {
      tickets: [{ name: "Adult", quantity: 1 }],
      donor: donor(),
      paymentMethod: card(),
    });
    await new Promise((r) => setTimeout(r, 200));
    now += 6 * 60 * 1000;
    expect(await recoverInterruptedCheckouts(t.deps)).toBe(1);
    expect((await status(t)).status).toBe("FAILED");
    const key = (await t.store.db.selectFrom("payments").select("charge_key").executeTakeFirstOrThrow())
      .charge_key;
    expect(
      await t.deps.processors.sandbox.findCharge({ idempotencyKey: key, processorPaymentId: null }),
    ).toBeNull();
    const again = await checkout(t, formId, {
      tickets: [{ name: "Adult", quantity: 1 }],
      donor: donor(),
      paymentMethod: card(),
    });
    expect(again.status).toBe(201);
  });
});

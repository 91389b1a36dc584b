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

/** Makes the write of the next charge's outcome fail, once: the database gone between the charge and its record. */
function failNextOutcome(app: TestApp) {
  const processor = app.deps.processors.sandbox;
  const real = processor.charge.bind(processor);
  processor.charge = async (input, hooks) => {
    processor.charge = real;
    const result = await real(input, hooks);
    const transact = app.store.transact;
    app.store.transact = () => {
      app.store.transact = transact;
      return Promise.reject(new Error("the database went away"));
    };
    return result;
  };
}

async function status(app: TestApp) {
  return app.store.db.selectFrom("payments").select(["status", "contact_id"]).executeTakeFirstOrThrow();
}

describe("interrupted checkouts", () => {
  it("keeps the answer of a charged checkout whose outcome could not be written: a retry pays nothing more", async () => {
    let now = Date.parse("2026-03-01T12:00:00Z");
    t = await setupTestApp({ now: () => now, env: { CHECKOUT_LIMIT_PER_IP: "0" } });
    const formId = await createForm(t, validForms.standard());
    const gift = { amount: 25, donor: donor(), paymentMethod: card() };
    failNextOutcome(t);
    const errors: unknown[] = [];
    const log = console.error;
    console.error = (...args: unknown[]) => void errors.push(args);
    let first: Awaited<ReturnType<typeof checkout>>;
    try {
      first = await checkout(t, formId, gift, { "Idempotency-Key": "pressed-twice" });
    } finally {
      console.error = log;
    }
    expect(first.status).toBe(503);
    expect(first.text).toContain("do not pay again");
    expect(String(errors[0])).toContain("the database went away");
    // The same request again (the page keeps its key after a 5xx): told the same, nothing charged again.
    const retry = await checkout(t, formId, gift, { "Idempotency-Key": "pressed-twice" });
    expect(retry.status).toBe(503);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(retry.body).toEqual(first.body);
    const rows = await t.store.db.selectFrom("payments").select(["id", "status"]).execute();
    expect(rows).toEqual([{ id: first.body.paymentID, status: "PROCESSING" }]);
    now += 6 * 60 * 1000;
    expect(await recoverInterruptedCheckouts(t.deps)).toBe(1);
    expect((await status(t)).status).toBe("COMPLETED");
  });

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

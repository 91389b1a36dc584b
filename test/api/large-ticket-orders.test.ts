import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recoverInterruptedCheckouts } from "../../server/checkout/recovery.js";
import { card, checkout, createForm, donor } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * An order may hold up to 1,000 tickets of each of a form's ticket types. Every ticket is a row written in
 * the transaction that records the charge; written as one INSERT, a few thousand of them passed the bound
 * values one statement may carry (SQLite's 32,766, PostgreSQL's 65,535): the card was charged and the
 * payment could never be recorded, by the checkout or by recovery.
 */
describe(`large ticket orders (${dialect})`, () => {
  let t: TestApp;
  let clock = Date.now();
  beforeAll(async () => {
    t = await setupTestApp({
      env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" },
      now: () => clock,
    });
  });
  afterAll(async () => t.close());

  it("records a paid order of 5,000 tickets with all its tickets, each with its own code", async () => {
    const names = Array.from({ length: 5 }, (_, i) => `Tier ${i + 1}`);
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: names.map((name) => ({ name, price: 1 })),
    });
    const res = await checkout(t, formId, {
      tickets: names.map((name) => ({ name, quantity: 1000 })),
      donor: donor(),
      paymentMethod: card(),
    });
    expect(res.status, res.text).toBe(201);
    const payment = await t.store.db
      .selectFrom("payments")
      .select(["id", "status", "amount_cents"])
      .where("form_id", "=", formId)
      .executeTakeFirstOrThrow();
    expect(payment.status).toBe("COMPLETED");
    expect(Number(payment.amount_cents)).toBe(500_000);
    const tickets = await t.store.db
      .selectFrom("tickets")
      .select(["code"])
      .where("payment_id", "=", payment.id)
      .execute();
    expect(tickets).toHaveLength(5000);
    expect(new Set(tickets.map((x) => x.code)).size).toBe(5000);
    // Recovery later finds nothing left to finish.
    clock += 10 * 60_000;
    await recoverInterruptedCheckouts(t.deps);
    expect(
      (
        await t.store.db
          .selectFrom("payments")
          .select("status")
          .where("id", "=", payment.id)
          .executeTakeFirstOrThrow()
      ).status,
    ).toBe("COMPLETED");
  }, 60_000);
});

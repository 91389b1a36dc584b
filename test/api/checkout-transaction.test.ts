import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { recoverInterruptedCheckouts } from "../../server/checkout/recovery.js";
import { type PaymentProcessor, ProcessorError } from "../../server/processors/port.js";
import { CARDS, card, checkout, createForm, donor } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * Every processor, the sandbox included, charges between two transactions: the payment is committed as
 * PROCESSING (holding its stock) before the charge, and the outcome is recorded after it. A charge
 * therefore never happens without a record that recovery can finish, and no transaction waits on it.
 */

let now = Date.parse("2026-03-01T12:00:00Z");
let t: TestApp;
beforeEach(async () => {
  now = Date.parse("2026-03-01T12:00:00Z");
  t = await setupTestApp({
    now: () => now,
    env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" },
  });
});
afterEach(async () => {
  await t.close();
});

const oneSeat = () => ({ ...validForms.event(), tickets: [{ name: "Adult", price: 50, quantity: 1 }] });
const seat = { tickets: [{ name: "Adult", quantity: 1 }] };

async function payments() {
  return t.store.db.selectFrom("payments").select(["id", "status", "charge_key", "contact_id"]).execute();
}

/** The sandbox with `charge` replaced by `charge(real, input)`. */
function withCharge(
  charge: (
    real: PaymentProcessor["charge"],
    ...args: Parameters<PaymentProcessor["charge"]>
  ) => ReturnType<PaymentProcessor["charge"]>,
) {
  const sandbox = t.deps.processors.sandbox;
  const hooked: PaymentProcessor = Object.create(sandbox);
  hooked.charge = (input, hooks) => charge(sandbox.charge.bind(sandbox), input, hooks);
  t.deps.processors = t.deps.processors.withSandbox(hooked);
}

describe("a checkout holds its stock before the charge and records the outcome after it", () => {
  it("records the outcome after the charge: COMPLETED, the donor's contact, the charge in the sandbox's ledger", async () => {
    const formId = await createForm(t, oneSeat());
    const res = await checkout(t, formId, { ...seat, donor: donor(), paymentMethod: card() });
    expect(res.status).toBe(201);
    const [row] = await payments();
    expect(row.status).toBe("COMPLETED");
    expect(row.contact_id).not.toBeNull();
    const ref = { idempotencyKey: row.charge_key, processorPaymentId: null };
    expect(await t.deps.processors.sandbox.findCharge(ref)).toMatchObject({ status: "succeeded" });
    expect((await checkout(t, formId, { ...seat, donor: donor(), paymentMethod: card() })).status).toBe(400);
  });

  it("records a decline as FAILED and gives the seat back", async () => {
    const formId = await createForm(t, oneSeat());
    const declined = await checkout(t, formId, {
      ...seat,
      donor: donor(),
      paymentMethod: card(CARDS.insufficient),
    });
    expect(declined.status).toBe(402);
    expect((await payments()).map((p) => p.status)).toEqual(["FAILED"]);
    const bought = await checkout(t, formId, { ...seat, donor: donor(), paymentMethod: card() });
    expect(bought.status).toBe(201);
  });

  it("keeps a charge whose outcome could not be recorded, and recovery records it: never charged without a record", async () => {
    const formId = await createForm(t, oneSeat());
    // Recording the outcome fails after the sandbox charged (the receipt cannot be queued).
    withCharge(async (real, input, hooks) => {
      const result = await real(input, hooks);
      await sql`alter table email_outbox rename to email_outbox_gone`.execute(t.store.db);
      return result;
    });
    const res = await checkout(t, formId, { ...seat, donor: donor(), paymentMethod: card() });
    // The donor is told the money may have moved, not to pay again (a retry with the key is told the same).
    expect(res.status).toBe(503);
    expect(res.text).toContain("do not pay again");
    const [stuck] = await payments();
    expect(res.body.paymentID).toBe(stuck.id);
    expect(stuck.status).toBe("PROCESSING");
    const ref = { idempotencyKey: stuck.charge_key, processorPaymentId: null };
    expect(await t.deps.processors.sandbox.findCharge(ref)).toMatchObject({ status: "succeeded" });

    await sql`alter table email_outbox_gone rename to email_outbox`.execute(t.store.db);
    now += 6 * 60 * 1000;
    expect(await recoverInterruptedCheckouts(t.deps)).toBe(1);
    expect((await payments()).map((p) => p.status)).toEqual(["COMPLETED"]);
    // The recovered order kept its seat.
    expect((await checkout(t, formId, { ...seat, donor: donor(), paymentMethod: card() })).status).toBe(400);
  });

  it("answers 503 when the processor cannot be reached, recording nothing and holding no seat", async () => {
    const formId = await createForm(t, oneSeat());
    withCharge(async () => {
      throw new ProcessorError("unavailable", "connection refused");
    });
    const res = await checkout(t, formId, { ...seat, donor: donor(), paymentMethod: card() });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ error: expect.stringContaining("Nothing was charged") });
    expect(await payments()).toEqual([]);
  });

  it("takes the stock in the same write that stores the processor's payment id, before any money moves", async () => {
    const formId = await createForm(t, oneSeat());
    const other = await t.database.open();
    const seen: unknown[] = [];
    withCharge(async (real, input, hooks) =>
      real(input, {
        created: async (id) => {
          await hooks?.created?.(id);
          seen.push(
            await other.db
              .selectFrom("payments")
              .select(["status", "processor_payment_id"])
              .executeTakeFirst(),
          );
        },
      }),
    );
    try {
      expect((await checkout(t, formId, { ...seat, donor: donor(), paymentMethod: card() })).status).toBe(
        201,
      );
      expect(seen).toEqual([
        { status: "PROCESSING", processor_payment_id: expect.stringMatching(/^pi_sandbox_/) },
      ]);
    } finally {
      await other.close();
    }
  });
});

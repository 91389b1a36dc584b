import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PaymentProcessor } from "../../server/checkout/processor.js";
import type { Db } from "../../server/store/database.js";
import { CARDS, card, checkout, createForm, donor } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * The sandbox keeps its memory in the application's database, so a checkout takes its stock, charges and
 * records in one transaction (`PaymentProcessor.inTransaction`); a processor that moves money elsewhere
 * takes three steps around a committed PROCESSING payment. Both must come to the same records.
 */

let t: TestApp;
beforeEach(async () => {
  t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" } });
});
afterEach(async () => {
  await t.close();
});

const oneSeat = () => ({ ...validForms.event(), tickets: [{ name: "Adult", price: 50, quantity: 1 }] });
const seat = { tickets: [{ name: "Adult", quantity: 1 }] };

async function payments() {
  return t.store.db.selectFrom("payments").select(["status", "charge_key", "contact_id"]).execute();
}

/**
 * Calls `during` inside the checkout's transaction, right after the sandbox charged; records the charges'
 * idempotency keys. `restore()` gives the processor its own `inTransaction` back.
 */
function hookCharges(during?: (trx: Db) => Promise<void>): { keys: string[]; restore(): void } {
  const processor = t.deps.processor;
  const own = processor.inTransaction;
  if (!own) throw new Error("the sandbox should charge inside the checkout's transaction");
  const keys: string[] = [];
  processor.inTransaction = (trx: Db): PaymentProcessor => {
    const bound = own(trx);
    const charge = bound.charge.bind(bound);
    bound.charge = async (input) => {
      keys.push(input.idempotencyKey);
      const result = await charge(input);
      await during?.(trx);
      return result;
    };
    return bound;
  };
  const restore = () => {
    processor.inTransaction = own;
  };
  return { keys, restore };
}

describe("checkout on the sandbox: one transaction", () => {
  it("records the charge in the ledger together with the completed payment", async () => {
    const { keys } = hookCharges();
    const formId = await createForm(t, oneSeat());
    const res = await checkout(t, formId, { ...seat, donor: donor(), paymentMethod: card() });
    expect(res.status).toBe(201);
    const [row] = await payments();
    expect(row.status).toBe("COMPLETED");
    expect(keys).toEqual([row.charge_key]);
    expect(await t.deps.processor.findCharge(row.charge_key)).toMatchObject({ status: "succeeded" });
  });

  it("leaves no charge, no payment and no held seat when recording the outcome fails", async () => {
    // The receipt cannot be queued: the statement fails after the sandbox charged, in the same transaction.
    const { keys, restore } = hookCharges(async (trx) => {
      await sql`drop table email_outbox`.execute(trx);
    });
    const formId = await createForm(t, oneSeat());
    const res = await checkout(t, formId, { ...seat, donor: donor(), paymentMethod: card() });
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ error: "Internal server error" });
    expect(keys).toHaveLength(1);
    expect(await payments()).toEqual([]);
    expect(await t.deps.processor.findCharge(keys[0])).toBeNull();
    expect(await t.store.db.selectFrom("contacts").selectAll().execute()).toEqual([]);

    // Everything was rolled back (the dropped table too): the one seat is still there to buy.
    restore();
    const again = await checkout(t, formId, { ...seat, donor: donor(), paymentMethod: card() });
    expect(again.status).toBe(201);
    expect((await payments()).map((p) => p.status)).toEqual(["COMPLETED"]);
  });
});

describe("checkout on a processor outside the database: three steps", () => {
  beforeEach(() => {
    t.deps.processor.inTransaction = undefined;
  });

  it("charges after the PROCESSING payment is committed and records the same outcome", async () => {
    const formId = await createForm(t, oneSeat());
    const res = await checkout(t, formId, { ...seat, donor: donor(), paymentMethod: card() });
    expect(res.status).toBe(201);
    const [row] = await payments();
    expect(row.status).toBe("COMPLETED");
    expect(row.contact_id).not.toBeNull();
    expect(await t.deps.processor.findCharge(row.charge_key)).toMatchObject({ status: "succeeded" });
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
});

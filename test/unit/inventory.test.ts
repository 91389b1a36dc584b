import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FormRecord, findForm } from "../../server/store/forms.js";
import { formAvailability, type HeldItem, takeItems } from "../../server/store/inventory.js";
import { productKey } from "../../shared/pricing/availability.js";
import { createForm } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * The stock counters a checkout takes: all of an order's items or none of them, on both databases
 * (product keys included, whose text must be storable by PostgreSQL).
 */

let t: TestApp;
/** The form as a checkout priced it: its id and version. */
let FORM: FormRecord;

beforeEach(async () => {
  t = await setupTestApp();
  const id = await createForm(t, validForms.event());
  FORM = (await findForm(t.store.db, id)) as FormRecord;
});
afterEach(async () => {
  await t.close();
});

describe("takeItems", () => {
  it("gives back what it took when a later item of the same order is short", async () => {
    const adult: HeldItem = { kind: "ticket", key: "Adult", quantity: 3, limit: 10 };
    const gold: HeldItem = { kind: "product", key: productKey("Booths", "Gold"), quantity: 1, limit: 1 };
    expect(await takeItems(t.store.db, FORM, [gold])).toBeNull();

    const short = await takeItems(t.store.db, FORM, [adult, gold]);
    expect(short).toEqual(gold);
    const after = await formAvailability(t.store.db, FORM.id);
    expect(after.ticketsSold.Adult ?? 0).toBe(0);
    expect(after.productsSold[productKey("Booths", "Gold")]).toBe(1);
  });

  it("counts unlimited items without refusing them", async () => {
    const promo: HeldItem = { kind: "promo", key: "SAVE10", quantity: 1, limit: null };
    for (let i = 0; i < 3; i++) expect(await takeItems(t.store.db, FORM, [promo])).toBeNull();
    expect((await formAvailability(t.store.db, FORM.id)).promoRedemptions.SAVE10).toBe(3);
  });

  it("stores product keys whose titles hold any text, quotes included", async () => {
    const key = productKey('Table "A"', "Gold, \\ 🥇");
    expect(await takeItems(t.store.db, FORM, [{ kind: "product", key, quantity: 2, limit: 5 }])).toBeNull();
    expect((await formAvailability(t.store.db, FORM.id)).productsSold[key]).toBe(2);
  });
});

describe("takeItems by the form as it stands", () => {
  /** The form changed by the API after a checkout priced it (`FORM` is the version it priced). */
  async function change(body: Record<string, unknown>): Promise<void> {
    const res = await t.request("PUT", `/v1/forms/${FORM.id}`, { body });
    expect(res.status, res.text).toBe(200);
  }
  const adult = (quantity: number, limit: number | null): HeldItem => ({
    kind: "ticket",
    key: "Adult",
    quantity,
    limit,
  });

  it("refuses an item the form no longer has, renamed since the order was priced, taking nothing", async () => {
    await change({ tickets: [{ name: "Grown-up", price: 50 }] });
    expect(await takeItems(t.store.db, FORM, [adult(1, null)])).toEqual(adult(1, null));
    expect((await formAvailability(t.store.db, FORM.id)).ticketsSold).toEqual({});
  });

  it("holds to the quantity the form has now, not the one the order was priced with", async () => {
    await change({ tickets: [{ name: "Adult", price: 50, quantity: 2 }] });
    expect(await takeItems(t.store.db, FORM, [adult(3, 10)])).toEqual({ ...adult(3, 2) });
    expect(await takeItems(t.store.db, FORM, [adult(2, 10)])).toBeNull();
    expect((await formAvailability(t.store.db, FORM.id)).ticketsSold.Adult).toBe(2);
  });

  it("tells a change made within the same millisecond as the version priced", async () => {
    const at = Date.parse(FORM.updatedAt);
    const frozen = await setupTestApp({ now: () => at });
    try {
      const id = await createForm(frozen, validForms.event());
      const priced = (await findForm(frozen.store.db, id)) as FormRecord;
      const res = await frozen.request("PUT", `/v1/forms/${id}`, {
        body: { tickets: [{ name: "Grown-up", price: 50 }] },
      });
      expect(res.status, res.text).toBe(200);
      expect(await takeItems(frozen.store.db, priced, [adult(1, null)])).toEqual(adult(1, null));
    } finally {
      await frozen.close();
    }
  });
});

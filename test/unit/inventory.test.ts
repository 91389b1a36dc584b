import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { formAvailability, type HeldItem, takeItems } from "../../server/store/inventory.js";
import { productKey } from "../../shared/pricing/availability.js";
import { createForm } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * The stock counters a checkout takes: all of an order's items or none of them, on both databases
 * (product keys included, whose text must be storable by PostgreSQL).
 */

let t: TestApp;
let FORM: string;

beforeEach(async () => {
  t = await setupTestApp();
  FORM = await createForm(t, validForms.event());
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
    const after = await formAvailability(t.store.db, FORM);
    expect(after.ticketsSold.Adult ?? 0).toBe(0);
    expect(after.productsSold[productKey("Booths", "Gold")]).toBe(1);
  });

  it("counts unlimited items without refusing them", async () => {
    const promo: HeldItem = { kind: "promo", key: "SAVE10", quantity: 1, limit: null };
    for (let i = 0; i < 3; i++) expect(await takeItems(t.store.db, FORM, [promo])).toBeNull();
    expect((await formAvailability(t.store.db, FORM)).promoRedemptions.SAVE10).toBe(3);
  });

  it("stores product keys whose titles hold any text, quotes included", async () => {
    const key = productKey('Table "A"', "Gold, \\ 🥇");
    expect(await takeItems(t.store.db, FORM, [{ kind: "product", key, quantity: 2, limit: 5 }])).toBeNull();
    expect((await formAvailability(t.store.db, FORM)).productsSold[key]).toBe(2);
  });
});

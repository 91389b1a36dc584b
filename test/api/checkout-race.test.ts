import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { productKey } from "../../shared/pricing/availability.js";
import { CARDS, card, checkout, createForm, donor } from "../support/checkout.js";
import { inventorySold, ledgerCharges, paymentsByStatus, tally } from "../support/race.js";
import { setupTestApp, type TestApp, type TestResponse, validForms } from "../support/testApp.js";

/**
 * No overselling under load: ticket quantities, product quantities and promo-code redemption limits hold
 * when many donors check out at the same moment; a submission repeated with one Idempotency-Key charges
 * once; declined cards give their stock back. Every checkout here runs concurrently in one process.
 */

let t: TestApp;
beforeEach(async () => {
  t = await setupTestApp({
    // Every racer comes from one address: no per-address limits (refused promo codes included).
    env: {
      CHECKOUT_LIMIT_PER_IP: "0",
      CHECKOUT_LIMIT_PER_FORM: "0",
      CARD_FAILURE_LIMIT: "0",
      PROMO_FAILURE_LIMIT: "0",
    },
  });
});
afterEach(async () => {
  await t.close();
});

const STOCK = 50;
const BUYERS = 200;

type Json = Record<string, unknown>;
type Receipt = { payment: { paymentID: string; status: string; total: number; discount: number } };

/** `n` checkouts of the same order, each by another donor, all started at once. */
function rush(formId: string, order: Json, n = BUYERS): Promise<TestResponse[]> {
  return Promise.all(
    Array.from({ length: n }, (_, i) =>
      checkout(t, formId, { ...order, donor: donor(`buyer-${i}@example.org`), paymentMethod: card() }),
    ),
  );
}

/** Exactly STOCK receipts, the rest refused with a 400 that names the shortage; nothing else. */
function expectStockHeld(responses: TestResponse[], shortage: RegExp): string[] {
  const counts = tally(responses.map((r) => r.status));
  expect(counts, JSON.stringify(counts)).toEqual({ 201: STOCK, 400: BUYERS - STOCK });
  for (const r of responses.filter((x) => x.status === 400)) {
    const said = `${r.body.error} ${((r.body.details as string[] | undefined) ?? []).join(" ")}`;
    expect(said).toMatch(shortage);
  }
  const ids = responses.filter((r) => r.status === 201).map((r) => (r.body as Receipt).payment.paymentID);
  expect(new Set(ids).size).toBe(STOCK);
  return ids;
}

async function expectPaymentsCompleted(formId: string, ids: string[]): Promise<void> {
  expect(await paymentsByStatus(t.store.db, formId)).toEqual({ COMPLETED: STOCK });
  const rows = await t.store.db.selectFrom("payments").select("id").where("form_id", "=", formId).execute();
  expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
  expect(await ledgerCharges(t.store.db)).toBe(STOCK);
}

/** What the donors' page shows now. */
async function publicView(formId: string): Promise<Json> {
  const res = await t.request("GET", `/api/forms/${formId}`, { key: null });
  expect(res.status).toBe(200);
  return res.body;
}

/** Every refusal's `error`: the line donors (and the widget) show. */
function refusals(responses: TestResponse[]): string[] {
  return responses.filter((r) => r.status === 400).map((r) => String(r.body.error));
}

describe(`${BUYERS} donors racing for ${STOCK} of something`, () => {
  it("sells exactly the tickets there are: 50 receipts, 150 sold out, quantitySold 50, page sold out", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "Adult", price: 50, quantity: STOCK }],
    });
    const responses = await rush(formId, { tickets: [{ name: "Adult", quantity: 1 }] });
    const ids = expectStockHeld(responses, /sold out/i);
    for (const error of refusals(responses)) expect(error).toMatch(/sold out/i);
    await expectPaymentsCompleted(formId, ids);

    const form = await t.request<{ tickets: { name: string; quantitySold: number }[] }>(
      "GET",
      `/v1/forms/${formId}`,
    );
    expect(form.body.tickets[0]).toMatchObject({ name: "Adult", quantitySold: STOCK });
    const view = await publicView(formId);
    expect((view.tickets as Json[])[0]).toMatchObject({ name: "Adult", remaining: 0, soldOut: true });
    expect(await inventorySold(t.store.db, formId, "ticket", "Adult")).toBe(STOCK);

    const late = await checkout(t, formId, {
      tickets: [{ name: "Adult", quantity: 1 }],
      donor: donor(),
      paymentMethod: card(),
    });
    expect(late.status).toBe(400);
    expect(String(late.body.error)).toMatch(/sold out/i);
  });

  it("sells exactly the sponsorship options there are: 50 receipts, 150 sold out, page sold out", async () => {
    const formId = await createForm(t, {
      ...validForms.sponsorship(),
      sponsorshipGroups: [
        {
          groupTitle: "Booths",
          description: "",
          options: [
            { optionTitle: "Gold", amount: 100, quantity: STOCK },
            { optionTitle: "Silver", amount: 50 },
          ],
        },
      ],
    });
    const responses = await rush(formId, { product: { group: "Booths", name: "Gold" } });
    const ids = expectStockHeld(responses, /sold out/i);
    for (const error of refusals(responses)) expect(error).toMatch(/sold out/i);
    await expectPaymentsCompleted(formId, ids);

    const view = await publicView(formId);
    const products = (view.productGroups as { products: Json[] }[])[0].products;
    expect(products[0]).toMatchObject({ productName: "Gold", remaining: 0, soldOut: true });
    expect(products[1]).toMatchObject({ productName: "Silver", remaining: null, soldOut: false });
    expect(await inventorySold(t.store.db, formId, "product", productKey("Booths", "Gold"))).toBe(STOCK);
    // The unlimited option next to it still sells.
    const silver = await checkout(t, formId, {
      product: { group: "Booths", name: "Silver" },
      donor: donor(),
      paymentMethod: card(),
    });
    expect(silver.status).toBe(201);
  });

  it("redeems a promo code exactly its limit on an unlimited ticket: 50 discounted receipts, timesRedeemed 50", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "Adult", price: 50 }],
      promoCodes: [{ code: "EARLY", discountType: "percentage", discountValue: 20, quantity: STOCK }],
    });
    const responses = await rush(formId, { tickets: [{ name: "Adult", quantity: 1 }], promoCode: "early" });
    const ids = expectStockHeld(responses, /cannot be used for this order/i);
    for (const r of responses.filter((x) => x.status === 201))
      expect((r.body as Receipt).payment).toMatchObject({ total: 40, discount: 10 });
    await expectPaymentsCompleted(formId, ids);

    const form = await t.request<{
      tickets: { quantitySold: number; quantity: number | null }[];
      promoCodes: { code: string; timesRedeemed: number }[];
    }>("GET", `/v1/forms/${formId}`);
    expect(form.body.promoCodes[0]).toMatchObject({ code: "EARLY", timesRedeemed: STOCK });
    // Only the winners bought a ticket: a refused promo takes no ticket either.
    expect.soft(form.body.tickets[0]).toMatchObject({ quantity: null, quantitySold: STOCK });
    const view = await publicView(formId);
    expect((view.tickets as Json[])[0]).toMatchObject({ remaining: null, soldOut: false });

    // Without the code the ticket still sells at full price.
    const full = await checkout(t, formId, {
      tickets: [{ name: "Adult", quantity: 1 }],
      donor: donor(),
      paymentMethod: card(),
    });
    expect(full.status).toBe(201);
    expect((full.body as Receipt).payment.total).toBe(50);

    // A donor refused for the exhausted code is told so in `error` (what the widget shows), whichever
    // step refused them: the price check before the hold (a late donor), or the hold itself (the racers).
    for (const error of refusals(responses))
      expect(error).toMatch(/sold out|cannot be used|validation failed/i);
    const late = await checkout(t, formId, {
      tickets: [{ name: "Adult", quantity: 1 }],
      promoCode: "EARLY",
      donor: donor(),
      paymentMethod: card(),
    });
    expect(late.status).toBe(400);
    // One message for every refused code: an exhausted one is not told apart from a wrong one.
    expect(late.body.details).toEqual(['Promo code "EARLY" cannot be used for this order']);
  });
});

describe("a checkout refused in the middle of taking its stock", () => {
  it("takes nothing: a ticket bought with an exhausted promo code is not counted as sold", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "Adult", price: 50, quantity: STOCK }],
      promoCodes: [{ code: "FEW", discountType: "amount", discountValue: 5, quantity: 10 }],
    });
    // 60 donors with the code race for its 10 redemptions; the ticket (50 seats) is taken first, then the code.
    const responses = await rush(formId, { tickets: [{ name: "Adult", quantity: 1 }], promoCode: "FEW" }, 60);
    expect(tally(responses.map((r) => r.status))).toEqual({ 201: 10, 400: 50 });
    expect(await paymentsByStatus(t.store.db, formId)).toEqual({ COMPLETED: 10 });
    expect(await inventorySold(t.store.db, formId, "promo", "FEW")).toBe(10);
    expect(await inventorySold(t.store.db, formId, "ticket", "Adult"), "tickets counted as sold").toBe(10);
    const view = await publicView(formId);
    expect((view.tickets as Json[])[0]).toMatchObject({ remaining: STOCK - 10, soldOut: false });
    // The 40 seats the refused donors never bought are still for sale.
    const rest = await rush(formId, { tickets: [{ name: "Adult", quantity: 1 }] }, STOCK - 10);
    expect(tally(rest.map((r) => r.status))).toEqual({ 201: STOCK - 10 });
  });
});

describe("one submission sent 20 times at once with one Idempotency-Key", () => {
  it("takes items listed in opposite orders by racing checkouts without a deadlock: every one is sold", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [
        { name: "A", price: 10, quantity: 1000 },
        { name: "B", price: 10, quantity: 1000 },
      ],
    });
    const both = [
      { name: "A", quantity: 1 },
      { name: "B", quantity: 1 },
    ];
    const responses = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        checkout(t, formId, {
          tickets: i % 2 ? both : [...both].reverse(),
          donor: donor(`crossing-${i}@example.org`),
          paymentMethod: card(),
        }),
      ),
    );
    const counts = tally(responses.map((r) => r.status));
    expect(counts, JSON.stringify(counts)).toEqual({ 201: 60 });
    expect(await inventorySold(t.store.db, formId, "ticket", "A")).toBe(60);
    expect(await inventorySold(t.store.db, formId, "ticket", "B")).toBe(60);
  });

  it("charges once: one payment and one ticket; the others replay the receipt or are told it is in progress", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "Adult", price: 50, quantity: STOCK }],
    });
    const body = {
      tickets: [{ name: "Adult", quantity: 1 }],
      donor: donor("repeat@example.org"),
      paymentMethod: card(),
    };
    const headers = { "Idempotency-Key": "double-click-1" };
    const responses = await Promise.all(Array.from({ length: 20 }, () => checkout(t, formId, body, headers)));
    const counts = tally(responses.map((r) => r.status));
    for (const status of Object.keys(counts))
      expect(["201", "409"], JSON.stringify(counts)).toContain(status);
    const paid = responses.filter((r) => r.status === 201);
    expect(paid.length).toBeGreaterThan(0);
    expect(new Set(paid.map((r) => r.text)).size).toBe(1);
    for (const r of responses.filter((x) => x.status === 409))
      expect(String(r.body.error)).toMatch(/in progress/i);

    expect(await paymentsByStatus(t.store.db, formId)).toEqual({ COMPLETED: 1 });
    expect(await ledgerCharges(t.store.db)).toBe(1);
    expect(await inventorySold(t.store.db, formId, "ticket", "Adult")).toBe(1);
    expect(await t.store.db.selectFrom("contacts").selectAll().execute()).toHaveLength(1);

    const retry = await checkout(t, formId, body, headers);
    expect(retry.status).toBe(201);
    expect(retry.text).toBe(paid[0].text);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await paymentsByStatus(t.store.db, formId)).toEqual({ COMPLETED: 1 });
  });
});

describe("declined cards racing with good ones", () => {
  it("never keep stock: tickets sold equal completed tickets, and what they held sells afterwards", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "Adult", price: 50, quantity: STOCK }],
    });
    // 4000 0000 0000 0341 and 9995 pass tokenization and fail at the charge, after the stock is held.
    const numbers = [CARDS.visa, "4000000000000341", CARDS.insufficient];
    const responses = await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        checkout(t, formId, {
          tickets: [{ name: "Adult", quantity: 1 }],
          donor: donor(`mixed-${i}@example.org`),
          paymentMethod: card(numbers[i % 3]),
        }),
      ),
    );
    const counts = tally(responses.map((r) => r.status));
    for (const status of Object.keys(counts))
      expect(["201", "400", "402"], JSON.stringify(counts)).toContain(status);
    for (const r of responses.filter((x) => x.status === 400))
      expect(String(r.body.error)).toMatch(/sold out/i);
    for (const r of responses.filter((x) => x.status === 402))
      expect(["card_declined", "insufficient_funds"]).toContain(r.body.code);
    const completed = counts[201] ?? 0;
    expect(completed).toBeGreaterThan(0);
    expect(completed).toBeLessThanOrEqual(STOCK);

    const byStatus = await paymentsByStatus(t.store.db, formId);
    expect(byStatus.PROCESSING).toBeUndefined();
    expect(byStatus.COMPLETED ?? 0).toBe(completed);
    expect(byStatus.FAILED ?? 0).toBe(counts[402] ?? 0);
    expect(await inventorySold(t.store.db, formId, "ticket", "Adult")).toBe(completed);
    const form = await t.request<{ tickets: { quantitySold: number }[] }>("GET", `/v1/forms/${formId}`);
    expect(form.body.tickets[0].quantitySold).toBe(completed);
    const view = await publicView(formId);
    expect((view.tickets as Json[])[0]).toMatchObject({ remaining: STOCK - completed });

    // Every seat a declined card held is for sale again: the rest go in one order, then none are left.
    const left = STOCK - completed;
    if (left > 0) {
      const rest = await checkout(t, formId, {
        tickets: [{ name: "Adult", quantity: left }],
        donor: donor(),
        paymentMethod: card(),
      });
      expect(rest.status, rest.text).toBe(201);
    }
    expect(await inventorySold(t.store.db, formId, "ticket", "Adult")).toBe(STOCK);
    const after = await checkout(t, formId, {
      tickets: [{ name: "Adult", quantity: 1 }],
      donor: donor(),
      paymentMethod: card(),
    });
    expect(after.status).toBe(400);
  });
});

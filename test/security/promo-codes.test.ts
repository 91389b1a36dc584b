import { afterEach, describe, expect, it } from "vitest";
import { createForm } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * Guessing promo codes through /quote: every refused code gets the same answer, and after 20 different
 * refused codes in an hour an address gets 429 with Retry-After for any code on that form, the right one
 * included.
 * Quotes themselves are limited per address and per form.
 */

let t: TestApp;
afterEach(async () => {
  await t.close();
});

const eventForm = () => ({
  ...validForms.event(),
  tickets: [
    { name: "Adult", price: 50 },
    { name: "Child", price: 20 },
  ],
  promoCodes: [
    { code: "SECRET10", discountType: "percentage", discountValue: 10 },
    { code: "USEDUP", discountType: "percentage", discountValue: 10, quantity: 1 },
    { code: "KIDS", discountType: "percentage", discountValue: 10, applicableTickets: ["Child"] },
  ],
});

function quote(formId: string, promoCode: string) {
  return t.request<Record<string, unknown>>("POST", `/api/forms/${formId}/quote`, {
    key: null,
    body: { tickets: [{ name: "Adult", quantity: 1 }], promoCode },
  });
}

describe("promo codes", () => {
  it("are refused with one message whether unknown, used up or not for these tickets", async () => {
    t = await setupTestApp();
    const formId = await createForm(t, eventForm());
    const used = await t.request("POST", `/api/forms/${formId}/checkout`, {
      key: null,
      body: {
        tickets: [{ name: "Adult", quantity: 1 }],
        promoCode: "USEDUP",
        donor: { firstName: "Ada", lastName: "First", email: "ada@example.org" },
        paymentMethod: { type: "card", number: "4242424242424242", expMonth: 12, expYear: 2034, cvc: "123" },
      },
    });
    expect(used.status).toBe(201);
    const answers = await Promise.all(["NOPE", "USEDUP", "KIDS"].map((code) => quote(formId, code)));
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400]);
    const said = answers.map((a) => JSON.stringify(a.body).replace(/\\"[A-Z]+\\"/, "CODE"));
    expect(new Set(said).size).toBe(1);
    expect(said[0]).toContain("cannot be used for this order");
  });

  it("cannot be guessed: after 20 refused codes the address gets 429 with Retry-After, even for the right code", async () => {
    t = await setupTestApp();
    const formId = await createForm(t, eventForm());
    for (let i = 0; i < 20; i++) expect((await quote(formId, `GUESS${i}`)).status).toBe(400);
    const blocked = await quote(formId, "SECRET10");
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("Retry-After"))).toBeGreaterThan(0);
    // Orders without a code still price.
    const plain = await t.request("POST", `/api/forms/${formId}/quote`, {
      key: null,
      body: { tickets: [{ name: "Adult", quantity: 1 }] },
    });
    expect(plain.status).toBe(200);
    // So does the checkout with a code.
    const checkout = await t.request("POST", `/api/forms/${formId}/checkout`, {
      key: null,
      body: {
        tickets: [{ name: "Adult", quantity: 1 }],
        promoCode: "SECRET10",
        donor: { firstName: "Eve", lastName: "Guess", email: "eve@example.org" },
      },
    });
    expect(checkout.status).toBe(429);
  });

  it("counts each refused code once: the same one priced again and again (as a donor changes the order) is one guess, in any case", async () => {
    t = await setupTestApp();
    const formId = await createForm(t, eventForm());
    // KIDS is not for the Adult ticket: refused each time the order is priced, 30 times.
    for (let i = 0; i < 30; i++)
      expect((await quote(formId, i % 2 ? "KIDS" : " kids ")).status, `attempt ${i}`).toBe(400);
    const right = await quote(formId, "SECRET10");
    expect(right.status, right.text).toBe(200);
    // 19 other codes make 20 different ones: then the address is refused.
    for (let i = 0; i < 19; i++) expect((await quote(formId, `GUESS${i}`)).status).toBe(400);
    expect((await quote(formId, "SECRET10")).status).toBe(429);
  });

  it("quotes are limited per address", async () => {
    t = await setupTestApp({ env: { QUOTE_LIMIT_PER_IP: "3" } });
    const formId = await createForm(t, validForms.standard());
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        (await t.request("POST", `/api/forms/${formId}/quote`, { key: null, body: { amount: 25 } })).status,
      );
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});

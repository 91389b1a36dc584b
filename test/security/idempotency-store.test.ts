import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createForm } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * Filling the disk through the public idempotency store: /quote and /checkout with fresh Idempotency-Keys
 * and thousands of unknown fields. A refused request keeps nothing, a 400 names only a few unknown
 * fields, and a corrected retry with the same key runs (and is then replayed, never charged twice).
 */

let t: TestApp;
let formId: string;
beforeAll(async () => {
  t = await setupTestApp({
    env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0", QUOTE_LIMIT_PER_IP: "0" },
  });
  formId = await createForm(t, validForms.standard());
});
afterAll(() => t.close());

interface ErrorBody {
  error: string;
  details?: string[];
}

const junk = Object.fromEntries(Array.from({ length: 1_500 }, (_, i) => [`field_${i}_${"x".repeat(20)}`, i]));
const gift = {
  amount: 25,
  frequency: "ONE_TIME",
  donor: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.org" },
  paymentMethod: { type: "card", number: "4242424242424242", expMonth: 12, expYear: 2034, cvc: "123" },
};

async function keptRows(): Promise<number> {
  const row = await t.store.db
    .selectFrom("idempotency_keys")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("organization_id", "=", `public:${formId}`)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function allRows(): Promise<number> {
  const row = await t.store.db
    .selectFrom("idempotency_keys")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe(`the public idempotency store (${dialect})`, () => {
  it("keeps nothing for quotes and checkouts refused by validation, and names at most ten unknown fields", async () => {
    const before = await allRows();
    for (let i = 0; i < 10; i++) {
      const path = `/api/forms/${formId}/${i % 2 ? "quote" : "checkout"}`;
      const res = await t.request<ErrorBody>("POST", path, {
        key: null,
        headers: { "Idempotency-Key": `fill-${i}` },
        body: { ...gift, ...junk },
      });
      expect(res.status).toBe(400);
      const details = res.body.details ?? [];
      expect(details.length).toBeLessThanOrEqual(11);
      expect(details.at(-1)).toMatch(
        i % 2
          ? /^body: 149\d more fields are not recognised$/
          : /^body: 1490 more fields are not recognised$/,
      );
      expect(JSON.stringify(res.body).length).toBeLessThan(2_000);
    }
    expect(await allRows()).toBe(before);
  });

  it("answers a corrected checkout normally under the key a refused one used, then replays it", async () => {
    const headers = { "Idempotency-Key": "corrected-checkout" };
    const path = `/api/forms/${formId}/checkout`;
    const refused = await t.request("POST", path, { key: null, headers, body: { ...gift, amount: -5 } });
    expect(refused.status).toBe(400);
    const garbled = await t.request("POST", path, { key: null, headers, rawBody: "{not json" });
    expect(garbled.status).toBe(400);
    const paid = await t.request<Record<string, unknown>>("POST", path, { key: null, headers, body: gift });
    expect(paid.status).toBe(201);
    const again = await t.request<Record<string, unknown>>("POST", path, { key: null, headers, body: gift });
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.body).toEqual(paid.body);
    const payments = await t.store.db
      .selectFrom("payments")
      .select("id")
      .where("form_id", "=", formId)
      .where("amount_cents", "=", 2500)
      .execute();
    expect(payments).toHaveLength(1);
    // Once used, the key answers 422 to another request, even an invalid one.
    const reused = await t.request("POST", path, { key: null, headers, body: { ...gift, ...junk } });
    expect(reused.status).toBe(422);
    expect(await keptRows()).toBeGreaterThanOrEqual(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { card, checkout, createForm, donor } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/** GET /v1/analytics/forms: what each form raised, net of refunds, and its gifts (the dashboard's forms list). */

let t: TestApp;
beforeAll(async () => {
  t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" } });
});
afterAll(() => t.close());

async function give(formId: string, amount: number): Promise<string> {
  const res = await checkout(t, formId, { amount, donor: donor(), paymentMethod: card() });
  expect(res.status, res.text).toBe(201);
  return String((res.body.payment as { paymentID: string }).paymentID);
}

describe(`what each form raised (${dialect})`, () => {
  it("sums each form's completed gifts net of refunds, in the order asked, 0 for others' forms", async () => {
    const a = await createForm(t, validForms.standard());
    const b = await createForm(t, validForms.standard());
    const empty = await createForm(t, validForms.standard());
    await give(a, 25);
    const refundedInPart = await give(a, 50);
    const refundedInFull = await give(b, 40);
    await give(b, 10);
    expect(
      (await t.request("POST", `/v1/payments/${refundedInPart}/refund`, { body: { amount: 20 } })).status,
    ).toBe(200);
    expect((await t.request("POST", `/v1/payments/${refundedInFull}/refund`)).status).toBe(200);
    const other = await t.newOrg();
    const theirs = await createForm({ ...t, org: other } as TestApp, validForms.standard()).catch(
      () => undefined,
    );

    const ids = [b, a, empty, ...(theirs ? [theirs] : [])];
    const res = await t.request<{
      currency: string;
      forms: { formID: string; raised: number; gifts: number }[];
    }>("GET", `/v1/analytics/forms?formIDs=${ids.join(",")}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.currency).toBe("USD");
    expect(res.body.forms).toEqual([
      { formID: b, raised: 10, gifts: 1 },
      { formID: a, raised: 55, gifts: 2 },
      { formID: empty, raised: 0, gifts: 0 },
      { formID: theirs, raised: 0, gifts: 0 },
    ]);
  });

  it("refuses bad ids and callers without analytics:read", async () => {
    const bad = await t.request("GET", "/v1/analytics/forms?formIDs=nope");
    expect(bad.status).toBe(400);
    const many = Array.from({ length: 101 }, () => crypto.randomUUID()).join(",");
    expect((await t.request("GET", `/v1/analytics/forms?formIDs=${many}`)).status).toBe(400);
    const reader = await t.newOrg({ permissions: ["forms:read"] });
    const refused = await t.request("GET", `/v1/analytics/forms?formIDs=${crypto.randomUUID()}`, {
      key: reader.key,
    });
    expect(refused.status).toBe(403);
  });
});

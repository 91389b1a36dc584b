import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createForm } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/** "Make it monthly": the form's settings, their rules, and what the donor's page is told. */
describe(`monthly upsell settings (${dialect})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await setupTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const both = ["ONE_TIME", "MONTHLY"];

  it("is off by default, and shown on the form and the donor's page when on", async () => {
    const plain = await createForm(t, validForms.standard());
    const shown = await t.request<Record<string, unknown>>("GET", `/v1/forms/${plain}`);
    expect(shown.body).toMatchObject({
      enableMonthlyUpsell: false,
      monthlyUpsellRatio: 0.3,
      monthlyUpsellMinimum: null,
    });
    const view = await t.request<{ options: { monthlyUpsell: unknown } }>("GET", `/api/forms/${plain}`, {
      key: null,
    });
    expect(view.body.options.monthlyUpsell).toBeNull();

    const on = await createForm(t, {
      ...validForms.standard(),
      frequencies: both,
      enableMonthlyUpsell: true,
      monthlyUpsellRatio: 0.25,
      monthlyUpsellMinimum: 50,
    });
    const form = await t.request<Record<string, unknown>>("GET", `/v1/forms/${on}`);
    expect(form.body).toMatchObject({
      enableMonthlyUpsell: true,
      monthlyUpsellRatio: 0.25,
      monthlyUpsellMinimum: 50,
    });
    const page = await t.request<{ options: { monthlyUpsell: unknown } }>("GET", `/api/forms/${on}`, {
      key: null,
    });
    expect(page.body.options.monthlyUpsell).toEqual({ ratio: 0.25, minimum: 50 });
  });

  it("refuses the offer where it cannot be taken, and ratios outside (0, 1]", async () => {
    const refusals: [Record<string, unknown>, RegExp][] = [
      [
        { ...validForms.standard(), enableMonthlyUpsell: true },
        /^enableMonthlyUpsell needs ONE_TIME and MONTHLY/,
      ],
      [{ ...validForms.event(), enableMonthlyUpsell: true }, /^enableMonthlyUpsell is for donation forms/],
      [
        { ...validForms.sponsorship(), enableMonthlyUpsell: true },
        /^enableMonthlyUpsell is for donation forms/,
      ],
      [{ ...validForms.standard(), frequencies: both, monthlyUpsellRatio: 0 }, /^monthlyUpsellRatio/],
      [{ ...validForms.standard(), frequencies: both, monthlyUpsellRatio: 1.5 }, /^monthlyUpsellRatio/],
    ];
    for (const [body, detail] of refusals) {
      const res = await t.request<{ details: string[] }>("POST", "/v1/forms", { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(
        res.body.details.some((d) => detail.test(d)),
        res.text,
      ).toBe(true);
    }
  });
});

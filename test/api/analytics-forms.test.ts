import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStaffMember } from "../../server/staff/accounts.js";
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
  it("sums each form's completed gifts net of refunds, in the order asked, 0 for an id of no form, 403 for another organization's", async () => {
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
    const made = await t.request<{ formID: string }>("POST", "/v1/forms", {
      body: validForms.standard(),
      key: other.key,
    });
    expect(made.status, made.text).toBe(201);
    const theirs = made.body.formID;
    const nobody = "00000000-0000-4000-8000-000000000000";

    const ids = [b, a, empty, nobody];
    const res = await t.request<{
      currency: string;
      forms: { formID: string; raised: number; gifts: number }[];
    }>("GET", `/v1/analytics/forms?formIDs=${ids.join(",")}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.currency).toBe("USD");
    expect(res.body.forms).toEqual([
      { formID: b, raised: 10, gifts: 1, otherCurrencies: [] },
      { formID: a, raised: 55, gifts: 2, otherCurrencies: [] },
      { formID: empty, raised: 0, gifts: 0, otherCurrencies: [] },
      { formID: nobody, raised: 0, gifts: 0, otherCurrencies: [] },
    ]);
    // Another organization's form is refused, as everywhere in the API, and does not pass for an empty one.
    const refused = await t.request<{ error: string }>("GET", `/v1/analytics/forms?formIDs=${a},${theirs}`);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe("Form belongs to another organization");
    const mine = await t.request("GET", `/v1/analytics/forms?formIDs=${theirs}`, { key: other.key });
    expect(mine.status).toBe(200);

    // Each id is answered as it was sent: in its case, and once per time it was asked for.
    const again = await t.request<{ forms: { formID: string; raised: number }[] }>(
      "GET",
      `/v1/analytics/forms?formIDs=${a.toUpperCase()},${b},${a.toUpperCase()}`,
    );
    expect(again.body.forms.map((f) => [f.formID, f.raised])).toEqual([
      [a.toUpperCase(), 55],
      [b, 10],
      [a.toUpperCase(), 55],
    ]);
  });

  it("keeps the gifts made before a change of currency: counted, and summed apart in their currency", async () => {
    const org = await t.newOrg({ name: "Currency change" });
    const made = await t.request<{ formID: string }>("POST", "/v1/forms", {
      key: org.key,
      body: validForms.standard(),
    });
    expect(made.status, made.text).toBe(201);
    const formId = made.body.formID;
    const res1 = await checkout(t, formId, { amount: 25, donor: donor(), paymentMethod: card() });
    expect(res1.status, res1.text).toBe(201);
    const changed = await t.request("PUT", "/v1/organization", { key: org.key, body: { currency: "EUR" } });
    expect(changed.status, changed.text).toBe(200);
    const res2 = await checkout(t, formId, { amount: 30, donor: donor(), paymentMethod: card() });
    expect(res2.status, res2.text).toBe(201);
    const res = await t.request<{ currency: string; forms: unknown[] }>(
      "GET",
      `/v1/analytics/forms?formIDs=${formId}`,
      { key: org.key },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      currency: "EUR",
      forms: [
        {
          formID: formId,
          raised: 30,
          gifts: 2,
          otherCurrencies: [{ currency: "USD", raised: 25, gifts: 1 }],
        },
      ],
    });
  });

  it("answers callers who read payments (donations:read) too: a Staff session, a key with only that", async () => {
    const form = await createForm(t, validForms.standard());
    await give(form, 30);
    const made = await createStaffMember(t.store, {
      organizationId: t.org.id,
      email: "staff@example.org",
      role: "STAFF",
      publicUrl: t.config.publicUrl,
      nowMs: Date.now(),
    });
    const setup = await t.request("POST", "/api/staff/setup", {
      key: null,
      body: {
        token: new URL(made.setupUrl).searchParams.get("token"),
        password: "correct horse battery staple",
      },
      headers: { Origin: new URL(t.config.publicUrl).origin },
    });
    expect(setup.status, setup.text).toBe(200);
    const cookie = (setup.headers.get("Set-Cookie") ?? "").split(";")[0];
    const asStaff = await t.request<{ forms: { formID: string; raised: number; gifts: number }[] }>(
      "GET",
      `/v1/analytics/forms?formIDs=${form}`,
      { key: null, headers: { Cookie: cookie } },
    );
    expect(asStaff.status, asStaff.text).toBe(200);
    expect(asStaff.body.forms).toEqual([{ formID: form, raised: 30, gifts: 1, otherCurrencies: [] }]);
    // The rest of analytics stays with analytics:read.
    const metrics = await t.request("GET", "/v1/analytics/api-metrics", {
      key: null,
      headers: { Cookie: cookie },
    });
    expect(metrics.status).toBe(403);

    const payments = await t.newOrg({ permissions: ["donations:read"] });
    const asKey = await t.request("GET", "/v1/analytics/forms?formIDs=00000000-0000-4000-8000-000000000000", {
      key: payments.key,
    });
    expect(asKey.status, asKey.text).toBe(200);
  });

  it("refuses bad ids and callers without analytics:read or donations:read", async () => {
    const bad = await t.request("GET", "/v1/analytics/forms?formIDs=nope");
    expect(bad.status).toBe(400);
    const many = Array.from({ length: 101 }, () => crypto.randomUUID()).join(",");
    expect((await t.request("GET", `/v1/analytics/forms?formIDs=${many}`)).status).toBe(400);
    const reader = await t.newOrg({ permissions: ["forms:read", "contacts:read", "subscriptions:read"] });
    const refused = await t.request("GET", `/v1/analytics/forms?formIDs=${crypto.randomUUID()}`, {
      key: reader.key,
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: "Missing permission: analytics:read or donations:read" });
  });
});

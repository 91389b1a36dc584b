import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { card, checkout, createForm, donor } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * The deprecated /v1/donations view: legacy names and deprecation headers (Sunset: its removal date,
 * 2026-07-01); served before and after that date until the server turns it off (LEGACY_DONATIONS_API=off),
 * then 410 Gone naming /v1/payments: a setting turns it off, not the calendar.
 */

type Json = Record<string, unknown>;

let t: TestApp;

beforeEach(async () => {
  t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0", LEGACY_DONATIONS_API: "on" } });
});
afterEach(() => t.close());

function expectDeprecated(headers: Headers) {
  expect(headers.get("Deprecation")).toBe("true");
  expect(headers.get("Sunset")).toBe("Wed, 01 Jul 2026 00:00:00 GMT");
  expect(headers.get("Link")).toBe('</v1/payments>; rel="successor-version"');
}

describe("/v1/donations", () => {
  it("shows each payment under the legacy names, with the deprecation headers, paged like /v1/payments", async () => {
    const formId = await createForm(t, {
      ...validForms.standard(),
      title: "Legacy appeal",
      funds: ["Library"],
    });
    const paid: string[] = [];
    for (const email of ["a@example.org", "b@example.org", "c@example.org"]) {
      const res = await checkout(t, formId, { amount: 20, donor: donor(email), paymentMethod: card() });
      expect(res.status).toBe(201);
      paid.push((res.body.payment as Json).paymentID as string);
    }
    const list = await t.request<{
      donations: Json[];
      count: number;
      hasMore: boolean;
      lastEvaluatedKey?: string;
    }>("GET", "/v1/donations?limit=2");
    expect(list.status).toBe(200);
    expectDeprecated(list.headers);
    expect(list.body).toMatchObject({ count: 2, hasMore: true });
    const payment = (await t.request<Json>("GET", `/v1/payments/${list.body.donations[0].donationID}`)).body;
    expect(list.body.donations[0]).toEqual({
      donationID: payment.paymentID,
      donorEmail: payment.email,
      donorFirstName: "Ada",
      donorLastName: "Donor",
      amount: 20,
      currency: "USD",
      status: "COMPLETED",
      fundName: "Library",
      formName: "Legacy appeal",
      frequency: "ONE_TIME",
      donationDate: payment.date,
      paymentMethod: "card",
      coverFees: false,
      anonymous: false,
      merchantName: "Test Org",
      tipAmount: 0,
      transactionID: expect.stringMatching(/^pi_sandbox_/),
    });
    const rest = await t.request<{ donations: Json[]; hasMore: boolean }>(
      "GET",
      `/v1/donations?limit=2&lastEvaluatedKey=${list.body.lastEvaluatedKey}`,
    );
    expect(rest.body.hasMore).toBe(false);
    const ids = [...list.body.donations, ...rest.body.donations].map((d) => d.donationID);
    expect(new Set(ids)).toEqual(new Set(paid));
    // A payments cursor is not a donations cursor.
    const paymentsCursor = (await t.request<Json>("GET", "/v1/payments?limit=1")).body.lastEvaluatedKey;
    expect((await t.request("GET", `/v1/donations?lastEvaluatedKey=${paymentsCursor}`)).status).toBe(400);

    const one = await t.request<Json>("GET", `/v1/donations/${paid[0]}`);
    expect(one.status).toBe(200);
    expectDeprecated(one.headers);
    expect(one.body.donationID).toBe(paid[0]);
  });

  it("takes the query parameters of /v1/payments: its filters narrow the list, and the same values are refused", async () => {
    const formId = await createForm(t, validForms.standard());
    for (const [email, amount] of [
      ["ann@example.org", 20],
      ["bea@example.org", 75],
    ] as const) {
      const res = await checkout(t, formId, { amount, donor: donor(email), paymentMethod: card() });
      expect(res.status).toBe(201);
    }
    const declined = await checkout(t, formId, {
      amount: 30,
      donor: donor("cy@example.org"),
      paymentMethod: card("4000000000000002"),
    });
    expect(declined.status).toBe(402);
    type Page = { donations: Json[]; count: number };
    const list = async (query: string) => {
      const res = await t.request<Page>("GET", `/v1/donations?${query}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expectDeprecated(res.headers);
      return res.body.donations.map((d) => d.donorEmail).sort();
    };
    for (const query of ["status=FAILED", "search=bea", "minAmount=50", "maxAmount=25&status=COMPLETED"]) {
      const payments = await t.request<{ payments: Json[] }>("GET", `/v1/payments?${query}`);
      expect(await list(query), query).toEqual(payments.body.payments.map((p) => p.email).sort());
    }
    expect(await list("status=FAILED")).toEqual(["cy@example.org"]);
    expect(await list("search=bea")).toEqual(["bea@example.org"]);

    for (const query of ["status=garbage", "from=bad", "minAmount=x", "minAmount=80&maxAmount=10"]) {
      const refused = await t.request<Json>("GET", `/v1/donations?${query}`);
      expect(refused.status, query).toBe(400);
      expect(refused.body.error).toBe("Validation failed");
      expectDeprecated(refused.headers);
    }
    // A cursor is the list's with its filters, as on /v1/payments.
    const first = await t.request<{ lastEvaluatedKey: string }>(
      "GET",
      "/v1/donations?status=COMPLETED&limit=1",
    );
    const other = await t.request(
      "GET",
      `/v1/donations?status=FAILED&lastEvaluatedKey=${first.body.lastEvaluatedKey}`,
    );
    expect(other.status).toBe(400);
  });

  it("keeps the deprecation headers on errors, and applies permissions and tenants like payments", async () => {
    const formId = await createForm(t, validForms.standard());
    const res = await checkout(t, formId, { amount: 20, donor: donor(), paymentMethod: card() });
    const id = (res.body.payment as Json).paymentID as string;
    const other = await t.newOrg();
    const foreign = await t.request("GET", `/v1/donations/${id}`, { key: other.key });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: "Donation belongs to another organization" });
    expectDeprecated(foreign.headers);
    expect((await t.request<Json>("GET", "/v1/donations", { key: other.key })).body.count).toBe(0);
    for (const missingId of ["pay_00000000000000000000000000", "pay_x", "123"]) {
      const missing = await t.request("GET", `/v1/donations/${missingId}`);
      expect(missing.status, missingId).toBe(404);
      expect(missing.body).toEqual({ error: "Donation not found" });
      expectDeprecated(missing.headers);
    }
    const noRead = await t.newOrg({ permissions: ["forms:read"] });
    const denied = await t.request("GET", "/v1/donations", { key: noRead.key });
    expect(denied.body).toEqual({ error: "Missing permission: donations:read" });
    expect((await t.request("GET", "/v1/donations?limit=500")).status).toBe(400);
  });
});

describe("/v1/donations turned off (LEGACY_DONATIONS_API=off)", () => {
  it("answers 410 pointing at /v1/payments, while /v1/payments works", async () => {
    await t.close();
    t = await setupTestApp({ env: { LEGACY_DONATIONS_API: "off" } });
    for (const path of ["/v1/donations", "/v1/donations/pay_00000000000000000000000000"]) {
      const res = await t.request("GET", path);
      expect(res.status).toBe(410);
      expect(res.body.error).toMatch(/turned off.*\/v1\/payments/);
      expectDeprecated(res.headers);
    }
    expect((await t.request("GET", "/v1/payments")).status).toBe(200);
    expect((await t.request("GET", "/v1/donations", { key: null })).status).toBe(401);
  });
});

describe("/v1/donations and its removal date", () => {
  const at = async (iso: string, env: Record<string, string> = {}) => {
    await t.close();
    t = await setupTestApp({ now: () => Date.parse(iso), env });
    return t.request("GET", "/v1/donations");
  };

  it("is served before 2026-07-01 without a setting, with the deprecation headers", async () => {
    const res = await at("2026-06-30T23:59:59Z");
    expect(res.status).toBe(200);
    expectDeprecated(res.headers);
  });

  it("is still served from 2026-07-01 on without a setting, with the deprecation headers", async () => {
    for (const iso of ["2026-07-01T00:00:00Z", "2027-03-15T12:00:00Z"]) {
      const res = await at(iso);
      expect(res.status, iso).toBe(200);
      expect(res.body).toEqual({ donations: [], count: 0, hasMore: false });
      expectDeprecated(res.headers);
      const one = await t.request("GET", "/v1/donations/pay_00000000000000000000000000");
      expect(one.status, iso).toBe(404);
      expectDeprecated(one.headers);
    }
  });

  it("is served past the date with LEGACY_DONATIONS_API=on too, and the document says so", async () => {
    expect((await at("2026-11-25T00:00:00Z", { LEGACY_DONATIONS_API: "on" })).status).toBe(200);
    const doc = await t.request<{ paths: Record<string, Record<string, Json>> }>("GET", "/v1/openapi.json");
    for (const path of ["/v1/donations", "/v1/donations/{id}"]) {
      const op = doc.body.paths[path]?.get as Json;
      expect(op.deprecated).toBe(true);
      expect(String(op.description)).toContain("2026-07-01");
      const gone = (op.responses as Record<string, Json>)["410"];
      expect(Object.keys(gone?.headers as Json)).toEqual(
        expect.arrayContaining(["Deprecation", "Sunset", "Link"]),
      );
    }
  });
});

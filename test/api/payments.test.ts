import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { prefixedId } from "../../server/ids.js";
import { insertPayment } from "../../server/store/payments.js";
import type { PaymentsTable } from "../../server/store/schema.js";
import { coverFeeCents, DEFAULT_FEE_RATE } from "../../shared/pricing/fees.js";
import { bank, CARDS, card, checkout, createForm, donor } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/** Payments through /v1 (list, get, pagination, permissions), from records the real checkout made. */

type Json = Record<string, unknown>;
interface PaymentPage {
  payments: Json[];
  count: number;
  hasMore: boolean;
  lastEvaluatedKey?: string;
}

let t: TestApp;
let clock = Date.parse("2026-03-01T12:00:00Z");

beforeEach(async () => {
  clock = Date.parse("2026-03-01T12:00:00Z");
  t = await setupTestApp({
    now: () => clock,
    env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0", CARD_FAILURE_LIMIT: "0" },
  });
});
afterEach(() => t.close());

async function give(formId: string, body: Json) {
  const res = await checkout(t, formId, { amount: 25, donor: donor(), paymentMethod: card(), ...body });
  clock += 1000;
  return res;
}

/** A settled payment written straight through the store (for volume), shaped like a checkout's. */
function storedPayment(organizationId: string, formId: string, createdAt: string): PaymentsTable {
  return {
    id: prefixedId("pay", Date.now()),
    organization_id: organizationId,
    form_id: formId,
    contact_id: null,
    subscription_id: null,
    status: "COMPLETED",
    amount_cents: 1000,
    fee_cents: 0,
    refunded_cents: 0,
    currency: "USD",
    fund: "General",
    form_title: "Bulk",
    frequency: "ONE_TIME",
    cover_fees: 0,
    anonymous: 0,
    email: "bulk@example.org",
    email_key: "bulk@example.org",
    first_name: "Bulk",
    last_name: "Donor",
    payment_method_type: "card",
    card_brand: "visa",
    last4: "4242",
    fingerprint: null,
    processor_payment_id: null,
    charge_key: `bulk:${prefixedId("pay", Date.now())}`,
    failure_code: null,
    failure_message: null,
    details: JSON.stringify({
      lines: [],
      subtotalCents: 1000,
      discountCents: 0,
      promoCode: null,
      attendees: 0,
      customInputs: [],
      utm: {},
      donor: {},
      hold: [],
    }),
    processor: "sandbox",
    dispute: null,
    created_at: createdAt,
    updated_at: createdAt,
  };
}

async function walk(path: string, limit: number, between?: (page: number) => Promise<void>) {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let pageNo = 1; ; pageNo++) {
    const q = `limit=${limit}${cursor ? `&lastEvaluatedKey=${encodeURIComponent(cursor)}` : ""}`;
    const res = await t.request<PaymentPage>("GET", `${path}?${q}`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(res.body.payments.length);
    seen.push(...res.body.payments.map((p) => p.paymentID as string));
    if (!res.body.hasMore) {
      expect(res.body.lastEvaluatedKey).toBeUndefined();
      return seen;
    }
    cursor = res.body.lastEvaluatedKey;
    await between?.(pageNo);
  }
}

describe("GET /v1/payments", () => {
  it("lists every kind of checkout newest first with every documented field, and never a charge in flight", async () => {
    const formId = await createForm(t, {
      ...validForms.standard(),
      title: "Spring appeal",
      funds: ["General", "Roof"],
      frequencies: ["ONE_TIME", "MONTHLY"],
    });
    const eventId = await createForm(t, validForms.event());
    const oneTime = await give(formId, {
      amount: 50,
      fund: "Roof",
      coverFees: true,
      anonymous: true,
      donor: donor("ada@example.org"),
    });
    expect(oneTime.status).toBe(201);
    const monthly = await give(formId, { frequency: "MONTHLY", amount: 10 });
    const bankGift = await give(formId, { paymentMethod: bank() });
    const declined = await give(formId, { paymentMethod: card(CARDS.declined) });
    const tickets = await give(eventId, { amount: undefined, tickets: [{ name: "Adult", quantity: 2 }] });
    expect(tickets.status).toBe(201);
    // A charge in flight: written as PROCESSING, not yet a record.
    const inFlight = storedPayment(t.org.id, formId, new Date(clock).toISOString());
    await insertPayment(t.store.db, { ...inFlight, status: "PROCESSING" });

    const res = await t.request<PaymentPage>("GET", "/v1/payments");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ count: 5, hasMore: false });
    const ids = res.body.payments.map((p) => p.paymentID);
    const id = (r: typeof oneTime) => (r.body.payment as Json | undefined)?.paymentID ?? r.body.paymentID;
    expect(ids).toEqual([tickets, declined, bankGift, monthly, oneTime].map(id));
    const dates = res.body.payments.map((p) => p.date as string);
    expect([...dates].sort().reverse()).toEqual(dates);

    const contactId = (await t.request<{ contacts: Json[] }>("GET", "/v1/contacts?email=ada@example.org"))
      .body.contacts[0].id;
    expect(res.body.payments[4]).toMatchObject({
      paymentID: id(oneTime),
      email: "ada@example.org",
      firstName: "Ada",
      lastName: "Donor",
      amount: (5000 + coverFeeCents(5000, DEFAULT_FEE_RATE)) / 100,
      feeAmount: coverFeeCents(5000, DEFAULT_FEE_RATE) / 100,
      currency: "USD",
      status: "COMPLETED",
      fund: "Roof",
      form: "Spring appeal",
      formID: formId,
      frequency: "ONE_TIME",
      paymentMethod: "card",
      coverFees: true,
      anonymous: true,
      contactId,
      subscriptionId: null,
      card: { brand: "visa", last4: "4242" },
    });
    expect(res.body.payments[4].date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/);
    const sub = (monthly.body.payment as Json).subscription as Json;
    expect(res.body.payments[3]).toMatchObject({ frequency: "MONTHLY", subscriptionId: sub.id, amount: 10 });
    expect(res.body.payments[2]).toMatchObject({
      status: "PENDING",
      paymentMethod: "bank",
      bankLast4: "6789",
    });
    expect(res.body.payments[1]).toMatchObject({
      status: "FAILED",
      failureMessage: expect.stringMatching(/declined/),
    });
    expect(res.body.payments[0]).toMatchObject({
      form: expect.any(String),
      tickets: [{ name: "Adult", quantity: 2, amount: 100 }],
    });
    expect(JSON.stringify(res.body)).not.toContain(CARDS.visa);

    const one = await t.request("GET", `/v1/payments/${id(oneTime)}`);
    expect(one.body).toEqual(res.body.payments[4]);
    expect((await t.request("GET", `/v1/payments/${inFlight.id}`)).status).toBe(404);
  });

  it("pages 1,000 payments with new ones arriving between pages: nothing repeated, nothing skipped", async () => {
    const formId = await createForm(t, validForms.standard());
    const base = clock - 2_000_000;
    const rows: PaymentsTable[] = [];
    for (let i = 0; i < 990; i++) {
      // Every third payment shares its millisecond with the one before: the id breaks the tie.
      const at = new Date(base + (i - (i % 3 === 2 ? 1 : 0)) * 1000).toISOString();
      rows.push(storedPayment(t.org.id, formId, at));
    }
    await t.store.db.transaction().execute(async (trx) => {
      for (const row of rows) await insertPayment(trx, row);
    });
    const checkedOut: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await give(formId, {});
      checkedOut.push((res.body.payment as Json).paymentID as string);
    }
    const before = [...rows.map((r) => r.id), ...checkedOut];
    expect(new Set(before).size).toBe(1000);

    let arrived = 0;
    const seen = await walk("/v1/payments", 100, async (pageNo) => {
      // New gifts while the client pages: some through the checkout, some straight into the store.
      if (pageNo % 2) await give(formId, {});
      else await insertPayment(t.store.db, storedPayment(t.org.id, formId, new Date(clock).toISOString()));
      clock += 1000;
      arrived++;
    });
    expect(arrived).toBe(9);
    expect(seen).toHaveLength(1000);
    expect(new Set(seen)).toEqual(new Set(before));

    // Same with an odd page size, and the full list once more: the new ones are at the top.
    const odd = await walk("/v1/payments", 37);
    expect(odd).toHaveLength(1009);
    expect(new Set(odd.slice(9))).toEqual(new Set(before));
  });
});

describe("GET /v1/payments: bad input, permissions, tenants", () => {
  it("answers 400 with details for a bad limit or a cursor that is not this list's", async () => {
    for (const q of [
      "limit=0",
      "limit=101",
      "limit=2.5",
      "limit=abc",
      "limit=",
      "lastEvaluatedKey=@@",
      "lastEvaluatedKey=e30",
    ]) {
      const res = await t.request("GET", `/v1/payments?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error, q).toBe("Validation failed");
      expect((res.body.details as string[]).length, q).toBeGreaterThan(0);
    }
    const formId = await createForm(t, validForms.standard());
    await give(formId, {});
    await give(formId, {});
    const cursor = (await t.request<PaymentPage>("GET", "/v1/payments?limit=1")).body
      .lastEvaluatedKey as string;
    expect((await t.request("GET", `/v1/payments?lastEvaluatedKey=${cursor}`)).status).toBe(200);
    expect((await t.request("GET", `/v1/subscriptions?lastEvaluatedKey=${cursor}`)).status).toBe(400);
    const other = await t.newOrg();
    expect(
      (await t.request("GET", `/v1/payments?lastEvaluatedKey=${cursor}`, { key: other.key })).status,
    ).toBe(400);
  });

  it("answers 404 for an unknown or malformed id, 403 for another organization's payment, and needs donations:read", async () => {
    const formId = await createForm(t, validForms.standard());
    const paid = (await give(formId, {})).body.payment as Json;
    for (const id of ["pay_00000000000000000000000000", "pay_x", "123", "PAY_01"]) {
      const res = await t.request("GET", `/v1/payments/${id}`);
      expect(res.status, id).toBe(404);
      expect(res.body).toEqual({ error: "Payment not found" });
    }
    const other = await t.newOrg();
    const foreign = await t.request("GET", `/v1/payments/${paid.paymentID}`, { key: other.key });
    expect(foreign.status).toBe(403);
    expect((await t.request<PaymentPage>("GET", "/v1/payments", { key: other.key })).body.count).toBe(0);

    const noRead = await t.newOrg({ permissions: ["contacts:read", "subscriptions:read"] });
    for (const path of ["/v1/payments", `/v1/payments/${paid.paymentID}`]) {
      const res = await t.request("GET", path, { key: noRead.key });
      expect(res.status).toBe(403);
      expect(res.body.error).toBe("Missing permission: donations:read");
    }
    const reader = await t.newOrg({ permissions: ["donations:read"] });
    expect((await t.request("GET", "/v1/payments", { key: reader.key })).status).toBe(200);
    expect((await t.request("GET", "/v1/payments", { key: null })).status).toBe(401);
    expect((await t.request("POST", "/v1/payments", { body: {} })).status).toBe(405);
  });
});

describe("OpenAPI document and /docs", () => {
  it("document every contacts, payments, donations and subscriptions endpoint with its schemas", async () => {
    const res = await t.request<{ paths: Record<string, Record<string, Json>> }>("GET", "/v1/openapi.json", {
      key: null,
    });
    const ops = Object.entries(res.body.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const mine = [
      "GET /v1/contacts",
      "POST /v1/contacts",
      "GET /v1/contacts/{id}",
      "PUT /v1/contacts/{id}",
      "PATCH /v1/contacts/{id}",
      "GET /v1/payments",
      "GET /v1/payments/{id}",
      "GET /v1/donations",
      "GET /v1/donations/{id}",
      "GET /v1/subscriptions",
      "GET /v1/subscriptions/{id}",
      "PUT /v1/subscriptions/{id}",
      "POST /v1/subscriptions/{id}/payment-method-update-link",
    ];
    expect(ops).toEqual(expect.arrayContaining(mine));
    const listed = JSON.stringify(res.body.paths["/v1/payments"].get);
    for (const field of ["paymentID", "subscriptionId", "lastEvaluatedKey", "limit"])
      expect(listed).toContain(field);
    const update = JSON.stringify(res.body.paths["/v1/subscriptions/{id}"].put);
    expect(update).toContain("CANCELLED");
    const docs = await t.app.request("/docs");
    const html = await docs.text();
    for (const path of [
      "/v1/contacts",
      "/v1/payments",
      "/v1/donations",
      "/v1/subscriptions/{id}/payment-method-update-link",
    ])
      expect(html).toContain(path);
  });
});

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { prefixedId } from "../../server/ids.js";
import { recordDispute } from "../../server/payments/transition.js";
import { createApiKey } from "../../server/store/keys.js";
import { insertPayment } from "../../server/store/payments.js";
import type { PaymentsTable } from "../../server/store/schema.js";
import { card, checkout, createForm, donor } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, type TestOrg, validForms } from "../support/testApp.js";

/** GET /v1/analytics/summary: sums in the organization's days and currency, net of refunds, its own only. */

interface Summary {
  currency: string;
  timeZone: string;
  today: string;
  from: string;
  to: string;
  raised: { today: number; last30Days: number; thisYear: number };
  range: { raised: number; gifts: number; donors: number };
  recurring: { active: number; monthlyValue: number };
  byDay: { date: string; amount: number; count: number }[];
  failed: { count: number; recent: { paymentID: string }[] };
  disputed: { count: number; recent: { paymentID: string; dispute: { status: string } | null }[] };
}

let t: TestApp;
let clock = 0;

beforeEach(async () => {
  clock = Date.parse("2026-03-10T12:00:00Z");
  t = await setupTestApp({
    now: () => clock,
    env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0", CARD_FAILURE_LIMIT: "0" },
  });
});
afterEach(() => t.close());

/** A card gift made at `at` (ISO, UTC) through the real checkout; its payment id. */
async function giftAt(
  at: string,
  amount: number,
  opts: { org?: TestOrg; formId?: string; email?: string; frequency?: string } = {},
): Promise<string> {
  const saved = clock;
  clock = Date.parse(at);
  const formId =
    opts.formId ??
    (await createForm(t, { ...validForms.standard(), frequencies: ["ONE_TIME", "MONTHLY", "WEEKLY"] }));
  const res = await checkout(t, formId, {
    amount,
    donor: donor(opts.email),
    paymentMethod: card(),
    ...(opts.frequency && { frequency: opts.frequency }),
  });
  clock = saved;
  expect(res.status, res.text).toBe(201);
  return String((res.body.payment as { paymentID: string } | undefined)?.paymentID ?? res.body.paymentID);
}

async function summary(query = "", key?: string) {
  return t.request<Summary>("GET", `/v1/analytics/summary${query}`, key ? { key } : {});
}

async function setTimeZone(timeZone: string, key?: string) {
  const res = await t.request("PUT", "/v1/organization", { body: { timeZone }, ...(key ? { key } : {}) });
  expect(res.status, res.text).toBe(200);
  expect(res.body.timeZone).toBe(timeZone);
}

describe("GET /v1/analytics/summary", () => {
  it("counts a gift made at 23:30 local time on that local day, not on the UTC day", async () => {
    await setTimeZone("America/New_York");
    // 03:30 UTC on 10 March is 23:30 on 9 March in New York (EDT, UTC−4 since 8 March).
    await giftAt("2026-03-10T03:30:00Z", 25);
    // 04:30 UTC is 00:30 on 10 March there.
    await giftAt("2026-03-10T04:30:00Z", 40);
    const res = await summary("?from=2026-03-08&to=2026-03-10");
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ timeZone: "America/New_York", today: "2026-03-10", currency: "USD" });
    expect(res.body.byDay).toEqual([
      { date: "2026-03-08", amount: 0, count: 0 },
      { date: "2026-03-09", amount: 25, count: 1 },
      { date: "2026-03-10", amount: 40, count: 1 },
    ]);
    expect(res.body.raised).toEqual({ today: 40, last30Days: 65, thisYear: 65 });

    // The same gifts in UTC both fall on 10 March.
    await setTimeZone("UTC");
    const utc = await summary("?from=2026-03-09&to=2026-03-10");
    expect(utc.body.byDay).toEqual([
      { date: "2026-03-09", amount: 0, count: 0 },
      { date: "2026-03-10", amount: 65, count: 2 },
    ]);
    expect(utc.body.raised.today).toBe(65);
  });

  it("splits days on the minute in a zone whose offset is not whole hours (Kathmandu, UTC+05:45)", async () => {
    await setTimeZone("Asia/Kathmandu");
    await giftAt("2026-03-09T18:14:00Z", 10); // 23:59 on 9 March there
    await giftAt("2026-03-09T18:16:00Z", 20); // 00:01 on 10 March there
    const res = await summary("?from=2026-03-09&to=2026-03-10");
    expect(res.status, res.text).toBe(200);
    expect(res.body.byDay).toEqual([
      { date: "2026-03-09", amount: 10, count: 1 },
      { date: "2026-03-10", amount: 20, count: 1 },
    ]);
  });

  it("counts payments net of refunds; a gift refunded in full is no gift", async () => {
    const formId = await createForm(t, validForms.standard());
    const kept = await giftAt("2026-03-10T10:00:00Z", 100, { formId });
    const gone = await giftAt("2026-03-10T10:05:00Z", 50, { formId });
    expect((await t.request("POST", `/v1/payments/${kept}/refund`, { body: { amount: 30 } })).status).toBe(
      200,
    );
    expect((await t.request("POST", `/v1/payments/${gone}/refund`)).status).toBe(200);
    const res = await summary("?from=2026-03-10&to=2026-03-10");
    expect(res.body.range).toEqual({ raised: 70, gifts: 1, donors: 1 });
    expect(res.body.byDay).toEqual([{ date: "2026-03-10", amount: 70, count: 1 }]);
    expect(res.body.raised.today).toBe(70);
  });

  it("counts distinct donors by contact: two gifts of one donor are one donor", async () => {
    const formId = await createForm(t, validForms.standard());
    await giftAt("2026-03-10T09:00:00Z", 5, { formId, email: "same@example.org" });
    await giftAt("2026-03-10T09:10:00Z", 5, { formId, email: "SAME@example.org" });
    await giftAt("2026-03-10T09:20:00Z", 5, { formId, email: "other@example.org" });
    const res = await summary();
    expect(res.body.range).toEqual({ raised: 15, gifts: 3, donors: 2 });
  });

  it("sums today, the last 30 days and this year from the organization's today, whatever the range", async () => {
    const formId = await createForm(t, validForms.standard());
    await giftAt("2026-03-10T08:00:00Z", 1, { formId }); // today
    await giftAt("2026-02-09T08:00:00Z", 2, { formId }); // 29 days ago: within the last 30
    await giftAt("2026-02-08T08:00:00Z", 4, { formId }); // 30 days ago: not
    await giftAt("2026-01-01T00:30:00Z", 8, { formId }); // this year
    await giftAt("2025-12-31T23:30:00Z", 16, { formId }); // last year
    const res = await summary("?from=2025-12-01&to=2025-12-31");
    expect(res.body.raised).toEqual({ today: 1, last30Days: 3, thisYear: 15 });
    expect(res.body.range.raised).toBe(16);
  });

  it("leaves out other organizations' payments", async () => {
    const other = await t.newOrg({ name: "Other" });
    const otherForm = (
      await t.request<{ formID: string }>("POST", "/v1/forms", {
        body: validForms.standard(),
        key: other.key,
      })
    ).body.formID;
    await giftAt("2026-03-10T09:00:00Z", 500, { formId: otherForm });
    await giftAt("2026-03-10T09:05:00Z", 7);
    const res = await summary();
    expect(res.body.range).toEqual({ raised: 7, gifts: 1, donors: 1 });
    expect(res.body.raised.today).toBe(7);
    const theirs = await summary("", other.key);
    expect(theirs.body.range).toEqual({ raised: 500, gifts: 1, donors: 1 });
  });

  it("values active recurring gifts per month: weekly × 52 ÷ 12, monthly as is", async () => {
    const formId = await createForm(t, {
      ...validForms.standard(),
      frequencies: ["ONE_TIME", "MONTHLY", "WEEKLY"],
    });
    await giftAt("2026-03-01T10:00:00Z", 10, { formId, frequency: "MONTHLY" });
    await giftAt("2026-03-01T11:00:00Z", 12, { formId, frequency: "WEEKLY" });
    await giftAt("2026-03-01T11:30:00Z", 1, { formId, frequency: "WEEKLY" });
    const res = await summary();
    // 10 + 12 × 52 ÷ 12 + 1 × 52 ÷ 12 = 10 + 52 + 4.3333… = 66.33
    expect(res.body.recurring).toEqual({ active: 3, monthlyValue: 66.33 });
  });

  it("lists failed recurring charges and open disputes to act on, with their ids", async () => {
    const formId = await createForm(t, validForms.standard());
    const base = (id: string, at: string): PaymentsTable => ({
      id,
      organization_id: t.org.id,
      form_id: formId,
      contact_id: null,
      subscription_id: null,
      status: "COMPLETED",
      amount_cents: 2500,
      fee_cents: 0,
      refunded_cents: 0,
      currency: "USD",
      fund: "General",
      form_title: "Appeal",
      frequency: "ONE_TIME",
      cover_fees: 0,
      anonymous: 0,
      email: "d@example.org",
      email_key: "d@example.org",
      first_name: "D",
      last_name: "Onor",
      payment_method_type: "card",
      card_brand: "visa",
      last4: "4242",
      fingerprint: null,
      processor_payment_id: null,
      charge_key: `k:${id}`,
      failure_code: null,
      failure_message: null,
      details: JSON.stringify({ lines: [], customInputs: [], utm: {}, donor: {}, hold: [] }),
      processor: "sandbox",
      dispute: null,
      created_at: at,
      updated_at: at,
    });
    const bankFailed = prefixedId("pay", Date.now());
    await insertPayment(t.store.db, {
      ...base(bankFailed, "2026-03-09T10:00:00.000Z"),
      status: "FAILED",
      payment_method_type: "bank",
      card_brand: null,
      failure_message: "Account closed",
    });
    // A card declined at checkout: the donor saw it; nothing to act on.
    await insertPayment(t.store.db, {
      ...base(prefixedId("pay", Date.now()), "2026-03-09T11:00:00.000Z"),
      status: "FAILED",
      failure_message: "Card declined",
    });
    const dispute = (status: string) =>
      JSON.stringify({
        id: `dp_${status}`,
        status,
        reason: "fraudulent",
        amountCents: 2500,
        fundsWithdrawn: true,
        createdAt: "2026-03-09T12:00:00.000Z",
        updatedAt: "2026-03-09T12:00:00.000Z",
      });
    const open = prefixedId("pay", Date.now());
    await insertPayment(t.store.db, {
      ...base(open, "2025-06-01T10:00:00.000Z"),
      dispute: dispute("needs_response"),
    });
    await insertPayment(t.store.db, {
      ...base(prefixedId("pay", Date.now()), "2026-03-01T10:00:00.000Z"),
      dispute: dispute("won"),
    });
    // Another organization's failed bank debit and open dispute are not this one's to act on.
    const other = await t.newOrg({ name: "Other" });
    const otherForm = (
      await t.request<{ formID: string }>("POST", "/v1/forms", {
        body: validForms.standard(),
        key: other.key,
      })
    ).body.formID;
    await insertPayment(t.store.db, {
      ...base(prefixedId("pay", Date.now()), "2026-03-09T10:30:00.000Z"),
      organization_id: other.id,
      form_id: otherForm,
      status: "FAILED",
      payment_method_type: "bank",
    });
    await insertPayment(t.store.db, {
      ...base(prefixedId("pay", Date.now()), "2026-03-09T10:40:00.000Z"),
      organization_id: other.id,
      form_id: otherForm,
      dispute: dispute("needs_response"),
    });

    const res = await summary();
    expect(res.status, res.text).toBe(200);
    expect(res.body.failed.count).toBe(1);
    expect(res.body.failed.recent).toMatchObject([
      { paymentID: bankFailed, failureMessage: "Account closed", paymentMethod: "bank", amount: 25 },
    ]);
    expect(res.body.disputed.count).toBe(1);
    expect(res.body.disputed.recent).toMatchObject([
      { paymentID: open, dispute: { status: "needs_response" } },
    ]);

    // A key that reads analytics but not payments gets the counts without the donors' names.
    const { key: analyticsOnly } = await createApiKey(
      t.store.db,
      { organizationId: t.org.id, sandbox: false, permissions: ["analytics:read"] },
      Date.now(),
    );
    const narrow = await summary("", analyticsOnly);
    expect(narrow.status).toBe(200);
    expect(narrow.body.failed).toEqual({ count: 1, recent: [] });
    expect(narrow.body.disputed).toEqual({ count: 1, recent: [] });
  });

  it("defaults to the 90 days ending today, every day listed", async () => {
    const res = await summary();
    expect(res.status).toBe(200);
    expect(res.body.to).toBe("2026-03-10");
    expect(res.body.from).toBe("2025-12-11");
    expect(res.body.byDay).toHaveLength(90);
    expect(res.body.byDay[0]).toEqual({ date: "2025-12-11", amount: 0, count: 0 });
    expect(res.body.byDay[89].date).toBe("2026-03-10");
    const leap = await summary("?from=2024-01-01&to=2024-12-31");
    expect(leap.status, leap.text).toBe(200);
    expect(leap.body.byDay).toHaveLength(366);
  });

  it("refuses a bad date, from after to, and a range of more than 366 days with a 400 naming the problem", async () => {
    const bad = await summary("?from=2026-02-30");
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("from");
    expect(bad.text).toContain("YYYY-MM-DD");
    expect((await summary("?to=yesterday")).status).toBe(400);
    const reversed = await summary("?from=2026-03-10&to=2026-03-01");
    expect(reversed.status).toBe(400);
    expect(reversed.text).toContain("must not be after");
    const long = await summary("?from=2025-01-01&to=2026-01-02");
    expect(long.status).toBe(400);
    expect(long.text).toContain("at most 366");
  });

  it("refuses a day past 9998 or before 1970 with a 400 (the range's next day must stay a plain date)", async () => {
    for (const query of ["?to=9999-12-30", "?to=9999-12-31", "?from=9999-01-01", "?to=0000-03-01"]) {
      const res = await summary(query);
      expect(res.status, query).toBe(400);
      expect(res.text, query).toContain("from 1970-01-01 to 9998-12-31");
    }
    expect((await summary("?from=9998-12-01&to=9998-12-31")).status).toBe(200);
  });

  it("answers 403 to a key without analytics:read", async () => {
    const narrow = await t.newOrg({ permissions: ["donations:read"] });
    const res = await summary("", narrow.key);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: "Missing permission: analytics:read" });
  });

  it("refuses a time zone that is not an IANA name", async () => {
    const res = await t.request("PUT", "/v1/organization", { body: { timeZone: "Mars/Olympus_Mons" } });
    expect(res.status).toBe(400);
    expect(res.text).toContain("IANA");
  });
});

describe(`money a dispute took back (${dialect})`, () => {
  it("is not raised: the summary, the forms, a contact's value and the export's Net count only what was kept", async () => {
    const formId = await createForm(t, validForms.standard());
    const lost = await giftAt("2026-03-10T09:00:00Z", 100, { formId, email: "lost@example.org" });
    const partial = await giftAt("2026-03-10T09:10:00Z", 50, { formId, email: "part@example.org" });
    await giftAt("2026-03-10T09:20:00Z", 25, { formId, email: "kept@example.org" });
    const dispute = (amountCents: number, status: string, fundsWithdrawn: boolean) => ({
      id: `dp_${amountCents}`,
      status,
      reason: "fraudulent",
      amountCents,
      fundsWithdrawn,
      createdAt: "2026-03-10T10:00:00Z",
    });
    await t.store.transact((trx) => recordDispute(trx, clock, lost, dispute(10_000, "lost", true)));
    await t.store.transact((trx) => recordDispute(trx, clock, partial, dispute(2000, "lost", true)));

    const res = await summary("?from=2026-03-10&to=2026-03-10");
    expect(res.status, res.text).toBe(200);
    // 100 taken back in full: no gift; 50 less 20 taken back: 30; 25 kept.
    expect(res.body.range).toEqual({ raised: 55, gifts: 2, donors: 2 });
    expect(res.body.raised.today).toBe(55);

    const forms = await t.request<{ forms: { raised: number; gifts: number }[] }>(
      "GET",
      `/v1/analytics/forms?formIDs=${formId}`,
    );
    expect(forms.body.forms[0]).toMatchObject({ raised: 55, gifts: 2 });

    const contacts = await t.request<{ contacts: { totalTransactionValue: number }[] }>(
      "GET",
      "/v1/contacts?email=part@example.org",
    );
    expect(contacts.body.contacts[0].totalTransactionValue).toBe(30);

    const csv = await t.app.request(`/v1/payments?formId=${formId}`, {
      headers: { Authorization: `Bearer ${t.org.key}`, Accept: "text/csv" },
    });
    const [header, ...lines] = (await csv.text()).trim().split("\r\n");
    const net = header.split(",").indexOf("Net");
    expect(lines.map((line) => line.split(",")[net]).sort()).toEqual(["0.00", "25.00", "30.00"]);
  });
});

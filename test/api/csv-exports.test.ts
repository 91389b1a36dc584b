import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EXPORT_BATCH } from "../../server/api/csvExport.js";
import { prefixedId } from "../../server/ids.js";
import { recordChange } from "../../server/store/auditLog.js";
import { createContact } from "../../server/store/contacts.js";
import { insertPayment } from "../../server/store/payments.js";
import type { PaymentsTable } from "../../server/store/schema.js";
import { CARDS, card, checkout, createForm, donor } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * The list endpoints with `Accept: text/csv`: every matching row (across batches), the filters of the JSON
 * list, only the caller's organization, dates in its time zone, and text a spreadsheet would run shown as
 * text. Each answer is parsed back with the RFC 4180 reader below.
 */

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

/** RFC 4180: records end with CRLF, quoted fields may hold commas, CRLF and doubled quotes. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = "";
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (ch === '"') {
        quoted = false;
        i++;
      } else {
        field += ch;
        i++;
      }
    } else if (ch === '"' && field === "") {
      quoted = true;
      i++;
    } else if (ch === ",") {
      record.push(field);
      field = "";
      i++;
    } else if (ch === "\r" && text[i + 1] === "\n") {
      record.push(field);
      records.push(record);
      record = [];
      field = "";
      i += 2;
    } else {
      if (ch === "\n" || ch === "\r") throw new Error(`bare line break at ${i}`);
      field += ch;
      i++;
    }
  }
  if (field !== "" || record.length > 0) throw new Error("last record does not end with CRLF");
  return records;
}

/** The CSV answer of a GET as objects keyed by header, after checking its framing. */
async function getCsv(path: string, key?: string) {
  const res = await t.app.request(path, {
    headers: { Authorization: `Bearer ${key ?? t.org.key}`, Accept: "text/csv" },
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
  if (res.status !== 200) return { status: res.status, headers: res.headers, text, header: [], rows: [] };
  expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
  const [header, ...records] = parseCsv(text.slice(1));
  for (const r of records) expect(r).toHaveLength(header.length);
  const rows = records.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]])));
  return { status: res.status, headers: res.headers, text, header, rows };
}

function storedPayment(organizationId: string, formId: string, createdAt: string): PaymentsTable {
  const id = prefixedId("pay", Date.now());
  return {
    id,
    organization_id: organizationId,
    form_id: formId,
    contact_id: null,
    subscription_id: null,
    status: "COMPLETED",
    amount_cents: 1050,
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
    charge_key: `bulk:${id}`,
    failure_code: null,
    failure_message: null,
    details: JSON.stringify({
      lines: [],
      subtotalCents: 1050,
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

async function bulkPayments(
  organizationId: string,
  formId: string,
  n: number,
  fields: Partial<PaymentsTable> = {},
) {
  const ids: string[] = [];
  await t.store.db.transaction().execute(async (trx) => {
    for (let i = 0; i < n; i++) {
      const at = new Date(Date.parse("2026-03-01T00:00:00Z") + i * 60_000).toISOString();
      const row = { ...storedPayment(organizationId, formId, at), ...fields };
      await insertPayment(trx, row);
      ids.push(row.id);
    }
  });
  return ids;
}

describe("GET /v1/payments with Accept: text/csv", () => {
  it("streams every payment of the organization across several batches, ignoring limit, and no other's", async () => {
    const formId = await createForm(t, validForms.standard());
    const mine = await bulkPayments(t.org.id, formId, EXPORT_BATCH * 2 + 3);
    const other = await t.newOrg({ name: "Other" });
    const otherForm = (
      await t.request<{ formID: string }>("POST", "/v1/forms", {
        body: validForms.standard(),
        key: other.key,
      })
    ).body.formID;
    const theirs = await bulkPayments(other.id, otherForm, 3);

    const res = await getCsv("/v1/payments?limit=1");
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/csv; charset=utf-8/);
    expect(res.headers.get("Content-Disposition")).toBe('attachment; filename="payments-2026-03-10.csv"');
    expect(res.headers.get("X-RateLimit-Limit")).not.toBeNull();
    expect(res.header.slice(0, 4)).toEqual(["Payment ID", "Date (UTC)", "Status", "Amount"]);
    const ids = res.rows.map((r) => r["Payment ID"]);
    expect(ids).toHaveLength(mine.length);
    expect(new Set(ids)).toEqual(new Set(mine));
    for (const id of theirs) expect(ids).not.toContain(id);
    // Newest first, as the list.
    expect(ids[0]).toBe(mine[mine.length - 1]);
    expect(res.rows[0]).toMatchObject({ Amount: "10.50", Currency: "USD", Status: "COMPLETED" });
  });

  it("applies the list's filters: status and days of the organization's time zone", async () => {
    await t.request("PUT", "/v1/organization", { body: { timeZone: "America/New_York" } });
    const formId = await createForm(t, validForms.standard());
    const [late] = await bulkPayments(t.org.id, formId, 1, { created_at: "2026-03-10T03:30:00.000Z" });
    const [failed] = await bulkPayments(t.org.id, formId, 1, {
      created_at: "2026-03-10T05:00:00.000Z",
      status: "FAILED",
    });
    await bulkPayments(t.org.id, formId, 2, { created_at: "2026-03-10T06:00:00.000Z" });

    const onNinth = await getCsv("/v1/payments?from=2026-03-09&to=2026-03-09");
    expect(onNinth.rows.map((r) => r["Payment ID"])).toEqual([late]);
    // 03:30 UTC is 23:30 on the 9th in New York, and the column says which zone it is in.
    expect(onNinth.rows[0]["Date (America/New_York)"]).toBe("2026-03-09 23:30:00");

    const failedOnly = await getCsv("/v1/payments?status=FAILED");
    expect(failedOnly.rows.map((r) => r["Payment ID"])).toEqual([failed]);

    const json = await t.request<{ payments: unknown[] }>("GET", "/v1/payments?status=COMPLETED");
    const csv = await getCsv("/v1/payments?status=COMPLETED");
    expect(csv.rows).toHaveLength(json.body.payments.length);
    expect(csv.rows).toHaveLength(3);
  });

  it("writes donor text a spreadsheet would run as a formula as text, and keeps any script and punctuation", async () => {
    const formId = await createForm(t, validForms.standard());
    const res = await checkout(t, formId, {
      amount: 25.5,
      donor: {
        firstName: '=HYPERLINK("http://evil.example","Click")',
        lastName: 'José, "山田"',
        email: "x@example.org",
      },
      paymentMethod: card(),
    });
    expect(res.status, res.text).toBe(201);
    const csv = await getCsv("/v1/payments");
    expect(csv.rows).toHaveLength(1);
    expect(csv.rows[0]["First name"]).toBe('\'=HYPERLINK("http://evil.example","Click")');
    expect(csv.rows[0]["Last name"]).toBe('José, "山田"');
    expect(csv.rows[0].Amount).toBe("25.50");
    expect(csv.rows[0].Net).toBe("25.50");
  });

  it("leaves Net empty for a payment that collected nothing (declined), so the column sums to what was raised", async () => {
    const formId = await createForm(t, validForms.standard());
    const declined = await checkout(t, formId, {
      amount: 25,
      donor: donor(),
      paymentMethod: card(CARDS.declined),
    });
    expect(declined.status, declined.text).toBe(402);
    const paid = await checkout(t, formId, { amount: 10, donor: donor(), paymentMethod: card() });
    expect(paid.status, paid.text).toBe(201);
    const csv = await getCsv("/v1/payments");
    const byStatus = Object.fromEntries(csv.rows.map((r) => [r.Status, r]));
    expect(byStatus.FAILED).toMatchObject({ Amount: "25.00", Refunded: "0.00", Net: "" });
    expect(byStatus.COMPLETED).toMatchObject({ Amount: "10.00", Net: "10.00" });
  });

  it("keeps the JSON page without Accept: text/csv, and the permission with it", async () => {
    const json = await t.request("GET", "/v1/payments");
    expect(json.status).toBe(200);
    expect(json.headers.get("Content-Type")).toMatch(/application\/json/);
    const narrow = await t.newOrg({ permissions: ["contacts:read"] });
    const refused = await getCsv("/v1/payments", narrow.key);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text)).toEqual({ error: "Missing permission: donations:read" });
    const bad = await getCsv("/v1/payments?status=LOST");
    expect(bad.status).toBe(400);
  });
});

describe("GET /v1/contacts with Accept: text/csv", () => {
  it("exports every live contact across batches with its totals, filtered by search, and no other organization's", async () => {
    const n = EXPORT_BATCH + 2;
    const ids: string[] = [];
    await t.store.db.transaction().execute(async (trx) => {
      for (let i = 0; i < n; i++) {
        const { row } = await createContact(
          trx,
          t.org.id,
          {
            firstName: i === 0 ? "@Zoë" : "Pat",
            lastName: `Number ${i}`,
            emails: [{ value: `pat${i}@example.org`, isPrimary: true, isVerified: false }],
            phones: [],
            addresses: [],
            emailConsent: "UNKNOWN",
            smsConsent: "UNKNOWN",
            communicationConsent: "UNKNOWN",
          },
          new Date(Date.parse("2026-03-01T00:00:00Z") + i * 1000).toISOString(),
        );
        ids.push(row.id);
      }
    });
    const other = await t.newOrg({ name: "Other" });
    const theirs = await t.request<{ contact: { id: string } }>("POST", "/v1/contacts", {
      key: other.key,
      body: { firstName: "Pat", lastName: "Elsewhere", email: "elsewhere@example.org" },
    });
    expect(theirs.status).toBe(201);

    const all = await getCsv("/v1/contacts");
    expect(all.status, all.text.slice(0, 300)).toBe(200);
    expect(all.headers.get("Content-Disposition")).toBe('attachment; filename="contacts-2026-03-10.csv"');
    expect(new Set(all.rows.map((r) => r["Contact ID"]))).toEqual(new Set(ids));
    expect(all.rows.map((r) => r["Contact ID"])).not.toContain(theirs.body.contact.id);
    const zoe = all.rows.find((r) => r["Contact ID"] === ids[0]);
    expect(zoe).toMatchObject({
      "First name": "'@Zoë",
      Email: "pat0@example.org",
      Gifts: "0",
      "Total given": "0.00",
    });

    const found = await getCsv("/v1/contacts?search=number%2012");
    expect(found.rows.map((r) => r["Last name"]).sort()).toEqual(
      ["Number 12", ...Array.from({ length: 10 }, (_, i) => `Number ${120 + i}`)].sort(),
    );
  });
});

describe("GET /v1/subscriptions with Accept: text/csv", () => {
  it("exports the recurring gifts of the status asked for, in the organization's time zone", async () => {
    await t.request("PUT", "/v1/organization", { body: { timeZone: "Europe/Paris" } });
    const formId = await createForm(t, { ...validForms.standard(), frequencies: ["ONE_TIME", "MONTHLY"] });
    const subs: string[] = [];
    for (const amount of [10, 20]) {
      const res = await checkout(t, formId, {
        amount,
        frequency: "MONTHLY",
        donor: donor(),
        paymentMethod: card(),
      });
      expect(res.status, res.text).toBe(201);
      const payment = res.body.payment as { subscription: { id: string } };
      subs.push(payment.subscription.id);
    }
    const cancel = await t.request("PUT", `/v1/subscriptions/${subs[0]}`, { body: { status: "CANCELLED" } });
    expect(cancel.status, cancel.text).toBe(200);

    const active = await getCsv("/v1/subscriptions?status=ACTIVE");
    expect(active.status, active.text.slice(0, 300)).toBe(200);
    expect(active.rows.map((r) => r["Subscription ID"])).toEqual([subs[1]]);
    expect(active.rows[0]).toMatchObject({ Amount: "20.00", Currency: "USD", Frequency: "MONTHLY" });
    // Made at 12:00 UTC: 13:00 in Paris.
    expect(active.rows[0]["Created (Europe/Paris)"]).toBe("2026-03-10 13:00:00");
    const all = await getCsv("/v1/subscriptions");
    expect(all.rows).toHaveLength(2);
  });
});

describe("GET /v1/audit-log with Accept: text/csv", () => {
  it("exports the entries of the action asked for, the organization's only, times in its zone", async () => {
    await t.request("PUT", "/v1/organization", { body: { timeZone: "Asia/Kolkata" } });
    const other = await t.newOrg({ name: "Other" });
    const change = (organizationId: string, keyId: string, subjectId: string, title: string) =>
      recordChange(
        t.store.db,
        {
          organizationId,
          actor: { type: "key", id: keyId },
          action: "form.updated",
          subjectType: "form",
          subjectId,
          before: { title: "Old" },
          after: { title },
        },
        clock,
      );
    await change(t.org.id, t.org.keyId, "form-a", "=cmd|' /C calc'!A0");
    await change(other.id, other.keyId, "form-theirs", "Theirs");

    const csv = await getCsv("/v1/audit-log?action=form.updated");
    expect(csv.status, csv.text.slice(0, 300)).toBe(200);
    expect(csv.headers.get("Content-Disposition")).toBe('attachment; filename="audit-log-2026-03-10.csv"');
    expect(csv.rows).toHaveLength(1);
    expect(csv.rows[0]).toMatchObject({
      "Actor type": "key",
      "Actor ID": t.org.keyId,
      Action: "form.updated",
      "Subject ID": "form-a",
      // 12:00 UTC is 17:30 in India.
      "Time (Asia/Kolkata)": "2026-03-10 17:30:00",
    });
    expect(JSON.parse(csv.rows[0]["After (JSON)"])).toEqual({ title: "=cmd|' /C calc'!A0" });
    // The PUT above is an entry of its own, of another action.
    const all = await getCsv("/v1/audit-log");
    expect(all.rows.map((r) => r.Action).sort()).toEqual(["form.updated", "organization.updated"]);
  });
});

describe("the OpenAPI document", () => {
  it("offers text/csv beside JSON for the lists", async () => {
    const doc = (
      await t.request<{
        paths: Record<string, { get: { responses: Record<string, { content: Record<string, unknown> }> } }>;
      }>("GET", "/v1/openapi.json")
    ).body;
    for (const path of ["/v1/payments", "/v1/contacts", "/v1/subscriptions", "/v1/audit-log"])
      expect(Object.keys(doc.paths[path].get.responses["200"].content).sort(), path).toEqual([
        "application/json",
        "text/csv",
      ]);
  });
});

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EXPORT_BATCH } from "../../server/api/csvExport.js";
import { prefixedId } from "../../server/ids.js";
import { insertPayment } from "../../server/store/payments.js";
import type { PaymentsTable } from "../../server/store/schema.js";
import { emailKey } from "../../shared/email.js";
import { card, checkout, createForm } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * The filters of the payments, subscriptions and contacts lists (the dashboard's search boxes): each filter
 * alone and combined, search by name, e-mail, id and last 4, LIKE wildcards taken literally, the
 * organization's days, paging under a filter, cursors bound to their filters, other organizations' rows
 * never shown, and the 400s of bad values.
 */

type Json = Record<string, unknown>;
interface Page {
  count: number;
  hasMore: boolean;
  lastEvaluatedKey?: string;
  payments?: Json[];
  subscriptions?: Json[];
  contacts?: Json[];
}

let t: TestApp;
const clock = Date.parse("2026-06-01T12:00:00Z");

beforeEach(async () => {
  t = await setupTestApp({
    now: () => clock,
    env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0", RATE_LIMIT_PER_HOUR: "100000" },
  });
});
afterEach(() => t.close());

let sequence = 0;

/** A settled payment written through the store, shaped like a checkout's, with the fields a test sets. */
function payment(formId: string, fields: Partial<PaymentsTable> = {}): PaymentsTable {
  sequence++;
  const createdAt =
    fields.created_at ?? new Date(Date.parse("2026-05-01T12:00:00Z") + sequence * 60_000).toISOString();
  return {
    id: prefixedId("pay", Date.now()),
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
    email: `donor${sequence}@example.org`,
    email_key: emailKey(fields.email ?? `donor${sequence}@example.org`),
    first_name: "Pat",
    last_name: `Donor${sequence}`,
    payment_method_type: "card",
    card_brand: "visa",
    last4: "1111",
    fingerprint: null,
    processor_payment_id: null,
    charge_key: `test:${prefixedId("pay", Date.now())}`,
    failure_code: null,
    failure_message: null,
    details: JSON.stringify({
      lines: [],
      subtotalCents: 2500,
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
    ...fields,
    created_at: createdAt,
    updated_at: createdAt,
  };
}

async function store(rows: PaymentsTable[]): Promise<PaymentsTable[]> {
  for (const row of rows) await insertPayment(t.store.db, row);
  return rows;
}

async function list(path: string, key?: string) {
  return t.request<Page & { error?: string; details?: string[] }>("GET", path, key ? { key } : {});
}

/** Every row of a list under a query, page by page; fails on a repeated row. */
async function walk(path: string, query: string, limit: number, itemsKey: keyof Page, idKey: string) {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 100; n++) {
    const q = `${query}&limit=${limit}${cursor ? `&lastEvaluatedKey=${encodeURIComponent(cursor)}` : ""}`;
    const res = await list(`${path}?${q}`);
    expect(res.status, res.text).toBe(200);
    const items = res.body[itemsKey] as Json[];
    expect(items.length).toBeLessThanOrEqual(limit);
    seen.push(...items.map((p) => String(p[idKey])));
    if (!res.body.hasMore) break;
    cursor = res.body.lastEvaluatedKey;
  }
  expect(new Set(seen).size).toBe(seen.length);
  return seen;
}

const paymentIds = (path: string) => walk("/v1/payments", path, 100, "payments", "paymentID");
const newestFirst = (rows: PaymentsTable[]) =>
  [...rows].sort((a, b) => (a.created_at < b.created_at ? 1 : -1)).map((r) => r.id);

/** A monthly gift through the real checkout: a contact, a subscription and its first payment. */
async function monthlyGift(formId: string, donor: { firstName: string; lastName: string; email: string }) {
  const res = await checkout(t, formId, { amount: 10, frequency: "MONTHLY", donor, paymentMethod: card() });
  expect(res.status, res.text).toBe(201);
  const paid = res.body.payment as { paymentID: string; subscription: { id: string } };
  const view = await t.request<Json>("GET", `/v1/payments/${paid.paymentID}`);
  return {
    paymentId: paid.paymentID,
    subscriptionId: paid.subscription.id,
    contactId: String(view.body.contactId),
  };
}

describe(`GET /v1/payments filters (${dialect})`, () => {
  it("each filter alone and combined returns exactly the matching payments, newest first", async () => {
    const formA = await createForm(t, { ...validForms.standard(), frequencies: ["ONE_TIME", "MONTHLY"] });
    const formB = await createForm(t, validForms.standard());
    const gift = await monthlyGift(formA, {
      firstName: "Grace",
      lastName: "Hopper",
      email: "grace@navy.example",
    });
    const rows = await store([
      payment(formA, { amount_cents: 500 }),
      payment(formA, { amount_cents: 2500, status: "FAILED" }),
      payment(formB, { amount_cents: 10_000, status: "REFUNDED", refunded_cents: 10_000 }),
      payment(formB, { amount_cents: 2500, payment_method_type: "bank", card_brand: null, last4: "6789" }),
      payment(formA, {
        amount_cents: 1000,
        frequency: "MONTHLY",
        subscription_id: gift.subscriptionId,
        contact_id: gift.contactId,
      }),
      payment(formB, {
        amount_cents: 0,
        payment_method_type: "none",
        card_brand: null,
        last4: null,
        status: "COMPLETED",
      }),
      payment(formA, { amount_cents: 2501, frequency: "WEEKLY" }),
    ]);
    // The checkout's own payment (MONTHLY, $10, form A, the gift's contact and subscription) is in the list too.
    const all = await paymentIds("");
    expect(all).toHaveLength(rows.length + 1);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const giftRow = { ...(byId.get(rows[4].id) as PaymentsTable), id: gift.paymentId, created_at: "" };
    const matching = (pred: (r: PaymentsTable) => boolean) =>
      all.filter((id) => pred(byId.get(id) ?? giftRow));

    const cases: [string, (r: PaymentsTable) => boolean][] = [
      [`formID=${formB}`, (r) => r.form_id === formB],
      ["status=FAILED", (r) => r.status === "FAILED"],
      ["status=REFUNDED", (r) => r.status === "REFUNDED"],
      ["paymentMethod=bank", (r) => r.payment_method_type === "bank"],
      ["paymentMethod=none", (r) => r.payment_method_type === "none"],
      ["frequency=MONTHLY", (r) => r.frequency === "MONTHLY"],
      ["frequency=WEEKLY", (r) => r.frequency === "WEEKLY"],
      ["minAmount=25", (r) => r.amount_cents >= 2500],
      ["maxAmount=25", (r) => r.amount_cents <= 2500],
      ["minAmount=25&maxAmount=25", (r) => r.amount_cents === 2500],
      ["minAmount=25.01", (r) => r.amount_cents >= 2501],
      ["maxAmount=0", (r) => r.amount_cents === 0],
      [`subscriptionId=${gift.subscriptionId}`, (r) => r.subscription_id === gift.subscriptionId],
      [`contactId=${gift.contactId}`, (r) => r.contact_id === gift.contactId],
      [
        `formID=${formA}&status=COMPLETED&maxAmount=20`,
        (r) => r.form_id === formA && r.status === "COMPLETED" && r.amount_cents <= 2000,
      ],
      [
        `formID=${formA}&frequency=MONTHLY&contactId=${gift.contactId}`,
        (r) => r.frequency === "MONTHLY" && r.contact_id === gift.contactId,
      ],
      ["status=FAILED&paymentMethod=bank", () => false],
    ];
    for (const [query, pred] of cases) {
      const expected = matching(pred);
      if (!query.includes("FAILED&paymentMethod")) expect(expected.length, query).toBeGreaterThan(0);
      expect(await paymentIds(query), query).toEqual(expected);
    }
    // The filters sit beside the list's own rules: the PROCESSING row of a charge in flight stays hidden.
    await store([payment(formA, { status: "PROCESSING", amount_cents: 777 })]);
    expect(await paymentIds("minAmount=7.77&maxAmount=7.77")).toEqual([]);
  });

  it("search finds a donor by any part of the name or e-mail in any case, an exact payment id, or a card's or bank's last 4", async () => {
    const form = await createForm(t, validForms.standard());
    const [ada, grace, elodie, petr, bankRow, other] = await store([
      payment(form, {
        first_name: "Ada",
        last_name: "Lovelace",
        email: "ada@analytical.example",
        last4: "4242",
      }),
      payment(form, {
        first_name: "Grace",
        last_name: "Hopper",
        email: "g.hopper@navy.example",
        last4: "0005",
      }),
      payment(form, { first_name: "Élodie", last_name: "Durand", email: "elodie@example.fr" }),
      payment(form, { first_name: "Пётр", last_name: "Иванов", email: "petr@example.ru" }),
      payment(form, {
        payment_method_type: "bank",
        card_brand: null,
        last4: "6789",
        first_name: "Bank",
        last_name: "Giver",
      }),
      payment(form, { first_name: "Someone", last_name: "Else", email: "someone@else.example" }),
    ]);
    const cases: [string, PaymentsTable[]][] = [
      ["ada", [ada]],
      ["ADA", [ada]],
      ["love", [ada]],
      ["ada lovelace", [ada]],
      ["Ada  Lovelace".replace("  ", " "), [ada]],
      ["hopper", [grace]],
      ["NAVY.example", [grace]],
      ["g.hopper@navy.example", [grace]],
      ["élodie", [elodie]],
      ["ÉLODIE", [elodie]],
      ["пётр", [petr]],
      ["ИВАНОВ", [petr]],
      ["4242", [ada]],
      ["6789", [bankRow]],
      [grace.id, [grace]],
      [grace.id.toUpperCase(), [grace]],
      ["  hopper  ", [grace]],
      ["nobody", []],
    ];
    for (const [search, expected] of cases)
      expect(await paymentIds(`search=${encodeURIComponent(search)}`), search).toEqual(newestFirst(expected));
    // A payment id of a payment that is not there finds nothing (not every payment).
    expect(await paymentIds(`search=${prefixedId("pay", Date.now())}`)).toEqual([]);
    // An empty search is no search.
    expect(await paymentIds("search=")).toHaveLength(6);
    // Search combines with the other filters.
    expect(await paymentIds(`search=example&paymentMethod=card&maxAmount=100`)).toEqual(
      newestFirst([ada, grace, elodie, petr, other]),
    );
  });

  it("takes %, _ and \\ in a search as themselves, not as LIKE wildcards", async () => {
    const form = await createForm(t, validForms.standard());
    const [percent, underscore, plainX, backslash] = await store([
      payment(form, { first_name: "Ten%", last_name: "Off", email: "percent@example.org" }),
      payment(form, { first_name: "Snake", last_name: "Case", email: "a_b@example.org" }),
      payment(form, { first_name: "Plain", last_name: "Axb", email: "axb@example.org" }),
      payment(form, { first_name: "Back\\slash", last_name: "Name", email: "slash@example.org" }),
    ]);
    expect(await paymentIds("search=%25")).toEqual([percent.id]);
    expect(await paymentIds("search=_")).toEqual([underscore.id]);
    expect(await paymentIds("search=a_b")).toEqual([underscore.id]);
    expect(await paymentIds(`search=${encodeURIComponent("\\")}`)).toEqual([backslash.id]);
    expect(await paymentIds(`search=${encodeURIComponent("k\\s")}`)).toEqual([backslash.id]);
    expect(await paymentIds("search=axb")).toEqual([plainX.id]);
  });

  it("from and to are whole days in the organization's time zone, both included, across a daylight-saving change", async () => {
    const form = await createForm(t, validForms.standard());
    await t.store.db
      .updateTable("organizations")
      .set({ time_zone: "America/New_York" })
      .where("id", "=", t.org.id)
      .execute();
    const at = (iso: string) => payment(form, { created_at: iso });
    const [lateMar1, earlyMar2, lateMar2, startMar8, lateMar8, startMar9] = await store([
      at("2026-03-02T04:59:59.999Z"), // 23:59:59.999 on 1 March in New York (EST, UTC−5)
      at("2026-03-02T05:00:00.000Z"), // midnight starting 2 March
      at("2026-03-03T04:59:59.999Z"), // the last moment of 2 March
      at("2026-03-08T05:00:00.000Z"), // midnight starting 8 March, the day clocks spring forward
      at("2026-03-09T03:59:59.999Z"), // the last moment of 8 March (EDT, UTC−4)
      at("2026-03-09T04:00:00.000Z"), // midnight starting 9 March
    ]);
    expect(await paymentIds("from=2026-03-02&to=2026-03-02")).toEqual([lateMar2.id, earlyMar2.id]);
    expect(await paymentIds("to=2026-03-01")).toEqual([lateMar1.id]);
    expect(await paymentIds("from=2026-03-02")).toEqual(
      newestFirst([earlyMar2, lateMar2, startMar8, lateMar8, startMar9]),
    );
    expect(await paymentIds("from=2026-03-08&to=2026-03-08")).toEqual([lateMar8.id, startMar8.id]);
    expect(await paymentIds("from=2026-03-09")).toEqual([startMar9.id]);
    expect(await paymentIds("from=2026-03-03&to=2026-03-07")).toEqual([]);

    // In UTC (another organization's default) the same instants fall on other days.
    await t.store.db
      .updateTable("organizations")
      .set({ time_zone: "UTC" })
      .where("id", "=", t.org.id)
      .execute();
    expect(await paymentIds("from=2026-03-02&to=2026-03-02")).toEqual([earlyMar2.id, lateMar1.id]);
    expect(await paymentIds("from=2026-03-09&to=2026-03-09")).toEqual([startMar9.id, lateMar8.id]);
  });

  it("pages under a filter return every matching payment once, in order, with nothing else", async () => {
    const form = await createForm(t, validForms.standard());
    const rows = await store(
      Array.from({ length: 47 }, (_, i) =>
        payment(form, {
          first_name: i % 3 === 0 ? "Match" : "Other",
          // Same-millisecond neighbours: the cursor's id breaks the tie.
          created_at: new Date(Date.parse("2026-05-10T00:00:00Z") + Math.floor(i / 2) * 1000).toISOString(),
        }),
      ),
    );
    const expected = [...rows]
      .filter((r) => r.first_name === "Match")
      .sort((a, b) =>
        a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1,
      )
      .map((r) => r.id);
    expect(expected).toHaveLength(16);
    for (const limit of [1, 3, 5, 16, 50])
      expect(
        await walk("/v1/payments", "search=match", limit, "payments", "paymentID"),
        `limit ${limit}`,
      ).toEqual(expected);
  });

  it("a cursor pages only the filters it was handed out with; with others it is a 400", async () => {
    const form = await createForm(t, validForms.standard());
    await store(Array.from({ length: 6 }, () => payment(form, { first_name: "Paged" })));
    const first = await list("/v1/payments?search=paged&status=COMPLETED&limit=2");
    expect(first.status).toBe(200);
    const cursor = encodeURIComponent(first.body.lastEvaluatedKey as string);
    // The same filters, in another order and another case of the search: the same list.
    const again = await list(`/v1/payments?status=COMPLETED&search=PAGED&limit=2&lastEvaluatedKey=${cursor}`);
    expect(again.status).toBe(200);
    expect(again.body.count).toBe(2);
    for (const other of [
      "search=paged",
      "status=COMPLETED",
      "search=paged&status=COMPLETED&minAmount=1",
      "",
      "search=page&status=COMPLETED",
    ]) {
      const res = await list(`/v1/payments?${other}&limit=2&lastEvaluatedKey=${cursor}`);
      expect(res.status, other).toBe(400);
      expect(res.body.details).toEqual(["lastEvaluatedKey is not a cursor returned by this list"]);
    }
    // An unfiltered cursor is refused by a filtered list too.
    const plain = await list("/v1/payments?limit=2");
    const refused = await list(
      `/v1/payments?search=paged&lastEvaluatedKey=${encodeURIComponent(plain.body.lastEvaluatedKey as string)}`,
    );
    expect(refused.status).toBe(400);
  });

  it("never returns another organization's payments, whatever the filters", async () => {
    const form = await createForm(t, validForms.standard());
    const [mine] = await store([
      payment(form, { first_name: "Shared", email: "shared@example.org", last4: "9999" }),
    ]);
    const other = await t.newOrg({ name: "Other" });
    const otherForm = (
      await t.request<{ formID: string }>("POST", "/v1/forms", {
        body: validForms.standard(),
        key: other.key,
      })
    ).body.formID;
    const [theirs] = await store([
      {
        ...payment(otherForm, { first_name: "Shared", email: "shared@example.org", last4: "9999" }),
        organization_id: other.id,
      },
    ]);
    for (const q of [
      "search=shared",
      "search=9999",
      `search=${theirs.id}`,
      `formID=${otherForm}`,
      "minAmount=0",
    ]) {
      const mineSeen = await paymentIds(q);
      expect(mineSeen, q).not.toContain(theirs.id);
      const res = await list(`/v1/payments?${q}`, other.key);
      expect(
        (res.body.payments ?? []).map((p) => p.paymentID),
        q,
      ).not.toContain(mine.id);
    }
    expect(await paymentIds("search=shared")).toEqual([mine.id]);
  });

  it("refuses bad filter values with a 400 that names each, and ignores unknown parameters", async () => {
    const bad: [string, string][] = [
      ["from=2026-02-30", "from must be a date written YYYY-MM-DD, from 1970-01-01 to 9998-12-31"],
      ["to=03/01/2026", "to must be a date written YYYY-MM-DD, from 1970-01-01 to 9998-12-31"],
      ["from=9999-12-31", "from must be a date written YYYY-MM-DD, from 1970-01-01 to 9998-12-31"],
      ["from=2026-03-02&to=2026-03-01", "from must be on or before to"],
      ["minAmount=50&maxAmount=20", "minAmount must be at most maxAmount"],
      ["minAmount=abc", "minAmount must be an amount such as 25 or 25.50 (at most 2 decimals)"],
      ["minAmount=1.234", "minAmount must be an amount such as 25 or 25.50 (at most 2 decimals)"],
      ["maxAmount=-5", "maxAmount must be an amount such as 25 or 25.50 (at most 2 decimals)"],
      ["maxAmount=1000000.01", "maxAmount must be at most 1,000,000"],
      ["status=PROCESSING", "status must be one of: COMPLETED, PENDING, FAILED, REFUNDED"],
      ["paymentMethod=cash", "paymentMethod must be one of: card, bank, none"],
      ["frequency=YEARLY", "frequency must be one of: ONE_TIME, DAILY, WEEKLY, MONTHLY, ANNUALLY"],
      ["formID=nope", "formID must be a UUID"],
      ["contactId=42", "contactId must be a UUID"],
      ["subscriptionId=sub_x", "subscriptionId must be a subscription id (sub_…)"],
      [`search=${"a".repeat(201)}`, "search must be at most 200 characters"],
    ];
    for (const [query, detail] of bad) {
      const res = await list(`/v1/payments?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.details, query).toEqual([detail]);
    }
    const two = await list("/v1/payments?status=NOPE&from=yesterday");
    expect(two.status).toBe(400);
    expect(two.body.details).toHaveLength(2);
    const unknown = await list("/v1/payments?colour=blue&search=");
    expect(unknown.status).toBe(200);
  });

  it("documents every filter in the OpenAPI document", async () => {
    const doc = await t.request<{
      paths: Record<string, Record<string, { parameters: { name: string }[] }>>;
    }>("GET", "/v1/openapi.json", { key: null });
    const names = (path: string) => doc.body.paths[path].get.parameters.map((p) => p.name).sort();
    expect(names("/v1/payments")).toEqual(
      [
        "contactId",
        "formID",
        "frequency",
        "from",
        "lastEvaluatedKey",
        "limit",
        "maxAmount",
        "minAmount",
        "paymentMethod",
        "search",
        "status",
        "subscriptionId",
        "to",
      ].sort(),
    );
    expect(names("/v1/subscriptions")).toEqual(
      ["contactId", "frequency", "lastEvaluatedKey", "limit", "search", "status"].sort(),
    );
    expect(names("/v1/contacts")).toEqual(["email", "lastEvaluatedKey", "limit", "search"].sort());
  });
});

describe(`CSV exports under the filters (${dialect})`, () => {
  it("Accept: text/csv exports every payment the filters show, past one export batch, and nothing else", async () => {
    const form = await createForm(t, validForms.standard());
    const other = await createForm(t, validForms.standard());
    // More matches than one export batch reads, among rows each filter leaves out.
    const matching = await store(
      Array.from({ length: EXPORT_BATCH + 7 }, (_, i) =>
        payment(form, { first_name: "Batch", amount_cents: 3000 + (i % 5), status: "COMPLETED" }),
      ),
    );
    await store([
      payment(form, { first_name: "Batch", amount_cents: 2999 }),
      payment(form, { first_name: "Batch", amount_cents: 3000, status: "FAILED" }),
      payment(other, { first_name: "Batch", amount_cents: 3000 }),
      payment(form, { first_name: "Nobody", amount_cents: 3000 }),
    ]);
    const query = `search=BATCH&minAmount=30&status=COMPLETED&formID=${form}`;
    const res = await t.app.request(`/v1/payments?${query}`, {
      headers: { Authorization: `Bearer ${t.org.key}`, Accept: "text/csv" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/csv/);
    const lines = (await res.text())
      .replace(/^\uFEFF/, "")
      .split("\r\n")
      .filter((l) => l !== "");
    expect(lines[0].split(",")[0]).toBe("Payment ID");
    const exported = lines.slice(1).map((l) => l.split(",")[0]);
    expect(exported).toEqual(newestFirst(matching));
    // The same filters' JSON pages show the same rows.
    expect(await walk("/v1/payments", query, 100, "payments", "paymentID")).toEqual(exported);
  });
});

describe(`GET /v1/subscriptions filters (${dialect})`, () => {
  it("search, frequency, contactId and status each filter and combine, and a cursor is bound to them", async () => {
    const form = await createForm(t, {
      ...validForms.standard(),
      frequencies: ["ONE_TIME", "MONTHLY", "WEEKLY"],
    });
    const give = async (firstName: string, lastName: string, email: string, frequency: string) => {
      const res = await checkout(t, form, {
        amount: 10,
        frequency,
        donor: { firstName, lastName, email },
        paymentMethod: card(),
      });
      expect(res.status, res.text).toBe(201);
      return (res.body.payment as { subscription: { id: string } }).subscription.id;
    };
    const ada = await give("Ada", "Lovelace", "ada@example.org", "MONTHLY");
    const grace = await give("Grace", "Hopper", "grace@navy.example", "WEEKLY");
    const ada2 = await give("Ada", "Lovelace", "ada@example.org", "WEEKLY");
    const under = await give("Snake", "Case", "a_b@example.org", "MONTHLY");
    await t.request("PUT", `/v1/subscriptions/${ada}`, { body: { status: "CANCELLED" } });
    const adaContact = (await t.request<{ contactId: string }>("GET", `/v1/subscriptions/${ada}`)).body
      .contactId;
    const ids = (q: string) => walk("/v1/subscriptions", q, 100, "subscriptions", "id");
    // Made at the same instant (the test's clock): the list's order is then the ids' order.
    const everyone = await ids("");
    expect(everyone).toHaveLength(4);
    const inListOrder = (some: string[]) => everyone.filter((id) => some.includes(id));

    expect(await ids("search=LOVELACE")).toEqual(inListOrder([ada2, ada]));
    expect(await ids("search=navy")).toEqual([grace]);
    expect(await ids(`search=${grace}`)).toEqual([grace]);
    expect(await ids("search=_")).toEqual([under]);
    expect(await ids("frequency=WEEKLY")).toEqual(inListOrder([ada2, grace]));
    expect(await ids(`contactId=${adaContact}`)).toEqual(inListOrder([ada2, ada]));
    expect(await ids(`contactId=${adaContact}&status=ACTIVE`)).toEqual([ada2]);
    expect(await ids("search=ada&frequency=MONTHLY&status=CANCELLED")).toEqual([ada]);
    expect(await ids("search=ada&frequency=MONTHLY&status=ACTIVE")).toEqual([]);
    expect(await walk("/v1/subscriptions", "search=example", 1, "subscriptions", "id")).toEqual(everyone);

    const first = await list("/v1/subscriptions?search=example&limit=1");
    const cursor = encodeURIComponent(first.body.lastEvaluatedKey as string);
    expect((await list(`/v1/subscriptions?search=EXAMPLE&limit=1&lastEvaluatedKey=${cursor}`)).status).toBe(
      200,
    );
    for (const other of [
      "",
      "search=exampl",
      "search=example&frequency=MONTHLY",
      "search=example&status=ACTIVE",
    ])
      expect((await list(`/v1/subscriptions?${other}&lastEvaluatedKey=${cursor}`)).status, other).toBe(400);
    // A cursor of the status-only list (as handed out before the other filters existed) still pages it.
    const active = await list("/v1/subscriptions?status=ACTIVE&limit=1");
    const next = await list(
      `/v1/subscriptions?status=ACTIVE&limit=1&lastEvaluatedKey=${encodeURIComponent(active.body.lastEvaluatedKey as string)}`,
    );
    expect(next.status).toBe(200);

    const other = await t.newOrg({ name: "Other" });
    expect((await list("/v1/subscriptions?search=ada", other.key)).body.subscriptions).toEqual([]);

    for (const [query, detail] of [
      ["frequency=ONE_TIME", "frequency must be one of: DAILY, WEEKLY, MONTHLY, ANNUALLY"],
      ["contactId=nope", "contactId must be a UUID"],
      [`search=${"x".repeat(201)}`, "search must be at most 200 characters"],
    ]) {
      const res = await list(`/v1/subscriptions?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.details).toEqual([detail]);
    }
  });
});

describe(`GET /v1/contacts search (${dialect})`, () => {
  it("finds contacts by name, organization name or any of their e-mails, with email, and binds the cursor", async () => {
    const create = async (body: Json) => {
      const res = await t.request<{ contact: { id: string } }>("POST", "/v1/contacts", { body });
      expect(res.status, res.text).toBe(201);
      return res.body.contact.id;
    };
    const ada = await create({
      firstName: "Ada",
      lastName: "Lovelace",
      emails: [{ value: "ada@example.org", isPrimary: true }, { value: "Countess@Analytical.example" }],
    });
    const acme = await create({
      firstName: "Wile",
      lastName: "Coyote",
      organizationName: "ACME Rockets",
      emails: [{ value: "wile@acme.example" }],
    });
    const elodie = await create({
      firstName: "Élodie",
      lastName: "Durand",
      emails: [{ value: "e_d@example.fr" }],
    });
    const pct = await create({ firstName: "Per", lastName: "Cent", emails: [{ value: "100%@example.org" }] });
    const ids = (q: string) => walk("/v1/contacts", q, 100, "contacts", "id");
    // Made at the same instant (the test's clock): the list's order is then the ids' order.
    const everyone = await ids("");
    expect(everyone).toHaveLength(4);
    const inListOrder = (some: string[]) => everyone.filter((id) => some.includes(id));

    expect(await ids("search=lovelace")).toEqual([ada]);
    expect(await ids("search=ada lovelace")).toEqual([ada]);
    expect(await ids("search=analytical")).toEqual([ada]);
    expect(await ids("search=rockets")).toEqual([acme]);
    expect(await ids("search=ÉLODIE")).toEqual([elodie]);
    expect(await ids("search=_")).toEqual([elodie]);
    expect(await ids("search=%25")).toEqual([pct]);
    expect(await ids("search=example.org")).toEqual(inListOrder([pct, ada]));
    expect(await ids("search=example.org&email=ada@example.org")).toEqual([ada]);
    expect(await ids("search=acme&email=ada@example.org")).toEqual([]);
    expect(await walk("/v1/contacts", "search=e", 1, "contacts", "id")).toEqual(everyone);

    const first = await list("/v1/contacts?search=e&limit=1");
    const cursor = encodeURIComponent(first.body.lastEvaluatedKey as string);
    expect((await list(`/v1/contacts?search=E&limit=1&lastEvaluatedKey=${cursor}`)).status).toBe(200);
    expect((await list(`/v1/contacts?limit=1&lastEvaluatedKey=${cursor}`)).status).toBe(400);
    expect((await list(`/v1/contacts?search=el&limit=1&lastEvaluatedKey=${cursor}`)).status).toBe(400);

    const other = await t.newOrg({ name: "Other" });
    expect((await list("/v1/contacts?search=ada", other.key)).body.contacts).toEqual([]);
    const long = await list(`/v1/contacts?search=${"y".repeat(201)}`);
    expect(long.status).toBe(400);
    expect(long.body.details).toEqual(["search must be at most 200 characters"]);
  });
});

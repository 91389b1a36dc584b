import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CARDS, card, checkout, createForm, donor } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/** Contacts through /v1 (made by checkouts, read, create, update), from records the real checkout made. */

type Json = Record<string, unknown>;
interface Contact extends Json {
  id: string;
  emails: { value: string; isPrimary: boolean; isVerified: boolean }[];
  phones: { value: string; isPrimary: boolean }[];
}
interface ContactPage {
  contacts: Contact[];
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
    env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" },
  });
});
afterEach(() => t.close());

const tick = (ms = 60_000) => {
  clock += ms;
};

async function give(formId: string, body: Json) {
  const res = await checkout(t, formId, { amount: 25, paymentMethod: card(), ...body });
  tick();
  return res;
}

async function create(body: Json, key?: string) {
  return t.request<{ contact: Contact; message: string; error?: string; details?: string[] }>(
    "POST",
    "/v1/contacts",
    { body, key },
  );
}

async function outboxTypes(subjectId: string): Promise<string[]> {
  const rows = await t.store.db
    .selectFrom("outbox_events")
    .select("type")
    .where("subject_id", "=", subjectId)
    .orderBy("id")
    .execute();
  return rows.map((r) => r.type);
}

const countContacts = async () => (await t.store.db.selectFrom("contacts").select("id").execute()).length;

describe("contacts made by the checkout", () => {
  it("finds the donor by any-case email with totals net of refunds, donation dates, subscription and consents", async () => {
    const formId = await createForm(t, { ...validForms.standard(), frequencies: ["ONE_TIME", "MONTHLY"] });
    const who = { firstName: "Grace", lastName: "Hopper", email: "grace@example.org" };
    const first = await give(formId, { donor: who, amount: 25 });
    expect(first.status).toBe(201);
    await give(formId, { donor: { ...who, email: "GRACE@example.org" }, amount: 50 });
    await give(formId, { donor: who, amount: 10, frequency: "MONTHLY" });
    const declined = await give(formId, { donor: who, amount: 99, paymentMethod: card(CARDS.declined) });
    expect(declined.status).toBe(402);
    const lastOk = await give(formId, { donor: who, amount: 40 });
    await give(formId, { donor: donor("someone-else@example.org"), amount: 1000 });

    // A partial refund of the $40 gift and a full refund of the $50 one (no refund API yet: set as a refund would).
    const payments = await t.store.db
      .selectFrom("payments")
      .selectAll()
      .where("email", "in", ["grace@example.org", "GRACE@example.org"])
      .orderBy("created_at")
      .execute();
    const fifty = payments.find((p) => Number(p.amount_cents) === 5000);
    const forty = payments.find((p) => Number(p.amount_cents) === 4000);
    await t.store.db
      .updateTable("payments")
      .set({ status: "REFUNDED", refunded_cents: 5000 })
      .where("id", "=", fifty?.id ?? "")
      .execute();
    await t.store.db
      .updateTable("payments")
      .set({ refunded_cents: 1500 })
      .where("id", "=", forty?.id ?? "")
      .execute();

    const res = await t.request<ContactPage>("GET", "/v1/contacts?email=Grace%40EXAMPLE.org");
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(1);
    const c = res.body.contacts[0];
    expect(c).toMatchObject({
      firstName: "Grace",
      lastName: "Hopper",
      fullName: "Grace Hopper",
      // $25 + $10 (first monthly charge) + $40 − $15 refunded; the declined and the fully refunded gifts do not count.
      totalTransactionCount: 3,
      totalTransactionValue: 60,
      hasActiveSubscription: true,
      emailConsent: "UNKNOWN",
      smsConsent: "UNKNOWN",
      communicationConsent: "UNKNOWN",
      firstDonationAt: (first.body.payment as Json).date,
      lastDonationAt: (lastOk.body.payment as Json).date,
    });
    expect(c.emails).toEqual([{ value: "grace@example.org", isPrimary: true, isVerified: false }]);

    const one = await t.request<Contact>("GET", `/v1/contacts/${c.id}`);
    expect(one.body).toEqual(c);

    const sub = await t.store.db.selectFrom("subscriptions").select("id").executeTakeFirstOrThrow();
    await t.request("PUT", `/v1/subscriptions/${sub.id}`, { body: { status: "CANCELLED" } });
    const after = await t.request<Contact>("GET", `/v1/contacts/${c.id}`);
    expect(after.body.hasActiveSubscription).toBe(false);
  });

  it("shows an opt-in at checkout as OPTED_IN consents, and a donor with no gift yet as zero and null dates", async () => {
    const formId = await createForm(t, validForms.standard());
    await give(formId, { donor: donor("optin@example.org"), emailOptIn: true });
    const res = await t.request<ContactPage>("GET", "/v1/contacts?email=optin@example.org");
    expect(res.body.contacts[0]).toMatchObject({
      emailConsent: "OPTED_IN",
      communicationConsent: "OPTED_IN",
    });

    const made = await create({ firstName: "New", lastName: "Person", email: "new@example.org" });
    expect(made.body.contact).toMatchObject({
      totalTransactionCount: 0,
      totalTransactionValue: 0,
      firstDonationAt: null,
      lastDonationAt: null,
      hasActiveSubscription: false,
      emailConsent: "UNKNOWN",
    });
  });
});

describe("contact totals across a change of currency", () => {
  it("count only gifts in the organization's current currency: value, count and dates, in the API, webhooks and CSV", async () => {
    const formId = await createForm(t, validForms.standard());
    const who = { firstName: "Taro", lastName: "Yamada", email: "taro@example.org" };
    const currency = async (code: string) =>
      expect((await t.request("PUT", "/v1/organization", { body: { currency: code } })).status).toBe(200);
    const dollars = await give(formId, { donor: who, amount: 25 });
    expect(dollars.status, dollars.text).toBe(201);
    await currency("JPY");
    const yen = await give(formId, { donor: who, amount: 1500 });
    expect(yen.status, yen.text).toBe(201);

    const read = async () =>
      (await t.request<ContactPage>("GET", "/v1/contacts?email=taro@example.org")).body.contacts[0];
    const c = await read();
    // Not 1,525 from two gifts: only the ¥1,500 one, in the current currency.
    expect(c).toMatchObject({
      totalTransactionCount: 1,
      totalTransactionValue: 1500,
      firstDonationAt: (yen.body.payment as Json).date,
      lastDonationAt: (yen.body.payment as Json).date,
    });
    expect((await t.request<Contact>("GET", `/v1/contacts/${c.id}`)).body).toEqual(c);

    // The contact.updated webhook payload carries the same totals.
    const updated = await t.request<{ contact: Contact }>("PUT", `/v1/contacts/${c.id}`, {
      body: { organizationName: "Yamada Shoten" },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.contact).toMatchObject({ totalTransactionCount: 1, totalTransactionValue: 1500 });
    const event = await t.store.db
      .selectFrom("outbox_events")
      .select("data")
      .where("subject_id", "=", c.id)
      .where("type", "=", "contact.updated")
      .executeTakeFirstOrThrow();
    expect(JSON.parse(event.data)).toMatchObject({ totalTransactionCount: 1, totalTransactionValue: 1500 });

    // The CSV export's "Total given" is in its "Currency" column's currency.
    const csv = await t.app.request("/v1/contacts", {
      headers: { Authorization: `Bearer ${t.org.key}`, Accept: "text/csv" },
    });
    const text = await csv.text();
    expect(text).toContain(",1,1500,JPY,");
    expect(text).not.toContain("1525");

    // In a third currency the donor has given nothing yet; back in dollars, the $25 gift counts again.
    await currency("EUR");
    expect(await read()).toMatchObject({
      totalTransactionCount: 0,
      totalTransactionValue: 0,
      firstDonationAt: null,
      lastDonationAt: null,
    });
    await currency("USD");
    expect(await read()).toMatchObject({
      totalTransactionCount: 1,
      totalTransactionValue: 25,
      firstDonationAt: (dollars.body.payment as Json).date,
      lastDonationAt: (dollars.body.payment as Json).date,
    });
  });
});

describe("GET /v1/contacts", () => {
  it("pages 100 by default, newest first, and leaves deleted and merged contacts out", async () => {
    for (let i = 0; i < 103; i++) {
      const res = await create({ firstName: `P${i}`, lastName: "X", email: `p${i}@example.org` });
      expect(res.status).toBe(201);
      tick(1000);
    }
    const ids = (await t.store.db.selectFrom("contacts").select(["id", "first_name"]).execute()).reduce(
      (m, r) => m.set(r.first_name, r.id),
      new Map<string, string>(),
    );
    await t.store.db
      .updateTable("contacts")
      .set({ status: "DELETED" })
      .where("id", "=", ids.get("P5") ?? "")
      .execute();
    await t.store.db
      .updateTable("contacts")
      .set({ status: "MERGED", merged_into: ids.get("P7") ?? null })
      .where("id", "=", ids.get("P6") ?? "")
      .execute();

    const first = await t.request<ContactPage>("GET", "/v1/contacts");
    expect(first.body.count).toBe(100);
    expect(first.body.hasMore).toBe(true);
    expect(first.body.contacts[0].firstName).toBe("P102");
    const second = await t.request<ContactPage>(
      "GET",
      `/v1/contacts?lastEvaluatedKey=${first.body.lastEvaluatedKey}`,
    );
    expect(second.body).toMatchObject({ count: 1, hasMore: false });
    expect(second.body.lastEvaluatedKey).toBeUndefined();
    const names = [...first.body.contacts, ...second.body.contacts].map((c) => c.firstName);
    expect(names).not.toContain("P5");
    expect(names).not.toContain("P6");
    expect(new Set(names).size).toBe(101);

    expect((await t.request<ContactPage>("GET", "/v1/contacts?email=p5@example.org")).body.count).toBe(0);
    expect((await t.request("GET", `/v1/contacts/${ids.get("P5")}`)).status).toBe(404);
    // The deleted contact's email is free again.
    expect((await create({ firstName: "Again", lastName: "X", email: "P5@example.org" })).status).toBe(201);
  });

  it("finds a contact by any of its emails, not only the primary one", async () => {
    const made = await create({
      firstName: "Two",
      lastName: "Mails",
      emails: [{ value: "home@example.org", isPrimary: true }, { email: "Work@Example.org" }],
    });
    const res = await t.request<ContactPage>("GET", "/v1/contacts?email=work@example.org");
    expect(res.body.contacts.map((c) => c.id)).toEqual([made.body.contact.id]);
    expect((await t.request<ContactPage>("GET", "/v1/contacts?email=nobody@example.org")).body).toEqual({
      contacts: [],
      count: 0,
      hasMore: false,
    });
  });

  it("rejects a bad limit, a cursor that is not this list's, and an empty email filter with 400", async () => {
    for (const q of [
      "limit=0",
      "limit=101",
      "limit=1.5",
      "limit=ten",
      "limit=-1",
      "email=",
      "email=not-an-email",
      "lastEvaluatedKey=%%%",
    ]) {
      const res = await t.request("GET", `/v1/contacts?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error, q).toBe("Validation failed");
    }
    await create({ firstName: "A", lastName: "B" });
    await create({ firstName: "C", lastName: "D" });
    const page1 = await t.request<ContactPage>("GET", "/v1/contacts?limit=1");
    const cursor = page1.body.lastEvaluatedKey as string;
    // The same position used for another list, by another organization, or with another filter.
    const other = await t.newOrg();
    expect((await t.request("GET", `/v1/payments?lastEvaluatedKey=${cursor}`)).status).toBe(400);
    expect(
      (await t.request("GET", `/v1/contacts?lastEvaluatedKey=${cursor}`, { key: other.key })).status,
    ).toBe(400);
    expect((await t.request("GET", `/v1/contacts?email=a@b.co&lastEvaluatedKey=${cursor}`)).status).toBe(400);
  });
});

describe("POST /v1/contacts", () => {
  it("creates a contact with synonyms normalised, emits contact.created, and answers the documented shape", async () => {
    const res = await create({
      firstName: " Ada ",
      lastName: "Lovelace",
      organizationName: "Analytical Engines",
      emails: [
        { email: "ada@example.org", is_primary: false },
        { value: "ada@work.example.org", isPrimary: true },
      ],
      phones: [{ value: "+1 (555) 010-9999" }],
      addresses: [
        { line1: "1 Main St", city: "London", region: "LDN", postal: "N1", country: "United Kingdom" },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.message).toBe("Contact created successfully");
    const c = res.body.contact;
    expect(c).toMatchObject({
      firstName: "Ada",
      fullName: "Ada Lovelace",
      organizationName: "Analytical Engines",
      emails: [
        { value: "ada@example.org", isPrimary: false, isVerified: false },
        { value: "ada@work.example.org", isPrimary: true, isVerified: false },
      ],
      phones: [{ value: "+1 (555) 010-9999", isPrimary: true }],
      addresses: [
        {
          line1: "1 Main St",
          line2: "",
          city: "London",
          region: "LDN",
          postal: "N1",
          country: "United Kingdom",
          isPrimary: true,
        },
      ],
    });
    expect(c.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(c.createdAt).toBe(new Date(clock).toISOString().replace(/\.\d+Z$/, "Z"));
    expect(await outboxTypes(c.id)).toEqual(["contact.created"]);
  });

  it("answers 409 for an email (any case) or phone (same number, any format) already on a contact, and writes nothing", async () => {
    const formId = await createForm(t, validForms.standard());
    await give(formId, { donor: { firstName: "Check", lastName: "Out", email: "donor@example.org" } });
    const first = await create({ firstName: "A", lastName: "B", phone: "(617) 555-0101" });
    const before = await countContacts();
    const byEmail = await create({ firstName: "X", lastName: "Y", emails: [{ value: "DONOR@example.org" }] });
    expect(byEmail.status).toBe(409);
    expect(byEmail.body.error).toMatch(/email DONOR@example.org already exists/);
    const byPhone = await create({
      firstName: "X",
      lastName: "Y",
      email: "fresh@example.org",
      phone: "+1 617.555.0101",
    });
    expect(byPhone.status).toBe(409);
    expect(byPhone.body).toMatchObject({ contactId: first.body.contact.id });
    expect(byPhone.body.error).toMatch(/phone \+1 617\.555\.0101 already exists/);
    expect(await countContacts()).toBe(before);
    // The email of the refused request was not claimed either.
    expect((await create({ firstName: "X", lastName: "Y", email: "fresh@example.org" })).status).toBe(201);
  });

  it("lets only one of two simultaneous creates with the same email through", async () => {
    const results = await Promise.all(
      [0, 1, 2].map(() => create({ firstName: "Twin", lastName: "T", email: "twin@example.org" })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    expect(await countContacts()).toBe(1);
  });

  it("refuses a line break or other control character in names, organization, address, phone and email, naming each", async () => {
    const line = "must be a single line of text (no line breaks, tabs or other control characters)";
    const res = await create({
      firstName: "Eve\r\nBcc: victim@example.com",
      lastName: "Doe\r\n",
      organizationName: "Acme\r\nInc",
      addresses: [
        {
          line1: "1 Main St\r\nBcc: x@example.com",
          line2: "Apt\r\n2",
          city: "Paris\r\n",
          region: "Île\r\nde France",
          postal: "75\r\n001",
          country: "FR\r\n",
        },
      ],
      phones: [{ value: "555\r\n0101" }],
      emails: [{ value: "eve@example.org\r\nBcc: x@example.com" }],
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual(
      expect.arrayContaining([
        `firstName ${line}`,
        `lastName ${line}`,
        `organizationName ${line}`,
        ...["line1", "line2", "city", "region", "postal", "country"].map((f) => `addresses[0].${f} ${line}`),
        `phones[0].value ${line}`,
      ]),
    );
    expect(res.body.details?.some((d) => d.startsWith("emails[0].value "))).toBe(true);
    const shorthand = await create({ firstName: "Eve", lastName: "Doe", phone: "555\r\n0101" });
    expect(shorthand.status).toBe(400);
    expect(shorthand.body.details).toEqual([`phone ${line}`]);
    expect(await countContacts()).toBe(0);

    // The same on an update; names with spaces, accents and apostrophes are taken.
    const made = await create({ firstName: "Zoë Anne", lastName: "O’Brien-Núñez", email: "zoe@example.org" });
    expect(made.status, made.text).toBe(201);
    const put = await t.request<{ details?: string[] }>("PUT", `/v1/contacts/${made.body.contact.id}`, {
      body: { lastName: "Doe\r\n", addresses: [{ city: "Paris\r\n" }] },
    });
    expect(put.status).toBe(400);
    expect(put.body.details).toEqual(
      expect.arrayContaining([`lastName ${line}`, `addresses[0].city ${line}`]),
    );
  });

  it("requires firstName and lastName and reports every problem at once", async () => {
    const res = await create({
      emails: [{ value: "not-an-email" }, { isPrimary: true }],
      phones: [{ value: "abc" }],
      nickname: "x",
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual(
      expect.arrayContaining([
        "firstName is required",
        "lastName is required",
        "emails[0].value must be an email address",
        "nickname is not a recognised field",
      ]),
    );
    const dup = await create({
      firstName: "A",
      lastName: "B",
      emails: [
        { value: "a@b.co", isPrimary: true },
        { value: "A@B.co", isPrimary: true },
      ],
    });
    expect(dup.status).toBe(400);
    expect(dup.body.details).toEqual(
      expect.arrayContaining([
        "emails must have at most one primary item",
        "emails[1].value is listed twice in this contact",
      ]),
    );
    expect(await countContacts()).toBe(0);
  });
});

describe("PUT /v1/contacts/{id}", () => {
  it("changes only the fields sent, frees a replaced email, emits contact.updated, and accepts PATCH", async () => {
    const made = (
      await create({ firstName: "Old", lastName: "Name", email: "old@example.org", phone: "555 0000" })
    ).body.contact;
    tick();
    const res = await t.request<{ contact: Contact; message: string }>("PUT", `/v1/contacts/${made.id}`, {
      body: { lastName: "Surname" },
    });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe("Contact updated successfully");
    expect(res.body.contact).toMatchObject({
      firstName: "Old",
      lastName: "Surname",
      fullName: "Old Surname",
      emails: made.emails,
      phones: made.phones,
      createdAt: made.createdAt,
      updatedAt: new Date(clock).toISOString().replace(/\.\d+Z$/, "Z"),
    });
    const mails = await t.request<{ contact: Contact }>("PATCH", `/v1/contacts/${made.id}`, {
      body: { emails: [{ value: "new@example.org" }] },
    });
    expect(mails.body.contact.emails).toEqual([
      { value: "new@example.org", isPrimary: true, isVerified: false },
    ]);
    expect((await t.request<ContactPage>("GET", "/v1/contacts?email=old@example.org")).body.count).toBe(0);
    expect((await t.request<ContactPage>("GET", "/v1/contacts?email=new@example.org")).body.count).toBe(1);
    expect((await create({ firstName: "Takes", lastName: "Old", email: "old@example.org" })).status).toBe(
      201,
    );
    expect(await outboxTypes(made.id)).toEqual(["contact.created", "contact.updated", "contact.updated"]);

    // A GET sent back unchanged is accepted (read-only fields ignored).
    const read = await t.request<Contact>("GET", `/v1/contacts/${made.id}`);
    expect((await t.request("PUT", `/v1/contacts/${made.id}`, { body: read.body })).status).toBe(200);
  });

  it("answers 409 when taking another contact's email or phone, and leaves the contact as it was", async () => {
    await create({ firstName: "Has", lastName: "It", email: "taken@example.org", phone: "+1 617 555 0133" });
    const mine = (await create({ firstName: "Me", lastName: "Me", email: "me@example.org" })).body.contact;
    const res = await t.request("PUT", `/v1/contacts/${mine.id}`, {
      body: { firstName: "Changed", emails: [{ value: "TAKEN@example.org" }] },
    });
    expect(res.status).toBe(409);
    const phone = await t.request("PUT", `/v1/contacts/${mine.id}`, {
      body: { phones: [{ value: "16175550133" }] },
    });
    expect(phone.status).toBe(409);
    const now = await t.request<Contact>("GET", `/v1/contacts/${mine.id}`);
    expect(now.body).toMatchObject({ firstName: "Me", emails: mine.emails, phones: [] });
    expect((await t.request<ContactPage>("GET", "/v1/contacts?email=me@example.org")).body.count).toBe(1);
  });

  it("answers 400 for an empty body or bad fields, 404 for an unknown or malformed id", async () => {
    const mine = (await create({ firstName: "Me", lastName: "Me" })).body.contact;
    const empty = await t.request("PUT", `/v1/contacts/${mine.id}`, { body: {} });
    expect(empty.status).toBe(400);
    expect((empty.body.details as string[])[0]).toMatch(/has no field to update/);
    const bad = await t.request("PUT", `/v1/contacts/${mine.id}`, { body: { firstName: "", phones: "555" } });
    expect(bad.body.details).toEqual([
      "firstName must not be empty",
      "phones must be an array, not a string",
    ]);
    expect((await t.request("PUT", `/v1/contacts/${mine.id}`, { rawBody: "[1]" })).body).toEqual({
      error: "Invalid JSON body",
    });
    for (const id of ["00000000-0000-4000-8000-000000000000", "not-a-uuid", "1%27%20or%201=1"]) {
      expect((await t.request("GET", `/v1/contacts/${id}`)).status).toBe(404);
      expect((await t.request("PUT", `/v1/contacts/${id}`, { body: { firstName: "X" } })).status).toBe(404);
    }
  });
});

describe("contacts: permissions and tenants", () => {
  it("needs contacts:read to read and contacts:write to write", async () => {
    const mine = (await create({ firstName: "Me", lastName: "Me" })).body.contact;
    const reader = await t.newOrg({ permissions: ["contacts:read"] });
    const none = await t.newOrg({ permissions: ["forms:read", "donations:read"] });
    const otherMine = (
      await t.request<{ contact: Contact }>("POST", "/v1/contacts", {
        body: { firstName: "R", lastName: "R" },
        key: (await t.newOrg()).key,
      })
    ).body.contact;
    expect(otherMine.id).toBeTruthy();
    for (const [method, path, body] of [
      ["GET", "/v1/contacts", undefined],
      ["GET", `/v1/contacts/${mine.id}`, undefined],
      ["POST", "/v1/contacts", { firstName: "A", lastName: "B" }],
      ["PUT", `/v1/contacts/${mine.id}`, { firstName: "A" }],
    ] as const) {
      const res = await t.request(method, path, { body, key: none.key });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error).toMatch(/^Missing permission: contacts:(read|write)$/);
    }
    const post = await t.request("POST", "/v1/contacts", {
      body: { firstName: "A", lastName: "B" },
      key: reader.key,
    });
    expect(post.body.error).toBe("Missing permission: contacts:write");
    expect((await t.request("GET", "/v1/contacts", { key: null })).status).toBe(401);
  });

  it("keeps each organization's contacts to itself: 403 on another's, never listed or matched", async () => {
    const mine = (await create({ firstName: "Me", lastName: "Me", email: "shared@example.org" })).body
      .contact;
    const other = await t.newOrg();
    expect((await t.request("GET", `/v1/contacts/${mine.id}`, { key: other.key })).status).toBe(403);
    const put = await t.request("PUT", `/v1/contacts/${mine.id}`, {
      body: { firstName: "Hacked" },
      key: other.key,
    });
    expect(put.status).toBe(403);
    expect((await t.request<ContactPage>("GET", "/v1/contacts", { key: other.key })).body.count).toBe(0);
    const filtered = await t.request<ContactPage>("GET", "/v1/contacts?email=shared@example.org", {
      key: other.key,
    });
    expect(filtered.body.count).toBe(0);
    // The same email is free in another organization.
    const theirs = await t.request("POST", "/v1/contacts", {
      body: { firstName: "Them", lastName: "T", email: "shared@example.org" },
      key: other.key,
    });
    expect(theirs.status).toBe(201);
    expect((await t.request<Contact>("GET", `/v1/contacts/${mine.id}`)).body.firstName).toBe("Me");
  });
});

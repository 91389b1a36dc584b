import { afterEach, describe, expect, it } from "vitest";
import { migrate } from "../../server/store/migrations.js";
import { card, checkout, createForm } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * Contacts are matched by phone whatever its format: `+1 617-555-0101`, `(617) 555-0101` and `6175550101`
 * are one number, its E.164 form, with the organization's country (US by default) supplying a missing
 * country code. Text that is not a valid number is kept as typed and matched by its digits (text without
 * digits as typed). Rows stored before are normalized by migrations 12 and 25.
 */

let t: TestApp;
afterEach(async () => {
  await t.close();
});

interface Phone {
  value: string;
  isPrimary: boolean;
  e164: string | null;
}
interface ContactAnswer {
  contact: { id: string; phones: Phone[] };
  contactId?: string;
  error?: string;
  details?: string[];
}

const create = (body: Record<string, unknown>) => t.request<ContactAnswer>("POST", "/v1/contacts", { body });

/** A live contact row of the demo organization with one phone, as an earlier migration left it. */
function storedContact(id: string, phone: Record<string, unknown>, createdAt: string) {
  return {
    id,
    organization_id: t.org.id,
    first_name: "Stored",
    last_name: id,
    organization_name: null,
    emails: "[]",
    phones: JSON.stringify([phone]),
    addresses: "[]",
    email_consent: "UNKNOWN" as const,
    sms_consent: "UNKNOWN" as const,
    communication_consent: "UNKNOWN" as const,
    status: "ACTIVE" as const,
    merged_into: null,
    created_at: createdAt,
    updated_at: createdAt,
  };
}

describe(`phone numbers of contacts (${dialect})`, () => {
  it("are one number in any format: stored as typed beside E.164, and a second contact with it is a 409", async () => {
    t = await setupTestApp();
    const made = await create({ firstName: "Ada", lastName: "One", phone: "(617) 555-0101" });
    expect(made.status).toBe(201);
    expect(made.body.contact.phones).toEqual([
      { value: "(617) 555-0101", isPrimary: true, e164: "+16175550101" },
    ]);
    for (const phone of ["+1 617-555-0101", "6175550101", "1.617.555.0101"]) {
      const again = await create({ firstName: "Bea", lastName: "Two", phone });
      expect(again.status, phone).toBe(409);
      expect(again.body.contactId).toBe(made.body.contact.id);
      expect(again.body.error).toContain(phone);
    }
    const read = await t.request<ContactAnswer["contact"]>("GET", `/v1/contacts/${made.body.contact.id}`);
    expect(read.body.phones[0]?.e164).toBe("+16175550101");
    // A read can be sent back as it is: e164 is read-only.
    const back = await t.request("PUT", `/v1/contacts/${made.body.contact.id}`, {
      body: { phones: read.body.phones },
    });
    expect(back.status).toBe(200);
  });

  it("keep text that is not a phone number as typed, and match it as typed", async () => {
    t = await setupTestApp();
    const made = await create({ firstName: "Ada", lastName: "One", phone: "ask for the office" });
    expect(made.status).toBe(201);
    expect(made.body.contact.phones).toEqual([{ value: "ask for the office", isPrimary: true, e164: null }]);
    expect((await create({ firstName: "Bea", lastName: "Two", phone: " ask for the office " })).status).toBe(
      409,
    );
    expect(
      (await create({ firstName: "Cy", lastName: "Three", phone: "ask for the front desk" })).status,
    ).toBe(201);
  });

  it("match text that is not a valid number by its digits", async () => {
    t = await setupTestApp();
    const made = await create({ firstName: "Ada", lastName: "One", phone: "555-123-4567" });
    expect(made.status).toBe(201);
    expect(made.body.contact.phones).toEqual([{ value: "555-123-4567", isPrimary: true, e164: null }]);
    for (const phone of ["(555) 123-4567", "5551234567", " 555.123.4567 "]) {
      const again = await create({ firstName: "Bea", lastName: "Two", phone });
      expect(again.status, phone).toBe(409);
      expect(again.body.contactId).toBe(made.body.contact.id);
      expect(again.body.error).toContain(phone.trim());
    }
    expect((await create({ firstName: "Cy", lastName: "Three", phone: "555-123-4568" })).status).toBe(201);
    // A valid number and the same digits typed without their +: one number too.
    const uk = await create({ firstName: "Dee", lastName: "Four", phone: "+44 20 7946 0958" });
    expect(uk.status).toBe(201);
    const digits = await create({ firstName: "Eve", lastName: "Five", phone: "442079460958" });
    expect(digits.status).toBe(409);
    expect(digits.body.contactId).toBe(uk.body.contact.id);
    // An update is held to the same rule, and a contact may keep its own number in another format.
    const other = await create({ firstName: "Fay", lastName: "Six", phone: "555-000-1111" });
    const moved = await t.request<ContactAnswer>("PUT", `/v1/contacts/${other.body.contact.id}`, {
      body: { phones: [{ value: "555 123 4567" }] },
    });
    expect(moved.status).toBe(409);
    expect(moved.body.contactId).toBe(made.body.contact.id);
    const own = await t.request("PUT", `/v1/contacts/${made.body.contact.id}`, {
      body: { phones: [{ value: "(555) 123-4567" }] },
    });
    expect(own.status).toBe(200);
  });

  it("read numbers without a country code in the organization's country", async () => {
    t = await setupTestApp();
    const set = await t.request<{ country: string }>("PUT", "/v1/organization", { body: { country: "gb" } });
    expect(set.status).toBe(200);
    expect(set.body.country).toBe("GB");
    const uk = await create({ firstName: "Ada", lastName: "One", phone: "020 7946 0958" });
    expect(uk.body.contact.phones[0]?.e164).toBe("+442079460958");
    expect((await create({ firstName: "Bea", lastName: "Two", phone: "+44 20 7946 0958" })).status).toBe(409);
    const bad = await t.request<ContactAnswer>("PUT", "/v1/organization", { body: { country: "XX" } });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual(["country must be an ISO 3166-1 alpha-2 country code such as US or GB"]);
  });

  it("given at checkout are stored with their E.164 form", async () => {
    t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0" } });
    const formId = await createForm(t, { ...validForms.standard(), enablePhone: true });
    const paid = await checkout(t, formId, {
      amount: 25,
      donor: { firstName: "Ada", lastName: "Giver", email: "ada@example.org", phone: "617 555 0199" },
      paymentMethod: card(),
    });
    expect(paid.status, paid.text).toBe(201);
    const list = await t.request<{ contacts: { phones: Phone[] }[] }>("GET", "/v1/contacts");
    expect(list.body.contacts[0]?.phones).toEqual([
      { value: "617 555 0199", isPrimary: true, e164: "+16175550199" },
    ]);
    expect((await create({ firstName: "X", lastName: "Y", phone: "+16175550199" })).status).toBe(409);
  });

  it("given at checkout are read in the donor's address country, else the organization's; a + number is international", async () => {
    t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0" } });
    const formId = await createForm(t, {
      ...validForms.standard(),
      enablePhone: true,
      enableBillingAddress: true,
    });
    const give = async (email: string, phone: string, address?: Record<string, string>) => {
      const paid = await checkout(t, formId, {
        amount: 25,
        donor: { firstName: "Ada", lastName: "Giver", email, phone, ...(address ? { address } : {}) },
        paymentMethod: card(),
      });
      expect(paid.status, paid.text).toBe(201);
      const found = await t.request<{ contacts: { phones: Phone[] }[] }>(
        "GET",
        `/v1/contacts?email=${encodeURIComponent(email)}`,
      );
      return found.body.contacts[0]?.phones[0]?.e164;
    };
    // The demo organization is in the US.
    expect(
      await give("mx@example.org", "55 1234 5678", {
        city: "Ciudad de México",
        postal: "06600",
        country: "MX",
      }),
    ).toBe("+525512345678");
    expect(await give("de@example.org", "030 1234567", { city: "Berlin", country: "de" })).toBe(
      "+49301234567",
    );
    expect(await give("gb@example.org", "020 7946 0018", { city: "London", country: "GB" })).toBe(
      "+442079460018",
    );
    expect(await give("plus@example.org", "+49 30 7654321", { city: "Lyon", country: "FR" })).toBe(
      "+49307654321",
    );
    // No country, or one that is no ISO code: the organization's, as before.
    expect(await give("us@example.org", "617 555 0123")).toBe("+16175550123");
    expect(await give("xx@example.org", "617 555 0124", { city: "Atlantis", country: "Atlantis" })).toBe(
      "+16175550124",
    );
    // A number that does not parse is kept as typed.
    expect(await give("odd@example.org", "ask the front desk", { city: "Berlin", country: "DE" })).toBeNull();
  });

  it("made or changed by the API are read in the country of the contact's primary address", async () => {
    t = await setupTestApp();
    const made = await create({
      firstName: "Ada",
      lastName: "One",
      phone: "030 1234567",
      addresses: [{ city: "Berlin", country: "DE" }],
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.contact.phones[0]?.e164).toBe("+49301234567");
    const dup = await create({ firstName: "Bea", lastName: "Two", phone: "+49 30 1234567" });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toContain("+49 30 1234567");
    const changed = await t.request<ContactAnswer>("PUT", `/v1/contacts/${made.body.contact.id}`, {
      body: { phones: [{ value: "020 7946 0018" }], addresses: [{ city: "London", country: "GB" }] },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.contact.phones[0]?.e164).toBe("+442079460018");
    // Phones alone: the stored address's country.
    const again = await t.request<ContactAnswer>("PUT", `/v1/contacts/${made.body.contact.id}`, {
      body: { phones: [{ value: "020 7946 0019" }] },
    });
    expect(again.body.contact.phones[0]?.e164).toBe("+442079460019");
  });

  it("of different countries that are written alike nationally are different numbers: no 409", async () => {
    t = await setupTestApp();
    const french = await create({
      firstName: "Ada",
      lastName: "Paris",
      phone: "06 12 34 56 78",
      addresses: [{ city: "Paris", country: "FR" }],
    });
    expect(french.status, JSON.stringify(french.body)).toBe(201);
    expect(french.body.contact.phones[0]?.e164).toBe("+33612345678");
    const dutch = await create({
      firstName: "Bea",
      lastName: "Amsterdam",
      phone: "06 12345678",
      addresses: [{ city: "Amsterdam", country: "NL" }],
    });
    expect(dutch.status, JSON.stringify(dutch.body)).toBe(201);
    expect(dutch.body.contact.phones[0]?.e164).toBe("+31612345678");
    // The same French number written internationally, with or without its +, is still the French one.
    expect((await create({ firstName: "Cy", lastName: "Three", phone: "+33 6 12 34 56 78" })).status).toBe(
      409,
    );
    expect((await create({ firstName: "Di", lastName: "Four", phone: "33612345678" })).status).toBe(409);
  });

  it("are read again in the new country when only the address changes, and a number then taken is a 409", async () => {
    t = await setupTestApp();
    const made = await create({ firstName: "Ada", lastName: "One", phone: "020 7946 0958" });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    // Read in the organization's country (US): not a number there.
    expect(made.body.contact.phones[0]?.e164).toBeNull();
    const moved = await t.request<ContactAnswer>("PUT", `/v1/contacts/${made.body.contact.id}`, {
      body: { addresses: [{ city: "London", country: "GB" }] },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.contact.phones[0]).toEqual({
      value: "020 7946 0958",
      isPrimary: true,
      e164: "+442079460958",
    });
    expect((await create({ firstName: "Bea", lastName: "Two", phone: "+44 20 7946 0958" })).status).toBe(409);
  });

  it("shared with another contact at checkout never stop the contact's other changes", async () => {
    t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0" } });
    const first = await create({ firstName: "Bea", lastName: "First", phone: "+1 617 555 0101" });
    expect(first.status).toBe(201);
    const formId = await createForm(t, { ...validForms.standard(), enablePhone: true });
    const paid = await checkout(t, formId, {
      amount: 25,
      donor: { firstName: "New", lastName: "Donor", email: "newdonor@example.org", phone: "(617) 555-0101" },
      paymentMethod: card(),
    });
    expect(paid.status, paid.text).toBe(201);
    const found = await t.request<{ contacts: (Record<string, unknown> & { id: string })[] }>(
      "GET",
      "/v1/contacts?email=newdonor%40example.org",
    );
    const donorContact = found.body.contacts[0];
    const path = `/v1/contacts/${donorContact.id}`;
    const emails = await t.request<ContactAnswer>("PUT", path, {
      body: { emails: [{ value: "changed@example.org", isPrimary: true }] },
    });
    expect(emails.status, JSON.stringify(emails.body)).toBe(200);
    // A record read and sent back as it is.
    const read = await t.request<Record<string, unknown>>("GET", path);
    const back = await t.request<ContactAnswer>("PUT", path, { body: read.body });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    // Adding the number anew to a third contact is still refused: the first contact holds it.
    const third = await create({ firstName: "Cy", lastName: "Third", phone: "617-555-0101" });
    expect(third.status).toBe(409);
  });

  it("stored before migration 12 are given their E.164 form and keys; the older contact keeps a shared number", async () => {
    t = await setupTestApp();
    const db = t.store.db;
    // Rows as migration 11 left them: phones as typed, claimed by their digits.
    const legacy = (id: string, phone: string, createdAt: string) =>
      storedContact(id, { value: phone, isPrimary: true }, createdAt);
    const older = "00000000-0000-4000-8000-00000000000a";
    const newer = "00000000-0000-4000-8000-00000000000b";
    const text = "00000000-0000-4000-8000-00000000000c";
    await db
      .insertInto("contacts")
      .values([
        legacy(older, "(617) 555-0101", "2025-01-01T00:00:00.000Z"),
        legacy(newer, "+1 617 555 0101", "2025-02-01T00:00:00.000Z"),
        legacy(text, "front desk", "2025-03-01T00:00:00.000Z"),
      ])
      .execute();
    await db
      .insertInto("contact_keys")
      .values([
        { organization_id: t.org.id, kind: "phone", value_key: "6175550101", contact_id: older },
        { organization_id: t.org.id, kind: "phone", value_key: "16175550101", contact_id: newer },
      ])
      .execute();
    await db.schema.alterTable("organizations").dropColumn("country").execute();
    await db.deleteFrom("almoner_migrations").where("version", "=", 12).execute();

    expect((await migrate(db)).applied).toEqual([12]);

    const keys = await db
      .selectFrom("contact_keys")
      .select(["value_key", "contact_id"])
      .where("kind", "=", "phone")
      .orderBy("value_key")
      .execute();
    expect(keys).toEqual([
      { value_key: "+16175550101", contact_id: older },
      { value_key: "front desk", contact_id: text },
    ]);
    const shown = await t.request<ContactAnswer["contact"]>("GET", `/v1/contacts/${newer}`);
    expect(shown.body.phones).toEqual([{ value: "+1 617 555 0101", isPrimary: true, e164: "+16175550101" }]);
    expect((await t.request<{ country: string }>("GET", "/v1/organization")).body.country).toBe("US");
    const dup = await create({ firstName: "New", lastName: "One", phone: "617-555-0101" });
    expect(dup.body.contactId).toBe(older);
  });
});

describe(`phone keys before migration 25 (${dialect})`, () => {
  it("gain the phones' digits; the older contact keeps a number two contacts typed alike", async () => {
    t = await setupTestApp();
    const db = t.store.db;
    // Rows as migration 24 left them: phones claimed by their E.164 form, or as typed.
    const row = (id: string, value: string, e164: string | null, createdAt: string) =>
      storedContact(id, { value, isPrimary: true, e164 }, createdAt);
    const older = "00000000-0000-4000-8000-00000000000a";
    const newer = "00000000-0000-4000-8000-00000000000b";
    const valid = "00000000-0000-4000-8000-00000000000c";
    await db
      .insertInto("contacts")
      .values([
        row(older, "555-123-4567", null, "2025-01-01T00:00:00.000Z"),
        row(newer, "(555) 123-4567", null, "2025-02-01T00:00:00.000Z"),
        row(valid, "(617) 555-0101", "+16175550101", "2025-03-01T00:00:00.000Z"),
      ])
      .execute();
    await db
      .insertInto("contact_keys")
      .values([
        { organization_id: t.org.id, kind: "phone", value_key: "555-123-4567", contact_id: older },
        { organization_id: t.org.id, kind: "phone", value_key: "(555) 123-4567", contact_id: newer },
        { organization_id: t.org.id, kind: "phone", value_key: "+16175550101", contact_id: valid },
      ])
      .execute();
    await db.deleteFrom("almoner_migrations").where("version", "in", [25, 27]).execute();

    expect((await migrate(db)).applied).toEqual([25, 27]);
    const keys = await db
      .selectFrom("contact_keys")
      .select(["value_key", "contact_id"])
      .where("kind", "=", "phone")
      .orderBy("value_key")
      .execute();
    // Today's rule: a valid number by its E.164 form, with and without its +; another by its digits.
    expect(keys).toEqual([
      { value_key: "+16175550101", contact_id: valid },
      { value_key: "16175550101", contact_id: valid },
      { value_key: "5551234567", contact_id: older },
    ]);
    const dup = await create({ firstName: "New", lastName: "One", phone: "555.123.4567" });
    expect(dup.status).toBe(409);
    expect(dup.body.contactId).toBe(older);
  });
});

describe(`phone keys before migration 27 (${dialect})`, () => {
  it("a valid number no longer holds its national digits: another country's number written alike is taken", async () => {
    t = await setupTestApp();
    const db = t.store.db;
    const french = "00000000-0000-4000-8000-00000000000d";
    await db
      .insertInto("contacts")
      .values(
        storedContact(
          french,
          { value: "06 12 34 56 78", isPrimary: true, e164: "+33612345678" },
          "2025-01-01T00:00:00.000Z",
        ),
      )
      .execute();
    // As migration 25 left it: the E.164 form and the digits as typed.
    await db
      .insertInto("contact_keys")
      .values([
        { organization_id: t.org.id, kind: "phone", value_key: "+33612345678", contact_id: french },
        { organization_id: t.org.id, kind: "phone", value_key: "0612345678", contact_id: french },
      ])
      .execute();
    await db.deleteFrom("almoner_migrations").where("version", "=", 27).execute();
    expect((await migrate(db)).applied).toEqual([27]);
    const keys = await db
      .selectFrom("contact_keys")
      .select("value_key")
      .where("contact_id", "=", french)
      .orderBy("value_key")
      .execute();
    expect(keys.map((k) => k.value_key)).toEqual(["+33612345678", "33612345678"]);
    const dutch = await create({
      firstName: "Bea",
      lastName: "Amsterdam",
      phone: "06 12345678",
      addresses: [{ city: "Amsterdam", country: "NL" }],
    });
    expect(dutch.status, JSON.stringify(dutch.body)).toBe(201);
  });
});

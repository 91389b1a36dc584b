import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setupTestApp, type TestApp, type TestResponse } from "../support/testApp.js";

/**
 * Generated bad bodies against POST /v1/contacts and PUT /v1/contacts/{id}: valid fields
 * mixed with at least one field that breaks a rule, random JSON values, unknown keys and non-JSON text.
 * Each must be a 4xx JSON error (never a 5xx), and must leave contacts, their keys and the event outbox
 * exactly as they were.
 */

type Json = Record<string, unknown>;

const RUNS = 120;
const long = (n: number) => "x".repeat(n);

const okFields: Record<string, fc.Arbitrary<unknown>> = {
  firstName: fc.constantFrom("Ada", "Grace", "Zoë"),
  lastName: fc.constantFrom("Lovelace", "Hopper", "O'Neil"),
  organizationName: fc.constantFrom("Acme", null, ""),
  addresses: fc.constant([{ line1: "1 Main St", city: "Springfield", isPrimary: true }]),
};

/** Values each field must refuse (with a 400 and details), whatever else the body holds. */
const badValues: Record<string, unknown[]> = {
  firstName: ["", "   ", 5, null, true, [], {}, long(101)],
  lastName: ["", 0, null, false, ["Ada"], long(101)],
  organizationName: [5, true, [], {}, long(201)],
  emails: [
    "a@b.co",
    ["a@b.co"],
    [{ value: "nope" }],
    [{}],
    [null],
    [{ value: "a@b.co", isPrimary: "yes" }],
    [{ value: "a@b.co", extra: 1 }],
    [{ value: "a@b.co", email: "c@d.co" }],
    [{ value: "a@b.co" }, { value: "A@B.CO" }],
    [
      { value: "a@b.co", isPrimary: true },
      { value: "c@d.co", is_primary: true },
    ],
    Array.from({ length: 21 }, (_, i) => ({ value: `m${i}@b.co` })),
    { value: "a@b.co" },
    [{ value: `${long(250)}@b.co` }],
  ],
  // Phone formats are not validated (any text up to 40 characters is kept as typed); these break other rules.
  phones: [
    "555 1234",
    [{ value: "" }],
    [{ value: 5551234 }],
    [{}],
    [{ value: "555 1234", isPrimary: 1 }],
    [{ value: "555 1234", isPrimary: true, is_primary: true }],
    [{ value: "555-1234" }, { value: " 555-1234 " }],
    [{ value: `1${"2".repeat(40)}` }],
  ],
  addresses: [
    "1 Main St",
    [{}],
    [null],
    [{ line1: 5 }],
    [{ line1: long(201) }],
    [{ zip: "12345" }],
    [
      { line1: "a", isPrimary: true },
      { line1: "b", isPrimary: true },
    ],
  ],
  email: ["bad", 5, "", null, ["a@b.co"]],
  phone: [5551234, "", null, "1".repeat(41)],
};
const BAD_KEYS = Object.keys(badValues);

/** A body with some valid fields and 1-3 fields that must be refused. */
const badBody = fc
  .tuple(
    fc.record(okFields, { requiredKeys: [] }),
    fc.uniqueArray(fc.constantFrom(...BAD_KEYS), { minLength: 1, maxLength: 3 }),
    fc.array(fc.nat(), { minLength: 3, maxLength: 3 }),
  )
  .map(([ok, keys, picks]) => {
    const body: Json = { ...ok };
    keys.forEach((key, i) => {
      const values = badValues[key];
      body[key] = values[picks[i] % values.length];
    });
    return body;
  });

const unknownKeys = fc
  .dictionary(
    fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !(k in badValues) && k !== "__proto__"),
    fc.jsonValue({ maxDepth: 2 }),
    { minKeys: 1, maxKeys: 3 },
  )
  .map((extra) => ({ firstName: "Ada", lastName: "L", ...extra }));

const notJson = fc.oneof(
  fc.constantFrom("", "{", "[]", "null", "42", '"text"', "{firstName: 'x'}", '{"firstName":"a",}'),
  fc.string({ maxLength: 30 }).filter((s) => {
    try {
      const v = JSON.parse(s);
      return v === null || typeof v !== "object" || Array.isArray(v);
    } catch {
      return true;
    }
  }),
);

let t: TestApp;
let existingId: string;

beforeAll(async () => {
  t = await setupTestApp();
  const made = await t.request<{ contact: { id: string } }>("POST", "/v1/contacts", {
    body: { firstName: "Kept", lastName: "As Is", email: "kept@example.org", phone: "555 0199" },
  });
  existingId = made.body.contact.id;
});
afterAll(() => t.close());

async function snapshot() {
  const db = t.store.db;
  const [contacts, keys, events] = await Promise.all([
    db.selectFrom("contacts").selectAll().orderBy("id").execute(),
    db.selectFrom("contact_keys").selectAll().orderBy("kind").orderBy("value_key").execute(),
    db.selectFrom("outbox_events").select("id").execute(),
  ]);
  return JSON.stringify({ contacts, keys, events: events.length });
}

function expectClientError(res: TestResponse<unknown>) {
  expect(res.status, res.text.slice(0, 300)).toBeGreaterThanOrEqual(400);
  expect(res.status, res.text.slice(0, 300)).toBeLessThan(500);
  const body = res.body as Json;
  expect(typeof body.error).toBe("string");
  if (body.error === "Validation failed") expect((body.details as string[]).length).toBeGreaterThan(0);
}

async function refused(method: "POST" | "PUT", body: { json?: unknown; raw?: string }) {
  const before = await snapshot();
  const path = method === "POST" ? "/v1/contacts" : `/v1/contacts/${existingId}`;
  const res = await t.request<unknown>(method, path, { body: body.json, rawBody: body.raw });
  expectClientError(res);
  expect(await snapshot()).toBe(before);
}

describe.each(["POST", "PUT"] as const)("%s contacts with generated bad bodies", (method) => {
  it("refuses bodies with 1-3 fields that break a rule, writing nothing", async () => {
    await fc.assert(
      fc.asyncProperty(badBody, async (json) => refused(method, { json })),
      { numRuns: RUNS },
    );
  });

  it("refuses random JSON values, unknown keys and text that is not a JSON object, writing nothing", async () => {
    const arbitrary = fc.oneof(
      fc
        .jsonValue({ maxDepth: 3 })
        .filter((v) => v === null || typeof v !== "object" || Array.isArray(v) || method === "POST")
        .map((json) => ({ json })),
      unknownKeys.map((json) => ({ json })),
      notJson.map((raw) => ({ raw })),
    );
    await fc.assert(
      fc.asyncProperty(arbitrary, async (body) => {
        // A random object that happens to be a valid contact is not a bad body.
        const j = ("json" in body ? body.json : undefined) as Json | undefined;
        fc.pre(!(j && typeof j.firstName === "string" && typeof j.lastName === "string" && !("extra" in j)));
        await refused(method, body);
      }),
      { numRuns: RUNS },
    );
  });
});

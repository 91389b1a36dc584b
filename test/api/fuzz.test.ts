import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AMOUNT_TYPES, FREQUENCIES, INPUT_FORM_TYPES, STORED_FORM_TYPES } from "../../shared/enums.js";
import {
  countForms,
  dialect,
  setupTestApp,
  type TestApp,
  type TestOrg,
  type TestResponse,
} from "../support/testApp.js";

/**
 * Generated bad bodies against the write endpoints (JSON-only bodies, 400 with details,
 * never a 5xx for a client mistake). Every body here is invalid by construction, so each must be
 * answered with a 4xx JSON error, and must leave the database as it was.
 */

type Json = Record<string, unknown>;

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 150;
/** A fixed run count scaled up in proportion when FUZZ_RUNS asks for a longer hunt. */
const scaled = (runs: number) => Math.max(runs, Math.round((runs * RUNS) / 150));

// ---------------------------------------------------------------------------------------------
// Building blocks

const FORM_KEYS = [
  "title",
  "description",
  "formType",
  "amountType",
  "funds",
  "frequencies",
  "defaultFrequency",
  "color",
  "active",
  "headerImage",
  "goal",
  "oneTimeAmounts",
  "dailyAmounts",
  "weeklyAmounts",
  "monthlyAmounts",
  "annuallyAmounts",
  "defaultAmount",
  "allowCustomAmount",
  "givingLevels",
  "sponsorshipGroups",
  "tickets",
  "promoCodes",
  "customInputs",
  "faqs",
  "enableFundraisingBar",
  "enableDonorList",
  "enableCoverFees",
  "enableAnonymous",
  "enableOrganizationName",
  "enableBillingAddress",
  "enableCountryDropdown",
  "enablePhone",
  "enableCustomEmail",
  "replyToAddress",
  "emailSubject",
  "customMessage",
  "enableTimeAndLocation",
  "eventDate",
  "startTime",
  "endTime",
  "location",
  "eventDetails",
  "timeZone",
  "formID",
  "formUrl",
  "embedHTML",
  "createdAt",
  "updatedAt",
  "productGroups",
  "quantitySold",
  "timesRedeemed",
];

const ORG_KEYS = ["organizationName", "organizationBaseURLs", "globalCustomInputs"];

/** A key no schema knows (including prototype-ish names). */
const unknownKey = (known: string[]) =>
  fc
    .oneof(
      fc.constantFrom(
        "__proto__",
        "constructor",
        "prototype",
        "toString",
        "hasOwnProperty",
        "Title",
        "FUNDS",
      ),
      fc.string({ minLength: 1, maxLength: 20 }),
    )
    .filter((k) => !known.includes(k));

/** Strings longer than any field allows, sometimes longer than the body limit. */
const hugeString = fc
  .tuple(fc.constantFrom("x", "é", "😀", "<", "\\", '"', "\u0000"), fc.integer({ min: 5_000, max: 300_000 }))
  .map(([ch, n]) => ch.repeat(n));

const junkScalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 30 }),
);

/** Arrays that hold at least one element that is not an object (null, number, string, array). */
const arrayWithNonObject = fc
  .tuple(
    fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
    fc.oneof(junkScalar, fc.array(junkScalar, { maxLength: 3 })),
  )
  .map(([rest, bad]) => [...rest, bad]);

/** Arrays that hold at least one element that is not a string. */
const arrayWithNonString = fc
  .tuple(
    fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
    fc.oneof(
      fc.constant(null),
      fc.integer(),
      fc.boolean(),
      fc.object({ maxDepth: 1 }),
      fc.array(fc.integer()),
    ),
  )
  .map(([rest, bad]) => [...rest, bad]);

// null is left out of the "wrong type" pools of optional fields: a server may fairly read it as "not sent".
const notBoolean = fc.oneof(
  fc.constantFrom("true", "false", "yes", 0, 1, [], {}),
  fc.string({ maxLength: 10 }),
);
const notArray = fc.oneof(
  fc.boolean(),
  fc.integer(),
  fc.string({ maxLength: 30 }),
  fc.object({ maxDepth: 1 }),
);
const notString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.array(junkScalar, { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
);
const tooLong = (max: number) => fc.integer({ min: max + 1, max: max + 400 }).map((n) => "a".repeat(n));
const badAmount = fc.oneof(
  fc.constantFrom(
    0,
    -1,
    -0.01,
    0.5,
    0.99,
    1_000_000.01,
    2_000_000,
    1.234,
    25.001,
    1e300,
    "25",
    "100",
    true,
    null,
  ),
  fc.double({ min: -1e6, max: 0.99, noNaN: true }),
);
const badAmountList = fc.oneof(
  badAmount.map((a) => [a]),
  fc.tuple(fc.constantFrom(10, 25, 50), badAmount).map(([ok, bad]) => [ok, bad]),
  fc.constant(Array.from({ length: 21 }, (_, i) => i + 1)),
  notArray,
);
const enumValues = new Set<unknown>([...INPUT_FORM_TYPES, ...STORED_FORM_TYPES, ...AMOUNT_TYPES]);
const notEnum = fc
  .oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.constant(null))
  .filter((v) => !enumValues.has(v));

/** For each form field, values that are wrong whatever else the body holds. */
const badFormValues: Record<string, fc.Arbitrary<unknown>> = {
  title: fc.oneof(fc.constantFrom(null, "", "   ", "\t\n"), notString, tooLong(200), hugeString),
  description: fc.oneof(notString, tooLong(650), hugeString),
  formType: notEnum,
  amountType: notEnum,
  funds: fc.oneof(
    fc.constantFrom(null, [], "General", [""], ["  "], ["A", "A"]),
    notArray,
    arrayWithNonString,
    fc.constant(Array.from({ length: 101 }, (_, i) => `F${i}`)),
    tooLong(200).map((s) => [s]),
  ),
  frequencies: fc.oneof(
    fc.constantFrom([], ["HOURLY"], "MONTHLY", ["monthly"], ["ONE_TIME", "ONE_TIME"], [1], [null]),
    notArray,
  ),
  defaultFrequency: fc.oneof(
    fc.constantFrom("HOURLY", "weekly", "", 3, true),
    fc.string({ minLength: 6, maxLength: 12 }).filter((s) => !(FREQUENCIES as readonly string[]).includes(s)),
  ),
  color: fc.oneof(
    fc.constantFrom("blue", "#12345", "#1234567", "#GGGGGG", "3B82F6", "", "#3B82F", 0x3b82f6, null),
    notString,
  ),
  active: notBoolean,
  headerImage: fc.oneof(
    fc.constantFrom(
      "not a url",
      "ftp://images.example.org/a.png",
      "javascript:alert(1)",
      "//example.org/a.png",
      "https://user@example.org/a.png",
      "https://user:secret@example.org/a.png",
    ),
    notString,
  ),
  // 0 is "no goal" on a form without the fundraising bar (a goal > 0 is required only with it), so not here.
  goal: fc.oneof(
    fc.constantFrom(-5, -0.01, "1000", true, 1.234, 2e9),
    fc.double({ max: -0.01, noNaN: true, noDefaultInfinity: true }),
  ),
  oneTimeAmounts: badAmountList,
  dailyAmounts: badAmountList,
  weeklyAmounts: badAmountList,
  monthlyAmounts: badAmountList,
  annuallyAmounts: badAmountList,
  // null is "no default amount" (the schema allows it), so it is not a bad value here; it is in the lists above.
  defaultAmount: badAmount.filter((v) => v !== null),
  allowCustomAmount: notBoolean,
  givingLevels: fc.oneof(
    arrayWithNonObject,
    notArray,
    fc.constantFrom(
      [{}],
      [{ title: "", amount: 5 }],
      [{ title: "Friend", amount: 0 }],
      [{ title: "Friend", amount: "50" }],
      [{ title: "Friend", amount: 50, extra: 1 }],
    ),
  ),
  sponsorshipGroups: fc.oneof(
    arrayWithNonObject,
    notArray,
    fc.constantFrom(
      [{}],
      [{ groupTitle: "Booths", options: [] }],
      [{ groupTitle: "Booths", options: [null] }],
      [{ groupTitle: "Booths", options: [{ optionTitle: "Gold", amount: -1 }] }],
      [{ groupTitle: "Booths", options: "Gold" }],
    ),
  ),
  tickets: fc.oneof(
    arrayWithNonObject,
    notArray,
    fc.constantFrom(
      [{}],
      [{ name: "Adult", price: -1 }],
      [{ name: "Adult", price: 10, ticketType: "GROUP", groupSize: 1 }],
      [
        { name: "Adult", price: 10 },
        { name: "Adult", price: 20 },
      ],
      [{ name: "Adult", price: 10, quantity: 0 }],
    ),
  ),
  promoCodes: fc.oneof(
    arrayWithNonObject,
    notArray,
    fc.constantFrom(
      [{}],
      [{ code: "SAVE", discountType: "percentage", discountValue: 150 }],
      [{ code: "has space", discountType: "amount", discountValue: 5 }],
      [{ code: "SAVE", discountType: "bogus", discountValue: 5, applicableTickets: [null] }],
    ),
  ),
  customInputs: fc.oneof(
    arrayWithNonObject,
    notArray,
    fc.constantFrom(
      [{}],
      [{ inputType: "short_text" }],
      [{ title: "Size", inputType: "single_select", options: ["S"] }],
      [{ title: "Size", inputType: "dropdown" }],
      [{ title: "Note", inputType: "short_text", options: ["x"] }],
      [{ id: "has space", title: "Note", inputType: "short_text" }],
      [
        { title: "Same", inputType: "short_text" },
        { title: "Same", inputType: "long_text" },
      ],
      [{ title: "A", question: "B", inputType: "short_text" }],
    ),
  ),
  faqs: fc.oneof(
    arrayWithNonObject,
    notArray,
    fc.constantFrom(
      [{}],
      [{ question: "", answer: "a" }],
      [{ question: "q" }],
      [{ question: "q", answer: 5 }],
    ),
  ),
  enableFundraisingBar: fc.oneof(notBoolean, fc.constant(true)),
  enableDonorList: notBoolean,
  enableCoverFees: notBoolean,
  enableAnonymous: notBoolean,
  enableOrganizationName: notBoolean,
  enableBillingAddress: notBoolean,
  enableCountryDropdown: notBoolean,
  enablePhone: notBoolean,
  enableCustomEmail: fc.oneof(notBoolean, fc.constant(true)),
  replyToAddress: fc.oneof(
    fc.constantFrom("not-an-email", "a@b", "@example.org", "two@@example.org"),
    notString,
  ),
  emailSubject: fc.oneof(notString, tooLong(200)),
  customMessage: fc.oneof(notString, tooLong(5000)),
  enableTimeAndLocation: fc.oneof(notBoolean, fc.constant(true)),
  eventDate: fc.oneof(
    fc.constantFrom("2026-02-30", "tomorrow", "2026/10/03", "03-10-2026", "2026-13-01"),
    notString,
  ),
  startTime: fc.oneof(fc.constantFrom("25:00", "7pm", "12:60", "9:00", "12:00:00"), notString),
  endTime: fc.oneof(fc.constantFrom("24:00", "noon", "1:5"), notString),
  location: fc.oneof(notString, tooLong(500)),
  eventDetails: fc.oneof(notString, tooLong(5000)),
  timeZone: fc.oneof(fc.constantFrom("Mars/Olympus_Mons", "not a zone", "America/Nowhere"), notString),
};

/** For each organization field, values that are wrong whatever else the body holds. */
const badOrgValues: Record<string, fc.Arbitrary<unknown>> = {
  organizationName: fc.oneof(fc.constantFrom(null, "", "   "), notString, tooLong(200), hugeString),
  organizationBaseURLs: fc.oneof(
    fc.constantFrom(
      "https://example.org",
      ["not a url"],
      ["ftp://example.org"],
      ["https://example.org/?a=1"],
      ["https://example.org/#top"],
      ["/relative/path"],
      [""],
      [null],
    ),
    fc.constant(Array.from({ length: 21 }, (_, i) => `https://site${i}.example.org`)),
    arrayWithNonString,
    notArray,
  ),
  globalCustomInputs: fc.oneof(
    arrayWithNonObject,
    notArray,
    fc.constantFrom(
      [{}],
      [{ title: "Size", inputType: "BAD" }],
      [{ title: "", inputType: "SHORT_TEXT_INPUT" }],
      [{ title: "Size", inputType: "SINGLE_SELECTION_DROPDOWN", options: ["S"] }],
      [{ title: "Note", inputType: "SHORT_TEXT_INPUT", options: ["x"] }],
      [{ id: "has space", title: "Note", inputType: "SHORT_TEXT_INPUT" }],
      [
        { title: "Same", inputType: "SHORT_TEXT_INPUT" },
        { title: "Same", inputType: "LONG_TEXT_INPUT" },
      ],
      [
        { id: "dup", title: "One", inputType: "SHORT_TEXT_INPUT" },
        { id: "dup", title: "Two", inputType: "SHORT_TEXT_INPUT" },
      ],
      [{ title: "Note", inputType: "short_text" }],
    ),
  ),
};

/** 1 to `max` fields of `bad`, each with a wrong value, plus sometimes an unknown key. */
function badFields(bad: Record<string, fc.Arbitrary<unknown>>, known: string[], max: number) {
  const keys = Object.keys(bad);
  return fc
    .uniqueArray(fc.constantFrom(...keys), { minLength: 1, maxLength: Math.min(max, keys.length) })
    .chain((chosen) =>
      fc
        .tuple(
          fc.tuple(...chosen.map((k) => bad[k])),
          fc.option(fc.tuple(unknownKey(known), fc.jsonValue({ maxDepth: 2 })), { freq: 4 }),
        )
        .map(([values, extra]) => {
          const out: Json = {};
          chosen.forEach((k, i) => {
            out[k] = values[i];
          });
          if (extra) Object.defineProperty(out, extra[0], { value: extra[1], enumerable: true });
          return out;
        }),
    );
}

/** Only unknown keys (at least one), with arbitrary values. */
const unknownKeysOnly = (known: string[]) =>
  fc
    .uniqueArray(fc.tuple(unknownKey(known), fc.jsonValue({ maxDepth: 3 })), {
      minLength: 1,
      maxLength: 4,
      selector: ([k]) => k,
    })
    .map((entries) => {
      const out: Json = {};
      for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true });
      return out;
    });

/** A JSON text whose top level is not an object. */
const nonObjectJson = fc
  .jsonValue({ maxDepth: 3 })
  .filter((v) => v === null || typeof v !== "object" || Array.isArray(v));

/** Text that is not JSON, or JSON that is not an object: always "Invalid JSON body". */
function notJsonObjectText(validExample: Json) {
  const valid = JSON.stringify(validExample);
  return fc
    .oneof(
      fc.string({ maxLength: 200, unit: "binary" }),
      fc.string({ maxLength: 200 }),
      fc.integer({ min: 0, max: valid.length - 1 }).map((n) => valid.slice(0, n)),
      fc.constantFrom(
        "{'title': 'single quotes'}",
        '{"title": "x",}',
        "{title: 1}",
        "undefined",
        "NaN",
        "{}{}",
        '{"a":1} trailing',
        "[",
        "]",
        "<xml/>",
        "title=x&funds=y",
      ),
      nonObjectJson.map((v) => JSON.stringify(v)),
    )
    .filter((text) => {
      try {
        // A leading byte-order mark may fairly be skipped by the server, so judge the text without it.
        const parsed: unknown = JSON.parse(text.replace(/^\uFEFF/, ""));
        return parsed === null || typeof parsed !== "object" || Array.isArray(parsed);
      } catch {
        return true;
      }
    });
}

/** A JSON object text carrying a deeply nested value: arrays, objects, or both. */
const deeplyNested = (key: string) =>
  fc
    .tuple(fc.integer({ min: 50, max: 50_000 }), fc.constantFrom("array", "object", "mixed"))
    .map(([depth, kind]) => {
      const open = kind === "array" ? "[" : kind === "object" ? '{"a":' : '[{"a":';
      const close = kind === "array" ? "]" : kind === "object" ? "}" : "}]";
      return `{"${key}":${open.repeat(depth)}1${close.repeat(depth)}}`;
    });

function expectClientError(res: TestResponse<unknown>): void {
  const info = `${res.status} ${res.text.slice(0, 300)}`;
  expect(res.status, info).toBeGreaterThanOrEqual(400);
  expect(res.status, info).toBeLessThan(500);
  expect(res.headers.get("Content-Type") ?? "", info).toMatch(/application\/json/);
  expect(res.body, info).toBeTypeOf("object");
  expect((res.body as { error?: unknown }).error, info).toBeTypeOf("string");
}

const JSON_HEADERS = { "Content-Type": "application/json" };

// ---------------------------------------------------------------------------------------------

describe(`fuzzed bad bodies (${dialect})`, () => {
  let t: TestApp;
  let org: TestOrg;
  let formId: string;
  let formSnapshot: Json;
  let orgSnapshot: Json;

  const validForm = () => ({ title: `Fuzz ${Math.random().toString(36).slice(2)}`, funds: ["General"] });

  beforeAll(async () => {
    t = await setupTestApp({ env: { RATE_LIMIT_PER_HOUR: "1000000" } });
    org = await t.newOrg({ name: "Fuzz Org" });
    const created = await t.request<{ formID: string }>("POST", "/v1/forms", {
      key: org.key,
      body: { ...validForm(), description: "The form every fuzzed update targets" },
    });
    expect(created.status, created.text).toBe(201);
    formId = created.body.formID;
    formSnapshot = (await t.request<Json>("GET", `/v1/forms/${formId}`, { key: org.key })).body;
    const settings = await t.request<Json>("PUT", "/v1/organization", {
      key: org.key,
      body: {
        organizationBaseURLs: ["https://fuzz.example.org"],
        globalCustomInputs: [{ title: "Employer", inputType: "SHORT_TEXT_INPUT" }],
      },
    });
    expect(settings.status, settings.text).toBe(200);
    orgSnapshot = settings.body;
  });
  afterAll(() => t.close());

  const formCount = (organizationId = org.id) => countForms(t.store.db, organizationId);

  async function send(method: string, path: string, body: { json?: unknown; raw?: string }) {
    return body.raw !== undefined
      ? t.request<unknown>(method, path, { key: org.key, rawBody: body.raw, headers: JSON_HEADERS })
      : t.request<unknown>(method, path, { key: org.key, body: body.json });
  }

  /** POST /v1/forms with `body` fails with a 4xx JSON error and creates no form. */
  async function postFails(body: { json?: unknown; raw?: string }) {
    const res = await send("POST", "/v1/forms", body);
    expectClientError(res);
    expect(await formCount(), "a failed POST must not create a form").toBe(1);
    return res;
  }

  /** PUT or PATCH of the target form with `body` fails with a 4xx JSON error and leaves it unchanged. */
  async function updateFails(method: "PUT" | "PATCH", body: { json?: unknown; raw?: string }) {
    const res = await send(method, `/v1/forms/${formId}`, body);
    expectClientError(res);
    const after = await t.request<Json>("GET", `/v1/forms/${formId}`, { key: org.key });
    expect(after.status).toBe(200);
    expect(after.body, "a failed update must not change the form").toEqual(formSnapshot);
    return res;
  }

  /** PUT /v1/organization with `body` fails with a 4xx JSON error and leaves the settings unchanged. */
  async function orgUpdateFails(body: { json?: unknown; raw?: string }) {
    const res = await send("PUT", "/v1/organization", body);
    expectClientError(res);
    const after = await t.request<Json>("GET", "/v1/organization", { key: org.key });
    expect(after.body, "a failed update must not change the organization").toEqual(orgSnapshot);
    return res;
  }

  describe("POST /v1/forms", () => {
    it("answers random JSON values with a 4xx JSON error and creates nothing", async () => {
      await fc.assert(
        fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (value) => {
          await postFails({ json: value });
        }),
        { numRuns: RUNS },
      );
    });

    it("answers a valid form with 1-4 fields set to wrong-typed or out-of-range values with a 400 (413 when too big) and creates nothing", async () => {
      await fc.assert(
        fc.asyncProperty(badFields(badFormValues, FORM_KEYS, 4), async (bad) => {
          const res = await postFails({ json: { ...validForm(), ...bad } });
          if (res.status === 400) {
            const body = res.body as { error: string; details?: unknown };
            if (body.error === "Validation failed") {
              expect(Array.isArray(body.details)).toBe(true);
              expect((body.details as unknown[]).length).toBeGreaterThan(0);
            }
          } else expect(res.status, res.text.slice(0, 200)).toBe(413);
        }),
        { numRuns: scaled(200) },
      );
    });

    it("answers a valid form plus unknown keys with a 400 naming them", async () => {
      await fc.assert(
        fc.asyncProperty(unknownKeysOnly(FORM_KEYS), async (extra) => {
          const body: Json = validForm();
          for (const [k, v] of Object.entries(extra))
            Object.defineProperty(body, k, { value: v, enumerable: true });
          const res = await postFails({ json: body });
          expect(res.status).toBe(400);
        }),
        { numRuns: scaled(100) },
      );
    });

    it("answers text that is not a JSON object with 400 Invalid JSON body", async () => {
      await fc.assert(
        fc.asyncProperty(notJsonObjectText(validForm()), async (text) => {
          const res = await postFails({ raw: text });
          expect(res.status).toBe(400);
          expect(res.body).toEqual({ error: "Invalid JSON body" });
        }),
        { numRuns: RUNS },
      );
    });

    it("answers deeply nested values and huge strings with a 4xx and creates nothing", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc
              .constantFrom(...FORM_KEYS.slice(0, 24))
              .chain((key) => deeplyNested(key))
              .map((raw) => ({ raw })),
            hugeString.map((s) => ({ json: { ...validForm(), description: s } })),
            hugeString.map((s) => ({ json: { title: s, funds: [s] } })),
          ),
          async (body) => {
            await postFails(body);
          },
        ),
        { numRuns: scaled(60) },
      );
    });
  });

  describe("PUT and PATCH /v1/forms/{id}", () => {
    it("answers random JSON values with a 4xx JSON error and leaves the form unchanged", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom("PUT", "PATCH" as const),
          fc.jsonValue({ maxDepth: 4 }),
          async (method, value) => {
            await updateFails(method as "PUT" | "PATCH", { json: value });
          },
        ),
        { numRuns: RUNS },
      );
    });

    it("refuses a __proto__ key (found by this fuzz: it once let a bad PUT through) and leaves the form unchanged", async () => {
      for (const method of ["PUT", "PATCH"] as const) {
        const res = await updateFails(method, { raw: '{"defaultAmount":null,"__proto__":{}}' });
        expect((res.body as { details?: string[] }).details).toEqual(["__proto__ is not a recognised field"]);
      }
      await postFails({ raw: '{"title":"Proto","funds":["G"],"__proto__":{"active":false}}' });
    });

    it("answers 1-4 fields with wrong-typed or out-of-range values with a 4xx and leaves the form unchanged", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom("PUT", "PATCH" as const),
          badFields(badFormValues, FORM_KEYS, 4),
          async (method, bad) => {
            await updateFails(method as "PUT" | "PATCH", { json: bad });
          },
        ),
        { numRuns: scaled(200) },
      );
    });

    it("answers unknown keys, non-JSON text and deep nesting with a 4xx and leaves the form unchanged", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom("PUT", "PATCH" as const),
          fc.oneof(
            unknownKeysOnly(FORM_KEYS).map((json) => ({ json })),
            notJsonObjectText({ title: "x" }).map((raw) => ({ raw })),
            fc
              .constantFrom(...FORM_KEYS.slice(0, 24))
              .chain((key) => deeplyNested(key))
              .map((raw) => ({ raw })),
          ),
          async (method, body) => {
            await updateFails(method as "PUT" | "PATCH", body);
          },
        ),
        { numRuns: RUNS },
      );
    });
  });

  describe("PUT /v1/organization", () => {
    it("answers random JSON values with a 4xx JSON error and leaves the settings unchanged", async () => {
      await fc.assert(
        fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (value) => {
          await orgUpdateFails({ json: value });
        }),
        { numRuns: RUNS },
      );
    });

    it("answers wrong-typed or out-of-range fields with a 4xx and leaves the settings unchanged", async () => {
      await fc.assert(
        fc.asyncProperty(badFields(badOrgValues, ORG_KEYS, 3), async (bad) => {
          await orgUpdateFails({ json: bad });
        }),
        { numRuns: scaled(200) },
      );
    });

    it("answers unknown keys, non-JSON text and deep nesting with a 4xx and leaves the settings unchanged", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            unknownKeysOnly(ORG_KEYS).map((json) => ({ json })),
            notJsonObjectText({ organizationName: "x" }).map((raw) => ({ raw })),
            fc
              .constantFrom(...ORG_KEYS)
              .chain((key) => deeplyNested(key))
              .map((raw) => ({ raw })),
          ),
          async (body) => {
            await orgUpdateFails(body);
          },
        ),
        { numRuns: scaled(100) },
      );
    });
  });

  describe("non-object items in lists of objects", () => {
    const cases: [string, Json][] = [];
    for (const junk of [null, 7, "text", [], true]) {
      cases.push(
        [
          `sponsorshipGroups: [${JSON.stringify(junk)}]`,
          { amountType: "sponsorship", sponsorshipGroups: [junk] },
        ],
        [
          `sponsorshipGroups[0].options: [${JSON.stringify(junk)}]`,
          { amountType: "sponsorship", sponsorshipGroups: [{ groupTitle: "Booths", options: [junk] }] },
        ],
        [
          `tickets: [ticket, ${JSON.stringify(junk)}]`,
          { formType: "event", tickets: [{ name: "A", price: 5 }, junk] },
        ],
        [
          `promoCodes: [${JSON.stringify(junk)}]`,
          { formType: "event", tickets: [{ name: "A", price: 5 }], promoCodes: [junk] },
        ],
        [`customInputs: [${JSON.stringify(junk)}]`, { customInputs: [junk] }],
        [`givingLevels: [${JSON.stringify(junk)}]`, { amountType: "giving_level", givingLevels: [junk] }],
        [`faqs: [${JSON.stringify(junk)}]`, { faqs: [junk] }],
      );
    }

    it.each(cases)("POST /v1/forms with %s is a 4xx JSON error, never a 5xx", async (_label, fields) => {
      const res = await postFails({ json: { ...validForm(), ...fields } });
      expect(res.status).toBe(400);
    });

    it.each(cases)(
      "PUT /v1/forms/{id} with %s is a 4xx JSON error and leaves the form unchanged",
      async (_label, fields) => {
        const res = await updateFails("PUT", { json: fields });
        expect(res.status).toBe(400);
      },
    );

    it.each([null, 7, "text", [], true])(
      "PUT /v1/organization with globalCustomInputs: [%j] is a 4xx JSON error and changes nothing",
      async (junk) => {
        const res = await orgUpdateFails({ json: { globalCustomInputs: [junk] } });
        expect(res.status).toBe(400);
      },
    );
  });

  describe("control characters in stored strings", () => {
    /** Text holding at least one C0 control character (NUL included), otherwise printable. */
    const controlText = fc
      .tuple(
        fc.string({ maxLength: 20 }),
        fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
        fc.string({ maxLength: 20 }),
      )
      .map(([a, c, b]) => `${a}${c}${b}`.slice(0, 150));

    it("a form title or fund with control characters is accepted or refused with a 4xx, never a 5xx", async () => {
      const scoped = await t.newOrg();
      await fc.assert(
        fc.asyncProperty(controlText, fc.boolean(), async (text, inTitle) => {
          const tag = Math.random().toString(36).slice(2);
          const body = inTitle
            ? { title: `${text} ${tag}`, funds: ["General"] }
            : { title: `Control ${tag}`, funds: [`${text}x`] };
          const before = await formCount(scoped.id);
          const res = await t.request<unknown>("POST", "/v1/forms", { key: scoped.key, body });
          expect(res.status, res.text.slice(0, 200)).toBeLessThan(500);
          if (res.status !== 201) {
            expectClientError(res);
            const after = await formCount(scoped.id);
            expect(after).toBe(before);
          }
        }),
        { numRuns: scaled(60) },
      );
    });

    it("an organization name with control characters is accepted or refused with a 4xx, never a 5xx", async () => {
      const scoped = await t.newOrg({ name: "Control Org" });
      await fc.assert(
        fc.asyncProperty(controlText, async (text) => {
          const name = `${text}x`;
          const before = (await t.request<Json>("GET", "/v1/organization", { key: scoped.key })).body;
          const res = await t.request<unknown>("PUT", "/v1/organization", {
            key: scoped.key,
            body: { organizationName: name },
          });
          expect(res.status, res.text.slice(0, 200)).toBeLessThan(500);
          const after = (await t.request<Json>("GET", "/v1/organization", { key: scoped.key })).body;
          if (res.status === 200) expect(after).toEqual(res.body);
          else {
            expectClientError(res);
            expect(after).toEqual(before);
          }
        }),
        { numRuns: scaled(60) },
      );
    });
  });
});

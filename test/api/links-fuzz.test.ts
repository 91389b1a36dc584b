import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PREFILL_KEYS } from "../../shared/prefill.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * Generated bad prefill objects against POST /v1/forms/{formID}/links on every kind of form. Each generated prefill is a random selection of values the form accepts plus at least
 * one problem (unknown key, wrong type, amount out of range or not matching the form, bad custom input
 * answer, key of another form type). Every one must be a 400 JSON with details, never a 5xx, and must not
 * create a link. With a bad top-level field added as well, the details are that field's problem followed by
 * exactly the details the prefill gets alone (every problem is reported at once).
 */

type Json = Record<string, unknown>;
type Kind = "standard" | "givingLevel" | "sponsorship" | "event";
type Entries = [string, unknown][];

const RUNS_PER_KIND = 100;

const TEXT_KEYS = [
  "firstName",
  "lastName",
  "email",
  "phone",
  "organizationName",
  "address1",
  "address2",
  "city",
  "state",
  "postalCode",
  "country",
  "utmSource",
  "utmMedium",
  "utmCampaign",
  "utmTerm",
  "utmContent",
] as const;

const FUNDS = ["General", "Roof Repair"];
const FREQUENCIES_ON = { standard: ["ONE_TIME", "MONTHLY"], event: ["ONE_TIME"] };
const LEVEL_AMOUNTS = [50, 250];
const GROUPS = {
  Booths: [
    { name: "Gold", price: 1000 },
    { name: "Silver", price: 500 },
  ],
  Ads: [{ name: "Full page", price: 250 }],
} as const;
const PRODUCT_PRICES = [1000, 500, 250];
const TICKETS = ["Adult", "Table"];
const CUSTOM_KEYS = ["shirt", "Shirt size", "topics", "Topics", "note", "Note"];
const SHIRT_OPTIONS = ["S", "M", "L"];
const TOPIC_OPTIONS = ["Arts", "Science", "Sports"];
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const CUSTOM_INPUTS = [
  { id: "shirt", title: "Shirt size", inputType: "single_select", options: SHIRT_OPTIONS },
  { id: "topics", title: "Topics", inputType: "multi_select", options: TOPIC_OPTIONS },
  { id: "note", title: "Note", inputType: "short_text" },
];

const FORM_BODIES: Record<Kind, () => Json> = {
  standard: () => ({
    ...validForms.standard(),
    funds: FUNDS,
    frequencies: FREQUENCIES_ON.standard,
    customInputs: CUSTOM_INPUTS,
  }),
  givingLevel: () => ({
    ...validForms.givingLevel(),
    funds: FUNDS,
    frequencies: FREQUENCIES_ON.standard,
    customInputs: CUSTOM_INPUTS,
    givingLevels: LEVEL_AMOUNTS.map((amount, i) => ({ title: `Level ${i}`, amount, description: "" })),
  }),
  sponsorship: () => ({
    ...validForms.sponsorship(),
    funds: FUNDS,
    frequencies: FREQUENCIES_ON.standard,
    customInputs: CUSTOM_INPUTS,
    sponsorshipGroups: Object.entries(GROUPS).map(([groupTitle, options]) => ({
      groupTitle,
      description: "",
      options: options.map((o) => ({ optionTitle: o.name, amount: o.price })),
    })),
  }),
  event: () => ({ ...validForms.event(), funds: FUNDS, customInputs: CUSTOM_INPUTS }),
};

// ---------------------------------------------------------------------------------------------
// Values the form accepts

const noNul = (s: string) => !s.includes("\u0000");
const okText = fc.string({ maxLength: 60 }).filter(noNul);
const okEmail = fc.constantFrom("ada@example.org", "b.c+tag@mail.example.net", "x@y.io");

const okCustomAnswers: fc.Arbitrary<Json> = fc
  .record(
    {
      shirt: fc.tuple(fc.constantFrom("shirt", "Shirt size"), fc.constantFrom(...SHIRT_OPTIONS)),
      topics: fc.tuple(fc.constantFrom("topics", "Topics"), fc.subarray(TOPIC_OPTIONS)),
      note: fc.tuple(fc.constantFrom("note", "Note"), okText),
    },
    { requiredKeys: [] },
  )
  .map((r) => Object.fromEntries(Object.values(r)));

function okEntries(kind: Kind): fc.Arbitrary<Entries> {
  const common: fc.Arbitrary<Entries>[] = [
    ...TEXT_KEYS.filter((k) => k !== "email").map((k) => okText.map((v): Entries => [[k, v]])),
    okEmail.map((v): Entries => [["email", v]]),
    fc.constantFrom(...FUNDS).map((v): Entries => [["fund", v]]),
    fc
      .constantFrom(...(kind === "event" ? FREQUENCIES_ON.event : FREQUENCIES_ON.standard))
      .map((v): Entries => [["frequency", v]]),
    okCustomAnswers.map((v): Entries => [["customInputs", v]]),
  ];
  if (kind === "standard")
    common.push(fc.integer({ min: 1, max: 100_000_000 }).map((c): Entries => [["amount", c / 100]]));
  if (kind === "givingLevel")
    common.push(fc.constantFrom(...LEVEL_AMOUNTS).map((a): Entries => [["amount", a]]));
  if (kind === "sponsorship")
    common.push(
      fc.constantFrom(...Object.keys(GROUPS)).chain((group) =>
        fc.constantFrom(...GROUPS[group as keyof typeof GROUPS]).map(
          (p): Entries => [
            ["sponsorshipGroup", group],
            ["product", p.name],
            ["amount", p.price],
          ],
        ),
      ),
    );
  if (kind === "event") common.push(fc.constantFrom(...TICKETS).map((v): Entries => [["ticket", v]]));
  return fc
    .subarray(common)
    .chain((arbs): fc.Arbitrary<Entries[]> => (arbs.length ? fc.tuple(...arbs) : fc.constant([])))
    .map((parts) => parts.flat());
}

// ---------------------------------------------------------------------------------------------
// Problems: every one of these is refused on its own, whatever else the prefill holds

const notString = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
);
const notNumber = fc.oneof(
  fc.string({ maxLength: 10 }),
  fc.constantFrom("25", "0.01", "1e3"),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
);
const anyJson = fc.jsonValue({ maxDepth: 3 });

const unknownKey = fc
  .oneof(
    fc.string({ maxLength: 20 }),
    fc.constantFrom("__proto__", "constructor", "Amount", "first_name", "utm_source"),
  )
  .filter((k) => !(PREFILL_KEYS as readonly string[]).includes(k) && noNul(k));

const amountOutOfRange = fc.oneof(
  fc.constantFrom(0, -0, -1, 0.001, 0.009, 1000000.01, 1e7, -1000000),
  fc.double({ max: 0.0099, noNaN: true }),
  fc.double({ min: 1000000.001, noNaN: true }),
);
const amountTooPrecise = fc.integer({ min: 1, max: 99_999_999 }).map((c) => c / 100 + 0.003);
const inRangeAmount = fc.integer({ min: 1, max: 100_000_000 }).map((c) => c / 100);

function badCustomEntry(): fc.Arbitrary<[string, unknown]> {
  return fc.oneof(
    fc.tuple(
      fc.string({ maxLength: 20 }).filter((k) => !CUSTOM_KEYS.includes(k) && noNul(k)),
      anyJson,
    ),
    fc.tuple(
      fc.constantFrom("shirt", "Shirt size"),
      fc.oneof(
        fc.string({ maxLength: 10 }).filter((s) => !SHIRT_OPTIONS.includes(s)),
        notString,
      ),
    ),
    fc.tuple(
      fc.constantFrom("topics", "Topics"),
      fc.oneof(
        fc.string({ maxLength: 10 }),
        fc.integer(),
        fc.constant(null),
        fc
          .array(fc.string({ maxLength: 10 }), { minLength: 1, maxLength: 3 })
          .filter((a) => a.some((v) => !TOPIC_OPTIONS.includes(v))),
        fc.array(fc.integer(), { minLength: 1, maxLength: 3 }),
      ),
    ),
    fc.tuple(
      fc.constantFrom("note", "Note"),
      fc.oneof(notString, fc.string({ minLength: 2001, maxLength: 2100 })),
    ),
  );
}

function problems(kind: Kind): fc.Arbitrary<Entries> {
  const one = (key: string, value: fc.Arbitrary<unknown>) => value.map((v): Entries => [[key, v]]);
  const list: fc.Arbitrary<Entries>[] = [
    // unknown keys
    fc.tuple(unknownKey, anyJson).map((e): Entries => [e]),
    // wrong types and bad text
    fc.tuple(fc.constantFrom(...TEXT_KEYS), notString).map((e): Entries => [e]),
    fc
      .tuple(
        fc.constantFrom(...TEXT_KEYS),
        // the limit counts the text the donor would see: without its surrounding blanks
        fc.string({ minLength: 201, maxLength: 260 }).filter((s) => s.trim().length > 200),
      )
      .map((e): Entries => [e]),
    one(
      "email",
      fc
        .string({ minLength: 1, maxLength: 40 })
        .filter((s) => noNul(s) && s.trim() !== "" && !EMAIL.test(s.trim())),
    ),
    // amount
    one("amount", notNumber),
    one("amount", amountOutOfRange),
    one("amount", amountTooPrecise),
    // fund and frequency
    one(
      "fund",
      fc.oneof(
        fc.string({ maxLength: 20 }).filter((s) => !FUNDS.includes(s)),
        notString,
      ),
    ),
    one("fund", fc.constantFrom("general", "GENERAL", "roof repair", " General")),
    one(
      "frequency",
      fc.oneof(
        fc.constantFrom("HOURLY", "monthly", "Once", ""),
        notString,
        kind === "event"
          ? fc.constantFrom("DAILY", "WEEKLY", "MONTHLY", "ANNUALLY")
          : fc.constantFrom("DAILY", "ANNUALLY"),
      ),
    ),
    // custom inputs
    fc
      .tuple(okCustomAnswers, fc.array(badCustomEntry(), { minLength: 1, maxLength: 3 }))
      .map(([ok, bad]): Entries => [["customInputs", Object.fromEntries([...Object.entries(ok), ...bad])]]),
    one(
      "customInputs",
      fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.constant(null), fc.array(fc.string())),
    ),
  ];

  if (kind !== "sponsorship") {
    list.push(one("sponsorshipGroup", fc.oneof(fc.constantFrom("Booths", "Ads"), anyJson)));
    list.push(
      fc.tuple(fc.constantFrom("Booths", "Ads"), fc.constantFrom("Gold", "Full page")).map(
        ([g, p]): Entries => [
          ["sponsorshipGroup", g],
          ["product", p],
        ],
      ),
    );
    list.push(one("product", fc.oneof(fc.constantFrom("Gold", "Silver"), anyJson)));
  } else {
    list.push(
      one(
        "sponsorshipGroup",
        fc.oneof(
          fc.string({ maxLength: 12 }).filter((s) => !(s in GROUPS)),
          notString,
        ),
      ),
    );
    list.push(one("sponsorshipGroup", fc.constantFrom("booths", "ADS", "Booths ")));
    // a product without sponsorshipGroup (the group key is removed by the undefined)
    list.push(
      fc.constantFrom("Gold", "Silver", "Full page").map(
        (p): Entries => [
          ["product", p],
          ["sponsorshipGroup", undefined],
        ],
      ),
    );
    // a product of another group, or a name no group has
    list.push(
      fc
        .constantFrom(
          ["Booths", "Full page"],
          ["Ads", "Gold"],
          ["Ads", "Silver"],
          ["Booths", "gold"],
          ["Booths", "Platinum"],
        )
        .map(
          ([g, p]): Entries => [
            ["sponsorshipGroup", g],
            ["product", p],
          ],
        ),
    );
    // an amount that is no product's price
    list.push(
      one(
        "amount",
        inRangeAmount.filter((a) => !PRODUCT_PRICES.includes(a)),
      ),
    );
  }

  if (kind === "givingLevel")
    list.push(
      one(
        "amount",
        inRangeAmount.filter((a) => !LEVEL_AMOUNTS.includes(a)),
      ),
    );

  if (kind !== "event") list.push(one("ticket", fc.oneof(fc.constantFrom(...TICKETS), anyJson)));
  else
    list.push(
      one(
        "ticket",
        fc.oneof(
          fc.string({ maxLength: 12 }).filter((s) => !TICKETS.includes(s)),
          notString,
        ),
      ),
    );

  return fc.oneof(...list);
}

/** A prefill holding some accepted values and 1–4 problems (problems written last, so they win). */
function badPrefill(kind: Kind): fc.Arbitrary<Json> {
  return fc
    .tuple(okEntries(kind), fc.array(problems(kind), { minLength: 1, maxLength: 4 }))
    .map(([ok, bad]) => Object.fromEntries([...ok, ...bad.flat()]));
}

/** One bad top-level field of a link body (wrong type, too long, unknown, not a destination). */
const badTopLevel: fc.Arbitrary<Json> = fc.oneof(
  fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string())).map((v) => ({ name: v })),
  fc.integer({ min: 201, max: 400 }).map((n) => ({ name: "n".repeat(n) })),
  fc.constantFrom("slug", "colour", "prefills", "Name").map((k) => ({ [k]: "x" })),
  fc.constantFrom("EMAIL", "hosted_page_donate", "", "OVERLAY").map((v) => ({ destinationType: v })),
  fc.oneof(fc.integer(), fc.boolean(), fc.constant({})).map((v) => ({ overlayPath: v })),
);

// ---------------------------------------------------------------------------------------------

interface ErrorBody {
  error: string;
  details?: unknown;
}

describe(`checkout link prefill fuzz (${dialect})`, () => {
  let t: TestApp;
  const formIDs = {} as Record<Kind, string>;

  beforeAll(async () => {
    t = await setupTestApp({ env: { RATE_LIMIT_PER_HOUR: "1000000" } });
    for (const kind of Object.keys(FORM_BODIES) as Kind[]) {
      const res = await t.request<{ formID: string }>("POST", "/v1/forms", { body: FORM_BODIES[kind]() });
      expect(res.status, res.text).toBe(201);
      formIDs[kind] = res.body.formID;
    }
  });
  afterAll(() => t.close());

  async function linkCount(formID: string): Promise<number> {
    const row = await t.store.db
      .selectFrom("checkout_links")
      .select((eb) => eb.fn.countAll<string | number>().as("n"))
      .where("form_id", "=", formID)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  it.each(Object.keys(FORM_BODIES) as Kind[])(
    "the accepted-value generator alone produces valid prefills on the %s form (sanity check of the fuzzer)",
    async (kind) => {
      const formID = formIDs[kind];
      const samples = fc.sample(
        okEntries(kind).map((e) => Object.fromEntries(e)),
        { numRuns: 15, seed: 42 },
      );
      for (const prefill of samples) {
        const res = await t.request("POST", `/v1/forms/${formID}/links`, { body: { prefill } });
        expect(res.status, `${JSON.stringify(prefill)} → ${res.text}`).toBe(201);
      }
      // Remove them again so the fuzz runs below start from a known count.
      await t.store.db.deleteFrom("checkout_links").where("form_id", "=", formID).execute();
    },
  );

  it.each(Object.keys(FORM_BODIES) as Kind[])(
    "answers every bad prefill on the %s form with 400 JSON and details, and creates no link",
    async (kind) => {
      const formID = formIDs[kind];
      const before = await linkCount(formID);
      await fc.assert(
        fc.asyncProperty(badPrefill(kind), async (prefill) => {
          const res = await t.request<ErrorBody>("POST", `/v1/forms/${formID}/links`, {
            body: { name: "fuzz", prefill },
          });
          const shown = `${JSON.stringify(prefill)} → ${res.status} ${res.text}`;
          expect(res.status, shown).toBe(400);
          expect(res.headers.get("content-type") ?? "", shown).toMatch(/^application\/json/);
          expect(res.body.error, shown).toBe("Validation failed");
          expect(Array.isArray(res.body.details), shown).toBe(true);
          const details = res.body.details as unknown[];
          expect(details.length, shown).toBeGreaterThan(0);
          for (const d of details) expect(typeof d, shown).toBe("string");
          expect(await linkCount(formID), shown).toBe(before);
        }),
        { numRuns: RUNS_PER_KIND },
      );
      const list = await t.request<{ links: unknown[] }>("GET", `/v1/forms/${formID}/links?limit=200`);
      expect(list.status).toBe(200);
      expect(list.body.links).toHaveLength(before);
    },
  );

  it.each(Object.keys(FORM_BODIES) as Kind[])(
    "on the %s form lists a bad top-level field and then exactly the details the bad prefill gets alone",
    async (kind) => {
      const formID = formIDs[kind];
      const refuse = async (body: Json): Promise<string[]> => {
        const res = await t.request<ErrorBody>("POST", `/v1/forms/${formID}/links`, { body });
        expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(400);
        return res.body.details as string[];
      };
      await fc.assert(
        fc.asyncProperty(badTopLevel, badPrefill(kind), async (top, prefill) => {
          // A "__proto__" key is refused on its own before any field is looked at.
          fc.pre(!JSON.stringify(prefill).includes('"__proto__"'));
          const alone = await refuse({ prefill });
          const both = await refuse({ ...top, prefill });
          const shown = `${JSON.stringify(top)} + ${JSON.stringify(prefill)} → ${JSON.stringify(both)}`;
          expect(both.length, shown).toBeGreaterThan(alone.length);
          expect(both.slice(both.length - alone.length), shown).toEqual(alone);
          const [field] = Object.keys(top);
          for (const d of both.slice(0, both.length - alone.length))
            expect(d.startsWith(field), shown).toBe(true);
        }),
        { numRuns: 30 },
      );
    },
  );

  it.each(Object.keys(FORM_BODIES) as Kind[])(
    "answers a prefill that is not an object on the %s form with 400 and details",
    async (kind) => {
      const formID = formIDs[kind];
      const before = await linkCount(formID);
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.array(anyJson, { maxLength: 3 })),
          async (prefill) => {
            const res = await t.request<ErrorBody>("POST", `/v1/forms/${formID}/links`, {
              body: { prefill },
            });
            expect(res.status, `${JSON.stringify(prefill)} → ${res.text}`).toBe(400);
            expect(Array.isArray(res.body.details)).toBe(true);
          },
        ),
        { numRuns: 25 },
      );
      expect(await linkCount(formID)).toBe(before);
    },
  );
});

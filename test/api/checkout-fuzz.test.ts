import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bank, card, createForm, donor } from "../support/checkout.js";
import { type RowCounts, rowCounts } from "../support/race.js";
import { setupTestApp, type TestApp, type TestResponse } from "../support/testApp.js";

/**
 * Generated bad checkouts against each kind of form (answered with the API's 400 error body). Every
 * body starts as a checkout the form accepts and gets one to three changes, each of which alone makes it
 * unacceptable: wrong types, a missing donor, unknown keys, fields of another form type, unknown funds,
 * disabled frequencies, amounts out of range, unknown, exhausted or inapplicable promo codes, sold-out
 * stock, bad payment details, bad custom answers, odd or deep JSON. Raw bodies that are not JSON objects
 * are sent too. Each must be answered with a 4xx JSON `{error}` (400s with `details`, unless the body was
 * not a JSON object or filled the honeypot) and must write nothing: no payment, contact, subscription,
 * event, email, stock or charge, and no payment left PROCESSING.
 */

type Json = Record<string, unknown>;
type Kind = "standard" | "givingLevel" | "sponsorship" | "event";

/** Random combinations per form kind, after SAMPLES_ALONE values of each kind of change alone. */
const RUNS = 90;
const SAMPLES_ALONE = 3;
const RAW_RUNS = 60;

interface Mutation {
  label: string;
  apply(body: Json): void;
}

/** Sentinels replaced after JSON.stringify: numbers JSON allows but JavaScript cannot produce itself. */
const RAW_NUMBERS: Record<string, string> = { "@@1e400@@": "1e400", "@@-1e400@@": "-1e400", "@@-0@@": "-0" };

function encode(body: Json): string {
  let text = JSON.stringify(body);
  for (const [sentinel, raw] of Object.entries(RAW_NUMBERS))
    text = text.split(JSON.stringify(sentinel)).join(raw);
  return text;
}

/** Sets `path` in `body`, creating (or replacing non-object) parents; `__proto__` becomes an own key. */
function setPath(body: Json, path: string[], value: unknown): void {
  let node: Json = body;
  for (const part of path.slice(0, -1)) {
    const next = node[part];
    if (next === null || typeof next !== "object" || Array.isArray(next)) {
      Object.defineProperty(node, part, { value: {}, enumerable: true, writable: true, configurable: true });
    }
    node = node[part] as Json;
  }
  Object.defineProperty(node, path[path.length - 1], {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

function deletePath(body: Json, path: string[]): void {
  let node: unknown = body;
  for (const part of path.slice(0, -1)) {
    node = (node as Json | undefined)?.[part];
    if (node === null || typeof node !== "object") return;
  }
  delete (node as Json)[path[path.length - 1]];
}

const set = (path: string, values: unknown[]): fc.Arbitrary<Mutation> =>
  fc.constantFrom(...values).map((value) => ({
    label: `${path}=${JSON.stringify(value)?.slice(0, 80)}`,
    apply: (b: Json) => setPath(b, path.split("."), value),
  }));

const remove = (path: string): fc.Arbitrary<Mutation> =>
  fc.constant({ label: `delete ${path}`, apply: (b: Json) => deletePath(b, path.split(".")) });

const deep = (depth: number): unknown => {
  let v: unknown = "leaf";
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { k: v };
  return v;
};

const CHECKOUT_KEYS = [
  "frequency",
  "fund",
  "amount",
  "givingLevel",
  "product",
  "tickets",
  "promoCode",
  "extraDonation",
  "coverFees",
  "donor",
  "paymentMethod",
  "anonymous",
  "emailOptIn",
  "customInputs",
  "utm",
  "elementId",
  "website",
];
const DONOR_KEYS = ["firstName", "lastName", "email", "phone", "organizationName", "address"];

const unknownKey = (known: string[]) =>
  fc.oneof(
    fc.constantFrom(
      "__proto__",
      "constructor",
      "total",
      "subtotal",
      "fee",
      "discount",
      "amountCents",
      "status",
    ),
    fc.string({ maxLength: 20 }).filter((k) => !known.includes(k)),
  );

const anyValue = fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean(), fc.constant(null));

const badNames = ["", "   ", 42, null, "x".repeat(101), ["Ada"], { first: "Ada" }];

/** Changes that make any checkout unacceptable, whatever the form. */
const common: fc.Arbitrary<Mutation>[] = [
  remove("donor"),
  set("donor", [null, "Ada", 42, [], true]),
  set("donor.firstName", badNames),
  remove("donor.firstName"),
  set("donor.lastName", badNames),
  remove("donor.lastName"),
  set("donor.email", [
    "",
    "not-an-email",
    "a@b",
    "a b@c.de",
    "@example.org",
    42,
    null,
    `${"a".repeat(250)}@example.org`,
  ]),
  remove("donor.email"),
  fc.tuple(unknownKey(DONOR_KEYS), anyValue).map(([k, v]) => ({
    label: `donor.${JSON.stringify(k)}=${JSON.stringify(v)}`,
    apply: (b: Json) => setPath(b, ["donor", k], v),
  })),
  // Fields these forms do not collect (enablePhone, enableOrganizationName, enableBillingAddress are off).
  set("donor.phone", ["555-0100"]),
  set("donor.organizationName", ["Acme"]),
  set("donor.address", [{ line1: "1 Main St" }, { country: "US" }, "1 Main St"]),
  fc.tuple(unknownKey(CHECKOUT_KEYS), anyValue).map(([k, v]) => ({
    label: `${JSON.stringify(k)}=${JSON.stringify(v)}`,
    apply: (b: Json) => setPath(b, [k], v),
  })),
  set("frequency", ["monthly", "", 1, null, "ONCE", "ONE-TIME"]),
  set("fund", ["Nope", "", 5, null, "general", "x".repeat(201)]),
  set("coverFees", ["yes", 1, null, {}]),
  set("anonymous", ["yes", 1, null]),
  set("emailOptIn", ["true", 0]),
  remove("paymentMethod"),
  set("paymentMethod", [
    null,
    "card",
    4242424242424242,
    [],
    {},
    { type: "paypal" },
    { ...card(), type: "CARD" },
  ]),
  set("paymentMethod.number", [
    "4242",
    "4242 4242 4242 424x",
    "1".repeat(20),
    "4111111111111111",
    "4242424242424241",
    4242424242424242,
    "",
  ]),
  set("paymentMethod.expMonth", [0, 13, 1.5, "12", null]),
  set("paymentMethod.expYear", [-1, 10000, "2034", 2000, 1.5]),
  set("paymentMethod.cvc", ["12", "12345", "abc", 123, ""]),
  set("paymentMethod.foo", [1]),
  set("paymentMethod", [
    { ...bank(), routingNumber: "123" },
    { ...bank(), accountNumber: "12" },
    { ...bank(), accountHolder: "" },
    bank("000999999999"),
    { type: "token", token: "pm_fake" },
    { type: "token", token: "" },
    { type: "token", token: "pm_sandbox_abc.def" },
  ]),
  set("customInputs", ["x", [], 5, null]),
  set("customInputs.nope", ["x"]),
  set("customInputs", [{}, { shirt: "S" }, { tribute: "   " }]),
  set("customInputs.tribute", [["a"], "x".repeat(2001), 5, null]),
  set("customInputs.shirt", ["XL", ["S"], 1]),
  set("customInputs.topics", ["News", ["News", "News"], ["Sports"]]),
  set(`customInputs.${"k".repeat(301)}`, ["x"]),
  set("utm", ["x", { source: 5 }, { unknown: "x" }, { source: "x".repeat(201) }]),
  set("elementId", ["x".repeat(101), 5]),
  set("website", ["http://spam.example", "x"]),
  set("donor.firstName", ["Ada\u0000"]),
  set("customInputs.tribute", ["a\u0000b"]),
  fc.integer({ min: 33, max: 200 }).chain((depth) =>
    fc.constantFrom("utm", "customInputs", "deep", "donor.address").map((field) => ({
      label: `${field} nested ${depth} deep`,
      apply: (b: Json) => setPath(b, field.split("."), deep(depth)),
    })),
  ),
];

const badAmounts = [
  -5,
  0,
  0.5,
  0.99,
  1000000.01,
  100000001,
  1e21,
  10.123,
  10.005,
  25.001,
  1e-7,
  "25",
  null,
  true,
  [25],
  {},
  "@@1e400@@",
  "@@-1e400@@",
  "@@-0@@",
];

/** Fields that belong to another kind of form. */
const foreign = {
  amount: set("amount", [25, 50]),
  givingLevel: set("givingLevel", ["Friend"]),
  product: set("product", [{ group: "Booths", name: "Gold" }]),
  tickets: set("tickets", [[{ name: "Adult", quantity: 1 }]]),
  promoCode: set("promoCode", ["HALF", "x"]),
  extraDonation: set("extraDonation", [10]),
};

const specific: Record<Kind, fc.Arbitrary<Mutation>[]> = {
  standard: [
    set("amount", badAmounts),
    remove("amount"),
    set("frequency", ["WEEKLY", "DAILY", "ANNUALLY"]),
    foreign.givingLevel,
    foreign.product,
    foreign.tickets,
    foreign.promoCode,
    foreign.extraDonation,
  ],
  givingLevel: [
    set("givingLevel", ["Nope", "", "friend", 5, null]),
    remove("givingLevel"),
    set("amount", [33, -1, 50.001, ...badAmounts.filter((a) => a !== 50)]),
    set("frequency", ["WEEKLY", "DAILY"]),
    set("coverFees", [true]),
    foreign.product,
    foreign.tickets,
    foreign.promoCode,
    foreign.extraDonation,
  ],
  sponsorship: [
    remove("product"),
    set("product", [null, "Gold", [], { group: "Booths" }, { name: "Gold" }]),
    set("product.group", ["Nope", "booths", "", 5]),
    set("product.name", ["Nope", "", 5, "gold"]),
    set("product.quantity", [0, 101, 1.5, "1", -1, null]),
    set("product.extra", [1]),
    set("product", [
      { group: "Booths", name: "Silver" },
      { group: "Booths", name: "Silver", quantity: 2 },
      { group: "Booths", name: "Platinum", quantity: 11 },
    ]),
    set("frequency", ["MONTHLY", "WEEKLY"]),
    foreign.amount,
    foreign.givingLevel,
    foreign.tickets,
    foreign.promoCode,
    foreign.extraDonation,
  ],
  event: [
    remove("tickets"),
    set("tickets", [
      [],
      {},
      "Adult",
      [{ name: "Adult", quantity: 0 }],
      [{ name: "Nope", quantity: 1 }],
      [
        { name: "Adult", quantity: 1 },
        { name: "Adult", quantity: 1 },
      ],
      [{ name: "Adult", quantity: 5 }],
      [{ name: "Adult", quantity: -1 }],
      [{ name: "Adult", quantity: 1.5 }],
      [{ name: "Adult", quantity: 1001 }],
      [{ name: "Adult", quantity: "2" }],
      [{ name: "Adult", quantity: 1, extra: 1 }],
      [{ name: "Adult" }],
      [{ quantity: 1 }],
      [null],
      Array.from({ length: 101 }, (_, i) => ({ name: `T${i}`, quantity: 1 })),
    ]),
    // Sold out (the setup sold the only Limited seat), and an order above the $10,000,000 limit.
    set("tickets", [[{ name: "Limited", quantity: 1 }], [{ name: "Grand", quantity: 11 }]]),
    // Unknown (there is no expiry: an old code is just unknown), too long, not a string; not for Adult.
    set("promoCode", ["NOPE", "EXPIRED2020", "x".repeat(51), 5, "HALF"]),
    // Exhausted: the setup redeemed ONCE's only use.
    set("promoCode", ["ONCE", "once", " Once "]),
    set("extraDonation", [0.5, -1, 10.001, 2000000, "10", "@@1e400@@"]),
    set("frequency", ["MONTHLY", "WEEKLY"]),
    foreign.amount,
    foreign.givingLevel,
    foreign.product,
  ],
};

/**
 * Changes that are only wrong next to the base order (another change could make them right again,
 * e.g. deleting `givingLevel` leaves a level's amount alone), so they are only ever sent by themselves.
 */
const alone: Record<Kind, fc.Arbitrary<Mutation>[]> = {
  standard: [],
  givingLevel: [
    fc.constant({
      label: "givingLevel Friend with Patron's amount",
      apply: (b: Json) => Object.assign(b, { givingLevel: "Friend", amount: 500 }),
    }),
  ],
  sponsorship: [],
  event: [],
};

const customInputs = [
  { id: "tribute", title: "Tribute", inputType: "short_text", required: true },
  { id: "shirt", title: "Shirt size", inputType: "single_select", options: ["S", "M", "L"] },
  { id: "topics", title: "Topics", inputType: "multi_select", options: ["News", "Events"] },
];

const suffix = () => Math.random().toString(36).slice(2);

/** Each kind of form, and an order it accepts. */
const forms: Record<Kind, { create: () => Json; order: Json }> = {
  standard: {
    create: () => ({
      title: `Standard ${suffix()}`,
      funds: ["General", "Building"],
      frequencies: ["ONE_TIME", "MONTHLY"],
      customInputs,
    }),
    order: { frequency: "ONE_TIME", fund: "General", amount: 25 },
  },
  givingLevel: {
    create: () => ({
      title: `Levels ${suffix()}`,
      funds: ["General"],
      frequencies: ["ONE_TIME", "MONTHLY"],
      amountType: "giving_level",
      givingLevels: [
        { title: "Friend", amount: 50, description: "" },
        { title: "Patron", amount: 500, description: "" },
      ],
      allowCustomAmount: false,
      enableCoverFees: false,
      customInputs,
    }),
    order: { givingLevel: "Friend" },
  },
  sponsorship: {
    create: () => ({
      title: `Sponsor ${suffix()}`,
      funds: ["Fair"],
      amountType: "sponsorship",
      sponsorshipGroups: [
        {
          groupTitle: "Booths",
          description: "",
          options: [
            { optionTitle: "Gold", amount: 100 },
            { optionTitle: "Silver", amount: 50, quantity: 1 },
            { optionTitle: "Platinum", amount: 1_000_000 },
          ],
        },
      ],
      customInputs,
    }),
    order: { product: { group: "Booths", name: "Gold" } },
  },
  event: {
    create: () => ({
      title: `Event ${suffix()}`,
      funds: ["Gala"],
      formType: "event",
      tickets: [
        { name: "Adult", price: 50, maxPerOrder: 4 },
        { name: "Table", price: 400, ticketType: "GROUP", groupSize: 8 },
        { name: "Limited", price: 20, quantity: 1 },
        { name: "Grand", price: 1_000_000 },
      ],
      promoCodes: [
        { code: "HALF", discountType: "percentage", discountValue: 50, applicableTickets: ["Table"] },
        { code: "ONCE", discountType: "amount", discountValue: 10, quantity: 1 },
      ],
      customInputs,
    }),
    order: { tickets: [{ name: "Adult", quantity: 2 }] },
  },
};

const KINDS = Object.keys(forms) as Kind[];

/** A checkout the form accepts, with fresh donor details. */
function validBody(kind: Kind): Json {
  return {
    ...structuredClone(forms[kind].order),
    donor: donor(),
    paymentMethod: card(),
    customInputs: { tribute: "In memory of Grace" },
  };
}

/** What the setup sells so that "sold out" and "exhausted" mean something: the base order, then the last of each. */
const sellOuts: Record<Kind, Json[]> = {
  standard: [],
  givingLevel: [],
  sponsorship: [{ product: { group: "Booths", name: "Silver" } }],
  event: [
    { tickets: [{ name: "Limited", quantity: 1 }] },
    { tickets: [{ name: "Adult", quantity: 1 }], promoCode: "ONCE" },
  ],
};

/** Bodies that are not a JSON object at all, or not JSON. */
const rawBodies = fc.oneof(
  fc.constantFrom(
    "",
    "null",
    "[]",
    "[1,2]",
    "42",
    '"str"',
    "true",
    "{",
    '{"amount":',
    "nul",
    "{}",
    '{"donor":}',
    "\u0000",
    "[{}]",
    "{'amount': 25}",
    '{"amount": 25,}',
    `${"[".repeat(5000)}${"]".repeat(5000)}`,
    `${'{"a":'.repeat(3000)}1${"}".repeat(3000)}`,
    `{"website":"${"x".repeat(300_000)}"}`,
  ),
  fc.string({ maxLength: 40 }),
  fc.json({ maxDepth: 3 }),
);

const NO_DETAILS = new Set(["Invalid JSON body", "This submission looks automated and was not accepted"]);

let t: TestApp;
const formIds = {} as Record<Kind, string>;
const setupResults: { label: string; status: number; text: string }[] = [];
/** Every count as the setup left it: the whole fuzz run must end exactly there. */
let afterSetup: RowCounts;

beforeAll(async () => {
  t = await setupTestApp({
    env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0", CARD_FAILURE_LIMIT: "0" },
  });
  for (const kind of KINDS) {
    formIds[kind] = await createForm(t, forms[kind].create());
    const orders = [forms[kind].order, ...sellOuts[kind]];
    for (const order of orders) {
      const body = { ...validBody(kind), ...structuredClone(order) };
      const res = await send(kind, encode(body));
      setupResults.push({ label: `${kind} ${JSON.stringify(order)}`, status: res.status, text: res.text });
    }
  }
  afterSetup = await rowCounts(t.store.db);
});

afterAll(async () => {
  await t?.close();
});

function send(kind: Kind, rawBody: string): Promise<TestResponse> {
  return t.request("POST", `/api/forms/${formIds[kind]}/checkout`, {
    rawBody,
    key: null,
    headers: { "Content-Type": "application/json" },
  });
}

/** Sends a body that must be refused and checks the answer and that nothing was written. */
async function expectRefused(kind: Kind, rawBody: string, label: string): Promise<void> {
  const before: RowCounts = await rowCounts(t.store.db);
  const res = await send(kind, rawBody);
  const after = await rowCounts(t.store.db);
  const what = `${kind} [${label}] → ${res.status} ${res.text.slice(0, 300)}`;
  expect([400, 402, 413], what).toContain(res.status);
  expect(res.headers.get("content-type"), what).toMatch(/^application\/json/);
  expect(typeof res.body.error === "string" && res.body.error.length > 0, what).toBe(true);
  if (res.status === 400 && !NO_DETAILS.has(res.body.error as string)) {
    const details = res.body.details as unknown;
    expect(Array.isArray(details) && details.length > 0, what).toBe(true);
    for (const line of details as unknown[]) expect(typeof line, what).toBe("string");
  }
  if (res.status === 402) {
    expect(typeof res.body.code, what).toBe("string");
    // A method the processor refused is recorded as one FAILED payment the organization sees (with its
    // payment.failed event); nothing is charged and no stock is taken.
    expect(after.payments, `${what}: the declined attempt is recorded`).toBe(before.payments + 1);
    expect(after.events, what).toBe(before.events + 1);
    declinesRecorded++;
    expect({ ...after, payments: 0, events: 0 }, `${what}: rows written`).toEqual({
      ...before,
      payments: 0,
      events: 0,
    });
  } else expect(after, `${what}: rows written`).toEqual(before);
  expect(after.processing, what).toBe(0);
}

/** Declined attempts the checks above saw recorded (each one FAILED payment). */
let declinesRecorded = 0;

describe("generated bad checkouts", () => {
  it("the orders the bodies start from are accepted, and the limited stock is sold out", () => {
    for (const r of setupResults) expect(r.status, `${r.label}: ${r.text.slice(0, 300)}`).toBe(201);
  });

  for (const kind of KINDS) {
    it(`${kind} form: every mutated checkout is a 4xx JSON error and writes nothing`, async () => {
      const generators = [...common, ...specific[kind]];
      const refuse = async (mutations: Mutation[]) => {
        const body = validBody(kind);
        for (const m of mutations) m.apply(body);
        await expectRefused(kind, encode(body), mutations.map((m) => m.label).join("; "));
      };
      // Each kind of change on its own first, so that none is only ever seen behind another one.
      for (const generator of [...generators, ...alone[kind]])
        for (const m of fc.sample(generator, SAMPLES_ALONE)) await refuse([m]);
      await fc.assert(
        fc.asyncProperty(fc.array(fc.oneof(...generators), { minLength: 1, maxLength: 3 }), refuse),
        { numRuns: RUNS },
      );
    });
  }

  it("bodies that are not a JSON object are refused on every kind of form", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...KINDS), rawBodies, async (kind, raw) => {
        await expectRefused(kind, raw, `raw ${JSON.stringify(raw.slice(0, 60))}`);
      }),
      { numRuns: RAW_RUNS },
    );
  });

  it("ends with no payment PROCESSING and every record, stock counter and charge as the setup left them", async () => {
    const counts = await rowCounts(t.store.db);
    expect(counts.processing).toBe(0);
    expect({ ...counts, payments: 0, events: 0 }).toEqual({ ...afterSetup, payments: 0, events: 0 });
    expect(counts.payments).toBe(setupResults.filter((r) => r.status === 201).length + declinesRecorded);
    expect(counts.events).toBe(afterSetup.events + declinesRecorded);
  });
});

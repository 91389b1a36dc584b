import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dialect, setupTestApp, type TestApp, type TestResponse, validForms } from "../support/testApp.js";

/**
 * POST /v1/forms: every rule a new form must meet (shared/schemas/form.ts) gives a 400 "Validation failed"
 * whose details name the field, and the defaults, type mapping and response shape of a good create.
 */

interface ErrorBody {
  error: string;
  details?: string[];
}

type Json = Record<string, unknown>;

interface CreatedBody {
  formID: string;
  formUrl: string;
  embedHTML: string;
  message: string;
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** True when a details line is about `field`: "field ...", "field[0]..." or "field.sub ...". */
function namesField(line: string, field: string): boolean {
  return line.startsWith(`${field} `) || line.startsWith(`${field}[`) || line.startsWith(`${field}.`);
}

function expectValidationError(res: TestResponse<ErrorBody>, ...fields: string[]): void {
  expect(res.status, `expected 400, got ${res.status}: ${res.text}`).toBe(400);
  expect(res.body.error).toBe("Validation failed");
  expect(Array.isArray(res.body.details)).toBe(true);
  const details = res.body.details ?? [];
  for (const field of fields) {
    expect(
      details.some((d) => namesField(d, field)),
      `details should name "${field}": ${JSON.stringify(details)}`,
    ).toBe(true);
  }
}

/** Decodes the HTML entities an escaper may use, to compare escaped attribute values with the original. */
function decodeEntities(value: string): string {
  return value
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, dec: string) => String.fromCharCode(Number(dec)))
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

describe(`POST /v1/forms validation (${dialect})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp();
  });
  afterAll(() => t.close());

  const create = (body: unknown) => t.request<ErrorBody>("POST", "/v1/forms", { body });

  describe("required fields", () => {
    it("rejects a form without title, naming title", async () => {
      const { title: _omit, ...body } = validForms.standard();
      expectValidationError(await create(body), "title");
    });

    it("rejects a blank (whitespace-only) title, naming title", async () => {
      expectValidationError(await create({ ...validForms.standard(), title: "   " }), "title");
    });

    it("rejects a form without funds, naming funds", async () => {
      const { funds: _omit, ...body } = validForms.standard();
      expectValidationError(await create(body), "funds");
    });

    it("rejects an empty funds list, naming funds", async () => {
      expectValidationError(await create({ ...validForms.standard(), funds: [] }), "funds");
    });

    it("rejects an empty frequencies list on a fundraising form, naming frequencies", async () => {
      expectValidationError(await create({ ...validForms.standard(), frequencies: [] }), "frequencies");
    });
  });

  describe("fundraising bar", () => {
    it("requires goal when enableFundraisingBar is true", async () => {
      expectValidationError(await create({ ...validForms.standard(), enableFundraisingBar: true }), "goal");
    });

    it("rejects goal null when enableFundraisingBar is true", async () => {
      expectValidationError(
        await create({ ...validForms.standard(), enableFundraisingBar: true, goal: null }),
        "goal",
      );
    });

    it.each([0, -100])("rejects goal %s (not above zero) when enableFundraisingBar is true", async (goal) => {
      expectValidationError(
        await create({ ...validForms.standard(), enableFundraisingBar: true, goal }),
        "goal",
      );
    });

    it("accepts a positive goal with the fundraising bar and returns it", async () => {
      const res = await t.request<CreatedBody>("POST", "/v1/forms", {
        body: { ...validForms.standard(), enableFundraisingBar: true, goal: 5000.5 },
      });
      expect(res.status).toBe(201);
      const got = await t.request<Json>("GET", `/v1/forms/${res.body.formID}`);
      expect(got.body.enableFundraisingBar).toBe(true);
      expect(got.body.goal).toBe(5000.5);
    });
  });

  describe("custom email", () => {
    const email = { replyToAddress: "hello@example.org", emailSubject: "Thanks", customMessage: "We got it" };
    it.each(["replyToAddress", "emailSubject", "customMessage"])(
      "requires %s when enableCustomEmail is true",
      async (field) => {
        const body: Json = { ...validForms.standard(), enableCustomEmail: true, ...email };
        delete body[field];
        expectValidationError(await create(body), field);
      },
    );

    it("reports all three custom email fields when enableCustomEmail is true and none is sent", async () => {
      expectValidationError(
        await create({ ...validForms.standard(), enableCustomEmail: true }),
        "replyToAddress",
        "emailSubject",
        "customMessage",
      );
    });

    it("rejects an empty-string custom email field when enableCustomEmail is true", async () => {
      expectValidationError(
        await create({ ...validForms.standard(), enableCustomEmail: true, ...email, emailSubject: "" }),
        "emailSubject",
      );
    });

    it("accepts the custom email fields when all are present", async () => {
      const res = await create({ ...validForms.standard(), enableCustomEmail: true, ...email });
      expect(res.status).toBe(201);
    });
  });

  describe("time and location", () => {
    const when = { eventDate: "2026-09-12", startTime: "18:30" };
    it.each(["eventDate", "startTime"])("requires %s when enableTimeAndLocation is true", async (field) => {
      const body: Json = { ...validForms.event(), enableTimeAndLocation: true, ...when };
      delete body[field];
      expectValidationError(await create(body), field);
    });

    it("accepts eventDate and startTime with enableTimeAndLocation", async () => {
      const res = await create({ ...validForms.event(), enableTimeAndLocation: true, ...when });
      expect(res.status).toBe(201);
    });
  });

  describe("amount type content", () => {
    it("rejects amountType giving_level without givingLevels", async () => {
      const { givingLevels: _omit, ...body } = validForms.givingLevel();
      expectValidationError(await create(body), "givingLevels");
    });

    it("rejects amountType giving_level with an empty givingLevels list", async () => {
      expectValidationError(await create({ ...validForms.givingLevel(), givingLevels: [] }), "givingLevels");
    });

    it("rejects amountType sponsorship without sponsorshipGroups", async () => {
      const { sponsorshipGroups: _omit, ...body } = validForms.sponsorship();
      expectValidationError(await create(body), "sponsorshipGroups");
    });

    it("rejects amountType sponsorship whose only group has no option", async () => {
      expectValidationError(
        await create({
          ...validForms.sponsorship(),
          sponsorshipGroups: [{ groupTitle: "Booths", description: "", options: [] }],
        }),
        "sponsorshipGroups",
      );
    });

    it("rejects an event form without tickets", async () => {
      const { tickets: _omit, ...body } = validForms.event();
      expectValidationError(await create(body), "tickets");
    });

    it("rejects an event form with an empty tickets list", async () => {
      expectValidationError(await create({ ...validForms.event(), tickets: [] }), "tickets");
    });
  });

  describe("amount values (1 to 1,000,000 dollars, at most 2 decimals)", () => {
    const amountFields = [
      "oneTimeAmounts",
      "dailyAmounts",
      "weeklyAmounts",
      "monthlyAmounts",
      "annuallyAmounts",
    ] as const;
    const bad = [0, 0.99, -5, 1_000_000.01, 1_000_001, 10.555];
    const cases = amountFields.flatMap((field) => bad.map((value) => [field, value] as const));

    it.each(cases)("rejects %s containing %s", async (field, value) => {
      expectValidationError(await create({ ...validForms.standard(), [field]: [25, value] }), field);
    });

    it.each(bad)("rejects defaultAmount %s", async (value) => {
      expectValidationError(
        await create({ ...validForms.standard(), defaultAmount: value }),
        "defaultAmount",
      );
    });

    it.each(amountFields)("accepts %s at the bounds 1 and 1,000,000 and with 2 decimals", async (field) => {
      const res = await t.request<CreatedBody>("POST", "/v1/forms", {
        body: { ...validForms.standard(), [field]: [1, 10.55, 1_000_000] },
      });
      expect(res.status, res.text).toBe(201);
      const got = await t.request<Json>("GET", `/v1/forms/${res.body.formID}`);
      expect(got.body[field]).toEqual([1, 10.55, 1_000_000]);
    });

    it("rejects an amount sent as a string", async () => {
      expectValidationError(
        await create({ ...validForms.standard(), oneTimeAmounts: ["25"] }),
        "oneTimeAmounts",
      );
    });
  });

  describe("description", () => {
    it("rejects a description of 651 characters", async () => {
      expectValidationError(
        await create({ ...validForms.standard(), description: "x".repeat(651) }),
        "description",
      );
    });

    it("accepts a description of exactly 650 characters", async () => {
      const res = await t.request<CreatedBody>("POST", "/v1/forms", {
        body: { ...validForms.standard(), description: "y".repeat(650) },
      });
      expect(res.status).toBe(201);
      const got = await t.request<Json>("GET", `/v1/forms/${res.body.formID}`);
      expect(got.body.description).toBe("y".repeat(650));
    });
  });

  describe("custom inputs", () => {
    it.each([
      ["single_select", ["Only one"]],
      ["multi_select", ["Only one"]],
      ["single_select", []],
      ["multi_select", []],
    ])("rejects a %s custom input with options %j (fewer than 2)", async (inputType, options) => {
      expectValidationError(
        await create({
          ...validForms.standard(),
          customInputs: [{ title: "Pick", inputType, options }],
        }),
        "customInputs",
      );
    });

    it.each(["__proto__", "constructor", "toString", "hasOwnProperty"])(
      "refuses the question id %s, a name every JavaScript object has (an unanswered question would read it)",
      async (id) => {
        const res = await create({
          ...validForms.standard(),
          customInputs: [{ id, title: "Anything else?", inputType: "short_text", required: true }],
        });
        expectValidationError(res, "customInputs[0].id");
        expect(res.body.details).toContain(
          "customInputs[0].id must not be a name JavaScript objects reserve (__proto__, constructor, toString, …)",
        );
      },
    );

    it("accepts a dropdown custom input with exactly 2 options", async () => {
      const res = await create({
        ...validForms.standard(),
        customInputs: [{ title: "Shirt size", inputType: "single_select", options: ["S", "M"] }],
      });
      expect(res.status).toBe(201);
    });
  });

  describe("tickets", () => {
    it("rejects duplicate ticket names in one form", async () => {
      expectValidationError(
        await create({
          ...validForms.event(),
          tickets: [
            { name: "Adult", price: 50 },
            { name: "Adult", price: 60 },
          ],
        }),
        "tickets",
      );
    });

    it.each([1, 0, -3])("rejects a GROUP ticket with groupSize %s (not above 1)", async (groupSize) => {
      expectValidationError(
        await create({
          ...validForms.event(),
          tickets: [{ name: "Table", price: 400, ticketType: "GROUP", groupSize }],
        }),
        "tickets",
      );
    });

    it("rejects a GROUP ticket without groupSize, naming the ticket's groupSize", async () => {
      expectValidationError(
        await create({
          ...validForms.event(),
          tickets: [{ name: "Table", price: 400, ticketType: "GROUP" }],
        }),
        "tickets[0].groupSize",
      );
    });

    it("rejects a GROUP ticket with groupSize 1, naming the ticket's groupSize", async () => {
      expectValidationError(
        await create({
          ...validForms.event(),
          tickets: [
            { name: "Adult", price: 50 },
            { name: "Pair", price: 90, ticketType: "GROUP", groupSize: 1 },
          ],
        }),
        "tickets[1].groupSize",
      );
    });

    it("accepts a GROUP ticket with groupSize 2 and returns it", async () => {
      const res = await t.request<CreatedBody>("POST", "/v1/forms", {
        body: {
          ...validForms.event(),
          tickets: [{ name: "Pair", price: 90, ticketType: "GROUP", groupSize: 2 }],
        },
      });
      expect(res.status).toBe(201);
      const got = await t.request<{ tickets: Json[] }>("GET", `/v1/forms/${res.body.formID}`);
      expect(got.body.tickets[0]).toMatchObject({
        name: "Pair",
        price: 90,
        ticketType: "GROUP",
        groupSize: 2,
      });
    });
  });

  describe("color", () => {
    it.each(["blue", "#12345", "#GGGGGG", "3B82F6", "#3B82F6FF", ""])("rejects color %j", async (color) => {
      expectValidationError(await create({ ...validForms.standard(), color }), "color");
    });

    it("accepts a lower-case hex color and gives it back as sent", async () => {
      const res = await create({ ...validForms.standard(), color: "#a1b2c3" });
      expect(res.status).toBe(201);
      const id = (res.body as unknown as { formID: string }).formID;
      const got = await t.request<{ color: string }>("GET", `/v1/forms/${id}`);
      expect(got.body.color).toBe("#a1b2c3");
    });
  });

  describe("types, enums and unknown keys", () => {
    it("rejects a numeric title, naming title", async () => {
      expectValidationError(await create({ ...validForms.standard(), title: 42 }), "title");
    });

    it("rejects funds sent as a string, naming funds", async () => {
      expectValidationError(await create({ ...validForms.standard(), funds: "General" }), "funds");
    });

    // One wrong type is one problem: no extra line that measures the string as if it were the list.
    it.each([
      ["funds", "a 150-character string", "x".repeat(150)],
      ["funds", "an empty string", ""],
      ["frequencies", 'the string "ONE_TIME"', "ONE_TIME"],
    ])(
      "reports %s sent as %s once, as a type problem, not a length problem",
      async (field, _label, value) => {
        const res = await create({ ...validForms.standard(), [field]: value });
        expectValidationError(res, field);
        const lines = (res.body.details ?? []).filter((d) => namesField(d, field));
        expect(lines, JSON.stringify(lines)).toHaveLength(1);
        expect(lines[0]).toMatch(/array/);
      },
    );

    it('rejects active "yes", naming active', async () => {
      expectValidationError(await create({ ...validForms.standard(), active: "yes" }), "active");
    });

    it("rejects enableFundraisingBar sent as a string, naming enableFundraisingBar", async () => {
      expectValidationError(
        await create({ ...validForms.standard(), enableFundraisingBar: "true", goal: 100 }),
        "enableFundraisingBar",
      );
    });

    it('rejects the unknown formType "raffle", naming formType', async () => {
      expectValidationError(await create({ ...validForms.standard(), formType: "raffle" }), "formType");
    });

    it('rejects the unknown amountType "auction", naming amountType', async () => {
      expectValidationError(await create({ ...validForms.standard(), amountType: "auction" }), "amountType");
    });

    it('rejects the unknown frequency "HOURLY", naming frequencies', async () => {
      expectValidationError(
        await create({ ...validForms.standard(), frequencies: ["HOURLY"] }),
        "frequencies",
      );
    });

    it("rejects an unknown top-level key, naming that key", async () => {
      expectValidationError(await create({ ...validForms.standard(), raffleTickets: 10 }), "raffleTickets");
    });
  });

  describe("body shape", () => {
    it('answers 400 "Invalid JSON body" to unparseable JSON', async () => {
      const res = await t.request<ErrorBody>("POST", "/v1/forms", {
        rawBody: '{"title": "Broken",',
        headers: { "Content-Type": "application/json" },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: "Invalid JSON body" });
    });

    it('answers 400 "Invalid JSON body" to a JSON array body', async () => {
      const res = await create([validForms.standard()]);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: "Invalid JSON body" });
    });
  });

  it("reports every problem of one body in a single response", async () => {
    const res = await create({
      title: 7,
      funds: [],
      color: "red",
      description: "z".repeat(700),
      enableFundraisingBar: true,
      frequencies: ["HOURLY"],
      oneTimeAmounts: [0],
      mystery: true,
    });
    expectValidationError(
      res,
      "title",
      "funds",
      "color",
      "description",
      "goal",
      "frequencies",
      "oneTimeAmounts",
      "mystery",
    );
  });

  it("takes names and titles on one line: a line break or tab in a title, fund, ticket, level or question is a 400 naming it", async () => {
    const line = "must be a single line of text (no line breaks, tabs or other control characters)";
    const event = await create({
      ...validForms.event(),
      title: "Spring\ngala",
      funds: ["General", "Gala\tfund"],
      tickets: [{ name: "Adult\nticket", price: 10 }],
      customInputs: [{ title: "Diet\r", inputType: "single_select", options: ["Vegan", "None\n"] }],
    });
    expect(event.status).toBe(400);
    expect(event.body.details).toEqual(
      expect.arrayContaining([
        `title ${line}`,
        `funds[1] ${line}`,
        `tickets[0].name ${line}`,
        `customInputs[0].title ${line}`,
        `customInputs[0].options[1] ${line}`,
      ]),
    );
    const level = await create({
      ...validForms.givingLevel(),
      givingLevels: [{ title: "Friend\u0007", amount: 50 }],
    });
    expect(level.status).toBe(400);
    expect(level.body.details).toContainEqual(`givingLevels[0].title ${line}`);
    // Descriptions and answers are text of several lines, as before.
    const ok = await create({ ...validForms.standard(), description: "Line one\nLine two" });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
  });

  it("reports every problem of an event form in a single response", async () => {
    const res = await create({
      title: "Gala problems",
      funds: ["Gala"],
      formType: "event",
      enableTimeAndLocation: true,
      tickets: [
        { name: "Adult", price: 50 },
        { name: "Adult", price: 50 },
        { name: "Table", price: 400, ticketType: "GROUP", groupSize: 1 },
      ],
      customInputs: [{ title: "Meal", inputType: "single_select", options: ["Fish"] }],
    });
    expectValidationError(res, "eventDate", "startTime", "tickets", "tickets[2].groupSize", "customInputs");
  });

  it("names the contradiction when a stored formType comes with another amountType", async () => {
    const res = await create({
      ...validForms.givingLevel(),
      formType: "EMBED_FORM",
      amountType: "giving_level",
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toContain(
      'amountType must be standard (or left out) when formType is EMBED_FORM; send formType "fundraising" to choose the amount type',
    );
  });

  it("tells how to remove giving levels when a PUT changes the amount type", async () => {
    const made = await t.request<{ formID: string }>("POST", "/v1/forms", { body: validForms.givingLevel() });
    expect(made.status).toBe(201);
    const res = await t.request<ErrorBody>("PUT", `/v1/forms/${made.body.formID}`, {
      body: { amountType: "standard" },
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([
      'givingLevels are only allowed when amountType is giving_level (here it is standard; send "givingLevels": [] to remove them)',
    ]);
    const fixed = await t.request("PUT", `/v1/forms/${made.body.formID}`, {
      body: { amountType: "standard", givingLevels: [] },
    });
    expect(fixed.status).toBe(200);
  });

  it("does not store anything when validation fails", async () => {
    const title = `Rejected ${Math.random().toString(36).slice(2)}`;
    const res = await create({ title, funds: [] });
    expect(res.status).toBe(400);
    const list = await t.request<{ forms: { title: string }[] }>("GET", "/v1/forms?limit=100");
    expect(list.body.forms.some((f) => f.title === title)).toBe(false);
  });
});

describe(`POST /v1/forms success (${dialect})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp();
  });
  afterAll(() => t.close());

  async function createOk(body: unknown): Promise<CreatedBody> {
    const res = await t.request<CreatedBody>("POST", "/v1/forms", { body });
    expect(res.status, res.text).toBe(201);
    return res.body;
  }

  async function getForm(id: string): Promise<Json> {
    const res = await t.request<Json>("GET", `/v1/forms/${id}`);
    expect(res.status, res.text).toBe(200);
    return res.body;
  }

  it("answers 201 with exactly formID (UUID v4), formUrl, embedHTML and the success message", async () => {
    const res = await t.request<CreatedBody>("POST", "/v1/forms", { body: validForms.standard() });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(["embedHTML", "formID", "formUrl", "message"]);
    expect(res.body.formID).toMatch(UUID_V4);
    expect(res.body.formUrl).toBe(`http://forms.test/donate/${res.body.formID}`);
    expect(res.body.message).toBe("Form created successfully");
  });

  it("returns an embedHTML iframe with a title, allow=payment and the async embed.js loader", async () => {
    const body = validForms.standard();
    const created = await createOk(body);
    const html = created.embedHTML;
    expect(html).toMatch(/<iframe\b/);
    expect(html).toContain("</iframe>");
    const src = /<iframe[^>]*\ssrc="([^"]*)"/.exec(html)?.[1];
    expect(src).toBeDefined();
    expect(decodeEntities(src ?? "")).toContain(`http://forms.test/donate/${created.formID}`);
    const title = /<iframe[^>]*\stitle="([^"]*)"/.exec(html)?.[1];
    expect(title).toBeDefined();
    expect(decodeEntities(title ?? "")).toContain(body.title);
    expect(html).toMatch(/<iframe[^>]*\sallow="payment"/);
    expect(html).toMatch(/<script\s[^>]*\basync\b[^>]*\ssrc="[^"]*embed\.js"[^>]*><\/script>/);
  });

  it("names the embed in the snippet's src (embed mode, the form's id), so the loader need not reload it", async () => {
    const created = await createOk(validForms.standard());
    const src = new URL(decodeEntities(/<iframe[^>]*\ssrc="([^"]*)"/.exec(created.embedHTML)?.[1] ?? ""));
    expect(src.searchParams.get("embed")).toBe("1");
    expect(src.searchParams.get("embedId")).toBe(created.formID);
    const fetched = await t.request<CreatedBody>("GET", `/v1/forms/${created.formID}`);
    expect(fetched.body.embedHTML).toBe(created.embedHTML);
  });

  it("points an event form's embedHTML at the hosted form of that id", async () => {
    const created = await createOk(validForms.event());
    const src = /<iframe[^>]*\ssrc="([^"]*)"/.exec(created.embedHTML)?.[1] ?? "";
    expect(decodeEntities(src)).toMatch(new RegExp(`^http://forms\\.test/(attend|donate)/${created.formID}`));
  });

  it("HTML-escapes a hostile title inside embedHTML", async () => {
    const title = `"><script>alert(1)</script> ${Math.random().toString(36).slice(2)}`;
    const created = await createOk({ title, funds: ["General"] });
    expect(created.embedHTML).not.toContain("<script>alert(1)</script>");
    expect(created.embedHTML).not.toContain('"><script>');
    // Exactly one script element: the loader, nothing injected.
    expect(created.embedHTML.match(/<script\b/g)).toHaveLength(1);
    const attr = /<iframe[^>]*\stitle="([^"]*)"/.exec(created.embedHTML)?.[1] ?? "";
    expect(decodeEntities(attr)).toContain(title);
    const got = await getForm(created.formID);
    expect(got.title).toBe(title);
    expect(got.embedHTML).toBe(created.embedHTML);
  });

  it("fills the documented defaults for a fundraising form sent with only title and funds", async () => {
    const created = await createOk({ title: "Defaults only", funds: ["General"] });
    const form = await getForm(created.formID);
    expect(form).toMatchObject({
      title: "Defaults only",
      funds: ["General"],
      formType: "EMBED_FORM",
      color: "#3B82F6",
      active: true,
      frequencies: ["ONE_TIME"],
      defaultFrequency: "ONE_TIME",
      oneTimeAmounts: [25, 50, 100, 250, 500],
      monthlyAmounts: [10, 25, 50, 100],
      enableCoverFees: true,
      enableAnonymous: true,
      allowCustomAmount: true,
      enableFundraisingBar: false,
      enableCustomEmail: false,
      enableTimeAndLocation: false,
    });
  });

  it('gives an event form frequencies ["ONE_TIME"] when none are sent', async () => {
    const created = await createOk(validForms.event());
    const form = await getForm(created.formID);
    expect(form.frequencies).toEqual(["ONE_TIME"]);
    expect(form.color).toBe("#3B82F6");
    expect(form.active).toBe(true);
  });

  it("keeps the frequencies and amounts sent on a fundraising form, defaulting defaultFrequency to the first", async () => {
    const created = await createOk({
      ...validForms.standard(),
      frequencies: ["MONTHLY", "ONE_TIME"],
      oneTimeAmounts: [5, 15],
      monthlyAmounts: [7.5],
      color: "#112233",
      enableCoverFees: false,
    });
    const form = await getForm(created.formID);
    expect(form.frequencies).toEqual(["MONTHLY", "ONE_TIME"]);
    expect(form.defaultFrequency).toBe("MONTHLY");
    expect(form.oneTimeAmounts).toEqual([5, 15]);
    expect(form.monthlyAmounts).toEqual([7.5]);
    expect(form.color).toBe("#112233");
    expect(form.enableCoverFees).toBe(false);
  });

  it.each([
    ["fundraising/standard", () => validForms.standard(), "EMBED_FORM"],
    [
      "fundraising/standard (explicit)",
      () => ({ ...validForms.standard(), amountType: "standard" }),
      "EMBED_FORM",
    ],
    ["fundraising/giving_level", () => validForms.givingLevel(), "CROWDFUNDING_FORM"],
    ["fundraising/sponsorship", () => validForms.sponsorship(), "PRODUCT"],
    ["event", () => validForms.event(), "EVENT"],
    // A stored type name sent as read back, without amountType: the name implies it.
    [
      "formType CROWDFUNDING_FORM without amountType",
      () => {
        const { amountType: _, ...form } = validForms.givingLevel();
        return { ...form, formType: "CROWDFUNDING_FORM" };
      },
      "CROWDFUNDING_FORM",
    ],
    [
      "formType PRODUCT without amountType",
      () => {
        const { amountType: _, ...form } = validForms.sponsorship();
        return { ...form, formType: "PRODUCT" };
      },
      "PRODUCT",
    ],
    [
      "formType EMBED_FORM without amountType",
      () => ({ ...validForms.standard(), formType: "EMBED_FORM" }),
      "EMBED_FORM",
    ],
    [
      "event with amountType (ignored)",
      () => ({ ...validForms.event(), amountType: "giving_level" }),
      "EVENT",
    ],
  ] as const)("stores and returns %s as %s", async (_name, body, stored) => {
    const created = await createOk(body());
    const form = await getForm(created.formID);
    expect(form.formType).toBe(stored);
    const list = await t.request<{ forms: Json[] }>("GET", "/v1/forms?limit=100");
    expect(list.body.forms.find((f) => f.formID === created.formID)?.formType).toBe(stored);
  });

  it("returns productGroups derived from sponsorshipGroups on a PRODUCT form", async () => {
    const created = await createOk({
      title: `Fair ${Math.random().toString(36).slice(2)}`,
      funds: ["Fair"],
      amountType: "sponsorship",
      sponsorshipGroups: [
        {
          groupTitle: "Booths",
          description: "Outdoor booths",
          options: [
            { optionTitle: "Gold", amount: 1000, description: "Corner spot", quantity: 3 },
            { optionTitle: "Silver", amount: 499.99 },
          ],
        },
        { groupTitle: "Ads", description: "", options: [{ optionTitle: "Full page", amount: 250 }] },
      ],
    });
    const form = await getForm(created.formID);
    expect(form.formType).toBe("PRODUCT");
    expect(form.productGroups).toEqual([
      {
        productGroupName: "Booths",
        description: "Outdoor booths",
        products: [
          { productName: "Gold", price: 1000, description: "Corner spot", quantity: 3 },
          { productName: "Silver", price: 499.99, description: "", quantity: null },
        ],
      },
      {
        productGroupName: "Ads",
        description: "",
        products: [{ productName: "Full page", price: 250, description: "", quantity: null }],
      },
    ]);
    expect((form.sponsorshipGroups as Json[])[0]).toMatchObject({ groupTitle: "Booths" });
  });

  it("returns no productGroups on a non-PRODUCT form", async () => {
    const created = await createOk(validForms.givingLevel());
    const form = await getForm(created.formID);
    expect(form.productGroups).toBeUndefined();
    expect(form.givingLevels).toEqual([{ title: "Friend", amount: 50, description: "" }]);
  });

  it("accepts question as a synonym of title on custom inputs and generates ids", async () => {
    const created = await createOk({
      ...validForms.standard(),
      customInputs: [
        { question: "How did you hear about us?", inputType: "short_text" },
        { question: "Shirt size", inputType: "single_select", options: ["S", "M", "L"], required: true },
        { id: "dedication", title: "In honour of", inputType: "long_text" },
      ],
    });
    const form = await getForm(created.formID);
    const inputs = form.customInputs as Json[];
    expect(inputs).toHaveLength(3);
    expect(inputs[0]).toMatchObject({
      title: "How did you hear about us?",
      question: "How did you hear about us?",
      inputType: "short_text",
      required: false,
    });
    expect(inputs[1]).toMatchObject({
      title: "Shirt size",
      inputType: "single_select",
      options: ["S", "M", "L"],
      required: true,
    });
    expect(typeof inputs[0].id).toBe("string");
    expect((inputs[0].id as string).length).toBeGreaterThan(0);
    expect(typeof inputs[1].id).toBe("string");
    expect(inputs[0].id).not.toBe(inputs[1].id);
    expect(inputs[2]).toMatchObject({ id: "dedication", title: "In honour of", question: "In honour of" });
  });

  it("answers 409 to a second live form with the same title", async () => {
    const title = `Duplicate ${Math.random().toString(36).slice(2)}`;
    await createOk({ title, funds: ["General"] });
    const res = await t.request<ErrorBody>("POST", "/v1/forms", { body: { title, funds: ["Other"] } });
    expect(res.status).toBe(409);
    expect(typeof res.body.error).toBe("string");
  });

  it("answers 409 to a live title that differs only in case", async () => {
    const title = `Spring Appeal ${Math.random().toString(36).slice(2)}`;
    await createOk({ title, funds: ["General"] });
    const res = await t.request<ErrorBody>("POST", "/v1/forms", {
      body: { title: title.toUpperCase(), funds: ["General"] },
    });
    expect(res.status).toBe(409);
  });

  it("allows a title again once the form that used it is deleted", async () => {
    const title = `Reusable ${Math.random().toString(36).slice(2)}`;
    const first = await createOk({ title, funds: ["General"] });
    const del = await t.request("DELETE", `/v1/forms/${first.formID}`);
    expect(del.status).toBe(200);
    const second = await createOk({ title, funds: ["General"] });
    expect(second.formID).not.toBe(first.formID);
    const form = await getForm(second.formID);
    expect(form.title).toBe(title);
  });

  it("lets another organization use a title this organization already uses", async () => {
    const title = `Shared title ${Math.random().toString(36).slice(2)}`;
    await createOk({ title, funds: ["General"] });
    const other = await t.newOrg();
    const res = await t.request("POST", "/v1/forms", { body: { title, funds: ["General"] }, key: other.key });
    expect(res.status).toBe(201);
  });

  it("creates a draft (active false) when active: false is sent", async () => {
    const created = await createOk({ ...validForms.standard(), active: false });
    const form = await getForm(created.formID);
    expect(form.active).toBe(false);
    const list = await t.request<{ forms: Json[] }>("GET", "/v1/forms?limit=100");
    expect(list.body.forms.find((f) => f.formID === created.formID)?.active).toBe(false);
  });
});

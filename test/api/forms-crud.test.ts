import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../server/store/keys.js";
import { dialect, setupTestApp, type TestApp, type TestOrg, validForms } from "../support/testApp.js";

/**
 * Forms after creation: list, get, partial update (PUT and its PATCH alias), soft delete, tenant
 * isolation, permissions, and the hosted donor pages.
 */

type Json = Record<string, unknown>;

interface ErrorBody {
  error: string;
  details?: string[];
}

interface ListBody {
  forms: Json[];
  count: number;
  hasMore: boolean;
  lastEvaluatedKey?: string;
}

interface UpdateBody {
  message: string;
  form: Json;
}

const unique = (prefix: string) => `${prefix} ${Math.random().toString(36).slice(2)}`;
const UNKNOWN_UUID = "7d3b2a6e-5c1f-4e8a-9b0d-2f4e6a8c0b1d";

/** Decodes the HTML entities an escaper may use, to compare escaped text with the original. */
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

describe(`forms CRUD (${dialect})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp();
  });
  afterAll(() => t.close());

  async function createForm(body: Json, key?: string): Promise<string> {
    const res = await t.request<{ formID: string }>("POST", "/v1/forms", { body, key });
    expect(res.status, res.text).toBe(201);
    return res.body.formID;
  }

  async function getForm(id: string): Promise<Json> {
    const res = await t.request<Json>("GET", `/v1/forms/${id}`);
    expect(res.status, res.text).toBe(200);
    return res.body;
  }

  /** Every form of the list, following the cursor to the end. */
  async function listAll(key?: string): Promise<Json[]> {
    const all: Json[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 50; i++) {
      const q = cursor ? `?limit=100&lastEvaluatedKey=${encodeURIComponent(cursor)}` : "?limit=100";
      const res = await t.request<ListBody>("GET", `/v1/forms${q}`, { key });
      expect(res.status, res.text).toBe(200);
      all.push(...res.body.forms);
      if (!res.body.hasMore) return all;
      cursor = res.body.lastEvaluatedKey;
    }
    throw new Error("list did not end");
  }

  /** The form as GET returns it, minus the field an update always changes. */
  function withoutUpdatedAt(form: Json): Json {
    const { updatedAt: _ignored, ...rest } = form;
    return rest;
  }

  describe("GET /v1/forms (list)", () => {
    it("returns summaries with formID, formUrl, title, funds, frequencies, color, active and the stored type", async () => {
      const body = {
        ...validForms.standard(),
        description: "For the roof",
        frequencies: ["ONE_TIME", "MONTHLY"],
        color: "#10B981",
      };
      const id = await createForm(body);
      const summary = (await listAll()).find((f) => f.formID === id);
      expect(summary).toBeDefined();
      expect(summary).toMatchObject({
        formID: id,
        formUrl: `http://forms.test/donate/${id}`,
        title: body.title,
        description: "For the roof",
        formType: "EMBED_FORM",
        funds: ["General"],
        frequencies: ["ONE_TIME", "MONTHLY"],
        color: "#10B981",
        active: true,
      });
      expect(summary).toHaveProperty("headerImage");
      expect(summary).toHaveProperty("goal");
    });

    it("leaves embedHTML, tickets and the rest of the full configuration out of summaries", async () => {
      const id = await createForm({
        ...validForms.event(),
        customInputs: [{ title: "Diet", inputType: "short_text" }],
      });
      const summary = (await listAll()).find((f) => f.formID === id);
      expect(summary).toBeDefined();
      for (const key of [
        "embedHTML",
        "tickets",
        "promoCodes",
        "customInputs",
        "oneTimeAmounts",
        "givingLevels",
      ])
        expect(summary, `summary should not carry ${key}`).not.toHaveProperty(key);
    });

    it("includes eventDate, startTime and location in an event form's summary", async () => {
      const id = await createForm({
        ...validForms.event(),
        enableTimeAndLocation: true,
        eventDate: "2026-10-03",
        startTime: "19:00",
        endTime: "23:00",
        location: "Town Hall",
      });
      const summary = (await listAll()).find((f) => f.formID === id);
      expect(summary).toMatchObject({
        formType: "EVENT",
        frequencies: ["ONE_TIME"],
        eventDate: "2026-10-03",
        startTime: "19:00",
        endTime: "23:00",
        location: "Town Hall",
      });
    });

    it("includes the goal in the summary of a form with the fundraising bar", async () => {
      const id = await createForm({ ...validForms.standard(), enableFundraisingBar: true, goal: 2500 });
      const summary = (await listAll()).find((f) => f.formID === id);
      expect(summary?.goal).toBe(2500);
    });

    it("shows a draft with active false", async () => {
      const id = await createForm({ ...validForms.standard(), active: false });
      const summary = (await listAll()).find((f) => f.formID === id);
      expect(summary?.active).toBe(false);
    });

    it("leaves deleted forms out of the list", async () => {
      const kept = await createForm(validForms.standard());
      const gone = await createForm(validForms.standard());
      expect((await t.request("DELETE", `/v1/forms/${gone}`)).status).toBe(200);
      const ids = (await listAll()).map((f) => f.formID);
      expect(ids).toContain(kept);
      expect(ids).not.toContain(gone);
    });

    it("reports count and hasMore, and pages through every form once with lastEvaluatedKey", async () => {
      const org = await t.newOrg();
      const created = new Set<string>();
      for (let i = 0; i < 5; i++) created.add(await createForm(validForms.standard(), org.key));
      const first = await t.request<ListBody>("GET", "/v1/forms?limit=2", { key: org.key });
      expect(first.status).toBe(200);
      expect(first.body.count).toBe(2);
      expect(first.body.forms).toHaveLength(2);
      expect(first.body.hasMore).toBe(true);
      expect(typeof first.body.lastEvaluatedKey).toBe("string");
      const seen = first.body.forms.map((f) => f.formID as string);
      let cursor = first.body.lastEvaluatedKey;
      while (cursor) {
        const next = await t.request<ListBody>(
          "GET",
          `/v1/forms?limit=2&lastEvaluatedKey=${encodeURIComponent(cursor)}`,
          { key: org.key },
        );
        expect(next.status).toBe(200);
        expect(next.body.count).toBe(next.body.forms.length);
        seen.push(...next.body.forms.map((f) => f.formID as string));
        if (!next.body.hasMore) expect(next.body).not.toHaveProperty("lastEvaluatedKey");
        cursor = next.body.hasMore ? next.body.lastEvaluatedKey : undefined;
      }
      expect(seen).toHaveLength(5);
      expect(new Set(seen)).toEqual(created);
    });
  });

  describe("GET /v1/forms/{id}", () => {
    it("returns the full form: summary fields plus configuration, embedHTML and timestamps", async () => {
      const body = {
        ...validForms.event(),
        description: "Annual gala",
        enableTimeAndLocation: true,
        eventDate: "2026-11-20",
        startTime: "18:00",
        location: "Harbor Hall",
        timeZone: "America/New_York",
        promoCodes: [
          { code: "EARLY", discountType: "percentage", discountValue: 10, applicableTickets: ["Adult"] },
        ],
        customInputs: [{ title: "Dietary needs", inputType: "long_text" }],
        faqs: [{ question: "Parking?", answer: "Free on site" }],
        enableCustomEmail: true,
        replyToAddress: "gala@example.org",
        emailSubject: "See you there",
        customMessage: "Thanks for registering",
      };
      const id = await createForm(body);
      const form = await getForm(id);
      expect(form).toMatchObject({
        formID: id,
        formUrl: `http://forms.test/donate/${id}`,
        title: body.title,
        description: "Annual gala",
        formType: "EVENT",
        funds: ["Gala"],
        frequencies: ["ONE_TIME"],
        color: "#3B82F6",
        active: true,
        enableTimeAndLocation: true,
        eventDate: "2026-11-20",
        startTime: "18:00",
        location: "Harbor Hall",
        timeZone: "America/New_York",
        enableCustomEmail: true,
        replyToAddress: "gala@example.org",
        emailSubject: "See you there",
        customMessage: "Thanks for registering",
        faqs: [{ question: "Parking?", answer: "Free on site" }],
      });
      expect(form.tickets).toHaveLength(2);
      expect((form.tickets as Json[])[0]).toMatchObject({
        name: "Adult",
        price: 50,
        ticketType: "INDIVIDUAL",
      });
      expect((form.tickets as Json[])[1]).toMatchObject({
        name: "Table",
        price: 400,
        ticketType: "GROUP",
        groupSize: 8,
      });
      expect((form.promoCodes as Json[])[0]).toMatchObject({
        code: "EARLY",
        discountType: "percentage",
        discountValue: 10,
        applicableTickets: ["Adult"],
      });
      expect((form.customInputs as Json[])[0]).toMatchObject({
        title: "Dietary needs",
        inputType: "long_text",
      });
      expect(typeof form.embedHTML).toBe("string");
      expect(form.embedHTML as string).toContain("<iframe");
      for (const key of [
        "oneTimeAmounts",
        "monthlyAmounts",
        "givingLevels",
        "sponsorshipGroups",
        "enableFundraisingBar",
        "enableOrganizationName",
        "enableBillingAddress",
        "enableCountryDropdown",
        "enableCoverFees",
      ])
        expect(form, `full form should carry ${key}`).toHaveProperty(key);
      expect(Number.isNaN(Date.parse(form.createdAt as string))).toBe(false);
      expect(Number.isNaN(Date.parse(form.updatedAt as string))).toBe(false);
    });

    it("answers 404 for a well-formed id that does not exist", async () => {
      const res = await t.request<ErrorBody>("GET", `/v1/forms/${UNKNOWN_UUID}`);
      expect(res.status).toBe(404);
      expect(typeof res.body.error).toBe("string");
    });

    it("answers 404 for an id that is not a UUID", async () => {
      const res = await t.request<ErrorBody>("GET", "/v1/forms/not-a-form-id");
      expect(res.status).toBe(404);
      expect(typeof res.body.error).toBe("string");
    });

    it("answers 403 for a form of another organization", async () => {
      const other = await t.newOrg();
      const theirs = await createForm(validForms.standard(), other.key);
      const res = await t.request<ErrorBody>("GET", `/v1/forms/${theirs}`);
      expect(res.status).toBe(403);
      expect(typeof res.body.error).toBe("string");
    });

    it("answers 410 after the form is deleted", async () => {
      const id = await createForm(validForms.standard());
      expect((await t.request("DELETE", `/v1/forms/${id}`)).status).toBe(200);
      const res = await t.request<ErrorBody>("GET", `/v1/forms/${id}`);
      expect(res.status).toBe(410);
      expect(typeof res.body.error).toBe("string");
    });
  });

  describe("PUT /v1/forms/{id} (partial update)", () => {
    it("changes only the fields sent and answers with the success message and the full form", async () => {
      const body = {
        ...validForms.standard(),
        description: "Before",
        funds: ["General", "Roof"],
        frequencies: ["ONE_TIME", "MONTHLY"],
        oneTimeAmounts: [20, 40],
      };
      const id = await createForm(body);
      const before = await getForm(id);
      const res = await t.request<UpdateBody>("PUT", `/v1/forms/${id}`, {
        body: { color: "#112233", description: "After" },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.message).toBe("Form updated successfully");
      expect(res.body.form).toMatchObject({ formID: id, color: "#112233", description: "After" });
      const after = await getForm(id);
      expect(after).toEqual(res.body.form);
      expect(withoutUpdatedAt(after)).toEqual({
        ...withoutUpdatedAt(before),
        color: "#112233",
        description: "After",
      });
    });

    it("replaces an array field whole", async () => {
      const id = await createForm({ ...validForms.standard(), funds: ["A", "B", "C"] });
      const res = await t.request<UpdateBody>("PUT", `/v1/forms/${id}`, { body: { funds: ["D"] } });
      expect(res.status).toBe(200);
      expect((await getForm(id)).funds).toEqual(["D"]);
    });

    it("re-validates the merged form: enabling the fundraising bar without a goal is a 400 naming goal", async () => {
      const id = await createForm(validForms.standard());
      const before = await getForm(id);
      const res = await t.request<ErrorBody>("PUT", `/v1/forms/${id}`, {
        body: { enableFundraisingBar: true },
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("Validation failed");
      expect(res.body.details?.some((d) => d.startsWith("goal "))).toBe(true);
      expect(await getForm(id)).toEqual(before);
    });

    it("accepts enabling the fundraising bar together with a goal", async () => {
      const id = await createForm(validForms.standard());
      const res = await t.request<UpdateBody>("PUT", `/v1/forms/${id}`, {
        body: { enableFundraisingBar: true, goal: 10000 },
      });
      expect(res.status).toBe(200);
      expect(res.body.form).toMatchObject({ enableFundraisingBar: true, goal: 10000 });
    });

    it("re-validates the merged form: clearing an event form's tickets is a 400 naming tickets", async () => {
      const id = await createForm(validForms.event());
      const res = await t.request<ErrorBody>("PUT", `/v1/forms/${id}`, { body: { tickets: [] } });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("Validation failed");
      expect(res.body.details?.some((d) => d.startsWith("tickets"))).toBe(true);
      expect((await getForm(id)).tickets).toHaveLength(2);
    });

    it("rejects an invalid value in a partial update and leaves the form unchanged", async () => {
      const id = await createForm(validForms.standard());
      const before = await getForm(id);
      const res = await t.request<ErrorBody>("PUT", `/v1/forms/${id}`, {
        body: { color: "red", description: "q".repeat(651) },
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("Validation failed");
      expect(res.body.details?.some((d) => d.startsWith("color "))).toBe(true);
      expect(res.body.details?.some((d) => d.startsWith("description "))).toBe(true);
      expect(await getForm(id)).toEqual(before);
    });

    it("rejects an unknown key in an update, naming it", async () => {
      const id = await createForm(validForms.standard());
      const res = await t.request<ErrorBody>("PUT", `/v1/forms/${id}`, { body: { raffle: true } });
      expect(res.status).toBe(400);
      expect(res.body.details?.some((d) => d.startsWith("raffle "))).toBe(true);
    });

    it("answers 400 Validation failed to an empty body {}", async () => {
      const id = await createForm(validForms.standard());
      const res = await t.request<ErrorBody>("PUT", `/v1/forms/${id}`, { body: {} });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("Validation failed");
      expect(res.body.details?.length).toBeGreaterThan(0);
    });

    it('answers 400 "Invalid JSON body" to an unparseable update body', async () => {
      const id = await createForm(validForms.standard());
      const res = await t.request<ErrorBody>("PUT", `/v1/forms/${id}`, {
        rawBody: "{nope",
        headers: { "Content-Type": "application/json" },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: "Invalid JSON body" });
    });

    it("answers 409 when the new title is another live form's title (any case)", async () => {
      const takenTitle = unique("Taken");
      await createForm({ title: takenTitle, funds: ["General"] });
      const ownTitle = unique("Mine");
      const id = await createForm({ title: ownTitle, funds: ["General"] });
      const exact = await t.request<ErrorBody>("PUT", `/v1/forms/${id}`, { body: { title: takenTitle } });
      expect(exact.status).toBe(409);
      const cased = await t.request<ErrorBody>("PUT", `/v1/forms/${id}`, {
        body: { title: takenTitle.toUpperCase() },
      });
      expect(cased.status).toBe(409);
      expect((await getForm(id)).title).toBe(ownTitle);
    });

    it("allows a form to keep its own title or change only its case", async () => {
      const title = unique("Self");
      const id = await createForm({ title, funds: ["General"] });
      const same = await t.request<UpdateBody>("PUT", `/v1/forms/${id}`, { body: { title } });
      expect(same.status).toBe(200);
      const upper = await t.request<UpdateBody>("PUT", `/v1/forms/${id}`, {
        body: { title: title.toUpperCase() },
      });
      expect(upper.status).toBe(200);
      expect((await getForm(id)).title).toBe(title.toUpperCase());
    });

    it("allows taking the title of a deleted form", async () => {
      const title = unique("Freed");
      const old = await createForm({ title, funds: ["General"] });
      expect((await t.request("DELETE", `/v1/forms/${old}`)).status).toBe(200);
      const id = await createForm(validForms.standard());
      const res = await t.request<UpdateBody>("PUT", `/v1/forms/${id}`, { body: { title } });
      expect(res.status).toBe(200);
      expect((await getForm(id)).title).toBe(title);
    });

    it("accepts PATCH as an alias of PUT", async () => {
      const id = await createForm({ ...validForms.standard(), description: "Old" });
      const res = await t.request<UpdateBody>("PATCH", `/v1/forms/${id}`, {
        body: { description: "Patched", active: false },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.message).toBe("Form updated successfully");
      expect(res.body.form).toMatchObject({ formID: id, description: "Patched", active: false });
      expect(await getForm(id)).toMatchObject({ description: "Patched", active: false });
    });

    it("re-validates the merged form on PATCH too", async () => {
      const id = await createForm(validForms.standard());
      const res = await t.request<ErrorBody>("PATCH", `/v1/forms/${id}`, {
        body: { enableFundraisingBar: true },
      });
      expect(res.status).toBe(400);
      expect(res.body.details?.some((d) => d.startsWith("goal "))).toBe(true);
    });

    it("answers 404 to an update of an unknown form", async () => {
      const res = await t.request("PUT", `/v1/forms/${UNKNOWN_UUID}`, { body: { description: "x" } });
      expect(res.status).toBe(404);
    });

    it.each([
      [
        "fundraising/standard with every option",
        (): Json => ({
          ...validForms.standard(),
          description: "Everything on",
          frequencies: ["ONE_TIME", "WEEKLY", "MONTHLY", "ANNUALLY"],
          oneTimeAmounts: [15, 30.5],
          weeklyAmounts: [3, 5],
          annuallyAmounts: [120],
          defaultAmount: 30.5,
          defaultFrequency: "MONTHLY",
          enableFundraisingBar: true,
          goal: 12345.67,
          enableDonorList: true,
          enableOrganizationName: true,
          enableBillingAddress: true,
          enableCountryDropdown: true,
          enablePhone: true,
          enableCustomEmail: true,
          replyToAddress: "team@example.org",
          emailSubject: "Thank you",
          customMessage: "Your gift matters",
          headerImage: "https://example.org/header.png",
          customInputs: [
            { question: "Referral", inputType: "short_text" },
            { title: "Size", inputType: "multi_select", options: ["S", "M"], required: true },
          ],
          faqs: [{ question: "Tax deductible?", answer: "Yes" }],
        }),
      ],
      ["fundraising/giving_level", (): Json => validForms.givingLevel()],
      ["fundraising/sponsorship", (): Json => validForms.sponsorship()],
      [
        "event with promo codes and details",
        (): Json => ({
          ...validForms.event(),
          enableTimeAndLocation: true,
          eventDate: "2026-12-31",
          startTime: "21:00",
          endTime: "23:59",
          location: "Pier 9",
          eventDetails: "Black tie",
          timeZone: "Europe/Paris",
          promoCodes: [
            { code: "HALF", discountType: "percentage", discountValue: 50, quantity: 10 },
            { code: "TENOFF", discountType: "amount", discountValue: 10, applicableTickets: ["Table"] },
          ],
        }),
      ],
    ])("accepts the whole GET body of a %s form sent back by PUT, changing nothing", async (_name, body) => {
      const id = await createForm(body());
      const before = await getForm(id);
      const res = await t.request<UpdateBody>("PUT", `/v1/forms/${id}`, { body: before });
      expect(res.status, res.text).toBe(200);
      const after = await getForm(id);
      expect(withoutUpdatedAt(after)).toEqual(withoutUpdatedAt(before));
    });
  });

  describe("DELETE /v1/forms/{id}", () => {
    it("soft-deletes with 200 and the formID, then answers 410 to a second delete", async () => {
      const id = await createForm(validForms.standard());
      const res = await t.request<Json>("DELETE", `/v1/forms/${id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: "Form deleted successfully", formID: id });
      const again = await t.request<Json>("DELETE", `/v1/forms/${id}`);
      expect(again.status).toBe(410);
      expect(again.body).toEqual({ error: "Form has already been deleted" });
    });

    it("answers 410 to GET, PUT and PATCH of a deleted form", async () => {
      const id = await createForm(validForms.standard());
      expect((await t.request("DELETE", `/v1/forms/${id}`)).status).toBe(200);
      expect((await t.request("GET", `/v1/forms/${id}`)).status).toBe(410);
      expect((await t.request("PUT", `/v1/forms/${id}`, { body: { description: "x" } })).status).toBe(410);
      expect((await t.request("PATCH", `/v1/forms/${id}`, { body: { description: "x" } })).status).toBe(410);
    });

    it("answers 404 to a delete of an unknown form", async () => {
      expect((await t.request("DELETE", `/v1/forms/${UNKNOWN_UUID}`)).status).toBe(404);
      expect((await t.request("DELETE", "/v1/forms/12345")).status).toBe(404);
    });
  });

  describe("tenant isolation", () => {
    let other: TestOrg;
    let id: string;
    let before: Json;
    beforeAll(async () => {
      other = await t.newOrg({ name: "Other Org" });
      id = await createForm({ ...validForms.standard(), description: "Mine only" });
      before = await getForm(id);
    });

    it("answers 403 to another organization's GET", async () => {
      const res = await t.request<ErrorBody>("GET", `/v1/forms/${id}`, { key: other.key });
      expect(res.status).toBe(403);
      expect(JSON.stringify(res.body)).not.toContain("Mine only");
    });

    it("answers 403 to another organization's PUT and PATCH and leaves the form unchanged", async () => {
      const put = await t.request("PUT", `/v1/forms/${id}`, {
        key: other.key,
        body: { description: "Hijacked" },
      });
      expect(put.status).toBe(403);
      const patch = await t.request("PATCH", `/v1/forms/${id}`, {
        key: other.key,
        body: { description: "Hijacked" },
      });
      expect(patch.status).toBe(403);
      expect(await getForm(id)).toEqual(before);
    });

    it("answers 403 to another organization's DELETE and leaves the form live", async () => {
      const res = await t.request("DELETE", `/v1/forms/${id}`, { key: other.key });
      expect(res.status).toBe(403);
      expect(await getForm(id)).toEqual(before);
    });

    it("never lists one organization's forms for another", async () => {
      const theirs = await createForm(validForms.standard(), other.key);
      const theirList = await listAll(other.key);
      expect(theirList.map((f) => f.formID)).toEqual([theirs]);
      const ourList = await listAll();
      expect(ourList.map((f) => f.formID)).toContain(id);
      expect(ourList.map((f) => f.formID)).not.toContain(theirs);
    });
  });

  describe("permissions", () => {
    let readOnlyKey: string;
    let id: string;
    beforeAll(async () => {
      // A second key of the SAME organization, so a 403 can only come from the missing permission.
      readOnlyKey = (
        await createApiKey(
          t.store.db,
          {
            organizationId: t.org.id,
            sandbox: false,
            permissions: ["forms:read"],
          },
          Date.now(),
        )
      ).key;
      id = await createForm(validForms.standard());
    });

    it("lets a forms:read key list and get its organization's forms", async () => {
      expect((await t.request("GET", `/v1/forms/${id}`, { key: readOnlyKey })).status).toBe(200);
      const ids = (await listAll(readOnlyKey)).map((f) => f.formID);
      expect(ids).toContain(id);
    });

    it("answers 403 Missing permission: forms:write to POST with a forms:read key", async () => {
      const title = unique("Denied");
      const res = await t.request<ErrorBody>("POST", "/v1/forms", {
        key: readOnlyKey,
        body: { title, funds: ["General"] },
      });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: "Missing permission: forms:write" });
      expect((await listAll()).some((f) => f.title === title)).toBe(false);
    });

    it("answers 403 Missing permission: forms:write to PUT and PATCH with a forms:read key", async () => {
      for (const method of ["PUT", "PATCH"]) {
        const res = await t.request<ErrorBody>(method, `/v1/forms/${id}`, {
          key: readOnlyKey,
          body: { description: "Nope" },
        });
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ error: "Missing permission: forms:write" });
      }
      expect((await getForm(id)).description).toBe("");
    });

    it("answers 403 Missing permission: forms:write to DELETE with a forms:read key", async () => {
      const res = await t.request<ErrorBody>("DELETE", `/v1/forms/${id}`, { key: readOnlyKey });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: "Missing permission: forms:write" });
      expect((await t.request("GET", `/v1/forms/${id}`)).status).toBe(200);
    });

    it("answers 403 Missing permission: forms:read to reads with a key lacking it", async () => {
      const writeOnly = (
        await createApiKey(
          t.store.db,
          {
            organizationId: t.org.id,
            sandbox: false,
            permissions: ["forms:write"],
          },
          Date.now(),
        )
      ).key;
      const list = await t.request<ErrorBody>("GET", "/v1/forms", { key: writeOnly });
      expect(list.status).toBe(403);
      expect(list.body).toEqual({ error: "Missing permission: forms:read" });
      const one = await t.request<ErrorBody>("GET", `/v1/forms/${id}`, { key: writeOnly });
      expect(one.status).toBe(403);
      expect(one.body).toEqual({ error: "Missing permission: forms:read" });
    });

    it("answers 401 to form requests without an API key", async () => {
      expect((await t.request("GET", "/v1/forms", { key: null })).status).toBe(401);
      expect((await t.request("GET", `/v1/forms/${id}`, { key: null })).status).toBe(401);
      expect((await t.request("POST", "/v1/forms", { key: null, body: validForms.standard() })).status).toBe(
        401,
      );
    });
  });

  describe("hosted pages", () => {
    const page = (path: string) => t.request("GET", path, { key: null });

    it("serves /donate/{id} of a live form as a 200 HTML page with the escaped title", async () => {
      const title = `Roof <b>&</b> "Fund" ${Math.random().toString(36).slice(2)}`;
      const id = await createForm({ title, funds: ["General"] });
      const res = await page(`/donate/${id}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type") ?? "").toMatch(/text\/html/);
      expect(res.text).not.toContain("<b>&</b>");
      expect(decodeEntities(res.text)).toContain(title);
      expect(res.text).not.toMatch(/not accepting/i);
    });

    it("never lets a hostile title inject markup into the hosted page", async () => {
      const title = `"><script>alert(1)</script> ${Math.random().toString(36).slice(2)}`;
      const id = await createForm({ title, funds: ["General"] });
      const res = await page(`/donate/${id}`);
      expect(res.status).toBe(200);
      expect(res.text).not.toContain("<script>alert(1)</script>");
      expect(decodeEntities(res.text)).toContain(title);
    });

    it("answers 410 with an HTML page for a deleted form", async () => {
      const id = await createForm(validForms.standard());
      expect((await t.request("DELETE", `/v1/forms/${id}`)).status).toBe(200);
      const res = await page(`/donate/${id}`);
      expect(res.status).toBe(410);
      expect(res.headers.get("content-type") ?? "").toMatch(/text\/html/);
    });

    it("answers 404 for an unknown form id and for a non-UUID id", async () => {
      expect((await page(`/donate/${UNKNOWN_UUID}`)).status).toBe(404);
      expect((await page("/donate/not-a-form")).status).toBe(404);
    });

    it("says an inactive (draft) form is not accepting donations", async () => {
      const title = unique("Draft");
      const id = await createForm({ title, funds: ["General"], active: false });
      const res = await page(`/donate/${id}`);
      expect(res.text).toContain(title);
      expect(res.text).toMatch(/not accepting donations/i);
    });

    it("reflects an update of active on the hosted page", async () => {
      const id = await createForm(validForms.standard());
      expect((await page(`/donate/${id}`)).text).not.toMatch(/not accepting/i);
      expect((await t.request("PUT", `/v1/forms/${id}`, { body: { active: false } })).status).toBe(200);
      expect((await page(`/donate/${id}`)).text).toMatch(/not accepting donations/i);
      expect((await t.request("PATCH", `/v1/forms/${id}`, { body: { active: true } })).status).toBe(200);
      expect((await page(`/donate/${id}`)).text).not.toMatch(/not accepting/i);
    });

    it("serves /attend/{id} of an event form, and 410 once it is deleted", async () => {
      const body = validForms.event();
      const id = await createForm(body);
      const res = await page(`/attend/${id}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type") ?? "").toMatch(/text\/html/);
      expect(res.text).toContain(body.title);
      expect((await page(`/donate/${id}`)).status).toBe(200);
      expect((await t.request("DELETE", `/v1/forms/${id}`)).status).toBe(200);
      expect((await page(`/attend/${id}`)).status).toBe(410);
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../server/store/keys.js";
import { dialect, setupTestApp, type TestApp, type TestOrg, validForms } from "../support/testApp.js";

/**
 * Prefilled checkout links: create, list, get, full replace, activate/deactivate, delete, prefill
 * validation, URL shapes, the parent form's lifecycle and permissions.
 */

type Json = Record<string, unknown>;

interface ErrorBody {
  error: string;
  details?: string[];
}

interface Link {
  linkID: string;
  formID: string;
  name: string;
  prefill: Json;
  url: string;
  checkoutUrl: string;
  destinationType: string;
  overlayPath: string;
  active: boolean;
  createdAt: string;
  updatedAt: string;
}

interface LinkList {
  links: Link[];
  nextCursor: string | null;
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
const UNKNOWN_UUID = "7d3b2a6e-5c1f-4e8a-9b0d-2f4e6a8c0b1d";
const BASE = "http://forms.test";

describe(`checkout links (${dialect})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp({ env: { RATE_LIMIT_PER_HOUR: "1000000" } });
  });
  afterAll(() => t.close());

  async function createForm(body: Json, key?: string): Promise<string> {
    const res = await t.request<{ formID: string }>("POST", "/v1/forms", { body, key });
    expect(res.status, res.text).toBe(201);
    return res.body.formID;
  }

  async function createLink(formID: string, body: Json = {}, key?: string): Promise<Link> {
    const res = await t.request<Link>("POST", `/v1/forms/${formID}/links`, { body, key });
    expect(res.status, res.text).toBe(201);
    return res.body;
  }

  /** Posts a link body that must be refused; returns the details. */
  async function refuse(formID: string, body: Json, key?: string): Promise<string[]> {
    const res = await t.request<ErrorBody>("POST", `/v1/forms/${formID}/links`, { body, key });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toBe("Validation failed");
    expect(Array.isArray(res.body.details)).toBe(true);
    return res.body.details ?? [];
  }

  async function getLink(formID: string, linkID: string): Promise<Link> {
    const res = await t.request<Link>("GET", `/v1/forms/${formID}/links/${linkID}`);
    expect(res.status, res.text).toBe(200);
    return res.body;
  }

  async function listAll(formID: string, query = ""): Promise<Link[]> {
    const res = await t.request<LinkList>("GET", `/v1/forms/${formID}/links?limit=200${query}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    return res.body.links;
  }

  async function linkCount(formID: string): Promise<number> {
    const row = await t.store.db
      .selectFrom("checkout_links")
      .select((eb) => eb.fn.countAll<string | number>().as("n"))
      .where("form_id", "=", formID)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** A form of a fresh organization, with its own key. */
  async function otherOrgForm(): Promise<{ org: TestOrg; formID: string }> {
    const org = await t.newOrg({ name: "Other Org" });
    const formID = await createForm(validForms.standard(), org.key);
    return { org, formID };
  }

  async function setBaseUrls(urls: string[], key?: string): Promise<void> {
    const res = await t.request("PUT", "/v1/organization", { body: { organizationBaseURLs: urls }, key });
    expect(res.status, res.text).toBe(200);
  }

  describe("POST /v1/forms/{formID}/links (record and URLs)", () => {
    let formID: string;
    let eventID: string;
    beforeAll(async () => {
      formID = await createForm(validForms.standard());
      eventID = await createForm(validForms.event());
    });

    it("answers 201 with the full link record: uuid linkID, formID, name, prefill, url = checkoutUrl, destination, empty overlayPath, active, createdAt", async () => {
      const before = Date.now();
      const res = await t.request<Link>("POST", `/v1/forms/${formID}/links`, {
        body: { name: "Spring appeal", prefill: { firstName: "Ada", amount: 25 } },
      });
      expect(res.status, res.text).toBe(201);
      const link = res.body;
      expect(link.linkID).toMatch(UUID_V4);
      expect(link).toMatchObject({
        formID,
        name: "Spring appeal",
        prefill: { firstName: "Ada", amount: 25 },
        url: `${BASE}/donate/${formID}?elementid=${link.linkID}`,
        checkoutUrl: `${BASE}/donate/${formID}?elementid=${link.linkID}`,
        destinationType: "HOSTED_PAGE_DONATE",
        overlayPath: "",
        active: true,
      });
      expect(link.checkoutUrl).toBe(link.url);
      expect(link.createdAt).toMatch(ISO_UTC);
      expect(Date.parse(link.createdAt)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(link.createdAt)).toBeLessThanOrEqual(Date.now() + 1000);
    });

    it("gives two links of the same form different ids", async () => {
      const a = await createLink(formID);
      const b = await createLink(formID);
      expect(a.linkID).not.toBe(b.linkID);
    });

    it("names a link without a name 'API link - <timestamp>', at most 200 characters", async () => {
      const link = await createLink(formID);
      expect(link.name).toMatch(/^API link - /);
      expect(link.name.length).toBeLessThanOrEqual(200);
      expect(link.name.length).toBeGreaterThan("API link - ".length);
    });

    it("accepts a 200-character name and refuses a 201-character one with a detail about name", async () => {
      const ok = await createLink(formID, { name: "n".repeat(200) });
      expect(ok.name).toBe("n".repeat(200));
      const details = await refuse(formID, { name: "n".repeat(201) });
      expect(details.some((d) => d.startsWith("name "))).toBe(true);
    });

    it("defaults the destination to HOSTED_PAGE_DONATE on fundraising forms of every amount type", async () => {
      for (const body of [validForms.standard(), validForms.givingLevel(), validForms.sponsorship()]) {
        const id = await createForm(body);
        const link = await createLink(id);
        expect(link.destinationType).toBe("HOSTED_PAGE_DONATE");
        expect(link.url).toBe(`${BASE}/donate/${id}?elementid=${link.linkID}`);
      }
    });

    it("defaults the destination to HOSTED_PAGE_ATTEND on event forms, with an /attend/ URL", async () => {
      const link = await createLink(eventID);
      expect(link.destinationType).toBe("HOSTED_PAGE_ATTEND");
      expect(link.overlayPath).toBe("");
      expect(link.url).toBe(`${BASE}/attend/${eventID}?elementid=${link.linkID}`);
      expect(link.checkoutUrl).toBe(link.url);
    });

    it("never puts prefill values in the URL", async () => {
      const link = await createLink(formID, {
        prefill: {
          email: "secret.donor@example.org",
          firstName: "Zebulon",
          amount: 777.77,
          utmCampaign: "hiddencampaign",
        },
      });
      // The ids are random and may hold "777" by chance: the rest of the URL is what must not.
      const rest = link.url.replace(formID, "").replace(link.linkID, "");
      for (const value of ["secret", "example.org", "Zebulon", "777", "hiddencampaign", "utm", "amount"])
        expect(rest).not.toContain(value);
      expect(link.url).toBe(`${BASE}/donate/${formID}?elementid=${link.linkID}`);
      const again = await getLink(formID, link.linkID);
      expect(again.url).toBe(link.url);
    });

    it("refuses a destination meant for events on a fundraising form, and one meant for donations on an event form", async () => {
      const a = await refuse(formID, { destinationType: "HOSTED_PAGE_ATTEND" });
      expect(a.some((d) => d.includes("destinationType") && d.includes("HOSTED_PAGE_ATTEND"))).toBe(true);
      const b = await refuse(eventID, { destinationType: "HOSTED_PAGE_DONATE" });
      expect(b.some((d) => d.includes("destinationType"))).toBe(true);
      const before = await linkCount(formID);
      await refuse(formID, { destinationType: "OVERLAY_ATTEND", overlayPath: "/x" });
      expect(await linkCount(formID)).toBe(before);
    });

    it("refuses an unknown destinationType", async () => {
      const details = await refuse(formID, { destinationType: "EMAIL" });
      expect(details.some((d) => d.startsWith("destinationType"))).toBe(true);
    });

    it("refuses unknown top-level body fields", async () => {
      const details = await refuse(formID, { name: "x", slug: "spring" });
      expect(details).toEqual(["slug is not a recognised field"]);
    });

    it("accepts and ignores the read-only fields of a link record", async () => {
      const res = await t.request<Link>("POST", `/v1/forms/${formID}/links`, {
        body: {
          name: "With read-only fields",
          linkID: UNKNOWN_UUID,
          formID: UNKNOWN_UUID,
          url: "https://evil.example/x",
          checkoutUrl: "https://evil.example/y",
          active: false,
          createdAt: "2000-01-01T00:00:00Z",
          updatedAt: 17,
        },
      });
      expect(res.status, res.text).toBe(201);
      const link = res.body;
      expect(link.linkID).not.toBe(UNKNOWN_UUID);
      expect(link).toMatchObject({
        formID,
        name: "With read-only fields",
        url: `${BASE}/donate/${formID}?elementid=${link.linkID}`,
        checkoutUrl: `${BASE}/donate/${formID}?elementid=${link.linkID}`,
        active: true,
      });
      expect(link.createdAt).not.toBe("2000-01-01T00:00:00Z");
      expect(await getLink(formID, link.linkID)).toEqual(link);
    });

    it("creates a link to the hosted page without prefill from a POST with no body at all", async () => {
      const res = await t.app.request(`/v1/forms/${formID}/links`, {
        method: "POST",
        headers: { Authorization: `Bearer ${t.org.key}` },
      });
      expect(res.status).toBe(201);
      const link = (await res.json()) as Link;
      expect(link.prefill).toEqual({});
      expect(link.url).toBe(`${BASE}/donate/${formID}?elementid=${link.linkID}`);
    });

    it("answers 400 Invalid JSON body to a body that is not JSON", async () => {
      const res = await t.request<ErrorBody>("POST", `/v1/forms/${formID}/links`, {
        rawBody: "{not json",
        headers: { "Content-Type": "application/json" },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: "Invalid JSON body" });
    });
  });

  describe("Idempotency-Key on link creation", () => {
    it("replays the first response for the same key and body and creates one link", async () => {
      const formID = await createForm(validForms.standard());
      const headers = { "Idempotency-Key": `link-${Math.random().toString(36).slice(2)}` };
      const body = { name: "Once", prefill: { amount: 10 } };
      const a = await t.request<Link>("POST", `/v1/forms/${formID}/links`, { body, headers });
      const b = await t.request<Link>("POST", `/v1/forms/${formID}/links`, { body, headers });
      expect(a.status).toBe(201);
      expect(b.status).toBe(201);
      expect(b.body).toEqual(a.body);
      expect(await linkCount(formID)).toBe(1);
      const c = await t.request<ErrorBody>("POST", `/v1/forms/${formID}/links`, {
        body: { ...body, name: "Twice" },
        headers,
      });
      expect(c.status).toBe(422);
      expect(await linkCount(formID)).toBe(1);
    });
  });

  describe("overlay destinations", () => {
    let org: TestOrg;
    let formID: string;
    let eventID: string;
    beforeAll(async () => {
      org = await t.newOrg({ name: "Overlay Org" });
      formID = await createForm(validForms.standard(), org.key);
      eventID = await createForm(validForms.event(), org.key);
    });

    it("refuses an overlay link while the organization has no organizationBaseURLs, naming organizationBaseURLs", async () => {
      const details = await refuse(
        formID,
        { destinationType: "OVERLAY_DONATE", overlayPath: "/give" },
        org.key,
      );
      expect(details.some((d) => d.includes("organizationBaseURLs"))).toBe(true);
      const ev = await refuse(
        eventID,
        { destinationType: "OVERLAY_ATTEND", overlayPath: "/tickets" },
        org.key,
      );
      expect(ev.some((d) => d.includes("organizationBaseURLs"))).toBe(true);
      expect(await linkCount(formID)).toBe(0);
    });

    it("builds OVERLAY_DONATE URLs from the first organizationBaseURL and the overlayPath", async () => {
      await setBaseUrls(["https://www.example.org/", "https://second.example.org"], org.key);
      const link = await createLink(
        formID,
        { destinationType: "OVERLAY_DONATE", overlayPath: "/give", prefill: { email: "donor@example.net" } },
        org.key,
      );
      expect(link.destinationType).toBe("OVERLAY_DONATE");
      expect(link.overlayPath).toBe("/give");
      expect(link.url).toBe(`https://www.example.org/give?donate&formid=${formID}&elementid=${link.linkID}`);
      expect(link.checkoutUrl).toBe(link.url);
      expect(link.url).not.toContain("donor@example.net");
    });

    it("builds OVERLAY_ATTEND URLs with ?attend instead of ?donate", async () => {
      await setBaseUrls(["https://www.example.org"], org.key);
      const link = await createLink(
        eventID,
        { destinationType: "OVERLAY_ATTEND", overlayPath: "/events/gala" },
        org.key,
      );
      expect(link.url).toBe(
        `https://www.example.org/events/gala?attend&formid=${eventID}&elementid=${link.linkID}`,
      );
    });

    it("refuses an overlay link without overlayPath", async () => {
      await setBaseUrls(["https://www.example.org"], org.key);
      const details = await refuse(formID, { destinationType: "OVERLAY_DONATE" }, org.key);
      expect(details.some((d) => d.startsWith("overlayPath"))).toBe(true);
      const empty = await refuse(formID, { destinationType: "OVERLAY_DONATE", overlayPath: "" }, org.key);
      expect(empty.some((d) => d.startsWith("overlayPath"))).toBe(true);
    });

    it("refuses an overlayPath that does not begin with /", async () => {
      await setBaseUrls(["https://www.example.org"], org.key);
      const details = await refuse(
        formID,
        { destinationType: "OVERLAY_DONATE", overlayPath: "give" },
        org.key,
      );
      expect(details).toContain("overlayPath must begin with /");
    });

    it("lists the missing overlayPath and the missing base URLs together", async () => {
      const bare = await t.newOrg();
      const id = await createForm(validForms.standard(), bare.key);
      const details = await refuse(id, { destinationType: "OVERLAY_DONATE" }, bare.key);
      expect(details.some((d) => d.startsWith("overlayPath"))).toBe(true);
      expect(details.some((d) => d.includes("organizationBaseURLs"))).toBe(true);
    });

    it("rebuilds overlay URLs on read from the organization's current first base URL", async () => {
      await setBaseUrls(["https://old.example.org"], org.key);
      const link = await createLink(
        formID,
        { destinationType: "OVERLAY_DONATE", overlayPath: "/d" },
        org.key,
      );
      expect(link.url.startsWith("https://old.example.org/d?donate")).toBe(true);
      await setBaseUrls(["https://new.example.org"], org.key);
      const res = await t.request<Link>("GET", `/v1/forms/${formID}/links/${link.linkID}`, { key: org.key });
      expect(res.body.url).toBe(`https://new.example.org/d?donate&formid=${formID}&elementid=${link.linkID}`);
    });
  });

  describe("overlay links after the organization removes its base URLs", () => {
    it("give the form's hosted page URL with the link on read, and the overlay URL again once a base URL is back", async () => {
      const org = await t.newOrg({ name: "Fallback Org" });
      await setBaseUrls(["https://www.example.org"], org.key);
      const formID = await createForm(validForms.standard(), org.key);
      const eventID = await createForm(validForms.event(), org.key);
      const donate = await createLink(
        formID,
        { destinationType: "OVERLAY_DONATE", overlayPath: "/give" },
        org.key,
      );
      const attend = await createLink(
        eventID,
        { destinationType: "OVERLAY_ATTEND", overlayPath: "/gala" },
        org.key,
      );
      await setBaseUrls([], org.key);

      const read = async (id: string, linkID: string) =>
        (await t.request<Link>("GET", `/v1/forms/${id}/links/${linkID}`, { key: org.key })).body;
      const d = await read(formID, donate.linkID);
      expect(d.url).toBe(`${BASE}/donate/${formID}?elementid=${donate.linkID}`);
      expect(d.checkoutUrl).toBe(d.url);
      expect(d).toMatchObject({ destinationType: "OVERLAY_DONATE", overlayPath: "/give" });
      const page = await t.request("GET", d.url.slice(BASE.length), { key: null });
      expect(page.status).toBe(200);
      const a = await read(eventID, attend.linkID);
      expect(a.url).toBe(`${BASE}/attend/${eventID}?elementid=${attend.linkID}`);
      expect(a.checkoutUrl).toBe(a.url);
      expect(a).toMatchObject({ destinationType: "OVERLAY_ATTEND", overlayPath: "/gala" });
      const list = await t.request<LinkList>("GET", `/v1/forms/${eventID}/links`, { key: org.key });
      expect(list.body.links.map((l) => l.url)).toEqual([a.url]);
      const keepOverlay = await t.request<ErrorBody>("PUT", `/v1/forms/${eventID}/links/${attend.linkID}`, {
        body: a,
        key: org.key,
      });
      expect(keepOverlay.status).toBe(400);
      expect(keepOverlay.body.details?.some((x) => x.startsWith("organizationBaseURLs"))).toBe(true);

      await setBaseUrls(["https://new.example.org"], org.key);
      expect((await read(eventID, attend.linkID)).url).toBe(
        `https://new.example.org/gala?attend&formid=${eventID}&elementid=${attend.linkID}`,
      );
    });
  });

  describe("form lookup for link creation", () => {
    it("answers 404 for an unknown form id and for an id that is not a UUID", async () => {
      for (const id of [UNKNOWN_UUID, "not-a-form"]) {
        const res = await t.request<ErrorBody>("POST", `/v1/forms/${id}/links`, { body: {} });
        expect(res.status).toBe(404);
        expect(typeof res.body.error).toBe("string");
      }
    });

    it("answers 403 for another organization's form and creates nothing", async () => {
      const { formID } = await otherOrgForm();
      const res = await t.request<ErrorBody>("POST", `/v1/forms/${formID}/links`, { body: {} });
      expect(res.status).toBe(403);
      expect(await linkCount(formID)).toBe(0);
    });

    it("answers 410 for a deleted form", async () => {
      const id = await createForm(validForms.standard());
      expect((await t.request("DELETE", `/v1/forms/${id}`)).status).toBe(200);
      const res = await t.request<ErrorBody>("POST", `/v1/forms/${id}/links`, { body: {} });
      expect(res.status).toBe(410);
      expect(await linkCount(id)).toBe(0);
    });
  });

  describe("prefill validation", () => {
    let standardID: string;
    let oneTimeID: string;
    let levelsID: string;
    let productID: string;
    let eventID: string;
    beforeAll(async () => {
      standardID = await createForm({
        ...validForms.standard(),
        funds: ["General", "Building"],
        frequencies: ["ONE_TIME", "MONTHLY"],
      });
      oneTimeID = await createForm({ ...validForms.standard(), frequencies: ["ONE_TIME"] });
      levelsID = await createForm({
        ...validForms.givingLevel(),
        givingLevels: [
          { title: "Friend", amount: 50, description: "" },
          { title: "Patron", amount: 250, description: "" },
        ],
      });
      productID = await createForm({
        ...validForms.sponsorship(),
        sponsorshipGroups: [
          {
            groupTitle: "Booths",
            description: "",
            options: [
              { optionTitle: "Gold", amount: 1000 },
              { optionTitle: "Silver", amount: 500 },
            ],
          },
          { groupTitle: "Ads", description: "", options: [{ optionTitle: "Full page", amount: 250 }] },
        ],
      });
      eventID = await createForm(validForms.event());
    });

    it("stores every donor, address and UTM key and returns them unchanged from GET", async () => {
      const prefill = {
        firstName: "Ada",
        lastName: "Lovelace",
        email: "ada@example.org",
        phone: "+44 20 7946 0000",
        organizationName: "Analytical Engines Ltd",
        address1: "12 St James's Square",
        address2: "Floor 2",
        city: "London",
        state: "LND",
        postalCode: "SW1Y 4JH",
        country: "GB",
        amount: 42.5,
        fund: "Building",
        frequency: "MONTHLY",
        utmSource: "newsletter",
        utmMedium: "email",
        utmCampaign: "spring-2026",
        utmTerm: "roof",
        utmContent: "header-button",
      };
      const link = await createLink(standardID, { prefill });
      expect(link.prefill).toEqual(prefill);
      expect((await getLink(standardID, link.linkID)).prefill).toEqual(prefill);
    });

    it("records the five UTM keys and nothing else when only UTM keys are sent", async () => {
      const utm = {
        utmSource: "fb",
        utmMedium: "social",
        utmCampaign: "gala",
        utmTerm: "tickets",
        utmContent: "carousel-2",
      };
      const link = await createLink(standardID, { prefill: utm });
      const got = await getLink(standardID, link.linkID);
      expect(got.prefill).toEqual(utm);
    });

    it("gives an empty prefill object when none is sent", async () => {
      const link = await createLink(standardID);
      expect(link.prefill).toEqual({});
    });

    it("refuses an unknown prefill key with details listing the accepted keys", async () => {
      const details = await refuse(standardID, { prefill: { firstname: "Ada" } });
      const line = details.find((d) => d.includes("firstname"));
      expect(line).toBeDefined();
      for (const key of ["firstName", "lastName", "email", "amount", "fund", "customInputs", "utmContent"])
        expect(line).toContain(key);
    });

    it("refuses a prefill that is not an object", async () => {
      for (const prefill of ["Ada", 5, [1, 2], true]) {
        const details = await refuse(standardID, { prefill });
        expect(details.some((d) => d.startsWith("prefill"))).toBe(true);
      }
    });

    it("refuses a non-string value of a text key", async () => {
      const details = await refuse(standardID, { prefill: { firstName: 5, utmSource: { a: 1 } } });
      expect(details).toContain("prefill.firstName must be a string, not a number");
      expect(details).toContain("prefill.utmSource must be a string, not an object");
    });

    it("refuses a line break or other control character in a text or UTM key, naming each", async () => {
      const line = "must be a single line of text (no line breaks, tabs or other control characters)";
      const prefill = {
        utmSource: "news\r\nletter",
        utmMedium: "mail\n",
        utmCampaign: "spring\tappeal",
        utmTerm: "give\r\nnow",
        utmContent: "a\u0085b",
        firstName: "Ada\r\nBcc: x@example.com",
        phone: "555\r\n0101",
        address1: "1 Main St\nBcc: x@example.com",
      };
      const details = await refuse(standardID, { prefill });
      expect([...details].sort()).toEqual(
        Object.keys(prefill)
          .map((key) => `prefill.${key} ${line}`)
          .sort(),
      );
      // Spaces and accents are text; the links are made.
      await createLink(standardID, { prefill: { utmCampaign: "spring appeal", firstName: "Zoë Anne" } });
    });

    it("refuses a malformed email", async () => {
      const details = await refuse(standardID, { prefill: { email: "not-an-email" } });
      expect(details.some((d) => d.startsWith("prefill.email"))).toBe(true);
    });

    it("refuses donor text longer than the checkout's own field takes, so a donor never gets a value they cannot send", async () => {
      const details = await refuse(standardID, {
        prefill: {
          firstName: "A".repeat(101),
          lastName: "B".repeat(101),
          phone: "5".repeat(41),
          city: "C".repeat(101),
          state: "S".repeat(101),
          postalCode: "9".repeat(21),
          organizationName: "O".repeat(201),
        },
      });
      expect([...details].sort()).toEqual([
        "prefill.city must be at most 100 characters",
        "prefill.firstName must be at most 100 characters",
        "prefill.lastName must be at most 100 characters",
        "prefill.organizationName must be at most 200 characters",
        "prefill.phone must be at most 40 characters",
        "prefill.postalCode must be at most 20 characters",
        "prefill.state must be at most 100 characters",
      ]);
      // At the limits, the link is made.
      await createLink(standardID, {
        prefill: { firstName: "A".repeat(100), phone: "5".repeat(40), postalCode: "9".repeat(20) },
      });
    });

    it("accepts any phone text (phone format is not validated)", async () => {
      const link = await createLink(standardID, { prefill: { phone: "call me maybe" } });
      expect(link.prefill.phone).toBe("call me maybe");
    });

    it.each([
      ["zero", 0],
      ["a tenth of a cent", 0.001],
      ["one cent above a million", 1000000.01],
      ["a negative number", -5],
      ["a boolean", true],
      ["a numeric string", "25"],
    ])("refuses amount %s", async (_label, amount) => {
      const details = await refuse(standardID, { prefill: { amount } });
      expect(details.some((d) => d.startsWith("prefill.amount"))).toBe(true);
    });

    it("refuses an amount with more than two decimals inside the range", async () => {
      const details = await refuse(standardID, { prefill: { amount: 10.555 } });
      expect(details).toContain("prefill.amount must have at most 2 decimal places");
    });

    it("accepts the amount bounds 0.01 and 1,000,000 on a standard form", async () => {
      const low = await createLink(standardID, { prefill: { amount: 0.01 } });
      expect(low.prefill.amount).toBe(0.01);
      const high = await createLink(standardID, { prefill: { amount: 1000000 } });
      expect(high.prefill.amount).toBe(1000000);
      expect((await getLink(standardID, low.linkID)).prefill.amount).toBe(0.01);
      expect((await getLink(standardID, high.linkID)).prefill.amount).toBe(1000000);
    });

    it("on a giving-level form accepts only an amount equal to a level's amount", async () => {
      const ok = await createLink(levelsID, { prefill: { amount: 250 } });
      expect(ok.prefill.amount).toBe(250);
      const details = await refuse(levelsID, { prefill: { amount: 75 } });
      expect(details.some((d) => d.startsWith("prefill.amount") && d.includes("giving level"))).toBe(true);
      expect(details.some((d) => d.includes("50") && d.includes("250"))).toBe(true);
    });

    it("on a sponsorship form accepts only the chosen product's price as amount", async () => {
      const ok = await createLink(productID, {
        prefill: { sponsorshipGroup: "Booths", product: "Gold", amount: 1000 },
      });
      expect(ok.prefill).toEqual({ sponsorshipGroup: "Booths", product: "Gold", amount: 1000 });
      const details = await refuse(productID, {
        prefill: { sponsorshipGroup: "Booths", product: "Gold", amount: 500 },
      });
      expect(details.some((d) => d.startsWith("prefill.amount") && d.includes("Gold"))).toBe(true);
    });

    it("on a sponsorship form refuses an amount that is no product's price", async () => {
      const details = await refuse(productID, { prefill: { amount: 123 } });
      expect(details.some((d) => d.startsWith("prefill.amount"))).toBe(true);
    });

    it("accepts a fund named exactly as on the form", async () => {
      const link = await createLink(standardID, { prefill: { fund: "Building" } });
      expect(link.prefill.fund).toBe("Building");
    });

    it("refuses a fund that differs from the form's only by case", async () => {
      const details = await refuse(standardID, { prefill: { fund: "general" } });
      expect(details.some((d) => d.startsWith("prefill.fund") && d.includes("General"))).toBe(true);
    });

    it("refuses a fund that is not on the form", async () => {
      const details = await refuse(standardID, { prefill: { fund: "Gala" } });
      expect(details.some((d) => d.startsWith("prefill.fund"))).toBe(true);
    });

    it("refuses an unknown frequency, listing the five frequencies", async () => {
      const details = await refuse(standardID, { prefill: { frequency: "HOURLY" } });
      const line = details.find((d) => d.startsWith("prefill.frequency"));
      expect(line).toBeDefined();
      for (const f of ["ONE_TIME", "DAILY", "WEEKLY", "MONTHLY", "ANNUALLY"]) expect(line).toContain(f);
    });

    it("refuses a frequency that is valid but not enabled on the form", async () => {
      const details = await refuse(oneTimeID, { prefill: { frequency: "MONTHLY" } });
      expect(details.some((d) => d.startsWith("prefill.frequency") && d.includes("MONTHLY"))).toBe(true);
      const ok = await createLink(oneTimeID, { prefill: { frequency: "ONE_TIME" } });
      expect(ok.prefill.frequency).toBe("ONE_TIME");
    });

    it("refuses a frequency given in lower case", async () => {
      const details = await refuse(standardID, { prefill: { frequency: "monthly" } });
      expect(details.some((d) => d.startsWith("prefill.frequency"))).toBe(true);
    });

    it("refuses sponsorshipGroup and product on a non-PRODUCT form", async () => {
      const details = await refuse(standardID, { prefill: { sponsorshipGroup: "Booths", product: "Gold" } });
      expect(details.some((d) => d.startsWith("prefill.sponsorshipGroup"))).toBe(true);
      expect(details.some((d) => d.startsWith("prefill.product"))).toBe(true);
      const ev = await refuse(eventID, { prefill: { sponsorshipGroup: "Booths" } });
      expect(ev.some((d) => d.startsWith("prefill.sponsorshipGroup"))).toBe(true);
    });

    it("refuses a sponsorshipGroup that matches no productGroupName (case-sensitive)", async () => {
      const details = await refuse(productID, { prefill: { sponsorshipGroup: "booths" } });
      const line = details.find((d) => d.startsWith("prefill.sponsorshipGroup"));
      expect(line).toContain("Booths");
      expect(line).toContain("Ads");
    });

    it("accepts a sponsorshipGroup alone", async () => {
      const link = await createLink(productID, { prefill: { sponsorshipGroup: "Ads" } });
      expect(link.prefill).toEqual({ sponsorshipGroup: "Ads" });
    });

    it("refuses a product without sponsorshipGroup", async () => {
      const details = await refuse(productID, { prefill: { product: "Gold" } });
      expect(details).toContain("prefill.product requires prefill.sponsorshipGroup");
    });

    it("refuses a product that is not in the chosen group", async () => {
      const details = await refuse(productID, {
        prefill: { sponsorshipGroup: "Booths", product: "Full page" },
      });
      const line = details.find((d) => d.startsWith("prefill.product"));
      expect(line).toBeDefined();
      expect(line).toContain("Booths");
      const caseDiff = await refuse(productID, { prefill: { sponsorshipGroup: "Booths", product: "gold" } });
      expect(caseDiff.some((d) => d.startsWith("prefill.product"))).toBe(true);
    });

    it("refuses ticket on a non-event form", async () => {
      for (const id of [standardID, levelsID, productID]) {
        const details = await refuse(id, { prefill: { ticket: "Adult" } });
        expect(details.some((d) => d.startsWith("prefill.ticket"))).toBe(true);
      }
    });

    it("refuses an unknown ticket on an event form and accepts a configured one", async () => {
      const details = await refuse(eventID, { prefill: { ticket: "Child" } });
      const line = details.find((d) => d.startsWith("prefill.ticket"));
      expect(line).toContain("Adult");
      expect(line).toContain("Table");
      const ok = await createLink(eventID, { prefill: { ticket: "Table" } });
      expect(ok.prefill.ticket).toBe("Table");
    });

    it("lists every problem at once, one detail line each", async () => {
      const details = await refuse(standardID, {
        name: "x".repeat(201),
        prefill: {
          favouriteColour: "blue",
          amount: 0,
          fund: "general",
          frequency: "HOURLY",
          ticket: "Adult",
          sponsorshipGroup: "Booths",
          firstName: 7,
        },
      });
      for (const prefix of [
        "name ",
        "prefill.favouriteColour",
        "prefill.amount",
        "prefill.fund",
        "prefill.frequency",
        "prefill.ticket",
        "prefill.sponsorshipGroup",
        "prefill.firstName",
      ])
        expect(
          details.some((d) => d.startsWith(prefix)),
          prefix,
        ).toBe(true);
      expect(details.length).toBeGreaterThanOrEqual(8);
    });

    it("lists a problem of the body's own fields together with the prefill problems, each worded as on its own", async () => {
      const prefillAlone = await refuse(standardID, { prefill: { bogus: 1 } });
      expect(prefillAlone).toHaveLength(1);
      expect(prefillAlone[0]).toMatch(/^prefill\.bogus /);
      const bodies: [Json, string][] = [
        [{ name: 5 }, "name must be a string, not a number"],
        [{ name: "n".repeat(201) }, "name must be at most 200 characters"],
        [{ colour: "red" }, "colour is not a recognised field"],
        [{ destinationType: "EMAIL" }, "destinationType must be one of: "],
        [{ overlayPath: 7 }, "overlayPath must be a string, not a number"],
      ];
      for (const [body, own] of bodies) {
        const details = await refuse(standardID, { ...body, prefill: { bogus: 1 } });
        expect(details, JSON.stringify(body)).toHaveLength(2);
        expect(details[0].startsWith(own), `${JSON.stringify(body)}: ${details[0]}`).toBe(true);
        expect(details[1], JSON.stringify(body)).toBe(prefillAlone[0]);
      }
    });

    it("checks the destination even when another field of the body is bad", async () => {
      const details = await refuse(standardID, {
        name: 5,
        destinationType: "HOSTED_PAGE_ATTEND",
        prefill: { fund: "Nope" },
      });
      expect(details).toContain("name must be a string, not a number");
      expect(details.some((d) => d.startsWith("destinationType HOSTED_PAGE_ATTEND is for event forms"))).toBe(
        true,
      );
      expect(details.some((d) => d.startsWith("prefill.fund"))).toBe(true);
    });

    it("does not guess a destination's needs from a destinationType that is itself bad", async () => {
      const details = await refuse(standardID, { destinationType: "EMAIL", overlayPath: "/give" });
      expect(details).toHaveLength(1);
      expect(details[0]).toMatch(/^destinationType must be one of: /);
    });

    it("answers a bad body on an unknown form with the body's own problems (400), as before loading the form", async () => {
      const res = await t.request<ErrorBody>("POST", `/v1/forms/${UNKNOWN_UUID}/links`, {
        body: { name: 5, prefill: { bogus: 1 } },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: "Validation failed",
        details: ["name must be a string, not a number"],
      });
      const clean = await t.request<ErrorBody>("POST", `/v1/forms/${UNKNOWN_UUID}/links`, {
        body: { prefill: { bogus: 1 } },
      });
      expect(clean.status).toBe(404);
    });

    it("lists a destination problem together with prefill problems", async () => {
      const details = await refuse(standardID, {
        destinationType: "HOSTED_PAGE_ATTEND",
        prefill: { fund: "Nope", amount: true },
      });
      expect(details.some((d) => d.startsWith("destinationType"))).toBe(true);
      expect(details.some((d) => d.startsWith("prefill.fund"))).toBe(true);
      expect(details.some((d) => d.startsWith("prefill.amount"))).toBe(true);
    });
  });

  describe("prefill custom inputs", () => {
    let org: TestOrg;
    let formID: string;
    let dietID: string;
    let employerID: string;
    beforeAll(async () => {
      org = await t.newOrg({ name: "Inputs Org" });
      const put = await t.request<{ globalCustomInputs: { id: string; title: string }[] }>(
        "PUT",
        "/v1/organization",
        {
          key: org.key,
          body: {
            globalCustomInputs: [
              { title: "Employer", inputType: "SHORT_TEXT_INPUT" },
              {
                id: "region",
                title: "Region",
                inputType: "SINGLE_SELECTION_DROPDOWN",
                options: ["North", "South"],
              },
            ],
          },
        },
      );
      expect(put.status, put.text).toBe(200);
      employerID = put.body.globalCustomInputs.find((g) => g.title === "Employer")?.id ?? "";
      expect(employerID).not.toBe("");
      formID = await createForm(
        {
          ...validForms.standard(),
          customInputs: [
            { id: "shirt", title: "Shirt size", inputType: "single_select", options: ["S", "M", "L"] },
            { title: "Dietary needs", inputType: "short_text" },
            {
              id: "topics",
              title: "Topics",
              inputType: "multi_select",
              options: ["Arts", "Science", "Sports"],
            },
          ],
        },
        org.key,
      );
      const form = await t.request<{ customInputs: { id: string; title: string }[] }>(
        "GET",
        `/v1/forms/${formID}`,
        { key: org.key },
      );
      dietID = form.body.customInputs.find((c) => c.title === "Dietary needs")?.id ?? "";
      expect(dietID).not.toBe("");
    });

    const create = (prefill: Json) => createLink(formID, { prefill }, org.key);
    const reject = (prefill: Json) => refuse(formID, { prefill }, org.key);

    it("accepts form custom inputs keyed by id and by title and keeps the keys as sent", async () => {
      const answers = { shirt: "M", "Dietary needs": "vegan", [dietID]: "no nuts", Topics: ["Arts"] };
      const link = await create({ customInputs: answers });
      expect(link.prefill.customInputs).toEqual(answers);
      const got = await t.request<Link>("GET", `/v1/forms/${formID}/links/${link.linkID}`, { key: org.key });
      expect(got.body.prefill.customInputs).toEqual(answers);
      // On the page, each input once, by id: one named twice (title, then id) takes the value given last.
      const page = await t.request<{ prefill: { customInputs: Json } }>(
        "GET",
        `/api/forms/${formID}?elementid=${link.linkID}`,
        { key: null },
      );
      expect(page.body.prefill.customInputs).toEqual({ shirt: "M", [dietID]: "no nuts", topics: ["Arts"] });
    });

    it("refuses a multiple choice answer that repeats an option, as the checkout would", async () => {
      const details = await reject({ customInputs: { Topics: ["Arts", "Arts"] } });
      expect(details).toEqual(["prefill.customInputs.Topics must not repeat an option"]);
    });

    it("accepts the organization's global custom inputs keyed by id and by title", async () => {
      const answers = { Employer: "Acme", [employerID]: "Acme Corp", region: "North", Region: "South" };
      const link = await create({ customInputs: answers });
      expect(link.prefill.customInputs).toEqual(answers);
    });

    it("matches custom input titles case-sensitively", async () => {
      const details = await reject({ customInputs: { "shirt size": "M" } });
      expect(details.some((d) => d.startsWith("prefill.customInputs.shirt size"))).toBe(true);
    });

    it("refuses an unknown custom input key with details listing valid ids and titles of the form and organization", async () => {
      const details = await reject({ customInputs: { Favourite: "x" } });
      const line = details.find((d) => d.startsWith("prefill.customInputs.Favourite"));
      expect(line).toBeDefined();
      for (const v of [
        "shirt",
        "Shirt size",
        dietID,
        "Dietary needs",
        "topics",
        "Topics",
        employerID,
        "Employer",
        "region",
        "Region",
      ])
        expect(line).toContain(v);
    });

    it("refuses a single-select value that is not one of its options", async () => {
      const details = await reject({ customInputs: { shirt: "XL" } });
      const line = details.find((d) => d.startsWith("prefill.customInputs.shirt"));
      expect(line).toContain("S, M, L");
      const global = await reject({ customInputs: { Region: "East" } });
      expect(global.some((d) => d.startsWith("prefill.customInputs.Region"))).toBe(true);
    });

    it("refuses a single-select value that is an array", async () => {
      const details = await reject({ customInputs: { shirt: ["S"] } });
      expect(details.some((d) => d.startsWith("prefill.customInputs.shirt"))).toBe(true);
    });

    it("requires an array of options for a multi-select input", async () => {
      const str = await reject({ customInputs: { topics: "Arts" } });
      expect(str).toContain("prefill.customInputs.topics must be an array of options");
      const bad = await reject({ customInputs: { topics: ["Arts", "Cooking"] } });
      expect(bad.some((d) => d.startsWith("prefill.customInputs.topics") && d.includes("Science"))).toBe(
        true,
      );
      const nums = await reject({ customInputs: { topics: [1] } });
      expect(nums.some((d) => d.startsWith("prefill.customInputs.topics"))).toBe(true);
      const ok = await create({ customInputs: { topics: ["Arts", "Sports"] } });
      expect(ok.prefill.customInputs).toEqual({ topics: ["Arts", "Sports"] });
    });

    it("refuses a non-string value of a text custom input", async () => {
      const details = await reject({ customInputs: { "Dietary needs": 3 } });
      expect(details.some((d) => d.startsWith("prefill.customInputs.Dietary needs"))).toBe(true);
    });

    it("refuses customInputs that is not an object", async () => {
      for (const customInputs of ["shirt", ["M"], 1]) {
        const details = await reject({ customInputs });
        expect(details.some((d) => d.startsWith("prefill.customInputs"))).toBe(true);
      }
    });

    it("lists every bad custom input answer at once", async () => {
      const details = await reject({ customInputs: { shirt: "XL", topics: "Arts", nope: "x" } });
      expect(details.some((d) => d.startsWith("prefill.customInputs.shirt"))).toBe(true);
      expect(details.some((d) => d.startsWith("prefill.customInputs.topics"))).toBe(true);
      expect(details.some((d) => d.startsWith("prefill.customInputs.nope"))).toBe(true);
    });

    it("refuses a custom input key on a form of another organization whose globals it names", async () => {
      // The main organization has no global "Employer" input.
      const other = await createForm(validForms.standard());
      const details = await refuse(other, { prefill: { customInputs: { Employer: "Acme" } } });
      expect(details.some((d) => d.startsWith("prefill.customInputs.Employer"))).toBe(true);
    });
  });

  describe("GET /v1/forms/{formID}/links (list)", () => {
    let formID: string;
    let created: Link[];
    beforeAll(async () => {
      formID = await createForm(validForms.standard());
      created = [];
      for (let i = 0; i < 120; i++) created.push(await createLink(formID, { name: `Link ${i}` }));
    });

    it("returns {links, nextCursor} with 50 links by default and a cursor", async () => {
      const res = await t.request<LinkList>("GET", `/v1/forms/${formID}/links`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(["links", "nextCursor"]);
      expect(res.body.links).toHaveLength(50);
      expect(typeof res.body.nextCursor).toBe("string");
    });

    it("returns list items in the same shape as the create response", async () => {
      const res = await t.request<LinkList>("GET", `/v1/forms/${formID}/links?limit=200`);
      const byId = new Map(res.body.links.map((l) => [l.linkID, l]));
      for (const link of created.slice(0, 5)) expect(byId.get(link.linkID)).toEqual(link);
    });

    it("walks 120 links in pages of 50 via cursor: each link exactly once, nextCursor null at the end", async () => {
      const seen: string[] = [];
      const sizes: number[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 10; page++) {
        const q: string = cursor ? `?limit=50&cursor=${encodeURIComponent(cursor)}` : "?limit=50";
        const res = await t.request<LinkList>("GET", `/v1/forms/${formID}/links${q}`);
        expect(res.status, res.text).toBe(200);
        sizes.push(res.body.links.length);
        seen.push(...res.body.links.map((l) => l.linkID));
        cursor = res.body.nextCursor;
        if (cursor === null) break;
      }
      expect(cursor).toBeNull();
      expect(sizes).toEqual([50, 50, 20]);
      expect(seen).toHaveLength(120);
      expect(new Set(seen).size).toBe(120);
      expect(new Set(seen)).toEqual(new Set(created.map((l) => l.linkID)));
    });

    it("returns all 120 links with limit=200 and nextCursor null", async () => {
      const res = await t.request<LinkList>("GET", `/v1/forms/${formID}/links?limit=200`);
      expect(res.status).toBe(200);
      expect(res.body.links).toHaveLength(120);
      expect(res.body.nextCursor).toBeNull();
    });

    it("returns exactly limit links at limit=1 and at limit=120 ends with nextCursor null", async () => {
      const one = await t.request<LinkList>("GET", `/v1/forms/${formID}/links?limit=1`);
      expect(one.body.links).toHaveLength(1);
      expect(one.body.nextCursor).not.toBeNull();
      const exact = await t.request<LinkList>("GET", `/v1/forms/${formID}/links?limit=120`);
      expect(exact.body.links).toHaveLength(120);
      expect(exact.body.nextCursor).toBeNull();
    });

    it.each(["0", "201", "x", "1.5", "-1", ""])(
      "refuses limit=%s with 400 and a detail about limit",
      async (limit) => {
        const res = await t.request<ErrorBody>("GET", `/v1/forms/${formID}/links?limit=${limit}`);
        expect(res.status).toBe(400);
        expect(res.body.error).toBe("Validation failed");
        expect(res.body.details?.some((d) => d.startsWith("limit"))).toBe(true);
      },
    );

    it("refuses a cursor that does not decode", async () => {
      const res = await t.request<ErrorBody>("GET", `/v1/forms/${formID}/links?cursor=not-a-cursor!!`);
      expect(res.status).toBe(400);
      expect(res.body.details?.some((d) => d.startsWith("cursor"))).toBe(true);
      const b64 = Buffer.from(JSON.stringify({ hello: "world" })).toString("base64url");
      const forged = await t.request<ErrorBody>("GET", `/v1/forms/${formID}/links?cursor=${b64}`);
      expect(forged.status).toBe(400);
    });

    it("refuses a cursor issued by another form's list", async () => {
      const other = await createForm(validForms.standard());
      await createLink(other);
      await createLink(other);
      const page = await t.request<LinkList>("GET", `/v1/forms/${other}/links?limit=1`);
      const cursor = page.body.nextCursor;
      expect(cursor).not.toBeNull();
      const res = await t.request<ErrorBody>(
        "GET",
        `/v1/forms/${formID}/links?cursor=${encodeURIComponent(cursor as string)}`,
      );
      expect(res.status).toBe(400);
    });

    it("returns an empty list with nextCursor null for a form without links", async () => {
      const id = await createForm(validForms.standard());
      const res = await t.request<LinkList>("GET", `/v1/forms/${id}/links`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ links: [], nextCursor: null });
    });

    it("lists only the links of that form", async () => {
      const other = await createForm(validForms.standard());
      const mine = await createLink(other);
      const links = await listAll(other);
      expect(links.map((l) => l.linkID)).toEqual([mine.linkID]);
    });
  });

  describe("active filter", () => {
    let formID: string;
    let links: Link[];
    beforeAll(async () => {
      formID = await createForm(validForms.standard());
      links = [];
      for (let i = 0; i < 6; i++) links.push(await createLink(formID));
      for (const l of links.slice(0, 2)) {
        const res = await t.request("POST", `/v1/forms/${formID}/links/${l.linkID}/deactivate`);
        expect(res.status).toBe(200);
      }
    });

    it("active=true lists only active links", async () => {
      const got = await listAll(formID, "&active=true");
      expect(got.every((l) => l.active)).toBe(true);
      expect(new Set(got.map((l) => l.linkID))).toEqual(new Set(links.slice(2).map((l) => l.linkID)));
    });

    it("active=false lists only inactive links", async () => {
      const got = await listAll(formID, "&active=false");
      expect(got.every((l) => l.active === false)).toBe(true);
      expect(new Set(got.map((l) => l.linkID))).toEqual(new Set(links.slice(0, 2).map((l) => l.linkID)));
    });

    it("no filter lists both", async () => {
      expect(await listAll(formID)).toHaveLength(6);
    });

    it("pages through a filtered list with the cursor", async () => {
      const first = await t.request<LinkList>("GET", `/v1/forms/${formID}/links?active=true&limit=3`);
      expect(first.body.links).toHaveLength(3);
      const cursor = first.body.nextCursor as string;
      const second = await t.request<LinkList>(
        "GET",
        `/v1/forms/${formID}/links?active=true&limit=3&cursor=${encodeURIComponent(cursor)}`,
      );
      expect(second.status).toBe(200);
      expect(second.body.links).toHaveLength(1);
      expect(second.body.nextCursor).toBeNull();
      const ids = [...first.body.links, ...second.body.links].map((l) => l.linkID);
      expect(new Set(ids).size).toBe(4);
    });

    it.each(["maybe", "TRUE", "1", ""])("refuses active=%s with 400", async (value) => {
      const res = await t.request<ErrorBody>("GET", `/v1/forms/${formID}/links?active=${value}`);
      expect(res.status).toBe(400);
      expect(res.body.details?.some((d) => d.startsWith("active"))).toBe(true);
    });
  });

  describe("GET /v1/forms/{formID}/links/{linkID}", () => {
    it("returns the link record with its prefill, destination and URL", async () => {
      const formID = await createForm(validForms.standard());
      const link = await createLink(formID, { name: "One", prefill: { email: "a@b.co", amount: 10 } });
      expect(await getLink(formID, link.linkID)).toEqual(link);
    });

    it("finds a link by its id written in upper case", async () => {
      const formID = await createForm(validForms.standard());
      const link = await createLink(formID);
      expect((await getLink(formID, link.linkID.toUpperCase())).linkID).toBe(link.linkID);
    });

    it("answers 404 Link not found for an unknown id and for a non-UUID id", async () => {
      const formID = await createForm(validForms.standard());
      for (const id of [UNKNOWN_UUID, "nope"]) {
        const res = await t.request<ErrorBody>("GET", `/v1/forms/${formID}/links/${id}`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: "Link not found" });
      }
    });

    it("answers 404 Link not found to every link endpoint when the link belongs to another form of the same organization", async () => {
      const a = await createForm(validForms.standard());
      const b = await createForm(validForms.standard());
      const link = await createLink(a);
      const calls: [string, string, Json | undefined][] = [
        ["GET", "", undefined],
        ["PUT", "", {}],
        ["POST", "/activate", undefined],
        ["POST", "/deactivate", undefined],
        ["DELETE", "", undefined],
      ];
      for (const [method, suffix, body] of calls) {
        const res = await t.request<ErrorBody>(method, `/v1/forms/${b}/links/${link.linkID}${suffix}`, {
          body,
        });
        expect(res.status, `${method} ${suffix}`).toBe(404);
        expect(res.body).toEqual({ error: "Link not found" });
      }
      const still = await getLink(a, link.linkID);
      expect(still).toEqual(link);
    });
  });

  describe("PUT /v1/forms/{formID}/links/{linkID} (full replace)", () => {
    let formID: string;
    beforeAll(async () => {
      formID = await createForm({ ...validForms.standard(), frequencies: ["ONE_TIME", "MONTHLY"] });
    });

    async function put(linkID: string, body: Json, id = formID) {
      return t.request<Link & ErrorBody>("PUT", `/v1/forms/${id}/links/${linkID}`, { body });
    }

    it("replaces name and prefill and returns the record with the same linkID, formID and createdAt", async () => {
      const link = await createLink(formID, { name: "Before", prefill: { email: "a@b.co", amount: 25 } });
      const res = await put(link.linkID, {
        name: "After",
        prefill: { firstName: "Ann", frequency: "MONTHLY" },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({
        linkID: link.linkID,
        formID,
        name: "After",
        prefill: { firstName: "Ann", frequency: "MONTHLY" },
        url: link.url,
        checkoutUrl: link.url,
        destinationType: "HOSTED_PAGE_DONATE",
        overlayPath: "",
        active: true,
        createdAt: link.createdAt,
      });
      expect(res.body.prefill).not.toHaveProperty("email");
      expect(res.body.prefill).not.toHaveProperty("amount");
      const got = await getLink(formID, link.linkID);
      expect(got.name).toBe("After");
      expect(got.prefill).toEqual({ firstName: "Ann", frequency: "MONTHLY" });
    });

    it("clears an omitted prefill to {} and resets an omitted name to an 'API link - ' label", async () => {
      const link = await createLink(formID, { name: "Named", prefill: { email: "a@b.co", utmSource: "x" } });
      const res = await put(link.linkID, {});
      expect(res.status, res.text).toBe(200);
      expect(res.body.prefill).toEqual({});
      expect(res.body.name).toMatch(/^API link - /);
      expect(res.body.name.length).toBeLessThanOrEqual(200);
      const got = await getLink(formID, link.linkID);
      expect(got.prefill).toEqual({});
      expect(got.name).toMatch(/^API link - /);
    });

    it("keeps active false and createdAt through a replace", async () => {
      const link = await createLink(formID, { name: "Paused" });
      await t.request("POST", `/v1/forms/${formID}/links/${link.linkID}/deactivate`);
      const res = await put(link.linkID, { name: "Still paused", prefill: { lastName: "Lee" } });
      expect(res.status).toBe(200);
      expect(res.body.active).toBe(false);
      expect(res.body.createdAt).toBe(link.createdAt);
      const got = await getLink(formID, link.linkID);
      expect(got.active).toBe(false);
      expect(got.createdAt).toBe(link.createdAt);
    });

    it("resets an omitted destination to the form's hosted page and clears overlayPath", async () => {
      const org = await t.newOrg();
      await setBaseUrls(["https://site.example.org"], org.key);
      const id = await createForm(validForms.standard(), org.key);
      const link = await createLink(id, { destinationType: "OVERLAY_DONATE", overlayPath: "/give" }, org.key);
      const res = await t.request<Link>("PUT", `/v1/forms/${id}/links/${link.linkID}`, {
        body: {},
        key: org.key,
      });
      expect(res.status).toBe(200);
      expect(res.body.destinationType).toBe("HOSTED_PAGE_DONATE");
      expect(res.body.overlayPath).toBe("");
      expect(res.body.url).toBe(`${BASE}/donate/${id}?elementid=${link.linkID}`);
    });

    it("resets an omitted destination on an event form's link to HOSTED_PAGE_ATTEND", async () => {
      const id = await createForm(validForms.event());
      const link = await createLink(id, { prefill: { ticket: "Adult" } });
      const res = await put(link.linkID, { name: "Renamed" }, id);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({
        name: "Renamed",
        prefill: {},
        destinationType: "HOSTED_PAGE_ATTEND",
        url: `${BASE}/attend/${id}?elementid=${link.linkID}`,
      });
    });

    it("switches a hosted link to an overlay destination and rebuilds the URL", async () => {
      const org = await t.newOrg();
      await setBaseUrls(["https://site.example.org"], org.key);
      const id = await createForm(validForms.event(), org.key);
      const link = await createLink(id, {}, org.key);
      const res = await t.request<Link>("PUT", `/v1/forms/${id}/links/${link.linkID}`, {
        body: { destinationType: "OVERLAY_ATTEND", overlayPath: "/gala" },
        key: org.key,
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.url).toBe(`https://site.example.org/gala?attend&formid=${id}&elementid=${link.linkID}`);
    });

    it("refuses a destination that does not fit the form type and leaves the link unchanged", async () => {
      const link = await createLink(formID, { name: "Keep", prefill: { amount: 30 } });
      const res = await put(link.linkID, { name: "Changed", destinationType: "HOSTED_PAGE_ATTEND" });
      expect(res.status).toBe(400);
      expect(res.body.details?.some((d) => d.startsWith("destinationType"))).toBe(true);
      expect(await getLink(formID, link.linkID)).toEqual(link);
    });

    it("applies the same prefill validation and leaves the link unchanged on refusal", async () => {
      const link = await createLink(formID, { name: "Keep", prefill: { fund: "General" } });
      const res = await put(link.linkID, { prefill: { fund: "general", amount: 0, bogus: 1 } });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("Validation failed");
      expect(res.body.details?.some((d) => d.startsWith("prefill.fund"))).toBe(true);
      expect(res.body.details?.some((d) => d.startsWith("prefill.amount"))).toBe(true);
      expect(res.body.details?.some((d) => d.startsWith("prefill.bogus") && d.includes("utmContent"))).toBe(
        true,
      );
      expect(await getLink(formID, link.linkID)).toEqual(link);
    });

    it("lists the body's own problems and the prefill problems together on replace, changing nothing", async () => {
      const link = await createLink(formID, { name: "Keep", prefill: { fund: "General" } });
      const alone = await put(link.linkID, { prefill: { bogus: 1 } });
      expect(alone.status).toBe(400);
      const prefillDetail = alone.body.details?.[0] ?? "";
      expect(prefillDetail).toMatch(/^prefill\.bogus /);
      const res = await put(link.linkID, { name: 5, colour: "red", prefill: { bogus: 1, fund: "general" } });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("Validation failed");
      expect(res.body.details).toEqual([
        "name must be a string, not a number",
        "colour is not a recognised field",
        prefillDetail,
        "prefill.fund must be one of the form's funds: General",
      ]);
      expect(await getLink(formID, link.linkID)).toEqual(link);
    });

    it("takes back a body copied from a GET of the link, keeping everything but updatedAt", async () => {
      const org = await t.newOrg();
      await setBaseUrls(["https://site.example.org"], org.key);
      const id = await createForm(
        {
          ...validForms.standard(),
          funds: ["General", "Roof"],
          frequencies: ["ONE_TIME", "MONTHLY"],
          customInputs: [
            { id: "shirt", title: "Shirt size", inputType: "single_select", options: ["S", "M"] },
          ],
        },
        org.key,
      );
      const created = await createLink(
        id,
        {
          name: "Round trip",
          destinationType: "OVERLAY_DONATE",
          overlayPath: "/give",
          prefill: {
            email: "a@b.co",
            amount: 12.5,
            fund: "Roof",
            frequency: "MONTHLY",
            customInputs: { "Shirt size": "M" },
          },
        },
        org.key,
      );
      await t.request("POST", `/v1/forms/${id}/links/${created.linkID}/deactivate`, { key: org.key });
      const read = await t.request<Link>("GET", `/v1/forms/${id}/links/${created.linkID}`, { key: org.key });
      expect(read.body.active).toBe(false);
      const res = await t.request<Link>("PUT", `/v1/forms/${id}/links/${created.linkID}`, {
        body: read.body,
        key: org.key,
      });
      expect(res.status, res.text).toBe(200);
      const { updatedAt: _before, ...same } = read.body;
      expect(res.body).toMatchObject(same);
      expect(res.body.active).toBe(false);
      const again = await t.request<Link>("GET", `/v1/forms/${id}/links/${created.linkID}`, { key: org.key });
      expect(again.body).toEqual(res.body);
    });

    it("ignores changed read-only fields on replace: id, form, URLs, active and createdAt stay", async () => {
      const link = await createLink(formID, { name: "Before" });
      const res = await put(link.linkID, {
        ...link,
        name: "After",
        linkID: UNKNOWN_UUID,
        formID: UNKNOWN_UUID,
        url: "https://evil.example/x",
        checkoutUrl: "https://evil.example/y",
        active: false,
        createdAt: "2000-01-01T00:00:00Z",
        updatedAt: "2000-01-01T00:00:00Z",
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({
        linkID: link.linkID,
        formID,
        name: "After",
        url: link.url,
        checkoutUrl: link.url,
        active: true,
        createdAt: link.createdAt,
      });
      expect(res.body.updatedAt).not.toBe("2000-01-01T00:00:00Z");
      expect(await getLink(formID, link.linkID)).toEqual(res.body);
    });

    it("still refuses any other unknown field in a body copied from a GET, changing nothing", async () => {
      const link = await createLink(formID, { name: "Strict" });
      const res = await put(link.linkID, { ...link, name: "Changed", slug: "x" });
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual(["slug is not a recognised field"]);
      expect(await getLink(formID, link.linkID)).toEqual(link);
    });

    it("documents the ignored read-only fields in the OpenAPI description of PUT", async () => {
      const res = await t.request<{ paths: Record<string, Record<string, { description?: string }>> }>(
        "GET",
        "/v1/openapi.json",
        { key: null },
      );
      const description = res.body.paths["/v1/forms/{formID}/links/{linkID}"].put.description ?? "";
      for (const field of ["linkID", "formID", "url", "checkoutUrl", "active", "createdAt", "updatedAt"])
        expect(description).toContain(`\`${field}\``);
      expect(description).toContain("ignored");
      expect(description).toContain("Full-record");
    });

    it("refuses a 201-character name on replace", async () => {
      const link = await createLink(formID);
      const res = await put(link.linkID, { name: "n".repeat(201) });
      expect(res.status).toBe(400);
    });

    it("answers 404 Link not found for an unknown link", async () => {
      const res = await put(UNKNOWN_UUID, {});
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Link not found" });
    });
  });

  describe("activate and deactivate", () => {
    it("deactivate answers 200 {linkID, formID, active:false}, twice the same, and GET shows it", async () => {
      const formID = await createForm(validForms.standard());
      const link = await createLink(formID);
      for (let i = 0; i < 2; i++) {
        const res = await t.request<Json>("POST", `/v1/forms/${formID}/links/${link.linkID}/deactivate`);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ linkID: link.linkID, formID, active: false });
      }
      expect((await getLink(formID, link.linkID)).active).toBe(false);
    });

    it("activate answers 200 {linkID, formID, active:true}, twice the same, and GET shows it", async () => {
      const formID = await createForm(validForms.standard());
      const link = await createLink(formID);
      await t.request("POST", `/v1/forms/${formID}/links/${link.linkID}/deactivate`);
      for (let i = 0; i < 2; i++) {
        const res = await t.request<Json>("POST", `/v1/forms/${formID}/links/${link.linkID}/activate`);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ linkID: link.linkID, formID, active: true });
      }
      expect((await getLink(formID, link.linkID)).active).toBe(true);
    });

    it("activating an already active link keeps it active", async () => {
      const formID = await createForm(validForms.standard());
      const link = await createLink(formID);
      const res = await t.request<Json>("POST", `/v1/forms/${formID}/links/${link.linkID}/activate`);
      expect(res.body).toEqual({ linkID: link.linkID, formID, active: true });
    });

    it("does not change name, prefill or createdAt", async () => {
      const formID = await createForm(validForms.standard());
      const link = await createLink(formID, { name: "Stable", prefill: { email: "x@y.co" } });
      await t.request("POST", `/v1/forms/${formID}/links/${link.linkID}/deactivate`);
      const got = await getLink(formID, link.linkID);
      expect(got).toMatchObject({ name: "Stable", prefill: { email: "x@y.co" }, createdAt: link.createdAt });
    });

    it("answers 404 Link not found for an unknown link", async () => {
      const formID = await createForm(validForms.standard());
      for (const action of ["activate", "deactivate"]) {
        const res = await t.request<ErrorBody>("POST", `/v1/forms/${formID}/links/${UNKNOWN_UUID}/${action}`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: "Link not found" });
      }
    });
  });

  describe("DELETE /v1/forms/{formID}/links/{linkID}", () => {
    it("answers 204 with an empty body, removes the row, then GET answers 404 Link not found", async () => {
      const formID = await createForm(validForms.standard());
      const keep = await createLink(formID);
      const link = await createLink(formID);
      const res = await t.request("DELETE", `/v1/forms/${formID}/links/${link.linkID}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe("");
      const got = await t.request<ErrorBody>("GET", `/v1/forms/${formID}/links/${link.linkID}`);
      expect(got.status).toBe(404);
      expect(got.body).toEqual({ error: "Link not found" });
      const row = await t.store.db
        .selectFrom("checkout_links")
        .select("id")
        .where("id", "=", link.linkID)
        .executeTakeFirst();
      expect(row).toBeUndefined();
      expect((await listAll(formID)).map((l) => l.linkID)).toEqual([keep.linkID]);
    });

    it("answers 404 Link not found to a second delete and to activate/PUT of the deleted link", async () => {
      const formID = await createForm(validForms.standard());
      const link = await createLink(formID);
      expect((await t.request("DELETE", `/v1/forms/${formID}/links/${link.linkID}`)).status).toBe(204);
      for (const [method, suffix, body] of [
        ["DELETE", "", undefined],
        ["PUT", "", {}],
        ["POST", "/activate", undefined],
      ] as const) {
        const res = await t.request<ErrorBody>(method, `/v1/forms/${formID}/links/${link.linkID}${suffix}`, {
          body,
        });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: "Link not found" });
      }
    });
  });

  describe("the parent form's lifecycle", () => {
    it("deactivating the form (PUT active:false) leaves its links active", async () => {
      const formID = await createForm(validForms.standard());
      const a = await createLink(formID);
      const b = await createLink(formID);
      const res = await t.request("PUT", `/v1/forms/${formID}`, { body: { active: false } });
      expect(res.status, res.text).toBe(200);
      expect((await getLink(formID, a.linkID)).active).toBe(true);
      expect((await getLink(formID, b.linkID)).active).toBe(true);
      expect((await listAll(formID, "&active=true")).length).toBe(2);
    });

    it("updating or reactivating the form leaves a deactivated link inactive and an active one active", async () => {
      const formID = await createForm(validForms.standard());
      const on = await createLink(formID);
      const off = await createLink(formID);
      await t.request("POST", `/v1/forms/${formID}/links/${off.linkID}/deactivate`);
      for (const body of [{ description: "New text" }, { active: false }, { active: true }]) {
        const res = await t.request("PUT", `/v1/forms/${formID}`, { body });
        expect(res.status, res.text).toBe(200);
        expect((await getLink(formID, on.linkID)).active).toBe(true);
        expect((await getLink(formID, off.linkID)).active).toBe(false);
      }
    });

    it("links can still be created on a deactivated form", async () => {
      const formID = await createForm({ ...validForms.standard(), active: false });
      const link = await createLink(formID);
      expect(link.active).toBe(true);
    });

    it("after the form is deleted every link endpoint answers 410", async () => {
      const formID = await createForm(validForms.standard());
      const link = await createLink(formID);
      expect((await t.request("DELETE", `/v1/forms/${formID}`)).status).toBe(200);
      const calls: [string, string, Json | undefined][] = [
        ["POST", "", {}],
        ["GET", "", undefined],
        ["GET", `/${link.linkID}`, undefined],
        ["PUT", `/${link.linkID}`, {}],
        ["POST", `/${link.linkID}/activate`, undefined],
        ["POST", `/${link.linkID}/deactivate`, undefined],
        ["DELETE", `/${link.linkID}`, undefined],
      ];
      for (const [method, suffix, body] of calls) {
        const res = await t.request<ErrorBody>(method, `/v1/forms/${formID}/links${suffix}`, { body });
        expect(res.status, `${method} ${suffix}`).toBe(410);
        expect(typeof res.body.error).toBe("string");
      }
      // The row is preserved (the link was not deleted by the 410'd DELETE).
      expect(await linkCount(formID)).toBe(1);
    });
  });

  describe("permissions and tenancy", () => {
    let formID: string;
    let link: Link;
    let readOnlyKey: string;
    beforeAll(async () => {
      formID = await createForm(validForms.standard());
      link = await createLink(formID, { name: "Guarded", prefill: { email: "g@x.co" } });
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
    });

    it("a forms:read key can list and get links", async () => {
      const list = await t.request<LinkList>("GET", `/v1/forms/${formID}/links`, { key: readOnlyKey });
      expect(list.status).toBe(200);
      expect(list.body.links.map((l) => l.linkID)).toContain(link.linkID);
      const one = await t.request<Link>("GET", `/v1/forms/${formID}/links/${link.linkID}`, {
        key: readOnlyKey,
      });
      expect(one.status).toBe(200);
      expect(one.body).toEqual(link);
    });

    it("a forms:read key gets 403 Missing permission: forms:write on POST, PUT, DELETE, activate and deactivate, changing nothing", async () => {
      const calls: [string, string, Json | undefined][] = [
        ["POST", "", {}],
        ["PUT", `/${link.linkID}`, { name: "Hijack" }],
        ["DELETE", `/${link.linkID}`, undefined],
        ["POST", `/${link.linkID}/activate`, undefined],
        ["POST", `/${link.linkID}/deactivate`, undefined],
      ];
      const before = await linkCount(formID);
      for (const [method, suffix, body] of calls) {
        const res = await t.request<ErrorBody>(method, `/v1/forms/${formID}/links${suffix}`, {
          body,
          key: readOnlyKey,
        });
        expect(res.status, `${method} ${suffix}`).toBe(403);
        expect(res.body).toEqual({ error: "Missing permission: forms:write" });
      }
      expect(await linkCount(formID)).toBe(before);
      expect(await getLink(formID, link.linkID)).toEqual(link);
    });

    it("a key lacking forms:read gets 403 on list and get", async () => {
      const key = (
        await createApiKey(
          t.store.db,
          {
            organizationId: t.org.id,
            sandbox: false,
            permissions: ["contacts:read"],
          },
          Date.now(),
        )
      ).key;
      const list = await t.request<ErrorBody>("GET", `/v1/forms/${formID}/links`, { key });
      expect(list.status).toBe(403);
      expect(list.body).toEqual({ error: "Missing permission: forms:read" });
      const one = await t.request<ErrorBody>("GET", `/v1/forms/${formID}/links/${link.linkID}`, { key });
      expect(one.status).toBe(403);
    });

    it("another organization's key gets 403 on every link endpoint of this organization's form, changing nothing", async () => {
      const other = await t.newOrg({ name: "Intruder" });
      const calls: [string, string, Json | undefined][] = [
        ["POST", "", {}],
        ["GET", "", undefined],
        ["GET", `/${link.linkID}`, undefined],
        ["PUT", `/${link.linkID}`, { name: "Hijack" }],
        ["POST", `/${link.linkID}/activate`, undefined],
        ["POST", `/${link.linkID}/deactivate`, undefined],
        ["DELETE", `/${link.linkID}`, undefined],
      ];
      const before = await linkCount(formID);
      for (const [method, suffix, body] of calls) {
        const res = await t.request<ErrorBody>(method, `/v1/forms/${formID}/links${suffix}`, {
          body,
          key: other.key,
        });
        expect(res.status, `${method} ${suffix}`).toBe(403);
        expect(JSON.stringify(res.body)).not.toContain("g@x.co");
      }
      expect(await linkCount(formID)).toBe(before);
      expect(await getLink(formID, link.linkID)).toEqual(link);
    });

    it("answers 401 without a key", async () => {
      const res = await t.request("GET", `/v1/forms/${formID}/links`, { key: null });
      expect(res.status).toBe(401);
    });
  });
});

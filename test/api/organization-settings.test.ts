import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../server/store/keys.js";
import { siteOrigins } from "../../server/store/organizations.js";
import { dialect, setupTestApp, type TestApp, type TestOrg } from "../support/testApp.js";

/**
 * GET and PUT /v1/organization: name, base URLs for overlay links, and organization-wide custom inputs.
 */

interface ErrorBody {
  error: string;
  details?: string[];
}

interface GlobalInput {
  id: string;
  title: string;
  inputType: string;
  required: boolean;
  options: string[];
}

interface OrgBody {
  organizationName: string;
  organizationBaseURLs: string[];
  globalCustomInputs: GlobalInput[];
}

describe(`organization settings (${dialect})`, () => {
  /** What GET /v1/organization says of an organization on the instance's sandbox. */
  const SANDBOX_PROCESSOR = {
    name: "sandbox",
    mode: "test",
    accountId: null,
    accountName: null,
    publishableKey: null,
    currency: "USD",
    walletDomains: [],
  };

  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp({ env: { RATE_LIMIT_PER_HOUR: "1000000" } });
  });
  afterAll(() => t.close());

  /** Each test gets an organization of its own so their settings never mix. */
  async function freshOrg(name = "Settings Org"): Promise<TestOrg> {
    return t.newOrg({ name });
  }

  async function get(org: TestOrg): Promise<OrgBody> {
    const res = await t.request<OrgBody>("GET", "/v1/organization", { key: org.key });
    expect(res.status, res.text).toBe(200);
    return res.body;
  }

  async function put(org: TestOrg, body: unknown) {
    return t.request<OrgBody & ErrorBody>("PUT", "/v1/organization", { key: org.key, body });
  }

  async function putOk(org: TestOrg, body: unknown): Promise<OrgBody> {
    const res = await put(org, body);
    expect(res.status, res.text).toBe(200);
    return res.body;
  }

  async function refuse(org: TestOrg, body: unknown): Promise<string[]> {
    const res = await put(org, body);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toBe("Validation failed");
    expect(Array.isArray(res.body.details)).toBe(true);
    return res.body.details ?? [];
  }

  it("GET returns the name, no base URLs and no global inputs for a new organization", async () => {
    const org = await freshOrg("Brand New");
    expect(await get(org)).toEqual({
      organizationName: "Brand New",
      organizationBaseURLs: [],
      globalCustomInputs: [],
      country: "US",
      currency: "USD",
      language: "en",
      legalName: null,
      legalAddress: null,
      taxId: null,
      timeZone: "UTC",
      requireTwoFactor: false,
      logoUrl: null,
      brandColor: null,
      receiptReplyTo: null,
      receiptSubject: null,
      receiptMessage: null,
      paymentProcessor: SANDBOX_PROCESSOR,
    });
  });

  describe("organizationName", () => {
    it("changes the name, returns the new configuration, and GET reflects it", async () => {
      const org = await freshOrg("Old Name");
      const body = await putOk(org, { organizationName: "New Name" });
      expect(body).toEqual({
        organizationName: "New Name",
        organizationBaseURLs: [],
        globalCustomInputs: [],
        country: "US",
        currency: "USD",
        language: "en",
        legalName: null,
        legalAddress: null,
        taxId: null,
        timeZone: "UTC",
        requireTwoFactor: false,
        logoUrl: null,
        brandColor: null,
        receiptReplyTo: null,
        receiptSubject: null,
        receiptMessage: null,
        paymentProcessor: SANDBOX_PROCESSOR,
      });
      expect((await get(org)).organizationName).toBe("New Name");
    });

    it("changes only the fields sent", async () => {
      const org = await freshOrg("Keep Me");
      await putOk(org, { organizationBaseURLs: ["https://a.example.org"] });
      await putOk(org, { organizationName: "Renamed" });
      expect(await get(org)).toMatchObject({
        organizationName: "Renamed",
        organizationBaseURLs: ["https://a.example.org"],
      });
      await putOk(org, { organizationBaseURLs: ["https://b.example.org"] });
      expect((await get(org)).organizationName).toBe("Renamed");
    });

    it("refuses an empty or non-string name", async () => {
      const org = await freshOrg();
      for (const organizationName of ["", 42, null]) {
        const details = await refuse(org, { organizationName });
        expect(details.some((d) => d.startsWith("organizationName"))).toBe(true);
      }
      expect((await get(org)).organizationName).toBe("Settings Org");
    });

    it("refuses a name holding a line break or tab (it heads receipts, pages and the CLI's listing)", async () => {
      const org = await freshOrg();
      for (const organizationName of ["Acme\nFood Bank", "Acme\r\nFood Bank", "Acme\tFood"]) {
        const details = await refuse(org, { organizationName });
        expect(details).toContainEqual(expect.stringMatching(/^organizationName.*single line/));
      }
      expect((await get(org)).organizationName).toBe("Settings Org");
    });

    it("does not change another organization", async () => {
      const a = await freshOrg("Org A");
      const b = await freshOrg("Org B");
      await putOk(a, { organizationName: "Org A renamed", organizationBaseURLs: ["https://a.example.org"] });
      expect(await get(b)).toEqual({
        organizationName: "Org B",
        organizationBaseURLs: [],
        globalCustomInputs: [],
        country: "US",
        currency: "USD",
        language: "en",
        legalName: null,
        legalAddress: null,
        taxId: null,
        timeZone: "UTC",
        requireTwoFactor: false,
        logoUrl: null,
        brandColor: null,
        receiptReplyTo: null,
        receiptSubject: null,
        receiptMessage: null,
        paymentProcessor: SANDBOX_PROCESSOR,
      });
    });
  });

  describe("organizationBaseURLs", () => {
    it("stores absolute http and https URLs in order", async () => {
      const org = await freshOrg();
      const body = await putOk(org, {
        organizationBaseURLs: [
          "https://www.example.org",
          "http://localhost:8080",
          "https://example.org/charity",
        ],
      });
      expect(body.organizationBaseURLs).toEqual([
        "https://www.example.org",
        "http://localhost:8080",
        "https://example.org/charity",
      ]);
      expect((await get(org)).organizationBaseURLs).toEqual(body.organizationBaseURLs);
    });

    it("trims a trailing slash", async () => {
      const org = await freshOrg();
      const body = await putOk(org, {
        organizationBaseURLs: ["https://www.example.org/", "https://example.org/charity/"],
      });
      expect(body.organizationBaseURLs).toEqual(["https://www.example.org", "https://example.org/charity"]);
      expect((await get(org)).organizationBaseURLs).toEqual(body.organizationBaseURLs);
    });

    it("replaces the list, and an empty list clears it", async () => {
      const org = await freshOrg();
      await putOk(org, { organizationBaseURLs: ["https://a.example.org", "https://b.example.org"] });
      await putOk(org, { organizationBaseURLs: ["https://c.example.org"] });
      expect((await get(org)).organizationBaseURLs).toEqual(["https://c.example.org"]);
      await putOk(org, { organizationBaseURLs: [] });
      expect((await get(org)).organizationBaseURLs).toEqual([]);
    });

    it.each([
      ["an ftp URL", "ftp://x"],
      ["text that is not a URL", "not a url"],
      ["a URL with a query", "https://a.org/?x=1"],
      ["a URL with a fragment", "https://a.org/#top"],
      ["a relative path", "/give"],
      ["a javascript: URL", "javascript:alert(1)"],
    ])("refuses %s with a detail naming organizationBaseURLs", async (_label, url) => {
      const org = await freshOrg();
      await putOk(org, { organizationBaseURLs: ["https://kept.example.org"] });
      const details = await refuse(org, { organizationBaseURLs: ["https://ok.example.org", url] });
      expect(details.some((d) => d.startsWith("organizationBaseURLs"))).toBe(true);
      expect((await get(org)).organizationBaseURLs).toEqual(["https://kept.example.org"]);
    });

    it.each([
      ["a CSP directive after the host", "https://a.example.org;script-src"],
      ["a CSP source expression in the host", "https://a.example.org'unsafe-inline'"],
      ["a wildcard host", "https://*.example.org"],
      ["a host with a comma", "https://a.example.org,b.example.org"],
      ["credentials", "https://user:pw@a.example.org"],
      ["an IDN not in punycode", "https://bücher.example"],
      ["a label starting with a hyphen", "https://-a.example.org"],
      ["an empty label", "https://a..example.org"],
      ["a backslash after the host", "https://a.example.org\\give"],
    ])("refuses %s: a base URL's host must be a real host name", async (_label, url) => {
      const org = await freshOrg();
      const details = await refuse(org, { organizationBaseURLs: [url] });
      expect(details).toEqual([
        "organizationBaseURLs[0] must name its host by letters, digits, hyphens and dots (IDNs in punycode) or an IPv4 address, with an optional port and nothing else",
      ]);
    });

    it("refuses an IPv6 address, which CSP frame-ancestors cannot name (the overlay would open a blank modal)", async () => {
      const org = await freshOrg();
      const details = await refuse(org, { organizationBaseURLs: ["http://[::1]:8080/give"] });
      expect(details).toEqual([
        "organizationBaseURLs[0] must name its host by a name or an IPv4 address: browsers cannot allow an IPv6 address to frame the checkout (CSP frame-ancestors)",
      ]);
      // One stored before the rule names no site: no frame-ancestors source, no overlay.
      expect(siteOrigins({ baseUrls: ["http://[::1]:8080", "http://127.0.0.1:8080"] })).toEqual([
        "http://127.0.0.1:8080",
      ]);
    });

    it("takes host names with ports, IDNs in punycode and IPv4 addresses", async () => {
      const org = await freshOrg();
      const urls = [
        "https://xn--bcher-kva.example",
        "http://127.0.0.1:3000/give",
        "https://Give.Example.org:8443",
      ];
      expect((await putOk(org, { organizationBaseURLs: urls })).organizationBaseURLs).toEqual(urls);
    });

    it("names as sites only the stored URLs with a real host name", () => {
      expect(
        siteOrigins({
          baseUrls: [
            "https://a.example.org/give",
            "https://b.example.org;script-src",
            "https://*.example.org",
          ],
        }),
      ).toEqual(["https://a.example.org"]);
    });

    it("lists every bad URL at once", async () => {
      const org = await freshOrg();
      const details = await refuse(org, {
        organizationBaseURLs: ["ftp://x", "not a url", "https://a.org/?x=1"],
      });
      expect(details).toEqual([
        "organizationBaseURLs[0] must be an absolute http(s) URL",
        "organizationBaseURLs[1] must be an absolute http(s) URL",
        "organizationBaseURLs[2] must not have a query or fragment",
      ]);
    });

    it("refuses a string where the list belongs", async () => {
      const org = await freshOrg();
      const details = await refuse(org, { organizationBaseURLs: "https://a.example.org" });
      expect(details.some((d) => d.startsWith("organizationBaseURLs"))).toBe(true);
    });

    it("makes the first URL the base of overlay links", async () => {
      const org = await freshOrg();
      await putOk(org, {
        organizationBaseURLs: ["https://first.example.org/", "https://second.example.org"],
      });
      const form = await t.request<{ formID: string }>("POST", "/v1/forms", {
        key: org.key,
        body: { title: "Overlay form", funds: ["General"] },
      });
      expect(form.status).toBe(201);
      const link = await t.request<{ linkID: string; url: string }>(
        "POST",
        `/v1/forms/${form.body.formID}/links`,
        { key: org.key, body: { destinationType: "OVERLAY_DONATE", overlayPath: "/give" } },
      );
      expect(link.status, link.text).toBe(201);
      expect(link.body.url).toBe(
        `https://first.example.org/give?donate&formid=${form.body.formID}&elementid=${link.body.linkID}`,
      );
    });
  });

  describe("globalCustomInputs", () => {
    it("stores inputs with generated ids, defaults for required and options, and GET reflects them", async () => {
      const org = await freshOrg();
      const body = await putOk(org, {
        globalCustomInputs: [
          { title: "Employer", inputType: "SHORT_TEXT_INPUT" },
          { title: "Why you give", inputType: "LONG_TEXT_INPUT", required: true },
          { title: "Region", inputType: "SINGLE_SELECTION_DROPDOWN", options: ["North", "South"] },
          {
            title: "Interests",
            inputType: "MULTI_SELECTION_DROPDOWN",
            options: ["Arts", "Science", "Sport"],
          },
        ],
      });
      expect(body.globalCustomInputs).toHaveLength(4);
      expect(body.globalCustomInputs.map(({ id: _id, ...rest }) => rest)).toEqual([
        { title: "Employer", inputType: "SHORT_TEXT_INPUT", required: false, options: [] },
        { title: "Why you give", inputType: "LONG_TEXT_INPUT", required: true, options: [] },
        {
          title: "Region",
          inputType: "SINGLE_SELECTION_DROPDOWN",
          required: false,
          options: ["North", "South"],
        },
        {
          title: "Interests",
          inputType: "MULTI_SELECTION_DROPDOWN",
          required: false,
          options: ["Arts", "Science", "Sport"],
        },
      ]);
      const ids = body.globalCustomInputs.map((g) => g.id);
      for (const id of ids) expect(id).toMatch(/^\S+$/);
      expect(new Set(ids).size).toBe(4);
      expect((await get(org)).globalCustomInputs).toEqual(body.globalCustomInputs);
    });

    it("keeps the generated ids stable across a re-PUT of the same titles", async () => {
      const org = await freshOrg();
      const inputs = [
        { title: "Employer", inputType: "SHORT_TEXT_INPUT" },
        { title: "Region", inputType: "SINGLE_SELECTION_DROPDOWN", options: ["North", "South"] },
      ];
      const first = await putOk(org, { globalCustomInputs: inputs });
      const second = await putOk(org, { globalCustomInputs: [...inputs].reverse() });
      const idOf = (b: OrgBody, title: string) => b.globalCustomInputs.find((g) => g.title === title)?.id;
      expect(idOf(second, "Employer")).toBe(idOf(first, "Employer"));
      expect(idOf(second, "Region")).toBe(idOf(first, "Region"));
      expect(idOf(first, "Employer")).toBeDefined();
      // A new title next to old ones gets a fresh id, the old ones keep theirs.
      const third = await putOk(org, {
        globalCustomInputs: [...inputs, { title: "Team", inputType: "SHORT_TEXT_INPUT" }],
      });
      expect(idOf(third, "Employer")).toBe(idOf(first, "Employer"));
      const teamId = idOf(third, "Team");
      expect(teamId).toBeDefined();
      expect([idOf(first, "Employer"), idOf(first, "Region")]).not.toContain(teamId);
    });

    it("keeps given ids", async () => {
      const org = await freshOrg();
      const body = await putOk(org, {
        globalCustomInputs: [
          { id: "employer_name", title: "Employer", inputType: "SHORT_TEXT_INPUT" },
          { id: "region-1", title: "Region", inputType: "SINGLE_SELECTION_DROPDOWN", options: ["N", "S"] },
        ],
      });
      expect(body.globalCustomInputs.map((g) => g.id)).toEqual(["employer_name", "region-1"]);
      expect((await get(org)).globalCustomInputs.map((g) => g.id)).toEqual(["employer_name", "region-1"]);
    });

    it("a given id wins over the id of an existing input with the same title", async () => {
      const org = await freshOrg();
      const first = await putOk(org, {
        globalCustomInputs: [{ title: "Employer", inputType: "SHORT_TEXT_INPUT" }],
      });
      const second = await putOk(org, {
        globalCustomInputs: [{ id: "emp", title: "Employer", inputType: "SHORT_TEXT_INPUT" }],
      });
      expect(second.globalCustomInputs[0].id).toBe("emp");
      expect(first.globalCustomInputs[0].id).not.toBe("emp");
    });

    it("never gives two global inputs the same id, even when a given id is the one an old title had", async () => {
      const org = await freshOrg();
      const first = await putOk(org, { globalCustomInputs: [{ title: "A", inputType: "SHORT_TEXT_INPUT" }] });
      const oldId = first.globalCustomInputs[0].id;
      // Rename A to B keeping its id, and add a new input titled A: the new A must not inherit B's id.
      const res = await put(org, {
        globalCustomInputs: [
          { id: oldId, title: "B", inputType: "SHORT_TEXT_INPUT" },
          { title: "A", inputType: "SHORT_TEXT_INPUT" },
        ],
      });
      if (res.status === 200) {
        const ids = res.body.globalCustomInputs.map((g) => g.id);
        expect(ids[0]).toBe(oldId);
        expect(new Set(ids).size, JSON.stringify(res.body.globalCustomInputs)).toBe(2);
        const stored = (await get(org)).globalCustomInputs.map((g) => g.id);
        expect(new Set(stored).size).toBe(2);
      } else {
        // Refusing the ambiguous body is also acceptable, as long as it is a 400 with details.
        expect(res.status, res.text).toBe(400);
        expect(res.body.details?.length).toBeGreaterThan(0);
      }
    });

    it("replaces the list, and an empty list clears it", async () => {
      const org = await freshOrg();
      await putOk(org, {
        globalCustomInputs: [
          { title: "A", inputType: "SHORT_TEXT_INPUT" },
          { title: "B", inputType: "SHORT_TEXT_INPUT" },
        ],
      });
      await putOk(org, { globalCustomInputs: [{ title: "B", inputType: "SHORT_TEXT_INPUT" }] });
      expect((await get(org)).globalCustomInputs.map((g) => g.title)).toEqual(["B"]);
      await putOk(org, { globalCustomInputs: [] });
      expect((await get(org)).globalCustomInputs).toEqual([]);
    });

    it("refuses a single-selection dropdown with 1 option", async () => {
      const org = await freshOrg();
      const details = await refuse(org, {
        globalCustomInputs: [{ title: "Region", inputType: "SINGLE_SELECTION_DROPDOWN", options: ["North"] }],
      });
      expect(details.some((d) => d.startsWith("globalCustomInputs") && d.includes("2 options"))).toBe(true);
      expect((await get(org)).globalCustomInputs).toEqual([]);
    });

    it("refuses a multi-selection dropdown without options", async () => {
      const org = await freshOrg();
      const details = await refuse(org, {
        globalCustomInputs: [{ title: "Interests", inputType: "MULTI_SELECTION_DROPDOWN" }],
      });
      expect(details.some((d) => d.startsWith("globalCustomInputs") && d.includes("options"))).toBe(true);
    });

    it("refuses a dropdown that repeats an option, in the words a form's custom input uses", async () => {
      const org = await freshOrg();
      const form = await t.request<ErrorBody>("POST", "/v1/forms", {
        key: org.key,
        body: {
          title: "Repeats",
          funds: ["General"],
          customInputs: [{ title: "Size", inputType: "single_select", options: ["a", "a"] }],
        },
      });
      expect(form.status).toBe(400);
      expect(form.body.details).toContain("customInputs[0].options must not repeat an option");
      for (const inputType of ["SINGLE_SELECTION_DROPDOWN", "MULTI_SELECTION_DROPDOWN"]) {
        const details = await refuse(org, {
          globalCustomInputs: [
            { title: "Fine", inputType, options: ["x", "y"] },
            { title: "Size", inputType, options: ["a", "a"] },
            { title: "Spaced", inputType, options: ["b", " b "] },
          ],
        });
        expect(details, inputType).toEqual([
          "globalCustomInputs[1].options must not repeat an option",
          "globalCustomInputs[2].options must not repeat an option",
        ]);
      }
      expect((await get(org)).globalCustomInputs).toEqual([]);
    });

    it("lists a repeated option together with the other problems of the body", async () => {
      const org = await freshOrg();
      const details = await refuse(org, {
        organizationBaseURLs: ["ftp://x"],
        globalCustomInputs: [
          { title: "Size", inputType: "SINGLE_SELECTION_DROPDOWN", options: ["a", "a", ""] },
          { title: "Team", inputType: "SHORT_TEXT_INPUT", options: ["a"] },
        ],
      });
      expect(details).toContain("globalCustomInputs[0].options must not repeat an option");
      expect(details.some((d) => d.startsWith("globalCustomInputs[0].options[2]"))).toBe(true);
      expect(details).toContain("globalCustomInputs[1].options are only allowed on dropdown inputs");
      expect(details.some((d) => d.startsWith("organizationBaseURLs"))).toBe(true);
    });

    it("still accepts a dropdown of distinct options", async () => {
      const org = await freshOrg();
      const body = await putOk(org, {
        globalCustomInputs: [
          { title: "Size", inputType: "MULTI_SELECTION_DROPDOWN", options: ["a", "A", "b"] },
        ],
      });
      expect(body.globalCustomInputs[0].options).toEqual(["a", "A", "b"]);
    });

    it("refuses an unknown inputType, including the form-level names", async () => {
      const org = await freshOrg();
      for (const inputType of ["CHECKBOX", "short_text", ""]) {
        const details = await refuse(org, { globalCustomInputs: [{ title: "X", inputType }] });
        expect(details.some((d) => d.startsWith("globalCustomInputs") && d.includes("inputType"))).toBe(true);
      }
    });

    it("refuses an input without a title, a repeated title and a repeated id", async () => {
      const org = await freshOrg();
      const noTitle = await refuse(org, { globalCustomInputs: [{ inputType: "SHORT_TEXT_INPUT" }] });
      expect(noTitle.some((d) => d.includes("title"))).toBe(true);
      const dupTitle = await refuse(org, {
        globalCustomInputs: [
          { title: "Same", inputType: "SHORT_TEXT_INPUT" },
          { title: "Same", inputType: "LONG_TEXT_INPUT" },
        ],
      });
      expect(dupTitle.some((d) => d.includes("Same"))).toBe(true);
      const dupId = await refuse(org, {
        globalCustomInputs: [
          { id: "x", title: "One", inputType: "SHORT_TEXT_INPUT" },
          { id: "x", title: "Two", inputType: "SHORT_TEXT_INPUT" },
        ],
      });
      expect(dupId.some((d) => d.includes('"x"'))).toBe(true);
    });

    it("refuses options on a text input and an unknown field on an input", async () => {
      const org = await freshOrg();
      const details = await refuse(org, {
        globalCustomInputs: [
          { title: "Employer", inputType: "SHORT_TEXT_INPUT", options: ["a", "b"] },
          { title: "Team", inputType: "SHORT_TEXT_INPUT", placeholder: "x" },
        ],
      });
      expect(details).toContain("globalCustomInputs[0].options are only allowed on dropdown inputs");
      expect(details.some((d) => d.includes("placeholder"))).toBe(true);
    });

    it("lists every bad input at once", async () => {
      const org = await freshOrg();
      const details = await refuse(org, {
        organizationBaseURLs: ["ftp://x"],
        globalCustomInputs: [
          { title: "A", inputType: "SINGLE_SELECTION_DROPDOWN", options: ["only"] },
          { title: "B", inputType: "NOPE" },
        ],
      });
      expect(details.some((d) => d.startsWith("organizationBaseURLs"))).toBe(true);
      expect(details.some((d) => d.includes("options"))).toBe(true);
      expect(details.some((d) => d.includes("inputType"))).toBe(true);
    });
  });

  describe("the body", () => {
    it("refuses an empty body with 400 and details", async () => {
      const org = await freshOrg();
      const details = await refuse(org, {});
      expect(details).toHaveLength(1);
      for (const field of ["organizationName", "organizationBaseURLs", "globalCustomInputs"])
        expect(details[0]).toContain(field);
    });

    it("refuses unknown fields", async () => {
      const org = await freshOrg();
      const details = await refuse(org, { organizationName: "X", plan: "enterprise" });
      expect(details.some((d) => d.includes("plan"))).toBe(true);
      expect((await get(org)).organizationName).toBe("Settings Org");
    });

    it("answers 400 Invalid JSON body to a body that is not a JSON object", async () => {
      const org = await freshOrg();
      for (const rawBody of ["{nope", "[]", "null"]) {
        const res = await t.request<ErrorBody>("PUT", "/v1/organization", {
          key: org.key,
          rawBody,
          headers: { "Content-Type": "application/json" },
        });
        expect(res.status, rawBody).toBe(400);
        expect(res.body).toEqual({ error: "Invalid JSON body" });
      }
    });
  });

  describe("permissions", () => {
    it("PUT needs organization:write: 403 with organization:read only, and nothing changes", async () => {
      const org = await freshOrg("Guarded");
      const readOnly = (
        await createApiKey(
          t.store.db,
          {
            organizationId: org.id,
            sandbox: false,
            permissions: ["organization:read"],
          },
          Date.now(),
        )
      ).key;
      const res = await t.request<ErrorBody>("PUT", "/v1/organization", {
        key: readOnly,
        body: { organizationName: "Hijacked", organizationBaseURLs: ["https://evil.example"] },
      });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: "Missing permission: organization:write" });
      const got = await t.request<OrgBody>("GET", "/v1/organization", { key: readOnly });
      expect(got.status).toBe(200);
      expect(got.body).toEqual({
        organizationName: "Guarded",
        organizationBaseURLs: [],
        globalCustomInputs: [],
        country: "US",
        currency: "USD",
        language: "en",
        legalName: null,
        legalAddress: null,
        taxId: null,
        timeZone: "UTC",
        requireTwoFactor: false,
        logoUrl: null,
        brandColor: null,
        receiptReplyTo: null,
        receiptSubject: null,
        receiptMessage: null,
        paymentProcessor: SANDBOX_PROCESSOR,
      });
    });

    it("a key with organization:write only can PUT", async () => {
      const org = await freshOrg();
      const writeOnly = (
        await createApiKey(
          t.store.db,
          {
            organizationId: org.id,
            sandbox: false,
            permissions: ["organization:write"],
          },
          Date.now(),
        )
      ).key;
      const res = await t.request<OrgBody>("PUT", "/v1/organization", {
        key: writeOnly,
        body: { organizationName: "Written" },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.organizationName).toBe("Written");
      expect((await get(org)).organizationName).toBe("Written");
    });

    it("GET needs organization:read", async () => {
      const org = await freshOrg();
      const formsOnly = (
        await createApiKey(
          t.store.db,
          {
            organizationId: org.id,
            sandbox: false,
            permissions: ["forms:read"],
          },
          Date.now(),
        )
      ).key;
      const res = await t.request<ErrorBody>("GET", "/v1/organization", { key: formsOnly });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: "Missing permission: organization:read" });
      const put403 = await t.request<ErrorBody>("PUT", "/v1/organization", {
        key: formsOnly,
        body: { organizationName: "x" },
      });
      expect(put403.status).toBe(403);
    });

    it("answers 401 without a key", async () => {
      const res = await t.request<ErrorBody>("PUT", "/v1/organization", {
        key: null,
        body: { organizationName: "x" },
      });
      expect(res.status).toBe(401);
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey, revokeApiKey } from "../../server/store/keys.js";
import {
  countForms,
  dialect,
  setupTestApp,
  type TestApp,
  type TestOrg,
  validForms,
} from "../support/testApp.js";

/**
 * What every /v1 endpoint shares: authentication and permissions, request ids, routing (404, 405),
 * JSON bodies and their size limit, the per-key rate limit, Idempotency-Key, the organization
 * settings, the api-metrics log and cursor pagination.
 */

type Json = Record<string, unknown>;

interface ErrorBody {
  error: string;
  details?: string[];
}

interface FormListBody {
  forms: Json[];
  count: number;
  hasMore: boolean;
  lastEvaluatedKey?: string;
}

interface Metric {
  metricId: string;
  endpoint: string;
  method: string;
  statusCode: number;
  responseTime: number;
  timestamp: number;
}

interface MetricListBody {
  metrics: Metric[];
  count: number;
  hasMore: boolean;
  lastEvaluatedKey?: string;
}

interface GlobalInput {
  id: string;
  title: string;
  inputType: string;
  required: boolean;
  options: string[];
}

interface OrganizationBody {
  organizationName: string;
  organizationBaseURLs: string[];
  globalCustomInputs: GlobalInput[];
}

const UNKNOWN_UUID = "7d3b2a6e-5c1f-4e8a-9b0d-2f4e6a8c0b1d";
const WELL_FORMED_UNKNOWN_KEY = `cs_live_${"Zq8".repeat(10)}Ab`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function allowed(headers: Headers): string[] {
  return (headers.get("Allow") ?? "")
    .split(",")
    .map((m) => m.trim().toUpperCase())
    .filter(Boolean);
}

function expectErrorBody(body: unknown): asserts body is ErrorBody {
  expect(body).toBeTypeOf("object");
  expect((body as ErrorBody).error).toBeTypeOf("string");
  expect((body as ErrorBody).error.length).toBeGreaterThan(0);
}

describe(`platform (${dialect})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp();
  });
  afterAll(() => t.close());

  async function createForm(key: string, body: Json = validForms.standard()): Promise<string> {
    const res = await t.request<{ formID: string }>("POST", "/v1/forms", { body, key });
    expect(res.status, res.text).toBe(201);
    return res.body.formID;
  }

  describe("authentication", () => {
    it("answers 401 with a JSON error when the Authorization header is missing", async () => {
      const res = await t.request("GET", "/v1/forms", { key: null });
      expect(res.status).toBe(401);
      expectErrorBody(res.body);
    });

    it.each([
      ["a Basic scheme", "Basic x"],
      ["Bearer without a key", "Bearer"],
      ["Bearer followed by blanks only", "Bearer   "],
      ["a bare key without the Bearer scheme", "cs_live_abcdefghijklmnopqrstuvwxyz123456"],
    ])("answers 401 for a malformed Authorization header: %s", async (_label, header) => {
      const res = await t.request("GET", "/v1/forms", { key: null, headers: { Authorization: header } });
      expect(res.status).toBe(401);
      expectErrorBody(res.body);
    });

    it("answers 401 for a well-formed key that was never issued", async () => {
      const res = await t.request("GET", "/v1/forms", { key: WELL_FORMED_UNKNOWN_KEY });
      expect(res.status).toBe(401);
      expectErrorBody(res.body);
    });

    it("answers 401 for a token that is not shaped like a key at all", async () => {
      const res = await t.request("GET", "/v1/forms", { key: "not-a-key" });
      expect(res.status).toBe(401);
      expectErrorBody(res.body);
    });

    it("answers 401 once a key is revoked, while the organization's other key keeps working", async () => {
      const org = await t.newOrg();
      const second = await createApiKey(t.store.db, { organizationId: org.id, sandbox: false }, Date.now());
      expect((await t.request("GET", "/v1/forms", { key: org.key })).status).toBe(200);

      expect(await revokeApiKey(t.store.db, org.keyId, Date.now())).toBe(true);

      const revoked = await t.request("GET", "/v1/forms", { key: org.key });
      expect(revoked.status).toBe(401);
      expectErrorBody(revoked.body);
      const other = await t.request("GET", "/v1/forms", { key: second.key });
      expect(other.status).toBe(200);
    });

    it("does not create anything for a request with an unknown key", async () => {
      const org = await t.newOrg();
      const res = await t.request("POST", "/v1/forms", {
        body: validForms.standard(),
        key: WELL_FORMED_UNKNOWN_KEY,
      });
      expect(res.status).toBe(401);
      const list = await t.request<FormListBody>("GET", "/v1/forms", { key: org.key });
      expect(list.body.count).toBe(0);
    });
  });

  describe("permissions", () => {
    it.each([
      ["GET", "/v1/forms", "forms:read", ["forms:write"]],
      ["GET", `/v1/forms/${UNKNOWN_UUID}`, "forms:read", ["forms:write"]],
      ["POST", "/v1/forms", "forms:write", ["forms:read"]],
      ["GET", "/v1/analytics/api-metrics", "analytics:read", ["forms:read", "forms:write"]],
      ["GET", "/v1/organization", "organization:read", ["organization:write"]],
      ["PUT", "/v1/organization", "organization:write", ["organization:read"]],
    ] as const)(
      "%s %s without %s answers 403 naming the missing permission",
      async (method, path, permission, granted) => {
        const org = await t.newOrg({ permissions: [...granted] });
        const body =
          method === "POST"
            ? validForms.standard()
            : method === "PUT"
              ? { organizationName: "X" }
              : undefined;
        const res = await t.request(method, path, { key: org.key, body });
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ error: `Missing permission: ${permission}` });
      },
    );

    it("does not create a form for a key lacking forms:write", async () => {
      const org = await t.newOrg({ permissions: ["forms:read"] });
      expect(
        (await t.request("POST", "/v1/forms", { key: org.key, body: validForms.standard() })).status,
      ).toBe(403);
      const list = await t.request<FormListBody>("GET", "/v1/forms", { key: org.key });
      expect(list.status).toBe(200);
      expect(list.body.count).toBe(0);
    });

    it("does not change the organization for a key lacking organization:write", async () => {
      const org = await t.newOrg({ name: "Unchanged Org", permissions: ["organization:read"] });
      const res = await t.request("PUT", "/v1/organization", {
        key: org.key,
        body: { organizationName: "Hijacked" },
      });
      expect(res.status).toBe(403);
      const got = await t.request<OrganizationBody>("GET", "/v1/organization", { key: org.key });
      expect(got.body.organizationName).toBe("Unchanged Org");
    });
  });

  describe("request ids", () => {
    it("puts a distinct X-Request-Id on 200, 400, 401, 404 and 405 responses and on the health check", async () => {
      const responses = await Promise.all([
        t.request("GET", "/v1/forms"),
        t.request("GET", "/v1/forms", { key: null }),
        t.request("GET", `/v1/forms/${UNKNOWN_UUID}`),
        t.request("GET", "/v1/no-such-thing"),
        t.request("GET", "/health", { key: null }),
        t.request("DELETE", "/v1/forms"),
        t.request("POST", "/v1/forms", { rawBody: "{", headers: { "Content-Type": "application/json" } }),
      ]);
      expect(responses.map((r) => r.status)).toEqual([200, 401, 404, 404, 200, 405, 400]);
      const ids = responses.map((r) => r.headers.get("X-Request-Id"));
      for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9._:-]{8,128}$/);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it("echoes a sane incoming X-Request-Id on success and on error", async () => {
      const ok = await t.request("GET", "/v1/forms", { headers: { "X-Request-Id": "client-req_42.a:b" } });
      expect(ok.headers.get("X-Request-Id")).toBe("client-req_42.a:b");
      const denied = await t.request("GET", "/v1/forms", {
        key: null,
        headers: { "X-Request-Id": "trace-0001" },
      });
      expect(denied.status).toBe(401);
      expect(denied.headers.get("X-Request-Id")).toBe("trace-0001");
    });

    it("replaces an incoming X-Request-Id that is too long or holds unsafe characters", async () => {
      for (const given of ["has spaces <script>", "x".repeat(500)]) {
        const res = await t.request("GET", "/v1/forms", { headers: { "X-Request-Id": given } });
        const id = res.headers.get("X-Request-Id");
        expect(id).toBeTruthy();
        expect(id).not.toBe(given);
        expect(id).toMatch(/^[A-Za-z0-9._:-]{8,128}$/);
      }
    });
  });

  describe("routing", () => {
    it("answers GET /health with {status: ok} without an API key", async () => {
      const res = await t.request("GET", "/health", { key: null });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: "ok" });
    });

    it("answers a browser's ask for /favicon.ico with 204 and a day's caching, not a 404 its console logs", async () => {
      const res = await t.request("GET", "/favicon.ico", { key: null });
      expect(res.status).toBe(204);
      expect(res.text).toBe("");
      expect(res.headers.get("Cache-Control")).toBe("public, max-age=86400");
    });

    it.each(["/v1/no-such-thing", "/v1/forms/x/y/z", "/v1", "/api", "/api/nope", "/api/forms/x/y/z"])(
      "answers an unknown route %s with 404 {error: Not found}",
      async (path) => {
        const res = await t.request("GET", path);
        expect(res.status).toBe(404);
        expect(res.headers.get("content-type")).toMatch(/^application\/json/);
        expect(res.body).toEqual({ error: "Not found" });
      },
    );

    it("answers POST on a form's path with 405 and an Allow header listing its methods", async () => {
      const res = await t.request("POST", `/v1/forms/${UNKNOWN_UUID}`, { body: validForms.standard() });
      expect(res.status).toBe(405);
      expectErrorBody(res.body);
      const allow = allowed(res.headers);
      expect(allow).toEqual(expect.arrayContaining(["GET", "PUT", "PATCH", "DELETE"]));
      expect(allow).not.toContain("POST");
    });

    it("answers DELETE /v1/forms with 405 and Allow: GET, POST", async () => {
      const res = await t.request("DELETE", "/v1/forms");
      expect(res.status).toBe(405);
      expectErrorBody(res.body);
      const allow = allowed(res.headers);
      expect(allow).toEqual(expect.arrayContaining(["GET", "POST"]));
      expect(allow).not.toContain("DELETE");
    });

    it("lists HEAD in Allow wherever GET is, and answers HEAD there with GET's status and no body", async () => {
      const res = await t.request("DELETE", "/v1/payments");
      expect(res.status).toBe(405);
      expect(allowed(res.headers).sort()).toEqual(["GET", "HEAD"]);
      const post = await t.request("GET", "/v1/payments/pay_unknown/refund");
      expect(post.status).toBe(405);
      expect(allowed(post.headers)).toEqual(["POST"]);
      const head = await t.request("HEAD", "/v1/payments");
      expect(head.status).toBe(200);
      expect(head.text).toBe("");
    });

    it("answers DELETE /v1/organization with 405 and Allow: GET, PUT", async () => {
      const res = await t.request("DELETE", "/v1/organization");
      expect(res.status).toBe(405);
      const allow = allowed(res.headers);
      expect(allow).toEqual(expect.arrayContaining(["GET", "PUT"]));
      expect(allow).not.toContain("DELETE");
    });
  });

  describe("JSON bodies", () => {
    it.each([
      ["unparseable JSON", "{not json"],
      ["truncated JSON", '{"title":"x","funds":["a"]'],
      ["a JSON array", JSON.stringify([validForms.standard()])],
      ["a JSON string", '"hello"'],
      ["a JSON number", "42"],
      ["JSON null", "null"],
      ["an empty body", ""],
    ])("answers POST /v1/forms with %s with 400 {error: Invalid JSON body}", async (_label, rawBody) => {
      const res = await t.request("POST", "/v1/forms", {
        rawBody,
        headers: { "Content-Type": "application/json" },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: "Invalid JSON body" });
    });

    it("answers PUT /v1/organization and PUT /v1/forms/{id} with an array body with 400 Invalid JSON body", async () => {
      const id = await createForm(t.org.key);
      for (const path of ["/v1/organization", `/v1/forms/${id}`]) {
        const res = await t.request("PUT", path, {
          rawBody: '[{"title":"x"}]',
          headers: { "Content-Type": "application/json" },
        });
        expect(res.status, path).toBe(400);
        expect(res.body, path).toEqual({ error: "Invalid JSON body" });
      }
    });

    it("creates no form when the body is not a JSON object", async () => {
      const org = await t.newOrg();
      for (const rawBody of ["{oops", "[]", '"s"']) {
        const res = await t.request("POST", "/v1/forms", {
          key: org.key,
          rawBody,
          headers: { "Content-Type": "application/json" },
        });
        expect(res.status).toBe(400);
      }
      const list = await t.request<FormListBody>("GET", "/v1/forms", { key: org.key });
      expect(list.body.count).toBe(0);
    });
  });

  describe("Idempotency-Key", () => {
    it("replays the first status and body for the same key and body, and creates only one form", async () => {
      const org = await t.newOrg();
      const body = validForms.standard();
      const headers = { "Idempotency-Key": "create-form-0001" };
      const first = await t.request<{ formID: string }>("POST", "/v1/forms", { key: org.key, body, headers });
      expect(first.status).toBe(201);
      const second = await t.request<{ formID: string }>("POST", "/v1/forms", {
        key: org.key,
        body,
        headers,
      });
      expect(second.status).toBe(201);
      expect(second.body).toEqual(first.body);
      expect(second.body.formID).toBe(first.body.formID);
      expect(second.headers.get("X-Request-Id")).toBeTruthy();
      expect(second.headers.get("X-RateLimit-Limit")).toBe("1000");

      const list = await t.request<FormListBody>("GET", "/v1/forms", { key: org.key });
      expect(list.body.count).toBe(1);
      expect(list.body.forms.map((f) => f.formID)).toEqual([first.body.formID]);
    });

    it("creates one form when several requests with the same key and body arrive at once", async () => {
      const org = await t.newOrg();
      const body = validForms.standard();
      const headers = { "Idempotency-Key": "concurrent-retry" };
      const responses = await Promise.all(
        Array.from({ length: 6 }, () =>
          t.request<{ formID?: string }>("POST", "/v1/forms", { key: org.key, body, headers }),
        ),
      );
      const created = responses.filter((r) => r.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((r) => r.body.formID)).size).toBe(1);
      for (const r of responses) expect([201, 409], r.text).toContain(r.status);
      const list = await t.request<FormListBody>("GET", "/v1/forms", { key: org.key });
      expect(list.body.count).toBe(1);
      expect(list.body.forms[0].formID).toBe(created[0].body.formID);
    });

    it("answers 422 for the same key with a different body, and creates nothing more", async () => {
      const org = await t.newOrg();
      const headers = { "Idempotency-Key": "reused-key" };
      const first = await t.request("POST", "/v1/forms", {
        key: org.key,
        body: validForms.standard(),
        headers,
      });
      expect(first.status).toBe(201);
      const second = await t.request("POST", "/v1/forms", {
        key: org.key,
        body: validForms.standard(),
        headers,
      });
      expect(second.status).toBe(422);
      expect(second.body).toEqual({ error: "Idempotency-Key reused with a different request" });
      const list = await t.request<FormListBody>("GET", "/v1/forms", { key: org.key });
      expect(list.body.count).toBe(1);
    });

    it("rejects an Idempotency-Key longer than 255 characters with 400 and creates nothing", async () => {
      const org = await t.newOrg();
      const res = await t.request("POST", "/v1/forms", {
        key: org.key,
        body: validForms.standard(),
        headers: { "Idempotency-Key": "k".repeat(256) },
      });
      expect(res.status).toBe(400);
      expectErrorBody(res.body);
      const list = await t.request<FormListBody>("GET", "/v1/forms", { key: org.key });
      expect(list.body.count).toBe(0);
    });

    it("accepts an Idempotency-Key of exactly 255 characters", async () => {
      const org = await t.newOrg();
      const res = await t.request("POST", "/v1/forms", {
        key: org.key,
        body: validForms.standard(),
        headers: { "Idempotency-Key": "k".repeat(255) },
      });
      expect(res.status).toBe(201);
    });

    it("keeps the same key independent between organizations", async () => {
      const a = await t.newOrg();
      const b = await t.newOrg();
      const headers = { "Idempotency-Key": "shared-key-between-orgs" };
      const body = validForms.standard();
      const fromA = await t.request<{ formID: string }>("POST", "/v1/forms", { key: a.key, body, headers });
      const fromB = await t.request<{ formID: string }>("POST", "/v1/forms", { key: b.key, body, headers });
      expect(fromA.status).toBe(201);
      expect(fromB.status).toBe(201);
      expect(fromB.body.formID).not.toBe(fromA.body.formID);
      // A different body under the same key is still fine for a third organization.
      const c = await t.newOrg();
      const fromC = await t.request("POST", "/v1/forms", {
        key: c.key,
        body: validForms.standard(),
        headers,
      });
      expect(fromC.status).toBe(201);

      const listB = await t.request<FormListBody>("GET", "/v1/forms", { key: b.key });
      expect(listB.body.forms.map((f) => f.formID)).toEqual([fromB.body.formID]);
      const getFromA = await t.request("GET", `/v1/forms/${fromB.body.formID}`, { key: a.key });
      expect(getFromA.status).toBe(403);
    });
  });

  describe("organization", () => {
    let org: TestOrg;
    beforeAll(async () => {
      org = await t.newOrg({ name: "Friends of the Library" });
    });

    it("GET /v1/organization returns the name, empty base URLs and empty global custom inputs", async () => {
      const fresh = await t.newOrg({ name: "Brand New Org" });
      const res = await t.request("GET", "/v1/organization", { key: fresh.key });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        organizationName: "Brand New Org",
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
        paymentProcessor: expect.objectContaining({ name: "sandbox", mode: "test", accountId: null }),
      });
    });

    it("PUT /v1/organization changes the name and base URLs, and GET returns the change", async () => {
      const res = await t.request<OrganizationBody>("PUT", "/v1/organization", {
        key: org.key,
        body: {
          organizationName: "Friends of the City Library",
          organizationBaseURLs: ["https://library.example.org", "https://www.example.com/give"],
        },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({
        organizationName: "Friends of the City Library",
        organizationBaseURLs: ["https://library.example.org", "https://www.example.com/give"],
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
        paymentProcessor: expect.objectContaining({ name: "sandbox" }),
      });
      const got = await t.request("GET", "/v1/organization", { key: org.key });
      expect(got.body).toEqual(res.body);
    });

    it("PUT /v1/organization changes only the fields sent", async () => {
      const before = await t.request<OrganizationBody>("GET", "/v1/organization", { key: org.key });
      const res = await t.request<OrganizationBody>("PUT", "/v1/organization", {
        key: org.key,
        body: { organizationName: "Only The Name Changed" },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...before.body, organizationName: "Only The Name Changed" });
    });

    it.each([
      ["not a URL", "not a url"],
      ["a relative path", "/donate"],
      ["an ftp URL", "ftp://files.example.org"],
      ["a URL with a query", "https://example.org/give?campaign=spring"],
    ])(
      "rejects a base URL that is %s with 400 details naming organizationBaseURLs, changing nothing",
      async (_label, url) => {
        const before = await t.request<OrganizationBody>("GET", "/v1/organization", { key: org.key });
        const res = await t.request<ErrorBody>("PUT", "/v1/organization", {
          key: org.key,
          body: { organizationName: "Should Not Stick", organizationBaseURLs: [url] },
        });
        expect(res.status).toBe(400);
        expect(res.body.error).toBe("Validation failed");
        expect(res.body.details?.some((d) => d.includes("organizationBaseURLs"))).toBe(true);
        const after = await t.request("GET", "/v1/organization", { key: org.key });
        expect(after.body).toEqual(before.body);
      },
    );

    it("rejects an empty body with 400", async () => {
      const res = await t.request<ErrorBody>("PUT", "/v1/organization", { key: org.key, body: {} });
      expect(res.status).toBe(400);
      expectErrorBody(res.body);
    });

    it("reports every problem of an update at once", async () => {
      const res = await t.request<ErrorBody>("PUT", "/v1/organization", {
        key: org.key,
        body: { organizationName: "", organizationBaseURLs: ["nope"] },
      });
      expect(res.status).toBe(400);
      expect(res.body.details?.some((d) => d.includes("organizationName"))).toBe(true);
      expect(res.body.details?.some((d) => d.includes("organizationBaseURLs"))).toBe(true);
    });

    it("keeps global custom input ids stable when the inputs are sent again by title", async () => {
      const scoped = await t.newOrg({ name: "Inputs Org" });
      const first = await t.request<OrganizationBody>("PUT", "/v1/organization", {
        key: scoped.key,
        body: {
          globalCustomInputs: [
            {
              title: "T-shirt size",
              inputType: "SINGLE_SELECTION_DROPDOWN",
              required: true,
              options: ["S", "M", "L"],
            },
            { title: "Dedication", inputType: "LONG_TEXT_INPUT" },
          ],
        },
      });
      expect(first.status, first.text).toBe(200);
      const [shirt, dedication] = first.body.globalCustomInputs;
      expect(shirt).toEqual({
        id: expect.any(String),
        title: "T-shirt size",
        inputType: "SINGLE_SELECTION_DROPDOWN",
        required: true,
        options: ["S", "M", "L"],
      });
      expect(dedication).toMatchObject({ title: "Dedication", inputType: "LONG_TEXT_INPUT", options: [] });
      expect(shirt.id).not.toBe(dedication.id);

      const second = await t.request<OrganizationBody>("PUT", "/v1/organization", {
        key: scoped.key,
        body: {
          globalCustomInputs: [
            { title: "Dedication", inputType: "SHORT_TEXT_INPUT" },
            {
              title: "T-shirt size",
              inputType: "SINGLE_SELECTION_DROPDOWN",
              required: false,
              options: ["S", "M", "L", "XL"],
            },
            { title: "Employer", inputType: "SHORT_TEXT_INPUT" },
          ],
        },
      });
      expect(second.status, second.text).toBe(200);
      const byTitle = new Map(second.body.globalCustomInputs.map((i) => [i.title, i]));
      expect(byTitle.get("T-shirt size")?.id).toBe(shirt.id);
      expect(byTitle.get("T-shirt size")?.options).toEqual(["S", "M", "L", "XL"]);
      expect(byTitle.get("Dedication")?.id).toBe(dedication.id);
      const employer = byTitle.get("Employer")?.id;
      expect(employer).toBeTypeOf("string");
      expect([shirt.id, dedication.id]).not.toContain(employer);

      const got = await t.request<OrganizationBody>("GET", "/v1/organization", { key: scoped.key });
      expect(got.body.globalCustomInputs).toEqual(second.body.globalCustomInputs);
    });
  });

  describe("GET /v1/analytics/api-metrics", () => {
    it("lists the caller's requests newest first with metricId, endpoint, method, statusCode, responseTime and timestamp", async () => {
      const org = await t.newOrg();
      const other = await t.newOrg();
      const startedAt = Math.floor(Date.now() / 1000);

      expect((await t.request("GET", "/v1/forms", { key: org.key })).status).toBe(200);
      await sleep(5);
      expect(
        (await t.request("POST", "/v1/forms", { key: org.key, body: validForms.standard() })).status,
      ).toBe(201);
      await sleep(5);
      expect((await t.request("GET", `/v1/forms/${UNKNOWN_UUID}`, { key: org.key })).status).toBe(404);
      await sleep(5);
      // Another organization's traffic, which must not show up.
      expect((await t.request("GET", "/v1/organization", { key: other.key })).status).toBe(200);
      const endedAt = Math.ceil(Date.now() / 1000);

      const res = await t.request<MetricListBody>("GET", "/v1/analytics/api-metrics", { key: org.key });
      expect(res.status, res.text).toBe(200);
      expect(res.body.count).toBe(3);
      expect(res.body.hasMore).toBe(false);
      expect(res.body).not.toHaveProperty("lastEvaluatedKey");
      expect(res.body.metrics.map((m) => [m.method, m.endpoint, m.statusCode])).toEqual([
        ["GET", `/v1/forms/${UNKNOWN_UUID}`, 404],
        ["POST", "/v1/forms", 201],
        ["GET", "/v1/forms", 200],
      ]);
      for (const m of res.body.metrics) {
        expect(m.metricId).toMatch(/^met_[0-9a-z]{26}$/);
        expect(m.responseTime).toBeTypeOf("number");
        expect(m.responseTime).toBeGreaterThanOrEqual(0);
        expect(Number.isInteger(m.timestamp)).toBe(true);
        expect(m.timestamp).toBeGreaterThanOrEqual(startedAt - 1);
        expect(m.timestamp).toBeLessThanOrEqual(endedAt + 1);
      }
      expect(new Set(res.body.metrics.map((m) => m.metricId)).size).toBe(3);
      const timestamps = res.body.metrics.map((m) => m.timestamp);
      expect([...timestamps].sort((a, b) => b - a)).toEqual(timestamps);

      // The listing itself is recorded, as the newest entry of the next read.
      const again = await t.request<MetricListBody>("GET", "/v1/analytics/api-metrics", { key: org.key });
      expect(again.body.count).toBe(4);
      expect(again.body.metrics[0]).toMatchObject({
        method: "GET",
        endpoint: "/v1/analytics/api-metrics",
        statusCode: 200,
      });

      const otherList = await t.request<MetricListBody>("GET", "/v1/analytics/api-metrics", {
        key: other.key,
      });
      expect(otherList.body.metrics.map((m) => m.endpoint)).toEqual(["/v1/organization"]);
    });

    it("records refused requests (403) of an authenticated key too", async () => {
      const org = await t.newOrg({ permissions: ["analytics:read"] });
      expect((await t.request("GET", "/v1/forms", { key: org.key })).status).toBe(403);
      const res = await t.request<MetricListBody>("GET", "/v1/analytics/api-metrics", { key: org.key });
      expect(res.body.metrics.map((m) => [m.method, m.endpoint, m.statusCode])).toEqual([
        ["GET", "/v1/forms", 403],
      ]);
    });

    it("records what the API gate refuses for a known key (413), and nothing for a request without a valid key", async () => {
      const org = await t.newOrg();
      const tooLarge = `{"title":"${"x".repeat(t.config.maxBodyBytes)}"}`;
      const refused = await t.request("POST", "/v1/forms", {
        key: org.key,
        rawBody: tooLarge,
        headers: { "Content-Type": "application/json" },
      });
      expect(refused.status, refused.text).toBe(413);
      expect(refused.headers.get("X-RateLimit-Limit")).toBe(String(t.config.rateLimitPerHour));
      expect((await t.request("GET", "/v1/forms", { key: `${org.key}x` })).status).toBe(401);
      const res = await t.request<MetricListBody>("GET", "/v1/analytics/api-metrics", { key: org.key });
      expect(res.body.metrics.map((m) => [m.method, m.endpoint, m.statusCode])).toEqual([
        ["POST", "/v1/forms", 413],
      ]);
    });

    it("pages through the metrics with limit and lastEvaluatedKey, each record once", async () => {
      const org = await t.newOrg();
      for (let i = 0; i < 5; i++) {
        expect((await t.request("GET", `/v1/forms?limit=${i + 1}`, { key: org.key })).status).toBe(200);
      }
      const seen: string[] = [];
      const counts: number[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const q = cursor ? `?limit=2&lastEvaluatedKey=${encodeURIComponent(cursor)}` : "?limit=2";
        const res = await t.request<MetricListBody>("GET", `/v1/analytics/api-metrics${q}`, { key: org.key });
        expect(res.status, res.text).toBe(200);
        expect(res.body.count).toBe(res.body.metrics.length);
        counts.push(res.body.count);
        seen.push(...res.body.metrics.map((m) => m.metricId));
        if (!res.body.hasMore) {
          expect(res.body).not.toHaveProperty("lastEvaluatedKey");
          break;
        }
        expect(res.body.lastEvaluatedKey).toBeTypeOf("string");
        cursor = res.body.lastEvaluatedKey;
      }
      expect(counts).toEqual([2, 2, 1]);
      expect(new Set(seen).size).toBe(5);
    });
  });

  describe("pagination", () => {
    it("walks 250 forms 37 at a time while new forms arrive, seeing each original exactly once", async () => {
      const org = await t.newOrg();
      const originals = new Set<string>();
      for (let i = 0; i < 250; i += 10) {
        const ids = await Promise.all(Array.from({ length: 10 }, () => createForm(org.key)));
        for (const id of ids) originals.add(id);
      }
      expect(originals.size).toBe(250);

      const seen: string[] = [];
      const added: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      for (;;) {
        const q = cursor ? `?limit=37&lastEvaluatedKey=${encodeURIComponent(cursor)}` : "?limit=37";
        const res = await t.request<FormListBody>("GET", `/v1/forms${q}`, { key: org.key });
        expect(res.status, res.text).toBe(200);
        pages++;
        expect(res.body.count).toBe(res.body.forms.length);
        seen.push(...res.body.forms.map((f) => f.formID as string));
        if (!res.body.hasMore) {
          expect(res.body).not.toHaveProperty("lastEvaluatedKey");
          break;
        }
        expect(res.body.count).toBe(37);
        expect(res.body.lastEvaluatedKey).toBeTypeOf("string");
        cursor = res.body.lastEvaluatedKey;
        added.push(await createForm(org.key));
        expect(pages).toBeLessThan(20);
      }

      expect(pages).toBe(7);
      expect(new Set(seen).size).toBe(seen.length);
      const originalsSeen = seen.filter((id) => originals.has(id));
      expect(originalsSeen).toHaveLength(250);
      expect(new Set(originalsSeen)).toEqual(originals);
      // Forms created after the walk began are newer than its position, so they are not met.
      expect(seen.filter((id) => added.includes(id))).toEqual([]);
      expect(seen).toHaveLength(250);
    });

    it("returns 50 forms by default and a cursor when there are more", async () => {
      const org = await t.newOrg();
      await Promise.all(Array.from({ length: 51 }, () => createForm(org.key)));
      const res = await t.request<FormListBody>("GET", "/v1/forms", { key: org.key });
      expect(res.status).toBe(200);
      expect(res.body.forms).toHaveLength(50);
      expect(res.body.count).toBe(50);
      expect(res.body.hasMore).toBe(true);
      expect(res.body.lastEvaluatedKey).toBeTypeOf("string");
      const rest = await t.request<FormListBody>(
        "GET",
        `/v1/forms?lastEvaluatedKey=${encodeURIComponent(res.body.lastEvaluatedKey as string)}`,
        { key: org.key },
      );
      expect(rest.body.count).toBe(1);
      expect(rest.body.hasMore).toBe(false);
      expect(rest.body).not.toHaveProperty("lastEvaluatedKey");
    });

    it("accepts the boundary limits 1 and 100", async () => {
      const org = await t.newOrg();
      await createForm(org.key);
      await createForm(org.key);
      const one = await t.request<FormListBody>("GET", "/v1/forms?limit=1", { key: org.key });
      expect(one.status).toBe(200);
      expect(one.body.count).toBe(1);
      expect(one.body.hasMore).toBe(true);
      const hundred = await t.request<FormListBody>("GET", "/v1/forms?limit=100", { key: org.key });
      expect(hundred.status).toBe(200);
      expect(hundred.body.count).toBe(2);
      expect(hundred.body.hasMore).toBe(false);
    });

    it.each(["0", "101", "1.5", "abc", "-1", ""])(
      "rejects limit=%s with 400 whose details mention limit",
      async (limit) => {
        for (const path of ["/v1/forms", "/v1/analytics/api-metrics"]) {
          const res = await t.request<ErrorBody>("GET", `${path}?limit=${encodeURIComponent(limit)}`);
          expect(res.status, path).toBe(400);
          expect(res.body.error).toBe("Validation failed");
          expect(
            res.body.details?.some((d) => d.includes("limit")),
            JSON.stringify(res.body),
          ).toBe(true);
        }
      },
    );

    it.each([
      ["not base64url", "not a cursor!"],
      ["base64url of non-JSON", Buffer.from("hello world").toString("base64url")],
      ["base64url JSON of the wrong shape", Buffer.from('{"foo":"bar"}').toString("base64url")],
      ["base64url of a JSON array", Buffer.from("[1,2]").toString("base64url")],
    ])("rejects a garbage cursor (%s) with 400", async (_label, cursor) => {
      const res = await t.request<ErrorBody>(
        "GET",
        `/v1/forms?lastEvaluatedKey=${encodeURIComponent(cursor)}`,
      );
      expect(res.status).toBe(400);
      expectErrorBody(res.body);
    });

    it.each([
      ["its position emptied", { k: "" }],
      ["a position that is not a date", { k: "not-a-date" }],
      ["a position far ahead", { k: "2099-01-01T00:00:00.000Z" }],
      ["another id", { i: "con_00000000000000000000000000" }],
    ])(
      "rejects a cursor of this list whose position was edited (%s) with 400, not a page",
      async (_label, edit) => {
        const org = await t.newOrg();
        for (const name of ["Ann", "Bea"]) {
          const made = await t.request("POST", "/v1/contacts", {
            key: org.key,
            body: { firstName: name, lastName: "Reader", email: `${name}@example.org` },
          });
          expect(made.status, made.text).toBe(201);
        }
        const page = await t.request<{ lastEvaluatedKey: string }>("GET", "/v1/contacts?limit=1", {
          key: org.key,
        });
        const cursor = JSON.parse(Buffer.from(page.body.lastEvaluatedKey, "base64url").toString("utf8"));
        const edited = Buffer.from(JSON.stringify({ ...cursor, ...edit })).toString("base64url");
        const res = await t.request<ErrorBody>("GET", `/v1/contacts?limit=1&lastEvaluatedKey=${edited}`, {
          key: org.key,
        });
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body.details).toEqual(["lastEvaluatedKey is not a cursor returned by this list"]);
        // The cursor as it was given still pages.
        const next = await t.request(
          "GET",
          `/v1/contacts?limit=1&lastEvaluatedKey=${page.body.lastEvaluatedKey}`,
          {
            key: org.key,
          },
        );
        expect(next.status).toBe(200);
      },
    );

    it("refuses a query parameter given twice with 400 naming it, rather than taking its first value", async () => {
      for (const [path, name] of [
        ["/v1/forms?limit=1&limit=abc", "limit"],
        ["/v1/payments?status=COMPLETED&status=FAILED", "status"],
        ["/v1/contacts?limit=5&email=a@example.org&limit=5", "limit"],
      ]) {
        const res = await t.request<ErrorBody>("GET", path);
        expect(res.status, path).toBe(400);
        expect(res.body.error).toBe("Validation failed");
        expect(res.body.details).toEqual([`${name} is given more than once: send it once`]);
      }
      // A parameter the list does not take is ignored, repeated or not.
      expect((await t.request("GET", "/v1/forms?utm=a&utm=b&limit=2")).status).toBe(200);
    });

    it("rejects a forms cursor issued to another organization with 400", async () => {
      const owner = await t.newOrg();
      await createForm(owner.key);
      await createForm(owner.key);
      const page = await t.request<FormListBody>("GET", "/v1/forms?limit=1", { key: owner.key });
      const cursor = page.body.lastEvaluatedKey as string;
      expect(cursor).toBeTypeOf("string");
      // The cursor works for its owner...
      const own = await t.request("GET", `/v1/forms?limit=1&lastEvaluatedKey=${encodeURIComponent(cursor)}`, {
        key: owner.key,
      });
      expect(own.status).toBe(200);
      // ...and not for anyone else.
      const intruder = await t.newOrg();
      const res = await t.request<ErrorBody>(
        "GET",
        `/v1/forms?limit=1&lastEvaluatedKey=${encodeURIComponent(cursor)}`,
        { key: intruder.key },
      );
      expect(res.status).toBe(400);
      expectErrorBody(res.body);
    });

    it("rejects a cursor of the api-metrics list used on /v1/forms, and the reverse, with 400", async () => {
      const org = await t.newOrg();
      await createForm(org.key);
      await createForm(org.key);
      const metrics = await t.request<MetricListBody>("GET", "/v1/analytics/api-metrics?limit=1", {
        key: org.key,
      });
      expect(metrics.body.hasMore).toBe(true);
      const metricsCursor = metrics.body.lastEvaluatedKey as string;
      const onForms = await t.request<ErrorBody>(
        "GET",
        `/v1/forms?lastEvaluatedKey=${encodeURIComponent(metricsCursor)}`,
        { key: org.key },
      );
      expect(onForms.status).toBe(400);
      expectErrorBody(onForms.body);

      const forms = await t.request<FormListBody>("GET", "/v1/forms?limit=1", { key: org.key });
      const formsCursor = forms.body.lastEvaluatedKey as string;
      const onMetrics = await t.request<ErrorBody>(
        "GET",
        `/v1/analytics/api-metrics?lastEvaluatedKey=${encodeURIComponent(formsCursor)}`,
        { key: org.key },
      );
      expect(onMetrics.status).toBe(400);
      expectErrorBody(onMetrics.body);
    });
  });
});

describe(`request body size limit (${dialect})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp({ env: { MAX_BODY_BYTES: "2048" } });
  });
  afterAll(() => t.close());

  function oversizedForm(): Json {
    return { ...validForms.standard(), description: "d".repeat(3000) };
  }

  it("answers a POST body over MAX_BODY_BYTES with 413 and a JSON error, creating nothing", async () => {
    const body = oversizedForm();
    expect(JSON.stringify(body).length).toBeGreaterThan(2048);
    const res = await t.request("POST", "/v1/forms", { body });
    expect(res.status).toBe(413);
    expectErrorBody(res.body);
    expect(res.headers.get("Content-Type")).toMatch(/application\/json/);
    const list = await t.request<FormListBody>("GET", "/v1/forms");
    expect(list.body.count).toBe(0);
  });

  it("answers an oversized body that declares its Content-Length with 413", async () => {
    const raw = JSON.stringify(oversizedForm());
    const res = await t.request("POST", "/v1/forms", {
      rawBody: raw,
      headers: { "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(raw)) },
    });
    expect(res.status).toBe(413);
    expectErrorBody(res.body);
  });

  it("answers an oversized PUT /v1/organization with 413 and leaves the name alone", async () => {
    const res = await t.request("PUT", "/v1/organization", {
      body: { organizationName: "x".repeat(3000) },
    });
    expect(res.status).toBe(413);
    expectErrorBody(res.body);
    const got = await t.request<OrganizationBody>("GET", "/v1/organization");
    expect(got.body.organizationName).toBe("Test Org");
  });

  it("still accepts a valid body just under the limit", async () => {
    const body = { ...validForms.standard(), description: "d".repeat(600) };
    body.funds = Array.from({ length: 40 }, (_, i) => `Fund for program ${i}`);
    const size = Buffer.byteLength(JSON.stringify(body));
    expect(size).toBeLessThan(2048);
    expect(size).toBeGreaterThan(1500);
    const res = await t.request("POST", "/v1/forms", { body });
    expect(res.status, res.text).toBe(201);
  });
});

describe(`rate limit (${dialect})`, () => {
  let t: TestApp;
  let clock = Date.now();
  const nowSeconds = () => Math.floor(clock / 1000);
  beforeAll(async () => {
    t = await setupTestApp({ env: { RATE_LIMIT_PER_HOUR: "5" }, now: () => clock });
  });
  afterAll(() => t.close());

  function rateHeaders(res: { headers: Headers }) {
    return {
      limit: res.headers.get("X-RateLimit-Limit"),
      remaining: res.headers.get("X-RateLimit-Remaining"),
      reset: Number(res.headers.get("X-RateLimit-Reset")),
    };
  }

  it("sends X-RateLimit-Limit, a counting-down X-RateLimit-Remaining and a Reset within the hour on every response", async () => {
    const org = await t.newOrg();
    const paths = ["/v1/forms", "/v1/organization", `/v1/forms/${UNKNOWN_UUID}`, "/v1/forms", "/v1/forms"];
    const remaining: (string | null)[] = [];
    for (const path of paths) {
      const res = await t.request("GET", path, { key: org.key });
      expect(res.status).toBe(path === `/v1/forms/${UNKNOWN_UUID}` ? 404 : 200);
      const h = rateHeaders(res);
      expect(h.limit).toBe("5");
      remaining.push(h.remaining);
      expect(Number.isInteger(h.reset)).toBe(true);
      expect(h.reset).toBeGreaterThan(nowSeconds());
      expect(h.reset).toBeLessThanOrEqual(nowSeconds() + 3600);
    }
    expect(remaining).toEqual(["4", "3", "2", "1", "0"]);
  });

  it("answers the sixth request in an hour with 429 Rate limit exceeded and a positive Retry-After", async () => {
    const org = await t.newOrg();
    for (let i = 0; i < 5; i++)
      expect((await t.request("GET", "/v1/forms", { key: org.key })).status).toBe(200);
    const res = await t.request("GET", "/v1/forms", { key: org.key });
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: "Rate limit exceeded" });
    const retryAfter = Number(res.headers.get("Retry-After"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    const h = rateHeaders(res);
    expect(h.limit).toBe("5");
    expect(h.remaining).toBe("0");
    expect(h.reset).toBeGreaterThan(nowSeconds());
    expect(res.headers.get("X-Request-Id")).toBeTruthy();
  });

  it("does not run a request refused by the rate limit: a 429 POST creates no form", async () => {
    const org = await t.newOrg();
    for (let i = 0; i < 5; i++)
      expect(
        (await t.request("POST", "/v1/forms", { key: org.key, body: validForms.standard() })).status,
      ).toBe(201);
    const refused = await t.request("POST", "/v1/forms", { key: org.key, body: validForms.standard() });
    expect(refused.status).toBe(429);
    expect(await countForms(t.store.db, org.id)).toBe(5);
  });

  it("counts per key: another key of the same organization and another organization are unaffected", async () => {
    const org = await t.newOrg();
    for (let i = 0; i < 5; i++) await t.request("GET", "/v1/forms", { key: org.key });
    expect((await t.request("GET", "/v1/forms", { key: org.key })).status).toBe(429);

    const sibling = await createApiKey(t.store.db, { organizationId: org.id, sandbox: false }, Date.now());
    const bySibling = await t.request("GET", "/v1/forms", { key: sibling.key });
    expect(bySibling.status).toBe(200);
    expect(rateHeaders(bySibling).remaining).toBe("4");

    const stranger = await t.newOrg();
    const byStranger = await t.request("GET", "/v1/forms", { key: stranger.key });
    expect(byStranger.status).toBe(200);
    expect(rateHeaders(byStranger).remaining).toBe("4");
  });

  it("does not spend budget on refused requests, and frees budget as old requests leave the rolling hour", async () => {
    const org = await t.newOrg();
    const t0 = clock;
    try {
      for (let i = 0; i < 3; i++)
        expect((await t.request("GET", "/v1/forms", { key: org.key })).status).toBe(200);
      clock = t0 + 30 * 60_000;
      for (let i = 0; i < 2; i++)
        expect((await t.request("GET", "/v1/forms", { key: org.key })).status).toBe(200);
      for (let i = 0; i < 6; i++) {
        const refused = await t.request("GET", "/v1/forms", { key: org.key });
        expect(refused.status).toBe(429);
        const retryAfter = Number(refused.headers.get("Retry-After"));
        expect(retryAfter).toBeGreaterThan(0);
        // The oldest request leaves the window about 30 minutes from now.
        expect(retryAfter).toBeLessThanOrEqual(30 * 60 + 60);
        expect(rateHeaders(refused).reset).toBeGreaterThanOrEqual(nowSeconds() + retryAfter - 1);
      }

      // 61 minutes after the first three: only the two from t0+30min still count.
      clock = t0 + 61 * 60_000;
      const remaining: (string | null)[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await t.request("GET", "/v1/forms", { key: org.key });
        expect(res.status).toBe(200);
        remaining.push(rateHeaders(res).remaining);
      }
      expect(remaining).toEqual(["2", "1", "0"]);
      expect((await t.request("GET", "/v1/forms", { key: org.key })).status).toBe(429);
    } finally {
      clock = t0 + 121 * 60_000;
    }
  });
});

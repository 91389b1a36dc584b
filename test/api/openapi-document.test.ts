import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { subscribe } from "../billing/support.js";
import { createForm } from "../support/checkout.js";
import { accepts, type JsonSchema } from "../support/schemaArbitrary.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * What a client generated from `GET /v1/openapi.json` relies on, stated as the server enforces it: typed
 * and bounded parameters, the answers the pipeline adds to every operation (405, 413, 415, 409 and 422 of
 * an Idempotency-Key, 429 with Retry-After) and the headers every answer carries.
 */

type Json = Record<string, unknown>;
interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; schema: Json }[];
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<string, { headers?: Record<string, Json> }>;
}

let t: TestApp;
let paths: Record<string, Record<string, Operation>>;

beforeAll(async () => {
  t = await setupTestApp();
  paths = (await t.request<{ paths: typeof paths }>("GET", "/v1/openapi.json")).body.paths;
});
afterAll(() => t.close());

const op = (path: string, method: string): Operation => {
  const found = paths[path]?.[method];
  if (!found) throw new Error(`${method} ${path} is not documented`);
  return found;
};
const param = (o: Operation, name: string) => o.parameters?.find((p) => p.name === name);

describe(`the OpenAPI document (${dialect})`, () => {
  it("types limit as the integer range each list accepts, and cursors by their pattern", () => {
    expect(param(op("/v1/forms", "get"), "limit")?.schema).toMatchObject({
      type: "integer",
      minimum: 1,
      maximum: 100,
    });
    expect(param(op("/v1/forms/{formID}/links", "get"), "limit")?.schema).toMatchObject({
      type: "integer",
      maximum: 200,
    });
    expect(param(op("/v1/payments", "get"), "lastEvaluatedKey")?.schema.pattern).toBeTypeOf("string");
  });

  it("allows the empty cursor the server takes as the first page, and no other malformed one", async () => {
    const pattern = new RegExp(String(param(op("/v1/forms", "get"), "lastEvaluatedKey")?.schema.pattern));
    expect(pattern.test("")).toBe(true);
    expect(pattern.test("not a cursor")).toBe(false);
    const first = await t.request<{ forms: unknown[] }>("GET", "/v1/forms?lastEvaluatedKey=");
    expect(first.status, first.text).toBe(200);
    expect((await t.request("GET", "/v1/forms?lastEvaluatedKey=not%20a%20cursor")).status).toBe(400);
  });

  it("bounds amounts and states formats: money, emails, https URLs, dates, countries", () => {
    const refund = op("/v1/payments/{id}/refund", "post").requestBody?.content["application/json"]?.schema;
    expect(((refund?.properties ?? {}) as Json).amount).toMatchObject({
      exclusiveMinimum: 0,
      maximum: 1_000_000,
      multipleOf: 0.01,
    });
    const form = op("/v1/forms", "post").requestBody?.content["application/json"]?.schema.properties as Json;
    expect(form.replyToAddress).toMatchObject({ format: "email" });
    expect(form.headerImage).toMatchObject({ format: "uri" });
    expect(form.eventDate).toMatchObject({ format: "date" });
    expect((form.timeZone as { examples: unknown[] }).examples).toContain("America/New_York");
    const org = op("/v1/organization", "put").requestBody?.content["application/json"]?.schema
      .properties as Json;
    expect((org.country as { enum: string[] }).enum).toEqual(expect.arrayContaining(["US", "GB", "DE"]));
    const hook = op("/v1/webhooks", "post").requestBody?.content["application/json"]?.schema
      .properties as Json;
    expect(hook.url).toMatchObject({ format: "uri", pattern: expect.stringContaining("https") });
  });

  it("states a webhook URL as this server takes it: http too in development, https only in production", async () => {
    const pattern = (doc: Json) =>
      new RegExp(
        (
          ((doc.paths as Json)["/v1/webhooks"] as Json).post as {
            requestBody: {
              content: { "application/json": { schema: { properties: { url: { pattern: string } } } } };
            };
          }
        ).requestBody.content["application/json"].schema.properties.url.pattern,
      );
    const dev = pattern((await t.request<Json>("GET", "/v1/openapi.json", { key: null })).body);
    expect(dev.test("http://localhost:4000/hooks")).toBe(true);
    expect(dev.test("https://example.org/hooks")).toBe(true);
    const res = await t.request("POST", "/v1/webhooks", {
      body: { url: "http://localhost:4000/hooks", events: ["form.created"] },
    });
    expect(res.status, res.text).toBe(201);
    const prod = await setupTestApp({ env: { NODE_ENV: "production" } });
    try {
      const strict = pattern((await prod.request<Json>("GET", "/v1/openapi.json", { key: null })).body);
      expect(strict.test("http://localhost:4000/hooks")).toBe(false);
      expect(strict.test("https://example.org/hooks")).toBe(true);
    } finally {
      await prod.close();
    }
  });

  it("documents the pipeline's answers and headers on every operation", () => {
    for (const [path, methods] of Object.entries(paths))
      for (const [method, o] of Object.entries(methods)) {
        const where = `${method} ${path}`;
        expect(Object.keys(o.responses), where).toContain("405");
        for (const res of Object.values(o.responses))
          expect(Object.keys(res.headers ?? {}), where).toContain("X-Request-Id");
        if (o.requestBody)
          expect(Object.keys(o.responses), where).toEqual(expect.arrayContaining(["413", "415"]));
        if (param(o, "Idempotency-Key")) {
          expect(method, where).toBe("post");
          expect(Object.keys(o.responses), where).toEqual(expect.arrayContaining(["409", "422"]));
        } else expect(Object.keys(o.responses), where).not.toContain("422");
        // Every /v1 operation but the public document itself takes a key, and has its budget.
        if (path.startsWith("/v1/") && path !== "/v1/openapi.json") {
          expect(Object.keys(o.responses["429"]?.headers ?? {}), where).toEqual(
            expect.arrayContaining([
              "Retry-After",
              "X-RateLimit-Limit",
              "X-RateLimit-Remaining",
              "X-RateLimit-Reset",
            ]),
          );
        }
      }
  });

  it("documents Idempotency-Key, with its 409 and 422, only on the POSTs that take it", async () => {
    const takes = ["/v1/forms", "/v1/contacts", "/v1/payments/{id}/refund", "/api/forms/{formId}/checkout"];
    for (const path of takes)
      expect(param(op(path, "post"), "Idempotency-Key"), path).toMatchObject({ in: "header" });
    const ignores = [
      "/v1/forms/preview",
      "/v1/forms/{id}/preview",
      "/api/staff/login",
      "/api/staff/logout",
      "/api/staff/invites",
      "/api/manage/{organizationId}/link",
      "/api/manage/{organizationId}/session",
    ];
    for (const path of ignores) {
      const o = op(path, "post");
      expect(param(o, "Idempotency-Key"), path).toBeUndefined();
      expect(Object.keys(o.responses), path).not.toContain("422");
    }
    // A route that takes the header checks it; one that does not never reads it, malformed or not.
    const malformed = { "Idempotency-Key": "has space" };
    const body = { ...validForms.standard(), title: "Idempotency-Key check" };
    const preview = await t.request("POST", "/v1/forms/preview", { body, headers: malformed });
    expect(preview.status).toBe(200);
    const create = await t.request("POST", "/v1/forms", { body, headers: malformed });
    expect(create.status).toBe(400);
  });

  it("states each body default as a client sends it: sending the defaults equals sending nothing", async () => {
    const doc = (
      await t.request<{ components: { schemas: Record<string, Json> } }>("GET", "/v1/openapi.json")
    ).body;
    let schema = op("/v1/forms", "post").requestBody?.content["application/json"]?.schema ?? {};
    while (typeof schema.$ref === "string")
      schema = doc.components.schemas[schema.$ref.split("/").at(-1) as string] ?? {};
    const defaults = Object.fromEntries(
      Object.entries(schema.properties as Record<string, Json>)
        .filter(([, p]) => "default" in p)
        .map(([name, p]) => [name, p.default]),
    );
    expect(defaults).toHaveProperty("oneTimeAmounts");
    const read = async (body: Json) => {
      const made = await t.request<{ formID: string }>("POST", "/v1/forms", { body });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      const got = (await t.request<Json>("GET", `/v1/forms/${made.body.formID}`)).body;
      for (const own of ["formID", "formUrl", "embedHTML", "title", "createdAt", "updatedAt"])
        delete got[own];
      return got;
    };
    const implicit = await read({ title: "Defaults implicit", funds: ["General"] });
    const explicit = await read({ ...defaults, title: "Defaults explicit", funds: ["General"] });
    expect(explicit).toEqual(implicit);
    expect(implicit).toMatchObject({
      oneTimeAmounts: [25, 50, 100, 250, 500],
      monthlyAmounts: [10, 25, 50, 100],
    });
  });

  it("documents a form update as the server takes it: at least one field, and no create defaults", async () => {
    const body = (path: string, method: string) =>
      op(path, method).requestBody?.content["application/json"]?.schema ?? {};
    const defaulted = (schema: Json) =>
      Object.entries(schema.properties as Record<string, Json>)
        .filter(([, p]) => "default" in p)
        .map(([name]) => name);
    for (const method of ["put", "patch"]) {
      expect(body("/v1/forms/{id}", method).minProperties, method).toBe(1);
      expect(defaulted(body("/v1/forms/{id}", method)), method).toEqual([]);
    }
    // A preview of changes takes the same fields, `{}` included (the form as saved).
    expect(body("/v1/forms/{id}/preview", "post").minProperties).toBeUndefined();
    expect(defaulted(body("/v1/forms/{id}/preview", "post"))).toEqual([]);
    const made = await t.request<{ formID: string }>("POST", "/v1/forms", {
      body: { ...validForms.standard(), active: false, color: "#112233" },
    });
    const path = `/v1/forms/${made.body.formID}`;
    expect((await t.request("PUT", path, { body: {} })).status).toBe(400);
    // A field left out keeps its value, not the create's default.
    const updated = await t.request<{ form: Json }>("PATCH", path, { body: { description: "Changed" } });
    expect(updated.body.form).toMatchObject({ active: false, color: "#112233", description: "Changed" });
  });

  it("states a time zone as text with examples and a rule, not a list of one machine's names", async () => {
    const known = ["Asia/Kolkata", "Asia/Calcutta", "Europe/Kyiv", "Etc/UTC", "US/Eastern", "UTC"];
    known.push("America/Indiana/Indianapolis");
    const operations: [string, string, (zone: string) => Json][] = [
      ["/v1/forms", "post", (zone) => ({ ...validForms.standard(), timeZone: zone })],
      ["/v1/organization", "put", (zone) => ({ timeZone: zone })],
    ];
    for (const [path, method, body] of operations) {
      const o = op(path, method) as Operation & { "x-rules"?: { fields: string[] }[] };
      const schema = o.requestBody?.content["application/json"]?.schema ?? {};
      const zone = (schema.properties as Record<string, JsonSchema>).timeZone ?? {};
      expect(zone.enum, path).toBeUndefined();
      expect(zone.examples, path).toContain("America/New_York");
      expect(
        o["x-rules"]?.some((r) => r.fields.includes("timeZone")),
        path,
      ).toBe(true);
      for (const name of known) {
        expect(accepts(zone, name), `${path} ${name}`).toBe(true);
        expect((await t.request(method.toUpperCase(), path, { body: body(name) })).status, name).toBeLessThan(
          300,
        );
      }
      // Refused by the document's shape, and by the server.
      expect(accepts(zone, "utc"), path).toBe(false);
      expect((await t.request(method.toUpperCase(), path, { body: body("utc") })).status).toBe(400);
    }
    await t.request("PUT", "/v1/organization", { body: { timeZone: "UTC" } });
  });

  it("documents a 400 on every operation (a NUL in the URL) and a 413 on every one but a GET", async () => {
    for (const [path, methods] of Object.entries(paths))
      for (const [method, o] of Object.entries(methods)) {
        expect(Object.keys(o.responses), `${method} ${path}`).toContain("400");
        if (method !== "get") expect(Object.keys(o.responses), `${method} ${path}`).toContain("413");
      }
    const nul = await t.request("GET", "/api/staff/me?x=%00", { key: null });
    expect(nul.status).toBe(400);
    const big = JSON.stringify({ padding: "x".repeat(t.config.maxBodyBytes) });
    const hook = await t.request<{ webhookId: string }>("POST", "/v1/webhooks", {
      body: { url: "https://example.org/hook", events: ["donation.created"] },
    });
    const remove = await t.request("DELETE", `/v1/webhooks/${hook.body.webhookId}`, { rawBody: big });
    expect(remove.status).toBe(413);
  });

  it("states that a text the server trims must not be blank: spaces alone are refused by both", async () => {
    const cases: [string, Json, string | null | undefined][] = [
      ["/v1/keys", { name: " ", permissions: ["forms:read"] }, undefined],
      ["/api/staff/password-reset", { email: "  " }, null],
    ];
    for (const [path, body, key] of cases) {
      const schema = op(path, "post").requestBody?.content["application/json"]?.schema ?? {};
      expect(accepts(schema, body), path).toBe(false);
      const res = await t.request("POST", path, { body, key, headers: { Origin: t.config.publicUrl } });
      expect(res.status, path).toBe(400);
    }
  });

  it("names every operation with a unique operationId, a generated client's method name", () => {
    const ids = Object.values(paths).flatMap((methods) => Object.values(methods).map((o) => o.operationId));
    expect(ids.length).toBeGreaterThan(80);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z]+$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(op("/v1/forms", "get").operationId).toBe("listForms");
    expect(op("/v1/forms/{id}", "get").operationId).toBe("getForm");
    expect(op("/v1/forms/{id}", "patch").operationId).toBe("patchForm");
    expect(op("/v1/forms/{formID}/links/{linkID}/activate", "post").operationId).toBe("activateLink");
  });

  it("documents itself, and the PDF answers as files", async () => {
    const self = op("/v1/openapi.json", "get") as Operation & { security?: unknown[] };
    expect(self.security).toEqual([]);
    const answer = (self.responses["200"] as { content: Record<string, { schema: Json }> }).content;
    const served = await t.request("GET", "/v1/openapi.json", { key: null });
    expect(accepts(answer["application/json"]?.schema ?? {}, served.body)).toBe(true);
    for (const path of [
      "/api/manage/{organizationId}/receipts/{paymentID}",
      "/api/manage/{organizationId}/statement",
    ]) {
      const ok = op(path, "get").responses["200"] as { content?: Record<string, { schema: Json }> };
      expect(ok.content, path).toEqual({
        "application/pdf": { schema: { type: "string", format: "binary" } },
      });
    }
  });

  it("names the cookie sessions as security: the staff one beside the API key on /v1, and their own routes", async () => {
    const doc = (
      await t.request<{ components: { securitySchemes: Record<string, Json> } }>("GET", "/v1/openapi.json")
    ).body;
    expect(doc.components.securitySchemes.staffSession).toMatchObject({ type: "apiKey", in: "cookie" });
    expect(doc.components.securitySchemes.donorSession).toMatchObject({
      type: "apiKey",
      in: "cookie",
      name: "almoner_donor",
    });
    const schemes = (o: Operation) => (o.security ?? []).flatMap((s) => Object.keys(s));
    expect(schemes(op("/v1/forms", "get"))).toEqual(["bearerAuth", "staffSession"]);
    expect(schemes(op("/v1/openapi.json", "get"))).toEqual([]);
    expect(schemes(op("/api/staff/login", "post"))).toEqual([]);
    expect(schemes(op("/api/manage/{organizationId}/link", "post"))).toEqual([]);
    // Without its cookie, an operation that names a session is a 401.
    let checked = 0;
    for (const [path, methods] of Object.entries(paths))
      for (const [method, o] of Object.entries(methods)) {
        const [scheme, ...others] = schemes(o);
        if (!path.startsWith("/api/")) continue;
        if (scheme === undefined) continue;
        expect(others, path).toEqual([]);
        expect(["staffSession", "donorSession"], path).toContain(scheme);
        if (o.requestBody) continue;
        const url = path.replace("{organizationId}", t.org.id).replace(/\{\w+\}/g, "x");
        const res = await t.request(method.toUpperCase(), url, {
          key: null,
          headers: { Origin: t.config.publicUrl },
        });
        expect(res.status, `${method} ${path}`).toBe(401);
        checked++;
      }
    expect(checked).toBeGreaterThan(8);
  });

  it("states rules a schema cannot as x-rules, in the description too", () => {
    const create = op("/v1/forms", "post") as Operation & {
      "x-rules"?: { fields: string[] }[];
      description?: string;
    };
    expect(create["x-rules"]?.flatMap((r) => r.fields)).toEqual(
      expect.arrayContaining(["defaultFrequency", "goal"]),
    );
    expect(create.description).toContain("rules beyond the schema");
  });
});

describe(`a body declared as another media type than JSON (${dialect})`, () => {
  it("is a 415; JSON, none, and the types curl and browsers send by default are read as JSON", async () => {
    const body = JSON.stringify({ ...validForms.standard(), title: "Media types" });
    const send = (type: string | undefined) =>
      t.request("POST", "/v1/forms", { rawBody: body, headers: type ? { "Content-Type": type } : {} });
    const refused = await send("multipart/form-data; boundary=x");
    expect(refused.status).toBe(415);
    expect(refused.body.error).toMatch(/application\/json/);
    expect((await send("application/xml")).status).toBe(415);
    expect((await send("application/x-www-form-urlencoded")).status).toBe(201);
    expect((await send("application/json; charset=utf-8")).status).toBe(409);
    expect((await send(undefined)).status).toBe(409);
  });
});

describe(`the OpenAPI document's money and donor settings (${dialect})`, () => {
  let doc: { components: { schemas: Record<string, Json> } } & Json;
  beforeAll(async () => {
    doc = (await t.request<typeof doc>("GET", "/v1/openapi.json")).body;
  });
  /** Follows `$ref`s to components. */
  const resolve = (schema: Json | undefined): Json => {
    let s = schema ?? {};
    while (typeof s.$ref === "string") s = doc.components.schemas[s.$ref.split("/").at(-1) as string];
    return s;
  };
  const props = (schema: Json | undefined) => resolve(schema).properties as Record<string, Json>;
  const okBody = (path: string, method: string) =>
    (op(path, method).responses["200"] as { content: Record<string, { schema: Json }> }).content[
      "application/json"
    ].schema;

  it("gives payments and subscriptions any taken currency, and amounts in that currency's major units", () => {
    const payment = props(props(okBody("/v1/payments", "get")).payments.items as Json);
    expect(payment.currency.enum).toEqual(expect.arrayContaining(["USD", "EUR", "JPY"]));
    expect(String(payment.amount.description)).toMatch(/currency/);
    const sub = props(props(okBody("/v1/subscriptions", "get")).subscriptions.items as Json);
    expect(sub.currency.enum).toEqual(expect.arrayContaining(["EUR", "JPY"]));
    expect(JSON.stringify(doc)).not.toMatch(/US dollars/);
  });

  it("describes the organization's currency, language and legal details", () => {
    const org = props(op("/v1/organization", "put").requestBody?.content["application/json"]?.schema);
    for (const field of ["currency", "language", "legalName", "legalAddress", "taxId"])
      expect(org, field).toHaveProperty(field);
    expect(JSON.stringify(org.language)).toContain('"ar"');
    expect(JSON.stringify(org.currency)).toContain('"JPY"');
  });

  it("describes the forms' dedication, monthly offer and tickets' fair-market value", () => {
    const form = props(op("/v1/forms", "post").requestBody?.content["application/json"]?.schema);
    for (const field of [
      "enableTribute",
      "enableMonthlyUpsell",
      "monthlyUpsellRatio",
      "monthlyUpsellMinimum",
    ])
      expect(form, field).toHaveProperty(field);
    const ticket = props((resolve(form.tickets) as { items: Json }).items);
    expect(ticket).toHaveProperty("fairMarketValue");
    const payment = props(props(okBody("/v1/payments", "get")).payments.items as Json);
    expect(payment).toHaveProperty("tribute");
  });
  const field = (path: string, method: string, name: string) =>
    resolve(props(op(path, method).requestBody?.content["application/json"]?.schema)[name]) as JsonSchema;
  /** Sends each value of the field: the server takes it exactly when the document accepts it. */
  async function agree(
    path: string,
    method: string,
    name: string,
    values: unknown[],
    { id = "", extra = {} }: { id?: string; extra?: Json } = {},
  ) {
    const schema = field(path, method, name);
    for (const [i, value] of values.entries()) {
      const body = { ...extra, ...(extra.title ? { title: `${extra.title} ${i}` } : {}), [name]: value };
      const res = await t.request(method.toUpperCase(), path.replace("{id}", id), { body });
      const where = `${method} ${path} ${JSON.stringify(value)}: ${res.status} ${res.text}`;
      expect(res.status, where).toBeLessThan(500);
      expect(res.status < 300, where).toBe(accepts(schema, value));
    }
  }
  const aSubscription = async () =>
    (
      await subscribe(
        t,
        await createForm(t, { ...validForms.standard(), frequencies: ["ONE_TIME", "MONTHLY"] }),
      )
    ).id;

  it("states a recurring amount's range (above 0, at most 1,000,000) as the server takes it", async () => {
    expect(field("/v1/subscriptions/{id}", "put", "amount")).toMatchObject({
      exclusiveMinimum: 0,
      maximum: 1_000_000,
    });
    await agree("/v1/subscriptions/{id}", "put", "amount", [0, -1, 0.01, 0.5, 0.99, 1, 1.01, 25], {
      id: await aSubscription(),
    });
  });

  it("states returnUrl as the server takes it: https or local http, no credentials, a fragment kept", async () => {
    const id = await aSubscription();
    const returnUrls = [
      "https://example.org/a#b",
      "https://example.org/#/account/giving",
      "https://example.org#top",
      "http://localhost:3000/back#done",
      "http://[::1]/back",
      "https://user@example.org/a",
      "https://user:secret@example.org/a#b",
      "http://example.org/back#b",
      "http://user@localhost/back",
    ];
    await agree("/v1/subscriptions/{id}/payment-method-update-link", "post", "returnUrl", returnUrls, { id });
  });

  it("states headerImage without credentials, as the server takes it", async () => {
    await agree(
      "/v1/forms",
      "post",
      "headerImage",
      ["https://example.org/a.png", "https://user@example.org/a.png", "https://u:p@example.org/a.png"],
      { extra: { ...validForms.standard(), title: "Header" } },
    );
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dialect, setupTestApp, type TestApp } from "../support/testApp.js";

describe(`OpenAPI document and reference page (${dialect})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp();
  });
  afterAll(() => t.close());

  it("serves an OpenAPI 3.1 document without an API key, covering every /v1 endpoint", async () => {
    const res = await t.request<{ openapi: string; paths: Record<string, Record<string, unknown>> }>(
      "GET",
      "/v1/openapi.json",
      { key: null },
    );
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    const ops = Object.entries(res.body.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(ops).toEqual(
      expect.arrayContaining([
        "POST /v1/forms",
        "GET /v1/forms",
        "GET /v1/forms/{id}",
        "PUT /v1/forms/{id}",
        "PATCH /v1/forms/{id}",
        "DELETE /v1/forms/{id}",
        "GET /v1/organization",
        "PUT /v1/organization",
        "GET /v1/analytics/api-metrics",
        "POST /v1/forms/{formID}/links",
        "GET /v1/forms/{formID}/links",
        "GET /v1/forms/{formID}/links/{linkID}",
        "PUT /v1/forms/{formID}/links/{linkID}",
        "DELETE /v1/forms/{formID}/links/{linkID}",
        "POST /v1/forms/{formID}/links/{linkID}/activate",
        "POST /v1/forms/{formID}/links/{linkID}/deactivate",
      ]),
    );
  });

  it("documents the public donor checkout routes, marked as needing no API key", async () => {
    const res = await t.request<{
      paths: Record<string, Record<string, { security?: unknown[]; requestBody?: unknown }>>;
    }>("GET", "/v1/openapi.json", { key: null });
    const paths = res.body.paths;
    expect(Object.keys(paths)).toEqual(
      expect.arrayContaining([
        "/api/forms/{formId}",
        "/api/forms/{formId}/quote",
        "/api/forms/{formId}/checkout",
      ]),
    );
    const checkoutOp = paths["/api/forms/{formId}/checkout"].post;
    expect(checkoutOp.requestBody).toBeDefined();
    expect(checkoutOp.security).toEqual([]);
  });

  it("documents the form body with its rules (required fields, limits)", async () => {
    const res = await t.request<{
      paths: Record<
        string,
        Record<
          string,
          {
            requestBody?: {
              content: Record<
                string,
                { schema: { properties?: Record<string, { maxLength?: number }>; required?: string[] } }
              >;
            };
          }
        >
      >;
    }>("GET", "/v1/openapi.json", { key: null });
    const schema = res.body.paths["/v1/forms"].post.requestBody?.content["application/json"].schema;
    expect(schema?.required).toEqual(expect.arrayContaining(["title", "funds"]));
    expect(schema?.properties?.description?.maxLength).toBe(650);
  });

  it("renders a readable reference page at /docs with no external assets", async () => {
    const res = await t.request("GET", "/docs", { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    expect(res.text).toContain("/v1/forms/{id}");
    expect(res.text).toContain("Create a form");
    expect(res.text).not.toMatch(/<script[^>]+src=|<link[^>]+href="https?:/);
  });
});

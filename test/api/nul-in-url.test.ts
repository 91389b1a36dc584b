import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * A NUL character (`%00`) in a path or query value, or inside a pagination cursor, is a 400 naming it; it
 * never reaches the database (PostgreSQL refuses NUL in text, and a refused statement would fail the
 * requests and api-metrics rows written with it).
 */

interface ErrorBody {
  error: string;
  details?: string[];
}

let t: TestApp;
beforeAll(async () => {
  t = await setupTestApp();
});
afterAll(() => t.close());

describe(`NUL in a URL (${dialect})`, () => {
  it("answers 400 for a path id or a query filter holding %00, on public and keyed routes", async () => {
    const requests: [string, string, unknown][] = [
      ["POST", "/api/forms/%00/quote", {}],
      ["GET", "/v1/audit-log?actor=%00", undefined],
      ["GET", "/v1/contacts?email=a%00@b.example", undefined],
      ["DELETE", "/v1/keys/%00", undefined],
    ];
    for (const [method, path, body] of requests) {
      const res = await t.request<ErrorBody>(method, path, {
        body,
        key: path.startsWith("/api/") ? null : t.org.key,
      });
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(400);
      expect(res.body.details).toEqual(["The URL must not contain the NUL character (%00)"]);
    }
  });

  it("answers 400 for a list cursor forged to hold a NUL", async () => {
    const org = await t.newOrg();
    for (const title of ["Cursor one", "Cursor two"])
      expect(
        (await t.request("POST", "/v1/forms", { key: org.key, body: { ...validForms.standard(), title } }))
          .status,
      ).toBe(201);
    const page = await t.request<{ lastEvaluatedKey?: string }>("GET", "/v1/forms?limit=1", { key: org.key });
    const cursor = JSON.parse(Buffer.from(String(page.body.lastEvaluatedKey), "base64url").toString("utf8"));
    const forged = Buffer.from(JSON.stringify({ ...cursor, k: "\u0000" })).toString("base64url");
    const res = await t.request<ErrorBody>("GET", `/v1/forms?limit=1&lastEvaluatedKey=${forged}`, {
      key: org.key,
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.details?.[0]).toContain("lastEvaluatedKey");
  });

  it("keeps the api-metrics of a request to a path holding %00 with the others", async () => {
    const org = await t.newOrg();
    expect((await t.request("GET", "/v1/%00", { key: org.key })).status).toBe(404);
    expect((await t.request("GET", "/v1/organization", { key: org.key })).status).toBe(200);
    await t.deps.metrics.flush();
    const rows = await t.store.db
      .selectFrom("api_metrics")
      .select("endpoint")
      .where("organization_id", "=", org.id)
      .orderBy("created_at")
      .execute();
    expect(rows.map((r) => r.endpoint).sort()).toEqual(["/v1/%00", "/v1/organization"]);
  });

  it("answers 404 at once for a public form id that is no UUID, however long, before any record of it", async () => {
    const long = "a".repeat(3000);
    const quote = await t.request<ErrorBody>("POST", `/api/forms/${long}/quote`, {
      key: null,
      body: { amount: 10 },
      headers: { "Idempotency-Key": "long-id" },
    });
    expect(quote.status, quote.text).toBe(404);
    expect(quote.body.error).toBe("Form not found");
    const view = await t.request<ErrorBody>("GET", "/api/forms/not-a-form", { key: null });
    expect(view.status).toBe(404);
    expect(view.headers.get("Access-Control-Allow-Origin")).toBe("*");
    const buckets = await t.store.db.selectFrom("rate_limit_buckets").select("key_id").execute();
    expect(buckets.filter((b) => b.key_id.includes("aaaa"))).toEqual([]);
  });
});

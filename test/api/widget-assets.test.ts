import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dialect, setupTestApp, type TestApp } from "../support/testApp.js";

// `npm test` builds the widget before running the tests.
describe(`embed loader served to host pages (${dialect})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp();
  });
  afterAll(() => t.close());

  it("serves /embed.js as cacheable JavaScript with an ETag, and 304 when unchanged", async () => {
    const res = await t.request("GET", "/embed.js", { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/javascript/);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.text).toContain("almoner");
    const etag = res.headers.get("etag") as string;
    expect(etag).toMatch(/^".+"$/);
    const again = await t.request("GET", "/embed.js", { key: null, headers: { "If-None-Match": etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
  });
});

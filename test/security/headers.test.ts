import { afterEach, describe, expect, it } from "vitest";
import { setupTestApp, type TestApp } from "../support/testApp.js";

/** Headers every answer carries against content sniffing, framing and downgrade to http. */

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("response headers", () => {
  it("JSON answers, errors included, carry X-Content-Type-Options: nosniff", async () => {
    t = await setupTestApp();
    for (const res of [
      await t.request("GET", "/v1/forms"),
      await t.request("GET", "/v1/forms", { key: null }),
      await t.request("GET", "/v1/no-such-thing"),
      await t.request("GET", "/health", { key: null }),
    ])
      expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
  });

  it("/docs sends a Content-Security-Policy and refuses to be framed", async () => {
    t = await setupTestApp();
    const res = await t.app.request("/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    expect(res.headers.get("X-Frame-Options")).toBe("DENY");
  });

  it("the page of an unknown path sends a Content-Security-Policy and refuses to be framed", async () => {
    t = await setupTestApp();
    for (const path of ["/", "/no-such-page", "/donate/a/b"]) {
      const res = await t.app.request(path);
      expect(res.status).toBe(404);
      expect(res.headers.get("Content-Type")).toContain("text/html");
      expect(res.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
      expect(res.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
      expect(res.headers.get("X-Frame-Options")).toBe("DENY");
    }
  });

  it("HSTS is sent when PUBLIC_URL is https, and not over plain http", async () => {
    t = await setupTestApp({ env: { PUBLIC_URL: "https://give.example.org" } });
    expect((await t.app.request("/health")).headers.get("Strict-Transport-Security")).toMatch(
      /^max-age=\d{7,}/,
    );
    await t.close();
    t = await setupTestApp();
    expect((await t.app.request("/health")).headers.get("Strict-Transport-Security")).toBeNull();
  });
});

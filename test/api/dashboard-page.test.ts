import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dialect, setupTestApp, type TestApp } from "../support/testApp.js";

// `npm test` builds the dashboard (dist/dashboard/) before running the tests.
describe(`the staff dashboard's page and files (${dialect})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp();
  });
  afterAll(() => t.close());

  it("answers every path under /dashboard with the same shell, which loads the dashboard's module", async () => {
    for (const path of [
      "/dashboard",
      "/dashboard/",
      "/dashboard/payments",
      "/dashboard/payments/pay_123?x=1",
    ]) {
      const res = await t.request("GET", path, { key: null });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      expect(res.text).toContain('<div id="dashboard">');
      expect(res.text).toContain('<script type="module" src="/dashboard/assets/dashboard.js"></script>');
      expect(res.text).toMatch(
        /<link rel="stylesheet" href="\/dashboard\/assets\/dashboard\.css\?v=[\w-]+">/,
      );
    }
  });

  it("is never framed, cached or sent as a referrer, and runs only its own scripts and styles", async () => {
    const res = await t.request("GET", "/dashboard/setup?token=abc", { key: null });
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain("unsafe-inline");
    // The form editor's preview shows a header image from the organization's https site; nothing over http.
    expect(csp).toMatch(/img-src 'self' data: https:(;|$)/);
    // The shell has no inline script or style for the policy to refuse.
    expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(res.text).not.toContain("<style");
  });

  it("serves the module revalidated by ETag, and each page's chunk cacheable for good", async () => {
    const module = await t.request("GET", "/dashboard/assets/dashboard.js", { key: null });
    expect(module.status).toBe(200);
    expect(module.headers.get("content-type")).toMatch(/^application\/javascript/);
    expect(module.headers.get("cache-control")).toBe("no-cache");
    const etag = module.headers.get("etag") as string;
    const again = await t.request("GET", "/dashboard/assets/dashboard.js", {
      key: null,
      headers: { "If-None-Match": etag },
    });
    expect(again.status).toBe(304);

    const chunk = module.text.match(/import\("\.\/(dashboard-Payments-[\w-]+\.js)"\)/)?.[1];
    expect(chunk).toBeDefined();
    const page = await t.request("GET", `/dashboard/assets/${chunk}`, { key: null });
    expect(page.status).toBe(200);
    expect(page.headers.get("cache-control")).toContain("immutable");
    // A chunk imports the module by the very name the page loads it by: one module, not two.
    expect(page.text).toContain('from"./dashboard.js"');

    const css = await t.request("GET", "/dashboard/assets/dashboard.css?v=1", { key: null });
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    // Only the version of this very file is kept for good.
    expect(css.headers.get("cache-control")).toBe("no-cache");
    const named = (await t.request("GET", "/dashboard", { key: null })).text.match(
      /dashboard\.css\?v=([\w-]+)/,
    )?.[1];
    const current = await t.request("GET", `/dashboard/assets/dashboard.css?v=${named}`, { key: null });
    expect(current.headers.get("cache-control")).toContain("immutable");
  });

  it("serves nothing but the built files it names", async () => {
    for (const name of [
      "app.js",
      "..%2F..%2Fpackage.json",
      "dashboard-x.js",
      "dashboard.js.map",
      "portal.js",
    ]) {
      const res = await t.request("GET", `/dashboard/assets/${name}`, { key: null });
      expect(res.status, name).toBe(404);
    }
  });
});

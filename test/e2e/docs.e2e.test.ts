import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Browser,
  browserAvailable,
  launchBrowser,
  type ServedApp,
  serveTestApp,
} from "./support/browser.js";

/**
 * The human-facing pages in real Chromium against the app served over HTTP: the API reference at
 * /docs (complete, navigable, fully offline), /v1/openapi.json, and the hosted form page.
 */

const ENDPOINTS = [
  "POST /v1/forms",
  "GET /v1/forms",
  "GET /v1/forms/{id}",
  "PUT /v1/forms/{id}",
  "DELETE /v1/forms/{id}",
  "GET /v1/organization",
  "GET /v1/analytics/api-metrics",
];

describe.skipIf(!browserAvailable)("e2e in Chromium", () => {
  let served: ServedApp;
  let browser: Browser;

  beforeAll(async () => {
    served = await serveTestApp();
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  /** A new page that records every URL it requests. */
  async function openPage(): Promise<{ page: Page; requests: string[] }> {
    const page = await browser.context.newPage();
    const requests: string[] = [];
    page.on("request", (req) => requests.push(req.url()));
    return { page, requests };
  }

  function foreign(requests: string[]): string[] {
    return requests.filter((url) => new URL(url).origin !== served.baseUrl);
  }

  async function api<T = Record<string, unknown>>(method: string, path: string, body?: unknown) {
    const res = await fetch(served.baseUrl + path, {
      method,
      headers: {
        Authorization: `Bearer ${served.t.org.key}`,
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  }

  describe("/docs", () => {
    it("renders a section with a heading for every endpoint, with no request off the test server", async () => {
      const { page, requests } = await openPage();
      try {
        const res = await page.goto(`${served.baseUrl}/docs`, { waitUntil: "load" });
        expect(res?.status()).toBe(200);
        expect(await page.title()).toBe("Almoner API reference");
        await expect(
          page.getByRole("heading", { level: 1, name: "Almoner API reference" }).count(),
        ).resolves.toBe(1);

        for (const endpoint of ENDPOINTS) {
          const heading = page.locator("main section h3").filter({ hasText: endpoint });
          // The heading's text is exactly the method and path (no other endpoint shares it).
          const texts = await heading.evaluateAll((els) =>
            els.map((el) => (el.textContent ?? "").replace(/\s+/g, " ").trim()),
          );
          expect(
            texts.filter((t) => t === endpoint),
            endpoint,
          ).toHaveLength(1);
          const accessible = page.getByRole("heading", { level: 3, name: endpoint, exact: true });
          expect(await accessible.count(), endpoint).toBe(1);
          expect(await accessible.isVisible(), endpoint).toBe(true);

          // ...and the navigation links to it.
          const link = page.getByRole("navigation").getByRole("link", { name: endpoint, exact: true });
          expect(await link.count(), endpoint).toBe(1);
          const href = await link.getAttribute("href");
          expect(href, endpoint).toMatch(/^#[A-Za-z0-9-]+$/);
          const sectionHeading = await page
            .locator(`section[id="${href?.slice(1)}"] > h3`)
            .evaluate((el) => (el.textContent ?? "").replace(/\s+/g, " ").trim());
          expect(sectionHeading, endpoint).toBe(endpoint);
        }

        // The tag headings group the sections.
        for (const tag of ["Forms", "Organization", "Analytics"])
          expect(await page.getByRole("heading", { level: 2, name: tag, exact: true }).count()).toBe(1);

        // No script, stylesheet, font or image from anywhere else: the page works offline.
        await page.waitForLoadState("networkidle");
        expect(requests.length).toBeGreaterThan(0);
        expect(foreign(requests)).toEqual([]);
        expect(await page.locator("script").count()).toBe(0);
      } finally {
        await page.close();
      }
    });

    it("a navigation link targets and scrolls to its section", async () => {
      const { page, requests } = await openPage();
      try {
        await page.goto(`${served.baseUrl}/docs`, { waitUntil: "load" });
        expect(await page.evaluate(() => window.scrollY)).toBe(0);

        for (const endpoint of ["GET /v1/analytics/api-metrics", "DELETE /v1/forms/{id}", "POST /v1/forms"]) {
          const link = page.getByRole("navigation").getByRole("link", { name: endpoint, exact: true });
          const href = (await link.getAttribute("href")) as string;
          await link.click();
          await page.waitForFunction((h) => location.hash === h, href);

          const state = await page.evaluate((id) => {
            const target = document.querySelector(":target");
            const section = document.getElementById(id) as HTMLElement;
            const rect = section.getBoundingClientRect();
            return {
              targetId: target?.id ?? null,
              heading: (section.querySelector("h3")?.textContent ?? "").replace(/\s+/g, " ").trim(),
              top: rect.top,
              bottom: rect.bottom,
              viewport: window.innerHeight,
              scrollY: window.scrollY,
              maxScroll: document.documentElement.scrollHeight - window.innerHeight,
            };
          }, href.slice(1));

          expect(state.targetId, endpoint).toBe(href.slice(1));
          expect(state.heading, endpoint).toBe(endpoint);
          // The section is on screen: at the top, or as high as the page can scroll.
          expect(state.top, endpoint).toBeGreaterThanOrEqual(-1);
          expect(state.top, endpoint).toBeLessThan(state.viewport);
          if (state.scrollY < state.maxScroll - 1)
            expect(Math.abs(state.top), endpoint).toBeLessThanOrEqual(1);
          // The first Forms section sits below the intro, so reaching it needs a scroll too.
          expect(state.scrollY, endpoint).toBeGreaterThan(0);
        }
        expect(foreign(requests)).toEqual([]);
      } finally {
        await page.close();
      }
    });

    it("/v1/openapi.json loads in the browser and parses as OpenAPI 3.1.0", async () => {
      const { page, requests } = await openPage();
      try {
        const res = await page.goto(`${served.baseUrl}/v1/openapi.json`);
        expect(res?.status()).toBe(200);
        expect(res?.headers()["content-type"]).toMatch(/^application\/json/);
        const doc = JSON.parse(await (res as NonNullable<typeof res>).text());
        expect(doc.openapi).toBe("3.1.0");
        expect(doc.info.title).toBe("Almoner API");
        expect(doc.servers).toEqual([{ url: served.baseUrl }]);
        for (const endpoint of ENDPOINTS) {
          const [method, path] = endpoint.split(" ");
          expect(doc.paths[path]?.[method.toLowerCase()], endpoint).toBeDefined();
        }
        // The docs page's link to it works too.
        await page.goto(`${served.baseUrl}/docs`);
        const [json] = await Promise.all([
          page.waitForResponse(`${served.baseUrl}/v1/openapi.json`),
          page.getByRole("link", { name: "openapi.json", exact: true }).click(),
        ]);
        expect(json.status()).toBe(200);
        expect(JSON.parse(await json.text()).openapi).toBe("3.1.0");
        expect(foreign(requests)).toEqual([]);
      } finally {
        await page.close();
      }
    });
  });

  describe("hosted form page", () => {
    async function createForm(body: Record<string, unknown>) {
      const res = await api<{ formID: string; formUrl: string }>("POST", "/v1/forms", body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.formUrl).toBe(`${served.baseUrl}/donate/${res.body.formID}`);
      return res.body;
    }

    it("shows the form's title in the page title and heading", async () => {
      const title = `Spring Appeal ${Math.random().toString(36).slice(2, 8)}`;
      const form = await createForm({ title, funds: ["General"], description: "Help us plant trees." });
      const { page, requests } = await openPage();
      try {
        const res = await page.goto(form.formUrl, { waitUntil: "load" });
        expect(res?.status()).toBe(200);
        expect(await page.title()).toBe(title);
        expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(title);
        expect(await page.getByText("Help us plant trees.").isVisible()).toBe(true);
        expect(foreign(requests)).toEqual([]);
      } finally {
        await page.close();
      }
    });

    it("shows HTML in a title or description as text and never runs it", async () => {
      const title = `Gala <img src=x onerror=window.__xss=1> ${Math.random().toString(36).slice(2, 8)}`;
      const description = "<script>window.__xss=2</script><b>bold?</b>";
      const form = await createForm({ title, funds: ["General"], description });
      const { page, requests } = await openPage();
      try {
        const res = await page.goto(form.formUrl, { waitUntil: "load" });
        expect(res?.status()).toBe(200);
        await page.waitForLoadState("networkidle");
        expect(await page.title()).toBe(title);
        expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(title);
        expect(await page.getByText(description, { exact: true }).count()).toBe(1);
        expect(await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss)).toBeUndefined();
        expect(await page.locator("img, b").count()).toBe(0);
        // The only scripts are the page's own: the checkout app and its (never executed) JSON data.
        const scripts = await page
          .locator("script")
          .evaluateAll((els) => els.map((el) => el.getAttribute("type") ?? ""));
        expect(scripts.sort()).toEqual(["application/json", "module"]);
        expect(foreign(requests)).toEqual([]);
        // The injected <img src=x> never became a request: only the page and the checkout app's files.
        expect(requests.filter((url) => !new URL(url).pathname.startsWith("/checkout/"))).toEqual([
          form.formUrl,
        ]);
      } finally {
        await page.close();
      }
    });

    it("a deleted form's page answers 410 with the no-longer-available message", async () => {
      const form = await createForm({
        title: `Old Drive ${Math.random().toString(36).slice(2, 8)}`,
        funds: ["General"],
      });
      const del = await api("DELETE", `/v1/forms/${form.formID}`);
      expect(del.status).toBe(200);
      const { page } = await openPage();
      try {
        const res = await page.goto(form.formUrl, { waitUntil: "load" });
        expect(res?.status()).toBe(410);
        expect(await page.title()).toBe("Form no longer available");
        expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(
          "This form is no longer available",
        );
        expect(await page.getByText("The organization has removed this form.").isVisible()).toBe(true);
      } finally {
        await page.close();
      }
    });
  });
});

import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { Window } from "happy-dom";
import { createBuilder, type Rollup } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assetVersion, CHECKOUT_CHUNK } from "../../server/pages/assets.js";
import { LANGUAGES } from "../../shared/languages.js";
import { setupTestApp, type TestApp } from "../support/testApp.js";

/**
 * The widget's size budgets, checked against a fresh build with the repository's vite.config.ts. The build
 * stays in memory (write: false): it is exactly what `vite build` writes to dist/widget/, and test runs in
 * parallel never race on the files there.
 */

const EMBED_BUDGET_GZIP_BYTES = 2048;
const OVERLAY_BUDGET_GZIP_BYTES = 2048;
/**
 * What a page needs to draw and hydrate the checkout: app.js and app.css. What runs only once the donor acts
 * is in chunks loaded later, outside this budget.
 */
const FIRST_PAINT_BUDGET_GZIP_BYTES = 20 * 1024;
/** What a page in another language may add to an English page's first paint (its own messages). */
const LANGUAGE_BUDGET_GZIP_BYTES = 3 * 1024;
const HOSTED_PAGE_BUDGET_BYTES = 30 * 1024;
const configFile = fileURLToPath(new URL("../../vite.config.ts", import.meta.url));

async function buildInMemory(environment: string, fileName: string): Promise<string> {
  const builder = await createBuilder({
    configFile,
    logLevel: "warn",
    environments: { [environment]: { build: { write: false } } },
  });
  const output = (await builder.build(builder.environments[environment])) as Rollup.RollupOutput;
  const chunk = output.output.find((file) => file.fileName === fileName);
  if (chunk?.type !== "chunk") throw new Error(`the ${environment} build has no ${fileName}`);
  return chunk.code;
}

describe("embed.js as built", () => {
  let code: string;

  beforeAll(async () => {
    code = await buildInMemory("embed", "embed.js");
  });

  it(`is at most ${EMBED_BUDGET_GZIP_BYTES} bytes gzipped`, () => {
    const gzipped = gzipSync(code).length;
    console.log(`[budget] embed.js: ${code.length} bytes minified, ${gzipped} bytes gzipped`);
    expect(gzipped).toBeLessThanOrEqual(EMBED_BUDGET_GZIP_BYTES);
  });

  it("runs as a classic script on a host page and sizes the embed", async () => {
    const errors: unknown[] = [];
    const host = new Window({
      url: "https://host.example/giving",
      // The script evaluated is the one just built from this repository.
      settings: { enableJavaScriptEvaluation: true, suppressInsecureJavaScriptEnvironmentWarning: true },
      console: {
        ...console,
        error: (...args: unknown[]) => {
          if (!String(args[0]).includes("Iframe page loading is disabled")) errors.push(args);
        },
      },
    });
    try {
      const { document } = host;
      document.body.innerHTML =
        '<iframe data-almoner-form="f1" src="https://forms.example/donate/f1?embed=1" style="height:720px"></iframe>';
      const iframe = document.querySelector("iframe");
      if (!iframe) throw new Error("no iframe");
      const frameWindow = {};
      Object.defineProperty(iframe, "contentWindow", { get: () => frameWindow });
      for (let i = 0; i < 2; i++) {
        const script = document.createElement("script");
        script.textContent = code;
        document.body.append(script);
      }

      const id = iframe.getAttribute("data-almoner-embed-id");
      expect(iframe.getAttribute("src")).toBe(`https://forms.example/donate/f1?embed=1&embedId=${id}`);
      expect((host as unknown as { Almoner: { embeds: unknown[] } }).Almoner.embeds).toHaveLength(1);
      const data = { source: "almoner", version: 1, type: "resize", embedId: id, height: 1040 };
      host.dispatchEvent(new host.MessageEvent("message", { data, origin: "https://evil.example" }));
      expect(iframe.style.height).toBe("720px");
      const source = frameWindow as Window["window"];
      host.dispatchEvent(new host.MessageEvent("message", { data, origin: "https://forms.example", source }));
      expect(iframe.style.height).toBe("1040px");
      expect(errors).toEqual([]);
    } finally {
      await host.happyDOM.close();
    }
  });
});

describe("overlay.js as built", () => {
  let code: string;

  beforeAll(async () => {
    code = await buildInMemory("overlay", "overlay.js");
  });

  it(`is at most ${OVERLAY_BUDGET_GZIP_BYTES} bytes gzipped`, () => {
    const gzipped = gzipSync(code).length;
    console.log(`[budget] overlay.js: ${code.length} bytes minified, ${gzipped} bytes gzipped`);
    expect(gzipped).toBeLessThanOrEqual(OVERLAY_BUDGET_GZIP_BYTES);
  });

  it("runs as a classic script on a host page and opens the checkout of the script's own origin", async () => {
    const errors: unknown[] = [];
    const formId = "6f1c2a9e-3b4d-4c8e-9f00-112233445566";
    const host = new Window({
      url: `https://host.example/giving?donate&formid=${formId}&elementid=link_1&utm_source=news`,
      settings: { enableJavaScriptEvaluation: true, suppressInsecureJavaScriptEnvironmentWarning: true },
      console: {
        ...console,
        error: (...args: unknown[]) => {
          if (!String(args[0]).includes("Iframe page loading is disabled")) errors.push(args);
        },
      },
    });
    // The script asks the form host whether this site may open the form; here it may.
    const asked: string[] = [];
    Object.defineProperty(host, "fetch", {
      value: async (input: string) => {
        asked.push(String(input));
        return new Response(null, { status: 204 });
      },
    });
    try {
      const { document } = host;
      document.body.innerHTML = "<main><button>Give</button></main>";
      // The script reads its own origin from document.currentScript, as when loaded from the form host.
      const self = document.createElement("script");
      self.setAttribute("src", "https://forms.example/overlay.js");
      Object.defineProperty(document, "currentScript", { configurable: true, get: () => self });
      for (let i = 0; i < 2; i++) {
        const script = document.createElement("script");
        script.textContent = code;
        document.body.append(script);
      }

      const frames = document.querySelectorAll('[role="dialog"][aria-modal="true"] iframe');
      expect(frames).toHaveLength(1);
      const src = new URL(frames[0].getAttribute("src") ?? "");
      expect(src.origin + src.pathname).toBe(`https://forms.example/donate/${formId}`);
      expect(src.searchParams.get("elementid")).toBe("link_1");
      expect(src.searchParams.get("utm_source")).toBe("news");
      expect(asked).toEqual([`https://forms.example/api/forms/${formId}/overlay`]);

      document.body.dispatchEvent(new host.KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
      expect(document.querySelector('[role="dialog"]')).toBeNull();
      expect(host.location.href).toBe("https://host.example/giving?utm_source=news");
      expect(errors).toEqual([]);
    } finally {
      await host.happyDOM.close();
    }
  });
});

describe("checkout app as built (app.js + app.css, then its chunks)", () => {
  let output: Rollup.RollupOutput;

  beforeAll(async () => {
    // Under vitest NODE_ENV is "test", which would make Vite compile JSX in development mode (with source
    // locations); `vite build` runs with "production".
    const env = process.env.NODE_ENV;
    process.env.NODE_ENV = "production";
    try {
      const builder = await createBuilder({
        configFile,
        logLevel: "warn",
        environments: { app: { build: { write: false } } },
      });
      output = (await builder.build(builder.environments.app)) as Rollup.RollupOutput;
    } finally {
      process.env.NODE_ENV = env;
    }
  });

  const entry = () => {
    const file = output.output.find((f) => f.fileName === "app.js");
    if (file?.type !== "chunk") throw new Error("the app build has no app.js");
    return file;
  };
  const chunks = () =>
    output.output.filter((f): f is Rollup.OutputChunk => f.type === "chunk" && f.fileName !== "app.js");

  it(`paints and hydrates with at most ${FIRST_PAINT_BUDGET_GZIP_BYTES} bytes gzipped: app.js and app.css, not the chunks loaded later`, () => {
    // The page loads app.js and app.css; app.js imports nothing else before it has hydrated the page.
    expect(entry().imports).toEqual([]);
    expect(chunks().length).toBeGreaterThan(0);
    const sizes = new Map<string, number>();
    for (const file of output.output) {
      const text = file.type === "chunk" ? file.code : String(file.source);
      sizes.set(file.fileName, gzipSync(text).length);
      console.log(
        `[budget] ${file.fileName}: ${text.length} bytes minified, ${sizes.get(file.fileName)} bytes gzipped`,
      );
    }
    expect([...sizes.keys()].filter((name) => !name.endsWith(".js"))).toEqual(["app.css"]);
    const firstPaint = (sizes.get("app.js") ?? 0) + (sizes.get("app.css") ?? 0);
    const later = chunks().reduce((sum, chunk) => sum + (sizes.get(chunk.fileName) ?? 0), 0);
    console.log(
      `[budget] checkout first paint: ${firstPaint} bytes gzipped (app.js ${sizes.get("app.js")} + app.css ${sizes.get("app.css")}); loaded later: ${later} bytes gzipped`,
    );
    expect(firstPaint).toBeLessThanOrEqual(FIRST_PAINT_BUDGET_GZIP_BYTES);
  });

  it("names its chunks as the server serves them, and they import the very app.js the page loads", () => {
    const page = `./app.js?v=${assetVersion(entry().code)}`;
    for (const chunk of chunks()) {
      expect(chunk.fileName).toMatch(CHECKOUT_CHUNK);
      expect(entry().dynamicImports).toContain(chunk.fileName);
      expect(entry().code).toContain(`import("./${chunk.fileName}")`);
      // A chunk importing app.js under another URL would run a second copy of the app.
      const specifiers = [...chunk.code.matchAll(/from\s*["']([^"']+)["']/g)].map((m) => m[1]);
      expect(specifiers).toEqual([page]);
    }
  });
});

describe("hosted page first response", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  // The largest pages: every section a form can show, with long texts.
  const long = (n: number) => "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(n).trim();
  const forms: Record<string, Record<string, unknown>> = {
    standard: {
      description: long(8),
      funds: ["General", "Scholarships", "Building"],
      frequencies: ["ONE_TIME", "WEEKLY", "MONTHLY", "ANNUALLY"],
      enableFundraisingBar: true,
      goal: 50000,
      enableDonorList: true,
      enableOrganizationName: true,
      enableBillingAddress: true,
      enableCountryDropdown: true,
      enablePhone: true,
      customInputs: [
        { title: "In honor of", inputType: "short_text", required: true },
        { title: "Message", inputType: "long_text" },
        { title: "Shirt", inputType: "single_select", options: ["S", "M", "L", "XL"] },
        { title: "Interests", inputType: "multi_select", options: ["Trees", "Rivers", "Birds"] },
      ],
      faqs: Array.from({ length: 6 }, (_, i) => ({ question: `Question ${i}?`, answer: long(3) })),
    },
    event: {
      formType: "event",
      description: long(8),
      enableTimeAndLocation: true,
      eventDate: "2027-05-15",
      startTime: "18:30",
      endTime: "22:00",
      location: "Riverside Hall",
      eventDetails: long(4),
      tickets: Array.from({ length: 8 }, (_, i) => ({
        name: `Ticket ${i}`,
        price: 50 + i,
        quantity: 100,
        maxPerOrder: 10,
      })),
      promoCodes: [{ code: "EARLY", discountType: "percentage", discountValue: 10 }],
      enableCountryDropdown: true,
    },
  };

  /** A new form of this kind, and the path of its hosted page. */
  let made = 0;
  async function formPage(kind: string): Promise<string> {
    const title = `Budget ${kind}${made++ ? ` ${made}` : ""}`;
    const created = await t.request<{ formID: string; formUrl: string }>("POST", "/v1/forms", {
      body: { title, funds: ["General"], ...forms[kind] },
    });
    expect(created.status, created.text).toBe(201);
    return `/${kind === "event" ? "attend" : "donate"}/${created.body.formID}`;
  }

  /** The URL a page names a checkout file by (`npm test` builds the widget before the tests). */
  function assetUrl(html: string, name: "app.js" | "app.css"): string {
    const url = new RegExp(`"(/checkout/${name.replace(".", "\\.")}\\?v=[\\w-]+)"`).exec(html)?.[1];
    if (!url) throw new Error(`the page names no built ${name}: run npm run build`);
    return url;
  }

  /** What the browser gets for a page's first paint, gzipped: its HTML, app.js and app.css. */
  async function firstPaint(path: string, language: string) {
    const res = await t.app.request(`${path}?lang=${encodeURIComponent(language)}`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(html).toContain(`<html lang="${language}"`);
    let assets = 0;
    for (const name of ["app.js", "app.css"] as const) {
      const asset = await t.app.request(assetUrl(html, name));
      expect(asset.status, name).toBe(200);
      assets += gzipSync(await asset.text()).length;
    }
    const page = gzipSync(html).length;
    return { page, assets, total: page + assets };
  }

  for (const kind of Object.keys(forms)) {
    it(`is at most ${HOSTED_PAGE_BUDGET_BYTES} bytes for a full ${kind} form`, async () => {
      const res = await t.app.request(await formPage(kind));
      const bytes = Buffer.byteLength(await res.text());
      console.log(`[budget] hosted ${kind} page: ${bytes} bytes`);
      expect(res.status).toBe(200);
      expect(bytes).toBeLessThanOrEqual(HOSTED_PAGE_BUDGET_BYTES);
    });

    it(`in ${LANGUAGES.filter((l) => l !== "en").join(", ")}, adds at most ${LANGUAGE_BUDGET_GZIP_BYTES} bytes gzipped to the English first paint of a full ${kind} form`, async () => {
      // The page carries its own language's compiled messages in its boot data; the scripts are the same.
      const path = await formPage(kind);
      const english = await firstPaint(path, "en");
      console.log(
        `[budget] ${kind} page first paint in en: ${english.total} bytes gzipped (HTML ${english.page} + app.js and app.css ${english.assets})`,
      );
      for (const language of LANGUAGES.filter((l) => l !== "en")) {
        const other = await firstPaint(path, language);
        const added = other.total - english.total;
        console.log(
          `[budget] ${kind} page first paint in ${language}: ${other.total} bytes gzipped (HTML ${other.page}), ${added} over English`,
        );
        expect(added, language).toBeLessThanOrEqual(LANGUAGE_BUDGET_GZIP_BYTES);
      }
    });
  }

  it("serves app.js's chunks by their names: JavaScript, cacheable for good, with an ETag; they import the page's app.js", async () => {
    const html = await (await t.app.request(await formPage("standard"))).text();
    const app = assetUrl(html, "app.js");
    const code = await (await t.app.request(app)).text();
    const chunks = [...code.matchAll(/import\("\.\/(app-[\w-]+\.js)"\)/g)].map((m) => m[1]);
    expect(chunks.length).toBeGreaterThan(0);
    for (const name of chunks) {
      const res = await t.app.request(`/checkout/${name}`);
      expect(res.status, name).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/javascript/);
      expect(res.headers.get("cache-control")).toContain("immutable");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      // Resolved against the chunk's own URL, its import of app.js is the URL the page loaded: one app.js.
      expect(await res.text()).toContain(`"./${app.slice("/checkout/".length)}"`);
      const etag = res.headers.get("etag") as string;
      const again = await t.app.request(`/checkout/${name}`, { headers: { "If-None-Match": etag } });
      expect(again.status).toBe(304);
    }
    for (const name of ["app-none-0000000000.js", "app-..%2Fapp.js", "app-x.js.map"])
      expect((await t.app.request(`/checkout/${name}`)).status, name).toBe(404);
  });
});

/** What the staff dashboard's first load may weigh: its module, its stylesheet and the first page's chunks. */
const DASHBOARD_FIRST_LOAD_BUDGET_GZIP_BYTES = 40 * 1024;

describe("staff dashboard as built (dashboard.js + dashboard.css, then one chunk per page)", () => {
  let output: Rollup.RollupOutput;

  beforeAll(async () => {
    const env = process.env.NODE_ENV;
    process.env.NODE_ENV = "production";
    try {
      const builder = await createBuilder({
        configFile,
        logLevel: "warn",
        environments: { dashboard: { build: { write: false } } },
      });
      output = (await builder.build(builder.environments.dashboard)) as Rollup.RollupOutput;
    } finally {
      process.env.NODE_ENV = env;
    }
  });

  const gzipped = (fileName: string): number => {
    const file = output.output.find((f) => f.fileName === fileName);
    if (!file) throw new Error(`the dashboard build has no ${fileName}`);
    return gzipSync(file.type === "chunk" ? file.code : String(file.source)).length;
  };
  /** A chunk and every chunk it imports statically (what the browser fetches to run it). */
  const closure = (fileName: string, seen = new Set<string>()): Set<string> => {
    const file = output.output.find((f) => f.fileName === fileName);
    if (file?.type !== "chunk" || seen.has(fileName)) return seen;
    seen.add(fileName);
    for (const name of file.imports) closure(name, seen);
    return seen;
  };

  it(`opens its first page with at most ${DASHBOARD_FIRST_LOAD_BUDGET_GZIP_BYTES} bytes gzipped of JS and CSS`, () => {
    const entry = output.output.find((f) => f.fileName === "dashboard.js");
    if (entry?.type !== "chunk") throw new Error("the dashboard build has no dashboard.js");
    // Every page is a chunk of its own, loaded when it is first opened.
    const pages = entry.dynamicImports;
    expect(pages.length).toBeGreaterThanOrEqual(8);
    const shell = gzipped("dashboard.js") + gzipped("dashboard.css");
    // The first page someone opens is home when signed in, the sign-in page otherwise, or a set-up link.
    let heaviest = 0;
    for (const name of ["Home", "SignIn", "Setup"]) {
      const page = pages.find((file) => file.startsWith(`dashboard-${name}-`));
      expect(page, name).toBeDefined();
      const files = [...closure(page as string)].filter((file) => file !== "dashboard.js");
      const size = files.reduce((sum, file) => sum + gzipped(file), 0);
      console.log(`[budget] dashboard first load with ${name}: ${shell + size} bytes gzipped`);
      heaviest = Math.max(heaviest, size);
    }
    expect(shell + heaviest).toBeLessThanOrEqual(DASHBOARD_FIRST_LOAD_BUDGET_GZIP_BYTES);
  });

  it("keeps donor-side code out: the dashboard does not bundle the checkout app or zod", () => {
    const code = output.output.map((f) => (f.type === "chunk" ? f.code : "")).join("\n");
    expect(code).not.toContain("ZodError");
    expect(output.output.some((f) => f.fileName.startsWith("app"))).toBe(false);
  });
});

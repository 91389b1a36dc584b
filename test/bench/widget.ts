import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { createBuilder } from "vite";
import { CHROMIUM_PATH } from "../e2e/support/browser.js";
import { killAllServersNow, ROOT, startServer, stopAllServers } from "./processes.js";

/**
 * `npm run bench` (second part): the widget's sizes and the hosted page's speed. Builds the widget as
 * `vite build` does, prints each file's size (gzipped as served by a compressing proxy), starts the
 * server as `npm start` does (fresh database with the demo forms, 127.0.0.1), and loads the first demo
 * form's hosted page in headless Chromium: first contentful paint from the paint timing entries, the
 * moment the checkout app has hydrated (the app's `almoner:hydrated` mark when it sets one; else when the
 * app enables the submit button the server renders disabled; else DOMContentLoaded end: the app is a
 * deferred module that hydrates synchronously, so it has run by then),
 * and time to interactive as the later of the two. Each load then checks the app responds to a click. Cold loads use a new browser context each (empty cache); warm loads reload in the
 * same context. Medians of BENCH_PAGE_LOADS loads (default 15). Prints figures only; never fails on them.
 */

const LOADS = Math.max(1, Number(process.env.BENCH_PAGE_LOADS ?? 15) || 15);
const WIDGET_DIR = path.join(ROOT, "dist/widget");
const BUDGETS: Record<string, number> = { "embed.js": 2048, "overlay.js": 2048 };
/** What the hosted page needs to draw and hydrate the checkout: app.js and app.css (not its chunks). */
const FIRST_PAINT_BUDGET = 20 * 1024;
const PAGE_BUDGET = 30 * 1024;

const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`;
const median = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

async function build(): Promise<void> {
  const builder = await createBuilder({ configFile: path.join(ROOT, "vite.config.ts"), logLevel: "warn" });
  await builder.buildApp();
}

/** The widget's files; the checkout app's chunks (app-<name>-<hash>.js, loaded after first paint) last. */
function fileSizes(): { name: string; raw: number; gzip: number }[] {
  const chunks = fs.readdirSync(WIDGET_DIR).filter((name) => /^app-.+\.js$/.test(name));
  return ["embed.js", "overlay.js", "app.js", "app.css", ...chunks].map((name) => {
    const body = fs.readFileSync(path.join(WIDGET_DIR, name));
    return { name, raw: body.length, gzip: gzipSync(body).length };
  });
}

const DASHBOARD_DIR = path.join(ROOT, "dist/dashboard");
/** The staff dashboard's first load: its module and stylesheet and the first page opened, with its imports. */
const DASHBOARD_BUDGET = 40 * 1024;

function dashboardFirstLoad(): { gzip: number; pages: string } {
  const gzipOf = (name: string) => gzipSync(fs.readFileSync(path.join(DASHBOARD_DIR, name))).length;
  const files = fs.readdirSync(DASHBOARD_DIR);
  // A chunk and the chunks it imports statically (the module itself is counted once, below).
  const closure = (name: string, seen: Set<string>): Set<string> => {
    if (seen.has(name) || name === "dashboard.js") return seen;
    seen.add(name);
    const code = fs.readFileSync(path.join(DASHBOARD_DIR, name), "utf8");
    for (const m of code.matchAll(/(?:from|import)\s*"\.\/(dashboard-[\w-]+\.js)"/g)) closure(m[1], seen);
    return seen;
  };
  const firstPages = ["Home", "SignIn", "Setup"];
  let heaviest = 0;
  for (const page of firstPages) {
    const chunk = files.find((name) => name.startsWith(`dashboard-${page}-`));
    if (!chunk) continue;
    heaviest = Math.max(
      heaviest,
      [...closure(chunk, new Set())].reduce((sum, name) => sum + gzipOf(name), 0),
    );
  }
  return { gzip: gzipOf("dashboard.js") + gzipOf("dashboard.css") + heaviest, pages: firstPages.join(", ") };
}

type Source = "mark" | "button" | "domcontentloaded";
const SOURCE_NAMES: Record<Source, string> = {
  mark: "the app's almoner:hydrated mark",
  button: "the server-rendered submit button enabled by the app",
  domcontentloaded: "DOMContentLoaded end",
};

/**
 * Runs in the page before its scripts: the hosted page renders the submit button disabled and the app
 * enables it once it has taken the page over, so that moment is when the checkout became usable.
 */
function watchSubmitButton(): void {
  const w = window as unknown as { __almonerSawDisabled?: boolean; __almonerEnabledAt?: number };
  const observer = new MutationObserver(() => {
    const button = document.querySelector<HTMLButtonElement>("button.alm-submit");
    if (!button) return;
    if (button.disabled) w.__almonerSawDisabled = true;
    else if (w.__almonerSawDisabled) {
      w.__almonerEnabledAt = performance.now();
      observer.disconnect();
    }
  });
  observer.observe(document, {
    subtree: true,
    childList: true,
    attributes: true,
    attributeFilter: ["disabled"],
  });
}

interface PageTiming {
  fcp: number;
  hydrated: number;
  /** Painted and hydrated: the later of the two. */
  interactive: number;
  source: Source;
}

async function main(): Promise<void> {
  console.log("\n== Widget sizes and hosted page speed ==\n");
  await build();
  const sizes = fileSizes();
  for (const s of sizes) {
    const budget = BUDGETS[s.name];
    console.log(
      `${s.name.padEnd(12)} ${String(s.raw).padStart(7)} B minified  ${String(s.gzip).padStart(6)} B gzipped` +
        (budget ? `  (budget ${budget} B: ${s.gzip <= budget ? "met" : "MISSED"})` : ""),
    );
  }
  const app = sizes.filter((s) => s.name.startsWith("app.")).reduce((sum, s) => sum + s.gzip, 0);
  const later = sizes.filter((s) => s.name.startsWith("app-")).reduce((sum, s) => sum + s.gzip, 0);
  console.log(
    `checkout first paint (app.js + app.css) ${app} B gzipped (${kb(app)}; budget ${kb(FIRST_PAINT_BUDGET)}: ${app <= FIRST_PAINT_BUDGET ? "met" : "MISSED"}); chunks loaded later ${later} B gzipped`,
  );

  const dashboard = dashboardFirstLoad();
  console.log(
    `staff dashboard first load (dashboard.js + dashboard.css + the first page's chunks, heaviest of ${dashboard.pages}) ${dashboard.gzip} B gzipped (${kb(dashboard.gzip)}; budget ${kb(DASHBOARD_BUDGET)}: ${dashboard.gzip <= DASHBOARD_BUDGET ? "met" : "MISSED"})`,
  );

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-bench-widget-"));
  let browser: Awaited<ReturnType<typeof chromium.launch>> | undefined;
  try {
    const server = await startServer("server", "server/index.ts", {
      DATA_DIR: dataDir,
      NODE_ENV: "development",
    });
    // The demo forms are printed just after the listening line.
    let match: RegExpExecArray | null = null;
    for (let i = 0; i < 50 && !match; i++) {
      match = /\/donate\/([0-9a-f-]{36})/.exec(server.output());
      if (!match) await new Promise((r) => setTimeout(r, 100));
    }
    if (!match) throw new Error(`no demo form in the server's output:\n${server.output()}`);
    const pageUrl = `${server.url}/donate/${match[1]}`;

    const res = await fetch(pageUrl);
    const html = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`${pageUrl} answered ${res.status}`);
    console.log(
      `hosted page HTML ${html.length} B (${kb(html.length)}; budget ${kb(PAGE_BUDGET)}: ${html.length <= PAGE_BUDGET ? "met" : "MISSED"}), ${gzipSync(html).length} B gzipped`,
    );

    // Playwright gives the browser a fresh, throw-away profile.
    browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });

    const measure = async (page: import("playwright-core").Page): Promise<PageTiming> => {
      await page.waitForFunction(() => performance.getEntriesByName("first-contentful-paint").length > 0);
      await page.locator("button.alm-submit:not([disabled])").waitFor();
      const t = await page.evaluate(() => {
        const fcp = performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? Number.NaN;
        const mark = performance.getEntriesByName("almoner:hydrated")[0];
        const enabledAt = (window as unknown as { __almonerEnabledAt?: number }).__almonerEnabledAt;
        const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
        const [hydrated, source]: [number, Source] = mark
          ? [mark.startTime, "mark"]
          : enabledAt !== undefined
            ? [enabledAt, "button"]
            : [nav.domContentLoadedEventEnd, "domcontentloaded"];
        return { fcp, hydrated, interactive: Math.max(fcp, hydrated), source };
      });
      // The app really is live: choosing another amount changes the button's label.
      const button = page.locator("button.alm-submit");
      const before = await button.textContent();
      await page.locator('input[name="amount"]:not(:checked)').first().check();
      await page.waitForFunction(
        (text) => document.querySelector("button.alm-submit")?.textContent !== text,
        before,
      );
      return t;
    };

    const cold: PageTiming[] = [];
    const warm: PageTiming[] = [];
    for (let i = 0; i < LOADS; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      await context.addInitScript(watchSubmitButton);
      const page = await context.newPage();
      await page.goto(pageUrl, { waitUntil: "load" });
      cold.push(await measure(page));
      await page.reload({ waitUntil: "load" });
      warm.push(await measure(page));
      await context.close();
    }
    const line = (label: string, runs: PageTiming[]) =>
      console.log(
        `${label.padEnd(6)} first contentful paint ${median(runs.map((r) => r.fcp)).toFixed(1)} ms, ` +
          `hydrated ${median(runs.map((r) => r.hydrated)).toFixed(1)} ms, ` +
          `interactive ${median(runs.map((r) => r.interactive)).toFixed(1)} ms ` +
          `(median of ${runs.length}; hydrated = ${[...new Set(runs.map((r) => SOURCE_NAMES[r.source]))].join(" / ")}; interactive = the later of paint and hydration)`,
      );
    console.log(`\nhosted page ${pageUrl} in headless Chromium (no throttling):`);
    line("cold", cold);
    line("warm", warm);
  } finally {
    await browser?.close().catch(() => {});
    await stopAllServers();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

process.on("exit", killAllServersNow);
main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});

import fs from "node:fs";
import { createRequire } from "node:module";
import type { Frame, Page } from "playwright-core";
import { expect } from "vitest";
import type { ServedApp } from "./browser.js";

/** Helpers for donors completing the hosted checkout in Chromium. */

export async function createForm(
  served: ServedApp,
  body: Record<string, unknown>,
): Promise<{ formID: string; formUrl: string }> {
  const res = await fetch(`${served.baseUrl}/v1/forms`, {
    method: "POST",
    headers: { Authorization: `Bearer ${served.t.org.key}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { formID: string; formUrl: string };
  expect(res.status, JSON.stringify(json)).toBe(201);
  return json;
}

export async function createLink(
  served: ServedApp,
  formId: string,
  prefill: Record<string, unknown>,
): Promise<string> {
  const res = await fetch(`${served.baseUrl}/v1/forms/${formId}/links`, {
    method: "POST",
    headers: { Authorization: `Bearer ${served.t.org.key}`, "Content-Type": "application/json" },
    body: JSON.stringify({ prefill }),
  });
  const json = (await res.json()) as { linkID: string };
  expect(res.status, JSON.stringify(json)).toBe(201);
  return json.linkID;
}

export async function fillDonor(page: Page | Frame, email: string): Promise<void> {
  await page.getByLabel("First name").fill("Ada");
  await page.getByLabel("Last name").fill("Lovelace");
  // The donor's own address (a dedication's notice address has "email" in its label too).
  await page.getByLabel(/^Email( \*)?$/).fill(email);
}

export async function fillCard(page: Page, number = "4242 4242 4242 4242"): Promise<void> {
  await page.getByLabel("Card number").fill(number);
  await page.getByLabel("Expiry (MM/YY)").fill("12/34");
  await page.getByLabel("CVC").fill("123");
}

/** The payments recorded for a form, newest last. */
export async function paymentsOf(served: ServedApp, formId: string) {
  return served.t.store.db
    .selectFrom("payments")
    .selectAll()
    .where("form_id", "=", formId)
    .orderBy("created_at")
    .execute();
}

export const uniqueEmail = (tag: string) => `${tag}-${Math.random().toString(36).slice(2, 8)}@example.org`;

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeIssue {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * Runs axe-core in the page (evaluated through the DevTools protocol, so the page's CSP does not apply) and
 * returns the serious and critical violations.
 */
export async function seriousAxeIssues(
  page: Page,
  mustPass: string[] = ["label", "color-contrast"],
): Promise<AxeIssue[]> {
  await page.evaluate(axeSource);
  return page.evaluate(async (mustPass) => {
    const axe = (
      window as unknown as {
        axe: {
          run: (
            ctx: Document,
            opts: unknown,
          ) => Promise<{
            violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
            passes: { id: string }[];
          }>;
        };
      }
    ).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    // axe really looked: the rules named (by default labels and color contrast) checked this page and passed.
    const passed = new Set(result.passes.map((p) => p.id));
    const missing = mustPass.filter((id) => !passed.has(id));
    if (missing.length) throw new Error(`axe did not pass ${missing.join(", ")} on this page`);
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => n.target.join(" ")),
      }));
  }, mustPass);
}
/**
 * The checkout frame of the iframe `selector` once the page is up in it: waited for, since the snippet's
 * iframe loads lazily and the embed loader may set its src as it starts.
 */
export async function checkoutFrame(page: Page, selector: string): Promise<Frame> {
  const iframe = page.locator(selector);
  // The snippet's iframe loads lazily (loading="lazy"): Chromium starts it once the page, in front and
  // rendering, shows it. So bring the page to the front and the iframe into view, as a donor scrolling
  // would (again on each try: the iframes above it shrink to their content meanwhile); and the loader sets
  // its src as it starts, so for a moment the element may have no frame yet. Tests running side by side
  // each bring their own page to the front, so each try brings this one back. On a loaded machine an
  // iframe already in view has stayed without a frame for 30 s (CI): after the first seconds each try
  // also scrolls the page a little, as a donor would (Chromium looks again at what is in view when the
  // page scrolls), and the frame is also looked up by its address among the page's frames. The frame
  // returned shows the iframe's current src (CI once got the snippet's first page, without the embed id).
  const started = Date.now();
  let frame: Frame | null = null;
  let seen = "";
  const polled = expect
    .poll(
      async () => {
        await page.bringToFront();
        if (Date.now() - started > 5_000) {
          await page.mouse.move(10, 10);
          await page.mouse.wheel(0, 120);
        }
        await iframe.scrollIntoViewIfNeeded();
        frame = (await (await iframe.elementHandle())?.contentFrame()) ?? null;
        const src = await iframe.evaluate((el: HTMLIFrameElement) => el.src);
        frame ??= page.frames().find((f) => f !== page.mainFrame() && f.url() === src) ?? null;
        // The loader may set src (adding the embed id) after the snippet's first src has loaded: until the
        // frame has moved to the address the element holds now, it is the page being replaced.
        if (frame && frame.url() !== src) frame = null;
        if (!frame) {
          const where = await iframe.evaluate(
            (el: HTMLIFrameElement) =>
              `visibility ${document.visibilityState}, src ${el.src}, top ${Math.round(el.getBoundingClientRect().top)} of ${window.innerHeight}`,
          );
          seen = `${where}; the page's frames: ${page
            .frames()
            .map((f) => f.url())
            .join(", ")}`;
        }
        return frame !== null;
      },
      { message: `${selector} has a frame`, timeout: 30_000 },
    )
    .toBe(true);
  // What the page showed at the last try, for the failure's message.
  await polled.catch((cause: unknown) => {
    throw new Error(`${selector} has no frame after 30 s: ${seen}`, { cause });
  });
  if (!frame) throw new Error(`${selector} has no frame: ${seen}`);
  const found: Frame = frame;
  await found.waitForLoadState("load");
  return found;
}

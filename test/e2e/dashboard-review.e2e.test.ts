import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseUrlOf, killAll, runCli } from "../support/processes.js";
import {
  type Browser,
  browserAvailable,
  launchBrowser,
  type ServedApp,
  serveTestApp,
} from "./support/browser.js";
import { createForm, uniqueEmail } from "./support/checkout.js";

/**
 * What a review of the dashboard found, in Chromium where the browser's own behaviour is the point: a text
 * box of one item per line that takes a new line, a role list that a keyboard moves through without
 * saving, and the question a destructive action asks taking focus and giving it back.
 */

const PASSWORD = "a long passphrase for tests";

describe.skipIf(!browserAvailable)("the dashboard's keyboard and focus in Chromium", () => {
  let served: ServedApp;
  let browser: Browser;
  let dataDir: string;
  const problems: string[] = [];

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-dashboard-review-"));
    served = await serveTestApp({ DATA_DIR: dataDir });
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await killAll();
    await browser?.close();
    await served?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function person(role: "owner" | "staff" | "finance"): Promise<{ email: string; setupUrl: string }> {
    const email = uniqueEmail(`review-${role}`);
    const result = await runCli(
      ["user", "create", "--org", served.t.org.id, "--email", email, "--role", role, "--json"],
      { DATABASE_URL: databaseUrlOf(served.t.database), PUBLIC_URL: served.baseUrl, DATA_DIR: dataDir },
    );
    expect(result.code, result.stderr).toBe(0);
    return { email, setupUrl: (result.json as { setupUrl: string }).setupUrl };
  }

  async function signedIn(setupUrl: string): Promise<Page> {
    const page = await browser.context.newPage();
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    await page.goto(setupUrl);
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByLabel("The same password again").fill(PASSWORD);
    await page.getByRole("button", { name: /Set password and sign in/ }).click();
    await page.getByRole("navigation", { name: "Dashboard" }).waitFor();
    return page;
  }

  it("takes Enter in the editor's one-per-line boxes: funds and a question's choices", async () => {
    const { formID } = await createForm(served, {
      title: "Line by line",
      funds: ["General"],
      customInputs: [{ title: "Size", inputType: "single_select", options: ["Small", "Medium"] }],
    });
    const page = await signedIn((await person("owner")).setupUrl);
    await page.goto(`${served.baseUrl}/dashboard/forms/${formID}/edit`);
    await page.getByRole("heading", { name: "Edit Line by line" }).waitFor();

    const funds = page.getByLabel("Funds");
    await funds.click();
    await funds.press("End");
    await funds.press("Enter");
    await funds.pressSequentially("Trees");
    expect(await funds.inputValue()).toBe("General\nTrees");

    const choices = page.getByLabel("Question 1 choices (one per line)");
    await choices.click();
    await choices.press("End");
    await choices.press("Enter");
    await choices.pressSequentially("Large");
    expect(await choices.inputValue()).toBe("Small\nMedium\nLarge");

    // The draft takes the lines that are not empty; the preview shows them before anything is saved.
    const preview = page.locator("[data-preview]");
    await expect.poll(() => preview.textContent()).toContain("Large");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText(/Saved/).waitFor();
    const stored = (await (
      await fetch(`${served.baseUrl}/v1/forms/${formID}`, {
        headers: { Authorization: `Bearer ${served.t.org.key}` },
      })
    ).json()) as { funds: string[]; customInputs: { options: string[] }[] };
    expect(stored.funds).toEqual(["General", "Trees"]);
    expect(stored.customInputs[0]?.options).toEqual(["Small", "Medium", "Large"]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("moves through a member's roles by keyboard without saving; Remove… asks with focus and gets it back (Keep or Escape); removed, the focus goes to the heading", async () => {
    const staff = await person("staff");
    const page = await signedIn((await person("owner")).setupUrl);
    await page.getByRole("link", { name: "Team" }).click();
    await page.getByRole("heading", { name: "Team" }).waitFor();
    const patches: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "PATCH") patches.push(r.url());
    });

    // Chromium fires `change` on each arrow key of a closed list: nothing is sent until "Change role".
    const select = page.getByLabel(`Role of ${staff.email}`, { exact: true });
    await select.focus();
    await select.press("ArrowUp");
    await select.press("ArrowUp");
    expect(await select.inputValue()).toBe("OWNER");
    await select.press("ArrowDown");
    expect(await select.inputValue()).toBe("FINANCE");
    await page.waitForTimeout(300);
    expect(patches).toEqual([]);
    await page.getByRole("button", { name: `Change role of ${staff.email}` }).click();
    await page.getByText(`${staff.email} is now Finance.`).waitFor();
    expect(patches).toHaveLength(1);

    // The question takes the focus of the button that asked (gone meanwhile), on Keep, which gives it back.
    const remove = page
      .getByRole("row", { name: new RegExp(staff.email) })
      .getByRole("button", { name: "Remove…" });
    await remove.click();
    const focused = () => page.evaluate(() => document.activeElement?.textContent ?? "");
    await expect.poll(focused).toBe("Keep");
    await page.getByRole("button", { name: "Keep" }).click();
    await expect.poll(focused).toBe("Remove…");
    expect(await remove.evaluate((el) => el === document.activeElement)).toBe(true);

    // Escape answers Keep as well.
    await remove.press("Enter");
    await expect.poll(focused).toBe("Keep");
    await page.keyboard.press("Escape");
    await expect.poll(focused).toBe("Remove…");

    // Answered Yes, the row and its buttons go: the focus goes to the page heading, not to the body.
    await remove.press("Enter");
    await expect.poll(focused).toBe("Keep");
    await page.keyboard.press("Shift+Tab");
    await expect.poll(focused).toBe("Yes, remove");
    await page.keyboard.press("Enter");
    await page.getByText(`${staff.email} is removed.`).waitFor();
    await expect.poll(() => page.evaluate(() => document.activeElement?.tagName)).toBe("H1");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Team");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("clears the editor's alert once a preview that failed succeeds again", async () => {
    const { formID } = await createForm(served, { title: "Flaky preview", funds: ["General"] });
    const page = await signedIn((await person("owner")).setupUrl);
    await page.goto(`${served.baseUrl}/dashboard/forms/${formID}/edit`);
    await page.getByRole("heading", { name: "Edit Flaky preview" }).waitFor();
    const preview = `${served.baseUrl}/v1/forms/${formID}/preview`;
    await page.route(preview, (route) =>
      route.fulfill({ status: 503, contentType: "application/json", body: '{"error":"Try again soon"}' }),
    );
    await page.getByLabel("Title").fill("Flaky preview, again");
    const alerts = page.getByRole("alert").filter({ hasText: "Try again soon" });
    await expect.poll(() => alerts.count()).toBe(1);
    await page.unroute(preview);
    await page.getByLabel("Title").fill("Flaky preview, once more");
    await expect.poll(() => page.locator("[data-preview]").textContent()).toContain("once more");
    await expect.poll(() => alerts.count()).toBe(0);
    await page.close();
  });
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTransport } from "../../server/mail/transport.js";
import { MailWorker } from "../../server/mail/worker.js";
import { parseMail } from "../mail/support.js";
import { pdfText } from "../support/pdfText.js";
import {
  type Browser,
  browserAvailable,
  launchBrowser,
  type ServedApp,
  serveTestApp,
} from "./support/browser.js";
import { createForm, seriousAxeIssues, uniqueEmail } from "./support/checkout.js";

/**
 * The donor portal in Chromium, as a monthly donor uses it: ask for a link, open it from the .eml the mail
 * worker wrote, change the amount, skip a month, download the statement, cancel; and another donor's ids
 * refused.
 */

describe.skipIf(!browserAvailable)("donor portal in Chromium", () => {
  let served: ServedApp;
  let browser: Browser;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-portal-"));
    served = await serveTestApp({
      CHECKOUT_LIMIT_PER_IP: "0",
      CHECKOUT_LIMIT_PER_FORM: "0",
      DATA_DIR: dataDir,
    });
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function giveMonthly(formId: string, email: string, amount: number) {
    const res = await fetch(`${served.baseUrl}/api/forms/${formId}/checkout`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        amount,
        frequency: "MONTHLY",
        donor: { firstName: "Ada", lastName: "Lovelace", email },
        paymentMethod: { type: "card", number: "4242424242424242", expMonth: 12, expYear: 2034, cvc: "123" },
      }),
    });
    const body = (await res.json()) as { payment: { paymentID: string; subscription: { id: string } } };
    expect(res.status, JSON.stringify(body)).toBe(201);
    return body.payment;
  }

  /** Sends what the outbox holds as .eml files and returns the sign-in link mailed to `email`. */
  async function mailedLink(email: string): Promise<string> {
    const t = served.t;
    const worker = new MailWorker({
      store: t.store,
      now: Date.now,
      transport: createTransport({ smtpUrl: undefined, dataDir, publicUrl: served.baseUrl }),
    });
    await worker.runOnce();
    const dir = path.join(dataDir, "mail");
    for (const file of fs.readdirSync(dir)) {
      const mail = parseMail(fs.readFileSync(path.join(dir, file), "utf8"));
      if (mail.header("to")?.includes(email) && mail.header("subject")?.startsWith("Your link")) {
        const text = mail.parts.find((p) => p.contentType.startsWith("text/plain"))?.body ?? "";
        const url = text.match(/https?:\/\/\S+\/manage\/\S+/)?.[0];
        if (url) return url;
      }
    }
    throw new Error(`no sign-in link for ${email} in ${dir}`);
  }

  async function open(url: string): Promise<{ page: Page; problems: string[] }> {
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("request", (r) => {
      if (new URL(r.url()).origin !== served.baseUrl) problems.push(`request: ${r.url()}`);
    });
    await page.goto(url);
    return { page, problems };
  }

  it("a monthly donor signs in from the mailed link, changes the amount, skips, downloads the statement and cancels", async () => {
    const { formID } = await createForm(served, {
      title: "Monthly friends",
      funds: ["General"],
      frequencies: ["ONE_TIME", "MONTHLY"],
    });
    const email = uniqueEmail("portal");
    const gift = await giveMonthly(formID, email, 20);
    const other = await giveMonthly(formID, uniqueEmail("other"), 35);
    const subId = gift.subscription.id;

    const portal = `${served.baseUrl}/manage/${served.t.org.id}`;
    const { page, problems } = await open(portal);
    await page.getByLabel("Email").fill(email);
    expect(await seriousAxeIssues(page)).toEqual([]);
    await page.getByRole("button", { name: "Send me a sign-in link" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toMatch(/sign-in link is on its way/);

    const link = await mailedLink(email);
    expect(link.startsWith(`${portal}?token=`)).toBe(true);
    await page.goto(link);
    await page.getByRole("heading", { name: "Recurring gifts" }).waitFor();
    // The token leaves the address bar once it is used; the language the link was asked in stays.
    expect(page.url()).toBe(`${portal}?lang=en`);
    expect(await seriousAxeIssues(page)).toEqual([]);

    const recurring = page.getByRole("article", { name: /Recurring gift of \$20\.00 monthly/ });
    await recurring.getByLabel("Amount").fill("30");
    await recurring.getByRole("button", { name: "Change amount" }).click();
    await page.getByRole("article", { name: /Recurring gift of \$30\.00 monthly/ }).waitFor();
    const sub = async () =>
      served.t.store.db
        .selectFrom("subscriptions")
        .selectAll()
        .where("id", "=", subId)
        .executeTakeFirstOrThrow();
    expect(Number((await sub()).amount_cents)).toBe(3000);

    const before = (await sub()).next_billing_at;
    await page.getByRole("button", { name: "Skip the next gift" }).click();
    await expect.poll(async () => (await sub()).next_billing_at).not.toBe(before);
    const moved = new Date((await sub()).next_billing_at);
    const expected = new Date(before);
    expected.setUTCMonth(expected.getUTCMonth() + 1);
    expect(moved.toISOString().slice(0, 7)).toBe(expected.toISOString().slice(0, 7));

    // The statement downloads as a PDF that names the gift.
    const year = new Date().getUTCFullYear();
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: `Download the ${year} statement (PDF)` }).click(),
    ]);
    const statement = pdfText(fs.readFileSync((await download.path()) as string));
    expect(statement).toContain(`Giving statement ${year}`);
    expect(statement).toContain(gift.paymentID);
    expect(statement).not.toContain(other.paymentID);

    // Another donor's recurring gift is not this session's to change, even from this page.
    const refused = await page.evaluate(
      async ([org, id]) =>
        (
          await fetch(`/api/manage/${org}/subscriptions/${id}`, {
            method: "PUT",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ status: "CANCELLED" }),
          })
        ).status,
      [served.t.org.id, other.subscription.id],
    );
    expect(refused).toBe(404);

    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Cancel recurring gift" }).click();
    await page.getByText("Your recurring gift is cancelled.").waitFor();
    expect((await sub()).status).toBe("CANCELLED");
    expect(problems).toEqual([]);
    await page.close();
  });
});

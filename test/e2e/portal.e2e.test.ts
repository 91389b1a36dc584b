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

  /** The donor portal's session cookie in the browser, if any. */
  async function donorCookie() {
    const cookies = await browser.context.cookies(`${served.baseUrl}/api/manage/${served.t.org.id}/gifts`);
    return cookies.find((c) => c.name === "almoner_donor");
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
    // The link names the address it signs in as and asks first; nothing is signed in until then.
    const proceed = page.getByRole("button", { name: `Continue as ${email}` });
    await proceed.waitFor();
    expect(await page.getByText(`This link signs in as ${email}.`).count()).toBe(1);
    expect(await seriousAxeIssues(page, ["color-contrast"])).toEqual([]); // no fields to label here
    expect(await donorCookie()).toBeUndefined();
    await proceed.click();
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

  it("a link someone else sent on names their address, and signs the visitor in to nothing when declined", async () => {
    const { formID } = await createForm(served, {
      title: "Winter appeal",
      funds: ["General"],
      frequencies: ["ONE_TIME", "MONTHLY"],
    });
    // The sender asks for a link to their own address and sends it to someone else.
    const sender = uniqueEmail("sender");
    await giveMonthly(formID, sender, 10);
    const res = await fetch(`${served.baseUrl}/api/manage/${served.t.org.id}/link`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ email: sender }),
    });
    expect(res.status).toBe(202);
    const link = await mailedLink(sender);

    await browser.context.clearCookies();
    const { page, problems } = await open(link);
    await page.getByText(`This link signs in as ${sender}.`).waitFor();
    await page.getByRole("button", { name: "Not your address? Ask for a link to your own" }).click();
    await page.getByLabel("Email").waitFor();
    expect(await donorCookie()).toBeUndefined();
    expect(await page.getByRole("heading", { name: "Recurring gifts" }).count()).toBe(0);
    // The token left the address bar and was not used: the sender's link still works for the sender.
    expect(page.url()).not.toContain("token=");
    const token = new URL(link).searchParams.get("token");
    const preview = await fetch(`${served.baseUrl}/api/manage/${served.t.org.id}/link/preview`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ token }),
    });
    expect(preview.status).toBe(200);
    expect(await preview.json()).toMatchObject({ email: sender });
    expect(problems).toEqual([]);
    await page.close();
  });

  /** The organization's view of a recurring gift, through `/v1` with its API key. */
  async function v1Subscription(id: string) {
    const res = await fetch(`${served.baseUrl}/v1/subscriptions/${id}`, {
      headers: { Authorization: `Bearer ${served.t.org.key}` },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as {
      id: string;
      status: string;
      amount: number;
      nextBillingDate: string | null;
    };
  }

  it("signed in as one donor, another donor's receipt and recurring gift are refused, and changes need the page's Origin", async () => {
    const { formID } = await createForm(served, {
      title: "Monthly neighbours",
      funds: ["General"],
      frequencies: ["ONE_TIME", "MONTHLY"],
    });
    const emailA = uniqueEmail("donor-a");
    const giftA = await giveMonthly(formID, emailA, 15);
    const giftB = await giveMonthly(formID, uniqueEmail("donor-b"), 45);
    const subA = giftA.subscription.id;
    const subB = giftB.subscription.id;
    const bBefore = await v1Subscription(subB);
    expect(bBefore).toMatchObject({ status: "ACTIVE", amount: 45 });

    // Donor A signs in from the mailed link (in a browser no other donor is signed in to).
    await browser.context.clearCookies();
    const portal = `${served.baseUrl}/manage/${served.t.org.id}`;
    const { page, problems } = await open(portal);
    await page.getByLabel("Email").fill(emailA);
    await page.getByRole("button", { name: "Send me a sign-in link" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toMatch(/sign-in link is on its way/);
    await page.goto(await mailedLink(emailA));
    await page.getByRole("button", { name: `Continue as ${emailA}` }).click();
    await page.getByRole("article", { name: /Recurring gift of \$15\.00 monthly/ }).waitFor();
    // Donor B's gift is not listed to A.
    expect(await page.getByRole("article", { name: /\$45\.00/ }).count()).toBe(0);

    // From the page (same origin, A's cookie): A's own receipt downloads, B's ids are not found.
    const org = served.t.org.id;
    const fromPage = (method: string, url: string, body?: unknown) =>
      page.evaluate(
        async ([method, url, body]) =>
          (
            await fetch(url as string, {
              method: method as string,
              headers: body === undefined ? {} : { "Content-Type": "application/json" },
              body: body === undefined ? undefined : JSON.stringify(body),
            })
          ).status,
        [method, url, body] as const,
      );
    expect(await fromPage("GET", `/api/manage/${org}/receipts/${giftA.paymentID}`)).toBe(200);
    expect(await fromPage("GET", `/api/manage/${org}/receipts/${giftB.paymentID}`)).toBe(404);
    expect(await fromPage("PUT", `/api/manage/${org}/subscriptions/${subB}`, { skipNext: true })).toBe(404);
    expect(await v1Subscription(subB)).toEqual(bBefore);

    // A's session cookie, sent from outside the page: without the page's Origin a change is refused.
    const cookies = await browser.context.cookies(`${served.baseUrl}/api/manage/${org}/gifts`);
    const session = cookies.find((c) => c.name === "almoner_donor");
    expect(session).toBeDefined();
    const cookie = `almoner_donor=${session?.value}`;
    const gifts = await fetch(`${served.baseUrl}/api/manage/${org}/gifts`, { headers: { Cookie: cookie } });
    expect(gifts.status).toBe(200); // the cookie is a good session
    const aBefore = await v1Subscription(subA);
    const skipA = (headers: Record<string, string>) =>
      fetch(`${served.baseUrl}/api/manage/${org}/subscriptions/${subA}`, {
        method: "PUT",
        headers: { Cookie: cookie, "Content-Type": "application/json", ...headers },
        body: JSON.stringify({ skipNext: true }),
      });
    expect((await skipA({ Origin: "https://attacker.example" })).status).toBe(403);
    expect((await skipA({})).status).toBe(403);
    expect(await v1Subscription(subA)).toEqual(aBefore);
    // The same request with the page's Origin is A's to make: the 403s were the Origin's.
    expect((await skipA({ Origin: served.baseUrl })).status).toBe(200);
    expect((await v1Subscription(subA)).nextBillingDate).not.toBe(aBefore.nextBillingDate);
    expect(await v1Subscription(subB)).toEqual(bBefore);

    expect(problems).toEqual([]);
    await page.close();
  });
});

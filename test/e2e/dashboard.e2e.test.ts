import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import jsQR from "jsqr";
import * as OTPAuth from "otpauth";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTransport } from "../../server/mail/transport.js";
import { MailWorker } from "../../server/mail/worker.js";
import { parseMail } from "../mail/support.js";
import { databaseUrlOf, killAll, runCli } from "../support/processes.js";
import {
  type Browser,
  browserAvailable,
  launchBrowser,
  type ServedApp,
  serveTestApp,
} from "./support/browser.js";
import { createForm, seriousAxeIssues, uniqueEmail } from "./support/checkout.js";
import { type HostSite, hostPage, startHostSite } from "./support/hostSite.js";

/**
 * The staff dashboard in Chromium, through the whole round trip: the first Owner's set-up link from the
 * command line, two-step sign-in set up and used, a Finance person invited by mail who finds a gift by the
 * donor's e-mail, refunds part of it and exports the month as CSV; a Staff person who is not offered a refund
 * and whom the API refuses; a cross-site form post refused; and the audit log naming who refunded.
 */

const PASSWORD = "a long passphrase for tests";

/** RFC 4180: quoted fields, doubled quotes, CRLF rows. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  const body = text.replace(/^\uFEFF/, "");
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (quoted) {
      if (ch === '"' && body[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      row.push(field);
      field = "";
    } else if (ch === "\r" && body[i + 1] === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
      i++;
    } else field += ch;
  }
  if (field !== "" || row.length > 0) rows.push([...row, field]);
  return rows;
}

describe.skipIf(!browserAvailable)("staff dashboard in Chromium", () => {
  let served: ServedApp;
  let browser: Browser;
  let host: HostSite;
  let dataDir: string;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-dashboard-"));
    served = await serveTestApp({
      CHECKOUT_LIMIT_PER_IP: "0",
      CHECKOUT_LIMIT_PER_FORM: "0",
      DATA_DIR: dataDir,
    });
    browser = await launchBrowser();
    host = await startHostSite();
    page = await browser.context.newPage();
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    // Refusals the test provokes (401, 403) are expected; a missing file is not.
    page.on("response", (r) => {
      if (r.status() === 404 || r.status() >= 500) problems.push(`${r.status()}: ${r.url()}`);
    });
    page.on("request", (r) => {
      const origin = new URL(r.url()).origin;
      if (origin !== served.baseUrl && origin !== host.origin && !r.url().startsWith("blob:"))
        problems.push(`request: ${r.url()}`);
    });
  });

  afterAll(async () => {
    await killAll();
    await browser?.close();
    await host?.close();
    await served?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** The command line, on the served app's database. */
  const cli = async (...args: string[]) => {
    const result = await runCli(args, {
      DATABASE_URL: databaseUrlOf(served.t.database),
      PUBLIC_URL: served.baseUrl,
      DATA_DIR: dataDir,
    });
    expect(result.code, result.stderr).toBe(0);
    return result.json as { setupUrl: string };
  };

  /** Sends what the outbox holds as .eml files and returns the dashboard link mailed to `email`. */
  async function mailedLink(email: string): Promise<string> {
    const worker = new MailWorker({
      store: served.t.store,
      now: Date.now,
      transport: createTransport({ smtpUrl: undefined, dataDir, publicUrl: served.baseUrl }),
    });
    await worker.runOnce();
    const dir = path.join(dataDir, "mail");
    for (const file of fs.readdirSync(dir)) {
      const mail = parseMail(fs.readFileSync(path.join(dir, file), "utf8"));
      if (!mail.header("to")?.includes(email)) continue;
      const text = mail.parts.find((p) => p.contentType.startsWith("text/plain"))?.body ?? "";
      const url = text.match(/https?:\/\/\S+\/dashboard\/setup\?token=\S+/)?.[0];
      if (url) return url;
    }
    throw new Error(`no set-up link for ${email} in ${dir}`);
  }

  /** axe finds nothing serious; on a page with form fields, its label rule checked them and passed. */
  async function accessible(what: string, fields = true) {
    expect(await seriousAxeIssues(page, fields ? ["label"] : []), what).toEqual([]);
  }

  async function setPassword(link: string) {
    await page.goto(link);
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await accessible("set-up page");
    await page.getByLabel("The same password again").fill(PASSWORD);
    await page.getByRole("button", { name: /Set password and sign in/ }).click();
    await page.getByRole("navigation", { name: "Dashboard" }).waitFor();
    // The token leaves the address once it is used.
    expect(new URL(page.url()).search).toBe("");
  }

  /** A new member made on the command line (an Owner unless `role` says), signed in on `on` by their set-up link. */
  async function signUp(on: Page, email: string, role = "owner") {
    const made = await cli(
      "user",
      "create",
      "--org",
      served.t.org.id,
      "--email",
      email,
      "--role",
      role,
      "--json",
    );
    await on.goto(made.setupUrl);
    await on.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await on.getByLabel("The same password again").fill(PASSWORD);
    await on.getByRole("button", { name: /Set password and sign in/ }).click();
    await on.getByRole("navigation", { name: "Dashboard" }).waitFor();
  }

  async function signOut() {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: /Sign in/ }).waitFor();
  }

  async function give(email: string, amount: number): Promise<string> {
    const { formID } = await createForm(served, { title: "Plant a tree", funds: ["General"] });
    const res = await fetch(`${served.baseUrl}/api/forms/${formID}/checkout`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        amount,
        donor: { firstName: "Ada", lastName: "Lovelace", email },
        paymentMethod: { type: "card", number: "4242424242424242", expMonth: 12, expYear: 2034, cvc: "123" },
      }),
    });
    const body = (await res.json()) as { payment: { paymentID: string } };
    expect(res.status, JSON.stringify(body)).toBe(201);
    return body.payment.paymentID;
  }

  const refundedCents = async (paymentId: string) =>
    Number(
      (
        await served.t.store.db
          .selectFrom("payments")
          .select("refunded_cents")
          .where("id", "=", paymentId)
          .executeTakeFirstOrThrow()
      ).refunded_cents,
    );

  it("runs the organization's round trip: Owner, two-step sign-in, an invited Finance person's refund and export, Staff refused, the audit log", async () => {
    const donorEmail = uniqueEmail("gift");
    const paymentId = await give(donorEmail, 50);
    const ownerEmail = uniqueEmail("owner");
    const financeEmail = uniqueEmail("finance");
    const staffEmail = uniqueEmail("staff");

    // The first Owner: a set-up link from the command line.
    const owner = await cli(
      "user",
      "create",
      "--org",
      served.t.org.id,
      "--email",
      ownerEmail,
      "--role",
      "owner",
      "--json",
    );
    await setPassword(owner.setupUrl);
    await page.getByRole("heading", { level: 1 }).waitFor();
    await accessible("home", false);

    // Two-step sign-in: the page's QR code scanned (the image drawn as the browser shows it, read by jsQR)
    // into an authenticator (here, the otpauth library); the key typed in is the same secret.
    await page.getByRole("link", { name: "Account" }).click();
    await page.getByRole("button", { name: "Set up two-step sign-in" }).click();
    const secret = (await page.locator("[data-secret]").textContent())?.trim() ?? "";
    const scanned = await scanQr(page, "QR code of the key, for your authenticator app's camera");
    const totp = OTPAuth.URI.parse(scanned);
    expect(totp).toBeInstanceOf(OTPAuth.TOTP);
    expect((totp as OTPAuth.TOTP).secret.base32).toBe(secret);
    expect(totp.label).toBe(ownerEmail);
    await page.getByLabel("The 6-digit code the app shows").fill(totp.generate());
    await accessible("two-step enrolment");
    await page.getByRole("button", { name: "Turn it on" }).click();
    const codes = page.getByRole("list", { name: "Recovery codes" }).getByRole("listitem");
    await expect.poll(() => codes.count()).toBe(10);
    const recoveryCodes = await codes.allTextContents();
    await accessible("account");

    // Signing in again asks for the code (the next one: a code is taken once).
    await signOut();
    await page.getByLabel("E-mail address").fill(ownerEmail);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    const code = page.getByLabel("Code from your authenticator app");
    await code.waitFor();
    await accessible("sign-in with a code");
    await code.fill(totp.generate({ timestamp: Date.now() + 30_000 }));
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Dashboard" }).waitFor();

    // The Owner invites a Finance person from the Team page; the link arrives by mail.
    await page.getByRole("link", { name: "Team" }).click();
    await page.getByRole("heading", { name: "Team" }).waitFor();
    await page.getByLabel("E-mail address").fill(financeEmail);
    await page.getByRole("radio", { name: /Finance/ }).check();
    await accessible("team");
    await page.getByRole("button", { name: "Send the invitation" }).click();
    await expect
      .poll(() => page.getByRole("status").first().textContent())
      .toMatch(/invitation is on its way/);
    await signOut();

    await setPassword(await mailedLink(financeEmail));
    const nav = page.getByRole("navigation", { name: "Dashboard" });
    expect(await nav.getByRole("link", { name: "Team" }).count()).toBe(0);

    // Finance finds the gift by the donor's e-mail and refunds part of it.
    await nav.getByRole("link", { name: "Payments" }).click();
    await page.getByLabel("Search").fill(donorEmail);
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.getByRole("link", { name: "Ada Lovelace" }).click();
    await page.getByRole("heading", { name: /\$50\.00 from Ada Lovelace/ }).waitFor();
    await accessible("payment");
    await page.getByLabel("Amount (USD)").fill("20");
    await page.getByLabel("Reason (optional)").fill("Asked by the donor");
    await page.getByRole("button", { name: "Refund…" }).click();
    const confirm = page.getByRole("alertdialog");
    expect(await confirm.textContent()).toMatch(/This cannot be undone/);
    await confirm.getByRole("button", { name: /Yes, refund \$20\.00/ }).click();
    await page.getByText(/refunded in part: \$20\.00/).waitFor();
    expect(await refundedCents(paymentId)).toBe(2000);

    // The month so far as CSV (the organization's days are UTC's): the list's export, parsed back.
    const today = new Date().toISOString().slice(0, 10);
    await page.goto(`${served.baseUrl}/dashboard/payments?from=${today.slice(0, 8)}01&to=${today}`);
    await page.getByRole("heading", { name: "Payments" }).waitFor();
    await accessible("payments");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export CSV" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`payments-${today}.csv`);
    const file = await download.path();
    const rows = parseCsv(fs.readFileSync(file as string, "utf8"));
    const header = rows[0] ?? [];
    const idColumn = header.findIndex((name) => /payment ?id/i.test(name));
    expect(idColumn, header.join(",")).toBeGreaterThanOrEqual(0);
    const ours = rows.find((row) => row[idColumn] === paymentId);
    expect(ours, "the refunded gift is in the month's export").toBeDefined();
    expect(rows.slice(1).every((row) => row.length === header.length)).toBe(true);

    // The other pages open, and are accessible.
    for (const [link, heading] of [
      ["Recurring gifts", "Recurring gifts"],
      ["Contacts", "Contacts"],
      ["Home", null],
    ] as const) {
      await nav.getByRole("link", { name: link }).click();
      if (heading) await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
      else await page.getByRole("heading", { level: 1 }).waitFor();
      await accessible(link, heading !== null);
    }
    await signOut();

    // A Staff person is not offered a refund, and the API refuses them one.
    const staff = await cli(
      "user",
      "create",
      "--org",
      served.t.org.id,
      "--email",
      staffEmail,
      "--role",
      "staff",
      "--json",
    );
    await setPassword(staff.setupUrl);
    await page.goto(`${served.baseUrl}/dashboard/payments/${paymentId}`);
    await page.getByRole("heading", { name: /\$50\.00 from Ada Lovelace/ }).waitFor();
    expect(await page.getByRole("heading", { name: "Refund" }).count()).toBe(0);
    const refused = await page.evaluate(async (id) => {
      const res = await fetch(`/v1/payments/${id}/refund`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ amount: 5 }),
      });
      return res.status;
    }, paymentId);
    expect(refused).toBe(403);

    // A form on another site posting to the API with this browser's session changes nothing.
    host.page(
      "/attack",
      hostPage(
        `<form id="f" method="post" enctype="text/plain" action="${served.baseUrl}/v1/payments/${paymentId}/refund"><input name='{"amount":5,"x":"' value='"}'></form><script>document.getElementById("f").submit()</script>`,
      ),
    );
    const answer = page.waitForResponse((r) => r.url().endsWith(`/v1/payments/${paymentId}/refund`));
    await page.goto(`${host.origin}/attack`);
    expect([401, 403]).toContain((await answer).status());
    // Sent with the session cookie but from another origin: 403.
    await page.goto(`${served.baseUrl}/dashboard`);
    const crossOrigin = await page.request.post(`${served.baseUrl}/v1/payments/${paymentId}/refund`, {
      headers: { Origin: host.origin, "Content-Type": "application/json" },
      data: { amount: 5 },
    });
    expect(crossOrigin.status()).toBe(403);
    expect(await refundedCents(paymentId)).toBe(2000);
    await signOut();

    // The Owner's audit log shows the refund and who made it.
    await page.getByLabel("E-mail address").fill(ownerEmail);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await code.waitFor();
    // A recovery code instead of the app's (each works once).
    await code.fill(recoveryCodes[0] ?? "");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { name: "Audit log" }).waitFor();
    const row = page.getByRole("row").filter({ hasText: "payment.refunded" });
    await row.first().waitFor();
    expect(await row.first().textContent()).toContain(financeEmail);
    expect(await row.first().textContent()).toContain(paymentId);
    await accessible("audit log");

    expect(problems).toEqual([]);
  });

  it("fits a phone's width (360 px) on every page, and reloads a deep link to its page", async () => {
    const phone = await browser.context.newPage();
    await phone.setViewportSize({ width: 360, height: 740 });
    const email = uniqueEmail("phone");
    await signUp(phone, email);
    await phone.goto(`${served.baseUrl}/dashboard/payments`);
    await phone.getByRole("heading", { name: "Payments", level: 1 }).waitFor();
    await phone.reload();
    await phone.getByRole("heading", { name: "Payments", level: 1 }).waitFor();
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    // Every page an Owner is offered (tables with a visually hidden "Actions" header among them): none
    // scrolls sideways, with a form in the list.
    await createForm(served, { title: "Plant a tree by the river", funds: ["General"], goal: 5000 });
    const widths: Record<string, number> = {};
    const wanted: Record<string, number> = {};
    const broken: Record<string, string[]> = {};
    for (const name of [
      "",
      "forms",
      "door",
      "payments",
      "recurring",
      "contacts",
      "team",
      "audit-log",
      "settings",
      "developers",
      "account",
    ]) {
      await phone.goto(`${served.baseUrl}/dashboard/${name}`);
      await phone.waitForLoadState("networkidle");
      await phone.locator("h1").first().waitFor();
      widths[name || "home"] = await phone.evaluate(() => document.documentElement.scrollWidth);
      wanted[name || "home"] = Math.min(widths[name || "home"], 360);
      // A wide table scrolls in its own box: its headers, buttons and codes keep their words whole.
      broken[name || "home"] = await wordsBrokenIn(phone, "table th, table button, table code");
    }
    expect(widths).toEqual(wanted);
    expect(Object.entries(broken).filter(([, words]) => words.length > 0)).toEqual([]);
    await phone.close();
  });

  it("fits a 320 px phone with long unbroken donor text, form titles, key names and webhook addresses", async () => {
    const long = (what: string, n: number) => `${what}${"x".repeat(n)}`;
    const v1 = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${served.baseUrl}${path}`, {
        method,
        headers: { Authorization: `Bearer ${served.t.org.key}`, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      const json = (await res.json()) as Record<string, unknown>;
      expect(res.status, JSON.stringify(json)).toBeLessThan(300);
      return json;
    };
    const { formID } = await createForm(served, {
      title: long("Plant", 90),
      funds: [long("Fund", 60)],
      customInputs: [{ title: long("Question", 60), inputType: "long_text" }],
    });
    const question = (
      (await v1("GET", `/v1/forms/${formID}`, undefined)) as { customInputs: { id: string }[] }
    ).customInputs[0]?.id as string;
    const email = `${"d".repeat(60)}@${"e".repeat(40)}.example.org`;
    const res = await fetch(`${served.baseUrl}/api/forms/${formID}/checkout`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        amount: 25,
        donor: { firstName: long("Bartholomew", 60), lastName: long("Lovelace", 60), email },
        customInputs: { [question]: long("Answer", 300) },
        paymentMethod: { type: "card", number: "4242424242424242", expMonth: 12, expYear: 2034, cvc: "123" },
      }),
    });
    const paid = (await res.json()) as { payment: { paymentID: string; contactId: string } };
    expect(res.status, JSON.stringify(paid)).toBe(201);
    await v1("POST", "/v1/keys", { name: long("Key", 90), permissions: ["forms:read"] });
    await v1("POST", "/v1/webhooks", {
      url: `https://example.org/${long("hook", 180)}`,
      events: ["donation.created"],
    });

    const phone = await browser.context.newPage();
    await phone.setViewportSize({ width: 320, height: 640 });
    await signUp(phone, uniqueEmail("narrow"));
    const widths: Record<string, number> = {};
    for (const name of [
      "forms",
      "payments",
      `payments/${paid.payment.paymentID}`,
      "contacts",
      `contacts/${paid.payment.contactId}`,
      "developers",
      "audit-log",
      "",
      "door",
      "recurring",
      "team",
      "settings",
      "account",
    ]) {
      await phone.goto(`${served.baseUrl}/dashboard/${name}`);
      await phone.waitForLoadState("networkidle");
      await phone.locator("h1").first().waitFor();
      widths[name] = await phone.evaluate(() => document.documentElement.scrollWidth);
    }
    expect(Object.entries(widths).filter(([, width]) => width > 320)).toEqual([]);
    await phone.close();
  });

  it("edits an event form beside a live preview of the checkout, and shows a problem at its field before saving", async () => {
    const editor = await browser.context.newPage();
    editor.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    const email = uniqueEmail("editor");
    await signUp(editor, email);

    const { formID } = await createForm(served, {
      title: "Spring gala",
      funds: ["Gala"],
      formType: "event",
      tickets: [{ name: "Adult", price: 50 }],
    });
    await editor.getByRole("link", { name: "Forms" }).click();
    await editor.getByRole("link", { name: "Spring gala" }).click();
    await editor.getByRole("heading", { name: "Edit Spring gala" }).waitFor();
    const preview = editor.locator("[data-preview]");
    await expect.poll(() => preview.textContent()).toContain("Adult");
    // The preview is a picture inside the page: one level-1 heading (the editor's), the checkout's title a
    // level-3 heading under "Preview", and no second form landmark.
    await expect
      .poll(() => editor.getByRole("heading", { level: 1 }).allTextContents())
      .toEqual(["Edit Spring gala"]);
    await preview.getByRole("heading", { name: "Spring gala", level: 3 }).waitFor();
    expect(await editor.getByRole("form", { name: "Spring gala" }).count()).toBe(0);

    // A second ticket type and a promo code: the preview shows them before anything is saved.
    await editor.getByRole("button", { name: "Add a ticket type" }).click();
    await editor.getByLabel("Ticket 2 name").fill("Table of eight");
    await editor.getByLabel("Ticket 2 price").fill("400");
    await editor.getByLabel("Ticket 2 admits").fill("8");
    await expect.poll(() => preview.textContent()).toContain("Table of eight");
    await editor.getByRole("button", { name: "Add a promo code" }).click();
    await editor.getByLabel("Code 1", { exact: true }).fill("FRIENDS");
    // The limits and the event's time, in fields of their own (not only the JSON).
    await editor.getByLabel("Ticket 2 most per order (empty: no limit)").fill("2");
    await editor.getByLabel("Ticket 2 description").fill("Seats eight at one table");
    await editor.getByLabel("Ticket 2 fair-market value (not deductible; empty: not stated)").fill("120");
    await editor.getByLabel("Code 1 how many uses (empty: no limit)").fill("50");
    await editor
      .getByRole("group", { name: /Code 1 is for/ })
      .getByLabel("Table of eight")
      .check();
    await editor.getByLabel("Date", { exact: true }).fill("2027-05-01");
    await editor.getByLabel("Starts at").fill("19:00");
    await editor.getByLabel("Ends at").fill("22:30");
    await editor.getByLabel(/Show the date, time and place/).check();
    const details = editor.getByLabel("Event details");
    expect(await details.getAttribute("maxlength")).toBe("5000");
    await editor.getByText(/at most 5,000 characters/).waitFor();
    await details.fill("Free parking behind the hall.\nBlack tie optional.");
    await expect.poll(() => preview.textContent()).toContain("Seats eight at one table");
    await expect.poll(() => preview.locator(".alm-event").textContent()).toMatch(/7:00.*10:30/);
    await expect.poll(() => preview.locator(".alm-event").textContent()).toContain("Free parking");
    // A question for donors, with the id that exports and webhooks name its answers by.
    await editor.getByRole("button", { name: "Add a question", exact: true }).click();
    await editor.getByLabel("Question 1", { exact: true }).fill("Dietary needs");
    await editor.getByLabel("Question 1 id").fill("diet");
    await expect.poll(() => preview.textContent()).toContain("Dietary needs");
    await editor.getByLabel("Title").fill("Spring gala 2027");
    await expect
      .poll(() => preview.getByRole("heading", { level: 3 }).textContent())
      .toBe("Spring gala 2027");
    const stored = async () =>
      (await (
        await fetch(`${served.baseUrl}/v1/forms/${formID}`, {
          headers: { Authorization: `Bearer ${served.t.org.key}` },
        })
      ).json()) as {
        title: string;
        tickets: {
          name: string;
          maxPerOrder: number | null;
          fairMarketValue: number | null;
          description: string;
        }[];
        promoCodes: { code: string; quantity: number | null; applicableTickets: string[] }[];
        startTime: string | null;
        endTime: string | null;
        eventDetails: string | null;
        customInputs: { id: string; title: string }[];
      };
    expect((await stored()).title).toBe("Spring gala");

    // A price the save would refuse is shown at its field before saving, and the save waits for it.
    await editor.getByLabel("Ticket 2 price").fill("-5");
    const ticketErrors = editor.locator("#form-tickets-1-price-error");
    await expect.poll(() => ticketErrors.textContent()).toMatch(/tickets\[1\]\.price/);
    expect(await editor.getByLabel("Ticket 2 price").getAttribute("aria-invalid")).toBe("true");
    expect(await editor.getByRole("button", { name: "Save" }).isDisabled()).toBe(true);
    await editor.getByLabel("Ticket 2 price").fill("400");
    await expect.poll(() => ticketErrors.count()).toBe(0);

    // A question id the API refuses is shown at its field, with the rule beside it.
    const questionId = editor.getByLabel("Question 1 id");
    await questionId.fill("diet needs");
    const idErrors = editor.locator("#form-customInputs-0-id-error");
    await expect.poll(() => idErrors.textContent()).toMatch(/customInputs\[0\]\.id/);
    expect(await questionId.getAttribute("aria-invalid")).toBe("true");
    expect(await editor.getByRole("button", { name: "Save" }).isDisabled()).toBe(true);
    // Typed key by key: the row keeps its field (and the focus) while its id changes.
    await questionId.fill("");
    await questionId.pressSequentially("diet");
    expect(await questionId.inputValue()).toBe("diet");
    await expect.poll(() => idErrors.count()).toBe(0);

    // Details longer than the field lets one type (sent through the JSON box) are refused at the field.
    await editor.getByText("Every field (JSON)").click();
    const json = editor.getByLabel("The form as the API takes it");
    const everything = JSON.parse(await json.inputValue()) as Record<string, unknown>;
    await json.fill(JSON.stringify({ ...everything, eventDetails: "x".repeat(5001) }));
    const detailsErrors = editor.locator("#form-eventDetails-error");
    await expect.poll(() => detailsErrors.textContent()).toMatch(/eventDetails/);
    expect(await details.getAttribute("aria-invalid")).toBe("true");
    expect(await editor.getByRole("button", { name: "Save" }).isDisabled()).toBe(true);
    await details.fill("Free parking behind the hall.\nBlack tie optional.");
    await expect.poll(() => detailsErrors.count()).toBe(0);
    await editor.getByText("Every field (JSON)").click();
    expect(await seriousAxeIssues(editor, ["label"]), "editor").toEqual([]);

    await editor.getByRole("button", { name: "Phone" }).click();
    await editor.getByRole("button", { name: "Save" }).click();
    await editor.getByText(/Saved/).waitFor();
    const saved = await stored();
    expect(saved.title).toBe("Spring gala 2027");
    expect(saved.tickets.map((t) => t.name)).toEqual(["Adult", "Table of eight"]);
    expect(saved.promoCodes.map((p) => p.code)).toEqual(["FRIENDS"]);
    expect(saved.tickets[1]).toMatchObject({
      maxPerOrder: 2,
      fairMarketValue: 120,
      description: "Seats eight at one table",
    });
    expect(saved.promoCodes[0]).toMatchObject({ quantity: 50, applicableTickets: ["Table of eight"] });
    expect([saved.startTime, saved.endTime]).toEqual(["19:00", "22:30"]);
    expect(saved.eventDetails).toBe("Free parking behind the hall.\nBlack tie optional.");
    expect(saved.customInputs).toMatchObject([{ id: "diet", title: "Dietary needs" }]);
    await editor.close();
  });

  it("edits a donation form's FAQs, default amount, phone switch and monthly suggestion in their own fields, each in the preview before saving", async () => {
    const editor = await browser.context.newPage();
    editor.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    await signUp(editor, uniqueEmail("donation-editor"));

    const { formID } = await createForm(served, {
      title: "Winter appeal",
      funds: ["Shelter"],
      frequencies: ["ONE_TIME", "MONTHLY"],
      oneTimeAmounts: [25, 50, 100, 250],
    });
    await editor.goto(`${served.baseUrl}/dashboard/forms/${formID}/edit`);
    await editor.getByRole("heading", { name: "Edit Winter appeal" }).waitFor();
    const preview = editor.locator("[data-preview]");
    const radio = (name: string) => preview.getByRole("radio", { name, exact: true });
    await expect.poll(() => radio("$50").isChecked()).toBe(true);

    // An FAQ, the amount chosen when the form opens and the phone field: each in the preview before saving.
    await editor.getByRole("button", { name: "Add a question and its answer" }).click();
    await editor.getByLabel("FAQ 1 question").fill("Is my gift tax-deductible?");
    await editor.getByLabel("FAQ 1 answer").fill("Yes, as far as the law allows.");
    await expect
      .poll(() => preview.locator(".alm-faqs").textContent())
      .toContain("Is my gift tax-deductible?");
    await expect.poll(() => preview.locator(".alm-faqs").textContent()).toContain("as far as the law allows");
    await editor.getByLabel("Chosen amount when the form opens").fill("250");
    await expect.poll(() => radio("$250").isChecked()).toBe(true);
    await editor.getByLabel("Ask for a phone number").check();
    await expect.poll(() => preview.getByLabel(/^Phone/).count()).toBe(1);

    // The monthly suggestion: its share and minimum appear with its switch; a bad share is shown at its field.
    await editor.getByLabel(/Suggest a monthly gift instead/).check();
    await editor.getByLabel("Monthly amount suggested, as a share of the gift").fill("2");
    const ratioErrors = editor.locator("#form-monthlyUpsellRatio-error");
    await expect.poll(() => ratioErrors.textContent()).toMatch(/monthlyUpsellRatio/);
    expect(
      await editor
        .getByLabel("Monthly amount suggested, as a share of the gift")
        .getAttribute("aria-invalid"),
    ).toBe("true");
    expect(await editor.getByRole("button", { name: "Save" }).isDisabled()).toBe(true);
    await editor.getByLabel("Monthly amount suggested, as a share of the gift").fill("0.25");
    await editor.getByLabel("Suggested for one-time gifts of at least").fill("50");
    await expect.poll(() => ratioErrors.count()).toBe(0);
    expect(await seriousAxeIssues(editor, ["label"]), "donation editor").toEqual([]);

    // The offer itself is made when a one-time gift is sent, which the preview cannot do: it is checked saved.
    await editor.getByRole("button", { name: "Save" }).click();
    await editor.getByText(/Saved/).waitFor();
    const saved = (await (
      await fetch(`${served.baseUrl}/v1/forms/${formID}`, {
        headers: { Authorization: `Bearer ${served.t.org.key}` },
      })
    ).json()) as Record<string, unknown>;
    expect(saved).toMatchObject({
      faqs: [{ question: "Is my gift tax-deductible?", answer: "Yes, as far as the law allows." }],
      defaultAmount: 250,
      enablePhone: true,
      enableMonthlyUpsell: true,
      monthlyUpsellRatio: 0.25,
      monthlyUpsellMinimum: 50,
    });
    await editor.close();
  });

  it("starts a sponsorship form from New form in its editor, edits its packages beside the preview, shows a bad amount at its field; Finance reads it without Save", async () => {
    const editor = await browser.context.newPage();
    editor.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    await signUp(editor, uniqueEmail("sponsorship-owner"));

    // "New form" offers every kind, and opens the new form's editor.
    await editor.getByRole("link", { name: "Forms" }).click();
    await editor.getByText("New form", { exact: true }).click();
    const kinds = await editor.getByLabel("Kind").locator("option").allTextContents();
    expect(kinds).toEqual(["Donation form", "Giving levels", "Sponsorship (packages)", "Event (tickets)"]);
    await editor.getByLabel("Title").fill("Spring fair sponsors");
    await editor.getByLabel("Kind").selectOption({ label: "Sponsorship (packages)" });
    await editor.getByRole("button", { name: "Make the form" }).click();
    await editor.getByRole("heading", { name: "Edit Spring fair sponsors" }).waitFor();
    const formID = new URL(editor.url()).pathname.split("/")[3] as string;
    expect(editor.url()).toBe(`${served.baseUrl}/dashboard/forms/${formID}/edit`);
    const preview = editor.locator("[data-preview]");
    await expect.poll(() => preview.textContent()).toContain("Sponsor");

    // A second package in the structured fields: the preview shows it before anything is saved.
    await editor.getByLabel("Group 1 name").fill("Tables");
    await editor.getByRole("button", { name: "Add a package" }).click();
    await editor.getByLabel("Package 2 name").fill("Gold table");
    await editor.getByLabel("Package 2 amount").fill("1500");
    await editor.getByLabel("Package 2 how many (empty: no limit)").fill("3");
    await editor.getByLabel("Package 2 description").fill("A table of ten by the stage");
    await expect.poll(() => preview.textContent()).toContain("Gold table");
    await expect.poll(() => preview.textContent()).toContain("A table of ten by the stage");

    // An amount the save would refuse is shown at that package's amount, and the save waits for it.
    await editor.getByLabel("Package 2 amount").fill("0");
    const amountErrors = editor.locator("#form-sponsorshipGroups-0-options-1-amount-error");
    await expect
      .poll(() => amountErrors.textContent())
      .toMatch(/sponsorshipGroups\[0\]\.options\[1\]\.amount/);
    expect(await editor.getByLabel("Package 2 amount").getAttribute("aria-invalid")).toBe("true");
    expect(await editor.getByRole("button", { name: "Save" }).isDisabled()).toBe(true);
    await editor.getByLabel("Package 2 amount").fill("1500");
    await expect.poll(() => amountErrors.count()).toBe(0);
    expect(await seriousAxeIssues(editor, ["label"]), "sponsorship editor").toEqual([]);

    await editor.getByRole("button", { name: "Save" }).click();
    await editor.getByText(/Saved/).waitFor();
    const stored = (await (
      await fetch(`${served.baseUrl}/v1/forms/${formID}`, {
        headers: { Authorization: `Bearer ${served.t.org.key}` },
      })
    ).json()) as {
      formType: string;
      sponsorshipGroups: {
        groupTitle: string;
        options: { optionTitle: string; amount: number; quantity: number | null; description: string }[];
      }[];
    };
    expect(stored.formType).toBe("PRODUCT");
    expect(stored.sponsorshipGroups.map((g) => g.groupTitle)).toEqual(["Tables"]);
    expect(stored.sponsorshipGroups[0]?.options).toMatchObject([
      { optionTitle: "Sponsor", amount: 500 },
      { optionTitle: "Gold table", amount: 1500, quantity: 3, description: "A table of ten by the stage" },
    ]);

    // Finance may read forms but not change them: the editor opened by its address offers no Save.
    await signUp(editor, uniqueEmail("sponsorship-finance"), "finance");
    await editor.goto(`${served.baseUrl}/dashboard/forms/${formID}/edit`);
    await editor.getByRole("heading", { name: "Edit Spring fair sponsors" }).waitFor();
    await expect.poll(() => preview.textContent()).toContain("Gold table");
    expect(await editor.getByRole("button", { name: "Save" }).count()).toBe(0);
    expect(await editor.getByLabel("Package 2 amount").isDisabled()).toBe(true);
    expect(await editor.getByRole("button", { name: "Add a package" }).isDisabled()).toBe(true);
    await editor.getByText(/may read this form and share it, not change it/).waitFor();
    await editor.close();
  });
});

/** The text of the QR code an image on the page shows (by its alt text), read from its pixels as drawn. */
async function scanQr(page: Page, alt: string): Promise<string> {
  const image = page.getByRole("img", { name: alt });
  await image.waitFor();
  const pixels = await image.evaluate(async (element) => {
    const img = element as HTMLImageElement;
    await img.decode();
    const canvas = document.createElement("canvas");
    canvas.width = img.width;
    canvas.height = img.height;
    const context = canvas.getContext("2d");
    if (!context) throw new Error("no 2D canvas");
    context.fillStyle = "#fff";
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.drawImage(img, 0, 0, canvas.width, canvas.height);
    const data = context.getImageData(0, 0, canvas.width, canvas.height);
    return { width: data.width, height: data.height, data: Array.from(data.data) };
  });
  const code = jsQR(Uint8ClampedArray.from(pixels.data), pixels.width, pixels.height);
  if (!code) throw new Error(`no QR code could be read from the image "${alt}"`);
  return code.data;
}

/** The words of the elements `selector` finds that the page draws across two lines (broken mid-word). */
function wordsBrokenIn(page: Page, selector: string): Promise<string[]> {
  return page.evaluate((sel) => {
    const broken: string[] = [];
    for (const element of document.querySelectorAll(sel)) {
      const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        // A word between spaces or hyphens ("sign-in" may break after its hyphen).
        for (const word of (node.textContent ?? "").matchAll(/[^\s-]+/g)) {
          const range = document.createRange();
          range.setStart(node, word.index ?? 0);
          range.setEnd(node, (word.index ?? 0) + word[0].length);
          const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
          if (lines.size > 1) broken.push(word[0]);
        }
      }
    }
    return broken;
  }, selector);
}

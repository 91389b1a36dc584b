import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTransport } from "../../server/mail/transport.js";
import { MailWorker } from "../../server/mail/worker.js";
import { WebhookDispatcher } from "../../server/webhooks/dispatcher.js";
import { type ParsedMail, parseMail } from "../mail/support.js";
import { databaseUrlOf, killAll, runCli } from "../support/processes.js";
import { startReceiver } from "../webhooks/receiver.js";
import {
  type Browser,
  browserAvailable,
  launchBrowser,
  type ServedApp,
  serveTestApp,
} from "./support/browser.js";
import { createForm, fillCard, fillDonor, seriousAxeIssues, uniqueEmail } from "./support/checkout.js";

/**
 * The dashboard's second part in Chromium: an event's share page, a donor buying two tickets on the hosted
 * page, the receipt's two codes with their QR images, a Staff person at the door on a phone (one ticket by
 * search, one by code, the second check-in of a ticket refused with when and by whom); an Owner making a key
 * and a webhook, seeing its delivery and sending it again, editing and deleting it; and a test receipt arriving.
 */

const PASSWORD = "a long passphrase for tests";

describe.skipIf(!browserAvailable)(
  "the dashboard's events, developers and settings pages in Chromium",
  () => {
    let served: ServedApp;
    let browser: Browser;
    let dataDir: string;
    let dispatcher: WebhookDispatcher;
    const problems: string[] = [];

    beforeAll(async () => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-dashboard2-"));
      served = await serveTestApp({
        CHECKOUT_LIMIT_PER_IP: "0",
        CHECKOUT_LIMIT_PER_FORM: "0",
        DATA_DIR: dataDir,
      });
      dispatcher = new WebhookDispatcher({ deps: served.t.deps, retryScheduleMs: [100], pollMs: 50 });
      dispatcher.start(50);
      browser = await launchBrowser();
    });

    afterAll(async () => {
      await killAll();
      await dispatcher?.stop();
      await browser?.close();
      await served?.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    async function mails(): Promise<ParsedMail[]> {
      const worker = new MailWorker({
        store: served.t.store,
        now: Date.now,
        transport: createTransport({ smtpUrl: undefined, dataDir, publicUrl: served.baseUrl }),
      });
      await worker.runOnce();
      const dir = path.join(dataDir, "mail");
      if (!fs.existsSync(dir)) return [];
      return fs.readdirSync(dir).map((file) => parseMail(fs.readFileSync(path.join(dir, file), "utf8")));
    }

    async function signedIn(role: "owner" | "staff", width = 1280): Promise<Page> {
      const email = uniqueEmail(role);
      const result = await runCli(
        ["user", "create", "--org", served.t.org.id, "--email", email, "--role", role, "--json"],
        { DATABASE_URL: databaseUrlOf(served.t.database), PUBLIC_URL: served.baseUrl, DATA_DIR: dataDir },
      );
      expect(result.code, result.stderr).toBe(0);
      const { setupUrl } = result.json as { setupUrl: string };
      const page = await browser.context.newPage();
      await page.setViewportSize({ width, height: 800 });
      page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
      await page.goto(setupUrl);
      await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
      await page.getByLabel("The same password again").fill(PASSWORD);
      await page.getByRole("button", { name: /Set password and sign in/ }).click();
      await page.getByRole("navigation", { name: "Dashboard" }).waitFor();
      return page;
    }

    it("sells two tickets from a shared event, mails their codes as QR images, and checks them in at the door once each", async () => {
      const { formID } = await createForm(served, {
        title: "Harvest supper",
        funds: ["Supper"],
        formType: "event",
        tickets: [
          { name: "Adult", price: 40 },
          { name: "Child", price: 10 },
        ],
        promoCodes: [{ code: "FRIENDS", discountType: "percentage", discountValue: 10 }],
      });

      // The Owner's share page gives the hosted page's address.
      const owner = await signedIn("owner");
      await owner.goto(`${served.baseUrl}/dashboard/forms/${formID}/share`);
      const hosted = await owner.getByLabel("The form's page").inputValue();
      expect(hosted).toContain(formID);
      expect(await owner.getByLabel("Embed on your site").inputValue()).toContain("<iframe");
      expect(await seriousAxeIssues(owner, ["label"]), "share page").toEqual([]);

      // A donor buys two adult tickets on the hosted page.
      const donor = await browser.context.newPage();
      await donor.goto(hosted.replace("/donate/", "/attend/"));
      await donor.getByLabel("Adult").fill("2");
      const buyer = uniqueEmail("buyer");
      await fillDonor(donor, buyer);
      await fillCard(donor);
      await donor.getByRole("button", { name: /^Pay/ }).click();
      await donor.getByRole("heading", { name: "You're registered!" }).waitFor();
      await donor.close();

      // The receipt carries both codes, each with its QR image.
      const receipt = (await mails()).find((m) => m.header("to")?.includes(buyer));
      expect(receipt).toBeDefined();
      const text = receipt?.parts.find((p) => p.contentType === "text/plain")?.body ?? "";
      const codes = [
        ...new Set(text.match(/[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{2}/g) ?? []),
      ];
      expect(codes).toHaveLength(2);
      expect(receipt?.parts.filter((p) => p.contentType === "image/png")).toHaveLength(2);
      const [first, second] = codes as [string, string];

      // Staff at the door, on a phone: one ticket by search, the other by its code.
      const door = await signedIn("staff", 360);
      await door.getByRole("link", { name: "Door" }).click();
      await door.getByRole("link", { name: "Harvest supper" }).click();
      await door.getByText(/0 of 2/).waitFor();
      await door.getByLabel("Find a ticket").fill(first);
      await door.getByRole("button", { name: "Find" }).click();
      await door
        .getByRole("button", { name: /Check in Ada Lovelace/ })
        .first()
        .click();
      await expect.poll(() => door.getByRole("status").first().textContent()).toMatch(/^In: Ada Lovelace/);
      await door.getByText(/1 of 2/).waitFor();
      await door.getByLabel("Ticket code").fill(second.toLowerCase().replace(/-/g, " "));
      await door.getByRole("button", { name: "Check in this code" }).click();
      await door.getByText(/2 of 2/).waitFor();
      // The same ticket again: refused, with when and by whom.
      await door.getByLabel("Ticket code").fill(first);
      await door.getByRole("button", { name: "Check in this code" }).click();
      await expect
        .poll(() => door.getByRole("status").first().textContent())
        .toMatch(/Already checked in .* by staff-.*@example\.org: do not admit again/);
      expect(await seriousAxeIssues(door, ["label"]), "door page").toEqual([]);
      expect(
        await door.evaluate(() => document.documentElement.scrollWidth - window.innerWidth),
      ).toBeLessThanOrEqual(0);
      await door.close();
      await owner.close();
      expect(problems).toEqual([]);
    });

    it("makes a key and a webhook, shows the webhook's delivery and sends it again, edits and deletes it, and sends a test receipt", async () => {
      const receiver = await startReceiver();
      try {
        const owner = await signedIn("owner");
        await owner.getByRole("link", { name: "Developers" }).click();
        await owner.getByRole("heading", { name: "Developers", level: 1 }).waitFor();

        await owner.getByLabel("Key name").fill("Website sync");
        await owner.getByRole("button", { name: "Make the key" }).click();
        const key = (await owner.locator("[data-secret]").first().textContent())?.trim() ?? "";
        expect(key).toMatch(/^cs_(test|live)_/);
        const withKey = await fetch(`${served.baseUrl}/v1/forms`, {
          headers: { Authorization: `Bearer ${key}` },
        });
        expect(withKey.status).toBe(200);
        await owner.getByRole("cell", { name: "Website sync" }).waitFor();

        await owner.getByLabel("Address (URL)").fill(receiver.url);
        await owner.getByRole("checkbox", { name: "form.created" }).check();
        await owner.getByRole("button", { name: "Add the webhook" }).click();
        await owner.getByText("The webhook is made.").waitFor();
        const secret = (await owner.locator("[data-secret]").last().textContent())?.trim() ?? "";
        receiver.setSecret(secret);
        expect(await seriousAxeIssues(owner, ["label"]), "developers page").toEqual([]);

        await createForm(served, { title: "Something to tell", funds: ["General"] });
        await receiver.waitFor(
          (got) => got.some((r) => r.body.event === "form.created"),
          10_000,
          "form.created",
        );
        await owner.getByRole("button", { name: "Deliveries" }).click();
        const row = owner.getByRole("row").filter({ hasText: "form.created" });
        await row.first().waitFor();
        await row.first().getByRole("button", { name: "Send again" }).click();
        await receiver.waitFor(
          (got) => got.filter((r) => r.body.event === "form.created").length >= 2,
          10_000,
          "the resent form.created",
        );

        // Edit the webhook (its address refused at its field first), then delete it: both audited.
        await owner.getByRole("button", { name: "Edit…" }).click();
        const edit = owner.getByRole("form", { name: `Edit the webhook to ${receiver.url}` });
        await edit.getByLabel("Address (URL)").fill(`${receiver.url}#part`);
        await edit.getByLabel("Description").fill("The CRM's receiver");
        await edit.getByRole("checkbox", { name: "form.updated" }).check();
        await edit.getByRole("button", { name: "Save the webhook" }).click();
        await edit.getByText("url must not contain a fragment (#...)", { exact: true }).waitFor();
        expect(await edit.getByLabel("Address (URL)").getAttribute("aria-invalid")).toBe("true");
        expect(await seriousAxeIssues(owner, ["label"]), "webhook editor").toEqual([]);
        await edit.getByLabel("Address (URL)").fill(receiver.url);
        await edit.getByRole("button", { name: "Save the webhook" }).click();
        await owner.getByText("The webhook is saved.").waitFor();
        await owner.getByText("The CRM's receiver").waitFor();
        await owner.getByRole("button", { name: "Delete…" }).click();
        await owner.getByRole("alertdialog").getByRole("button", { name: "Yes, delete" }).click();
        await owner.getByText(`The webhook to ${receiver.url} is deleted.`).waitFor();
        // The list is read again after the message shows, so wait for the deleted webhook's row to go.
        await expect.poll(() => owner.getByRole("button", { name: "Deliveries" }).count()).toBe(0);
        const audit = await served.t.request<{
          entries: { action: string; actor: { type: string }; after: Record<string, unknown> }[];
        }>("GET", "/v1/audit-log?subjectType=webhook");
        expect(audit.status, audit.text).toBe(200);
        const [deleted, updated] = audit.body.entries;
        expect(deleted).toMatchObject({ action: "webhook.deleted", actor: { type: "staff" } });
        expect(updated).toMatchObject({
          action: "webhook.updated",
          actor: { type: "staff" },
          after: {
            description: "The CRM's receiver",
            events: ["donation.created", "form.created", "form.updated"],
          },
        });

        // Settings: a test receipt to the signed-in Owner.
        await owner.getByRole("link", { name: "Settings" }).click();
        await owner.getByRole("heading", { name: "Settings", level: 1 }).waitFor();
        expect(await seriousAxeIssues(owner, ["label"]), "settings page").toEqual([]);
        await owner.getByRole("button", { name: "Send me a test receipt" }).click();
        const sentTo = (await owner.getByText(/A test receipt is on its way to/).textContent()) ?? "";
        const address = sentTo.replace(/.*on its way to /, "").replace(/\.$/, "");
        const test = (await mails()).find((m) => m.header("to")?.includes(address));
        expect(test?.header("subject")).toMatch(/TEST/);
        await owner.close();
        expect(problems).toEqual([]);
      } finally {
        await receiver.close();
      }
    });
  },
);

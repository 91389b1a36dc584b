import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Frame, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runBillingAt } from "../../server/billing/run.js";
import { WebhookDispatcher } from "../../server/webhooks/dispatcher.js";
import { type Browser, browserAvailable, launchBrowser } from "./support/browser.js";
import {
  checkoutFrame,
  createForm,
  fillDonor,
  paymentsOf,
  seriousAxeIssues,
  uniqueEmail,
} from "./support/checkout.js";
import { type HostSite, hostPage, startHostSite } from "./support/hostSite.js";
import {
  api,
  fillStripeCard,
  listedPayment,
  paymentElement,
  type StripeServedApp,
  serveStripeApp,
} from "./support/stripe.js";

/**
 * Donors paying an organization connected to its own Stripe account, in Chromium: the app served over HTTP
 * with STRIPE_API_URL and STRIPE_JS_URL on the local Stripe emulator, whose stand-in Stripe.js draws the
 * Payment Element and the Express Checkout Element in the page. The emulator POSTs signed webhooks to the
 * served app (auto mode). Card and bank details go from the page to "Stripe" only: the app is checked for it
 * on every request it receives. Needs the built widget (npm run build).
 */

const WIDGET_DIR = new URL("../../dist/widget/", import.meta.url);
const CARD = "4242424242424242";

describe.skipIf(!browserAvailable)("Stripe checkout in Chromium", () => {
  let s: StripeServedApp;
  let browser: Browser;
  let site: HostSite;
  let form: { formID: string; formUrl: string; embedHTML: string };
  /** Every request the app received: method, URL, headers and body as text. */
  const received: string[] = [];

  beforeAll(async () => {
    for (const file of ["app.js", "stripe.js", "embed.js", "overlay.js"])
      if (!fs.existsSync(new URL(file, WIDGET_DIR)))
        throw new Error(`dist/widget/${file} is missing: run npm run build before the e2e tests`);
    s = await serveStripeApp({
      env: { WEBHOOK_TARGET_GUARD: "off", WEBHOOK_RETRY_SCHEDULE: "0.05,0.05,0.05" },
      serve: {
        onRequest: async (req) => {
          received.push(`${req.method} ${req.url}\n${[...req.headers].join("\n")}\n${await req.text()}`);
        },
      },
    });
    site = await startHostSite();
    browser = await launchBrowser();
    form = (await createForm(s.served, {
      title: "Support our work",
      funds: ["General"],
      frequencies: ["ONE_TIME", "MONTHLY"],
    })) as typeof form;
  });

  afterEach(() => {
    s.emulator.setWallets({ googlePay: false, applePay: false });
  });

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await s?.close();
  });

  /**
   * A page that collects script errors, console errors (a CSP violation among them) and error answers, in
   * the page and in its frames (the host site's missing favicon aside).
   */
  async function open(url: string): Promise<{ page: Page; problems: string[] }> {
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error" && !m.text().startsWith("Failed to load resource"))
        problems.push(`console: ${m.text()}`);
    });
    page.on("response", (r) => {
      if (r.status() >= 400 && !r.url().endsWith("/favicon.ico"))
        problems.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
    });
    await page.goto(url);
    return { page, problems };
  }

  async function pay(on: Page | Frame, button: string | RegExp, heading = "Thank you!") {
    await on.getByRole("button", { name: button }).click();
    await on.getByRole("heading", { name: heading }).waitFor({ timeout: 15_000 });
  }

  /** The PaymentIntent behind the donor's payment (the server stores its id). */
  async function paymentIntentOf(email: string): Promise<string> {
    const row = (await paymentsOf(s.served, form.formID)).find((p) => p.email === email);
    expect(row?.processor_payment_id).toMatch(/^pi_/);
    return row?.processor_payment_id as string;
  }

  it("a card gift on the hosted page: Stripe's fields come after the page, and the payment is COMPLETED", async () => {
    const html = await (await fetch(form.formUrl)).text();
    // The first HTML is the form alone: no script of Stripe's, an empty place for its fields.
    expect(html).not.toMatch(/<script[^>]*stripe\.js/);
    expect(html).toContain('<div id="alm-stripe-payment"></div>');

    const { page, problems } = await open(form.formUrl);
    try {
      await paymentElement(page);
      expect(
        await page.locator("script[src]").evaluateAll((els) => els.map((e) => e.getAttribute("src"))),
      ).toContain(s.emulator.stripeJsUrl);
      // No sandbox fields, no test-mode note of the sandbox.
      expect(await page.getByLabel("Expiry (MM/YY)").count()).toBe(0);
      expect(await page.locator("#alm-sandbox").count()).toBe(0);

      await page.getByRole("radio", { name: "$50", exact: true }).check();
      const email = uniqueEmail("card");
      await fillDonor(page, email);
      await fillStripeCard(page);
      await pay(page, "Donate $50");
      expect(await page.locator(".alm-result").textContent()).toContain("Visa ending 4242");

      const payment = await listedPayment(s.served, form.formID, email);
      expect(payment).toMatchObject({
        status: "COMPLETED",
        amount: 50,
        frequency: "ONE_TIME",
        paymentMethod: "card",
        card: { brand: "visa", last4: "4242" },
      });
      const intent = await paymentIntentOf(email);
      expect(s.emulator.retrieve(intent)).toMatchObject({ status: "succeeded", amount: 5000 });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("a monthly gift saves the card at Stripe for the next charges", async () => {
    const { page, problems } = await open(form.formUrl);
    try {
      await paymentElement(page);
      await page.getByRole("radio", { name: "Monthly" }).check();
      await page.getByRole("radio", { name: /^\$25/ }).check();
      const email = uniqueEmail("monthly");
      await fillDonor(page, email);
      await fillStripeCard(page);
      await pay(page, "Donate $25 monthly");
      expect(await page.locator(".alm-result").textContent()).toContain("Next payment");

      const payment = await listedPayment(s.served, form.formID, email);
      expect(payment).toMatchObject({ status: "COMPLETED", amount: 25, frequency: "MONTHLY" });
      expect(payment.subscriptionId).toBeTruthy();
      const sub = await s.served.t.store.db
        .selectFrom("subscriptions")
        .selectAll()
        .where("id", "=", payment.subscriptionId as string)
        .executeTakeFirstOrThrow();
      expect(sub).toMatchObject({ status: "ACTIVE", processor: "stripe", amount_cents: 2500, last4: "4242" });
      expect(sub.payment_method_token).toMatch(/^pm_/);
      expect(sub.processor_customer).toMatch(/^cus_/);
      expect(s.emulator.retrieve(await paymentIntentOf(email))).toMatchObject({
        status: "succeeded",
        setup_future_usage: "off_session",
      });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("a bank gift is processing, PENDING, then COMPLETED when Stripe's webhook says it cleared", async () => {
    const { page, problems } = await open(form.formUrl);
    try {
      await paymentElement(page);
      await page.getByRole("radio", { name: "$100", exact: true }).check();
      const email = uniqueEmail("bank");
      await fillDonor(page, email);
      await page.getByRole("tab", { name: "US bank account" }).click();
      await page.getByLabel("Account holder name").fill("Ada Lovelace");
      await page.getByLabel("Routing number").fill("110000000");
      await page.getByLabel("Account number").fill("000123456789");
      await pay(page, "Donate $100");
      expect(await page.locator(".alm-result").textContent()).toContain("Your bank payment is processing");
      expect(await page.locator(".alm-result").textContent()).toContain("Bank account ending 6789");

      expect(await listedPayment(s.served, form.formID, email)).toMatchObject({
        status: "PENDING",
        paymentMethod: "bank",
        bankLast4: "6789",
      });
      await s.emulator.settleBankPayment(await paymentIntentOf(email));
      await expect
        .poll(async () => (await listedPayment(s.served, form.formID, email)).status, { timeout: 10_000 })
        .toBe("COMPLETED");
      const delivered = s.emulator.webhooks.deliveries.filter((d) => d.type === "payment_intent.succeeded");
      expect(delivered.at(-1)).toMatchObject({ status: 200 });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  describe("wallets", () => {
    it("Google Pay above Stripe's fields completes the gift once the donor's details are in", async () => {
      s.emulator.setWallets({ googlePay: true });
      const { page, problems } = await open(form.formUrl);
      try {
        await paymentElement(page);
        const button = page.getByRole("button", { name: "Donate with Google Pay" });
        await button.waitFor();
        expect(await page.locator("#alm-stripe-express").isVisible()).toBe(true);
        // Above the Payment Element, whose own wallet tab is hidden.
        const express = await button.boundingBox();
        const fields = await page.getByLabel("Card number").boundingBox();
        expect(express?.y).toBeLessThan(fields?.y ?? 0);
        expect(await page.getByRole("tab", { name: "Google Pay" }).count()).toBe(0);

        // Pressed too early: the sheet does not open, and the form says what is missing.
        await button.click();
        await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/Please fix \d+ fields first/);
        expect(await page.getByLabel("First name").getAttribute("aria-invalid")).toBe("true");

        const email = uniqueEmail("wallet");
        await page.getByRole("radio", { name: "$25", exact: true }).check();
        await fillDonor(page, email);
        await button.click();
        await page.getByRole("heading", { name: "Thank you!" }).waitFor({ timeout: 15_000 });
        const payment = await listedPayment(s.served, form.formID, email);
        expect(payment).toMatchObject({ status: "COMPLETED", amount: 25, firstName: "Ada" });
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    });

    it("a wallet payment that fails closes the sheet, and the donor pays with the card typed in instead", async () => {
      s.emulator.setWallets({ googlePay: true });
      const { page, problems } = await open(form.formUrl);
      try {
        await paymentElement(page);
        const email = uniqueEmail("wallet-failed");
        await fillDonor(page, email);
        // Stripe cannot be reached when the wallet's token is made.
        s.emulator.faults.fail("POST", "/v1/confirmation_tokens");
        await page.getByRole("button", { name: "Donate with Google Pay" }).click();
        await expect.poll(() => page.getByRole("alert").textContent()).not.toBe("");
        expect(await page.getByRole("button", { name: "Donate $50" }).isEnabled()).toBe(true);

        await fillStripeCard(page, "5555 5555 5555 4444");
        await pay(page, "Donate $50");
        expect(await listedPayment(s.served, form.formID, email)).toMatchObject({
          status: "COMPLETED",
          card: { brand: "mastercard", last4: "4444" },
        });
        expect(problems).toEqual(["500 POST /v1/confirmation_tokens"]);
      } finally {
        await page.close();
      }
    });

    it("without a wallet in the browser there is no button, and its place is hidden", async () => {
      const { page, problems } = await open(form.formUrl);
      try {
        await paymentElement(page);
        await expect.poll(() => page.locator("#alm-stripe-express").isHidden()).toBe(true);
        expect(await page.getByRole("button", { name: /Google Pay|Apple Pay/ }).count()).toBe(0);
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    });
  });

  it("3-D Secure: the bank's dialog opens in the page, the donor completes it, and the gift is COMPLETED", async () => {
    const { page, problems } = await open(form.formUrl);
    try {
      await paymentElement(page);
      await page.getByRole("radio", { name: "$50", exact: true }).check();
      const email = uniqueEmail("3ds");
      await fillDonor(page, email);
      await fillStripeCard(page, "4000 0027 6000 3184");
      await page.getByRole("button", { name: "Donate $50" }).click();
      const dialog = page.getByRole("dialog", { name: "Test 3D Secure authentication" });
      await dialog.waitFor();
      await dialog.getByRole("button", { name: "Complete authentication" }).click();
      await page.getByRole("heading", { name: "Thank you!" }).waitFor({ timeout: 15_000 });
      expect(await listedPayment(s.served, form.formID, email)).toMatchObject({
        status: "COMPLETED",
        amount: 50,
      });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("3-D Secure failed: the gift is declined with Stripe's message, and nothing is charged", async () => {
    const { page, problems } = await open(form.formUrl);
    try {
      await paymentElement(page);
      const email = uniqueEmail("3ds-failed");
      await fillDonor(page, email);
      await fillStripeCard(page, "4000 0027 6000 3184");
      await page.getByRole("button", { name: "Donate $50" }).click();
      const dialog = page.getByRole("dialog", { name: "Test 3D Secure authentication" });
      await dialog.getByRole("button", { name: "Fail authentication" }).click();
      await page.getByRole("heading", { name: "Payment declined" }).waitFor({ timeout: 15_000 });
      expect(await page.getByRole("alert").textContent()).toContain(
        "We are unable to authenticate your payment method.",
      );
      await expect
        .poll(async () => (await paymentsOf(s.served, form.formID)).find((p) => p.email === email)?.status)
        .toBe("FAILED");
      expect(problems).toEqual([expect.stringMatching(/^402 POST \/api\/forms\/.*\/complete$/)]);
    } finally {
      await page.close();
    }
  });

  it("a declined card shows Stripe's message; the donor tries another card and the gift goes through", async () => {
    const { page, problems } = await open(form.formUrl);
    try {
      await paymentElement(page);
      await page.getByRole("radio", { name: "$50", exact: true }).check();
      const email = uniqueEmail("decline");
      await fillDonor(page, email);
      await fillStripeCard(page, "4000 0000 0000 0002");
      await pay(page, "Donate $50", "Payment declined");
      expect(await page.getByRole("alert").textContent()).toContain(
        "Your card was declined. Nothing was charged.",
      );
      expect(await seriousAxeIssues(page, ["color-contrast"])).toEqual([]);

      await page.getByRole("button", { name: "Try another card" }).click();
      await paymentElement(page);
      // Back on the form with the focus in Stripe's fields, and the donor's details kept.
      await expect
        .poll(() =>
          page.evaluate(
            () => !!document.activeElement?.closest('#alm-stripe-payment [data-stripe-standin="payment"]'),
          ),
        )
        .toBe(true);
      expect(await page.getByLabel("Email").inputValue()).toBe(email);
      await fillStripeCard(page);
      await pay(page, "Donate $50");
      const statuses = (await paymentsOf(s.served, form.formID)).filter((p) => p.email === email);
      expect(statuses.map((p) => p.status)).toEqual(["FAILED", "COMPLETED"]);
      expect(problems).toEqual([`402 POST /api/forms/${form.formID}/checkout`]);
    } finally {
      await page.close();
    }
  });

  it("a partial refund through the API reaches Stripe, and donation.updated reaches the organization's receiver", async () => {
    const deliveries: { body: string; headers: http.IncomingHttpHeaders }[] = [];
    const receiver = http.createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        deliveries.push({ body, headers: req.headers });
        res.writeHead(200).end("ok");
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const dispatcher = new WebhookDispatcher({ deps: s.served.t.deps, pollMs: 50 });
    dispatcher.start(50);
    const { page } = await open(form.formUrl);
    try {
      const hook = await api<{ webhookId: string; secret: string }>(s.served, "POST", "/v1/webhooks", {
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
        events: ["donation.updated"],
      });
      expect(hook.status, JSON.stringify(hook.body)).toBe(201);

      await paymentElement(page);
      await page.getByRole("radio", { name: "$50", exact: true }).check();
      const email = uniqueEmail("refund");
      await fillDonor(page, email);
      await fillStripeCard(page);
      await pay(page, "Donate $50");
      const payment = await listedPayment(s.served, form.formID, email);

      const refund = await api<{ refund: { id: string; amount: number; status: string } }>(
        s.served,
        "POST",
        `/v1/payments/${payment.paymentID}/refund`,
        { amount: 10 },
      );
      expect(refund.status, JSON.stringify(refund.body)).toBe(200);
      expect(refund.body.refund).toMatchObject({ amount: 10, status: "succeeded" });
      expect(refund.body.refund.id).toMatch(/^re_/);
      expect(s.emulator.retrieve(refund.body.refund.id)).toMatchObject({ amount: 1000, status: "succeeded" });
      await expect
        .poll(async () => (await listedPayment(s.served, form.formID, email)).refundedAmount)
        .toBe(10);

      await expect.poll(() => deliveries.length, { timeout: 10_000 }).toBeGreaterThan(0);
      const [first] = deliveries;
      expect(JSON.parse(first.body)).toMatchObject({
        event: "donation.updated",
        data: { paymentID: payment.paymentID, status: "COMPLETED", amount: 50, refundedAmount: 10 },
      });
      // Signed with the webhook's secret.
      const timestamp = String(first.headers["x-webhook-timestamp"]);
      const expected = crypto
        .createHmac("sha256", hook.body.secret)
        .update(`${timestamp}.${first.body}`)
        .digest("hex");
      expect(first.headers["x-webhook-signature"]).toBe(`sha256=${expected}`);

      // Stripe's own word of the refund (charge.refunded, to the served app) counts it once, not twice.
      await s.emulator.webhooks.idle();
      const refunded = s.emulator.webhooks.deliveries.filter((d) => d.type === "charge.refunded");
      expect(refunded.at(-1)).toMatchObject({ status: 200 });
      expect((await listedPayment(s.served, form.formID, email)).refundedAmount).toBe(10);
    } finally {
      await page.close();
      await dispatcher.stop();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });

  describe("on the organization's own site", () => {
    it("the iframe embed: Stripe's fields inside the frame, and a card gift completes", async () => {
      site.page("/embed", hostPage(`<h1>Support us</h1>${form.embedHTML}`));
      const { page, problems } = await open(`${site.origin}/embed`);
      try {
        const frame = await checkoutFrame(page, "iframe[data-almoner-form]");
        expect(new URL(frame.url()).origin).toBe(s.served.baseUrl);
        await paymentElement(frame);
        await frame.getByRole("radio", { name: "$50", exact: true }).check();
        const email = uniqueEmail("embed");
        await fillDonor(frame, email);
        await fillStripeCard(frame);
        await pay(frame, "Donate $50");
        expect(await listedPayment(s.served, form.formID, email)).toMatchObject({
          status: "COMPLETED",
          amount: 50,
        });
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    });

    it("the overlay: Stripe's fields in the dialog's frame, and a card gift completes", async () => {
      const org = await api(s.served, "PUT", "/v1/organization", { organizationBaseURLs: [site.origin] });
      expect(org.status, JSON.stringify(org.body)).toBe(200);
      site.page(
        "/give",
        hostPage(`<main><h1>Give</h1></main><script async src="${s.served.baseUrl}/overlay.js"></script>`),
      );
      const { page, problems } = await open(`${site.origin}/give?donate&formid=${form.formID}`);
      try {
        await page.getByRole("dialog", { name: "Donation form" }).waitFor();
        const frame = await checkoutFrame(page, '.almoner-overlay [role="dialog"] iframe');
        await paymentElement(frame);
        await frame.getByRole("radio", { name: "$100", exact: true }).check();
        const email = uniqueEmail("overlay");
        await fillDonor(frame, email);
        await fillStripeCard(frame);
        await pay(frame, "Donate $100");
        expect(await listedPayment(s.served, form.formID, email)).toMatchObject({
          status: "COMPLETED",
          amount: 100,
        });
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    });
  });

  it("no request the app receives carries the card number: it goes to Stripe only", async () => {
    received.length = 0;
    const { page, problems } = await open(form.formUrl);
    const toStripe: string[] = [];
    page.on("request", (r) => {
      if (r.url().startsWith(s.emulator.url)) toStripe.push(`${r.url()}\n${r.postData() ?? ""}`);
    });
    try {
      await paymentElement(page);
      await page.getByRole("radio", { name: "$25", exact: true }).check();
      const email = uniqueEmail("pci");
      await fillDonor(page, email);
      await fillStripeCard(page);
      await pay(page, "Donate $25");
      expect(await listedPayment(s.served, form.formID, email)).toMatchObject({ status: "COMPLETED" });

      // The checkout itself was among what the app received, with a ConfirmationToken.
      const checkout = received.find((r) =>
        r.startsWith(`POST ${s.served.baseUrl}/api/forms/${form.formID}/checkout`),
      );
      expect(checkout).toContain('"type":"token"');
      expect(checkout).toMatch(/"token":"ctoken_/);
      expect(received.length).toBeGreaterThan(3);
      for (const request of received) {
        expect(request).not.toContain(CARD);
        expect(request).not.toContain("4242 4242 4242 4242");
      }
      expect(toStripe.some((r) => r.includes(CARD))).toBe(true);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("axe finds no serious or critical issue on the form with Stripe's fields in it", async () => {
    s.emulator.setWallets({ googlePay: true });
    const { page } = await open(form.formUrl);
    try {
      await paymentElement(page);
      await page.getByRole("button", { name: "Donate with Google Pay" }).waitFor();
      expect(await seriousAxeIssues(page)).toEqual([]);
      await page.getByRole("tab", { name: "US bank account" }).click();
      await page.getByLabel("Routing number").waitFor();
      expect(await seriousAxeIssues(page)).toEqual([]);
    } finally {
      await page.close();
    }
  });

  describe("the update page of a gift at Stripe", () => {
    /** A monthly gift paid with `card` on the hosted page, 3-D Secure completed if the card asks. */
    async function monthlyGift(card: string) {
      const { page } = await open(form.formUrl);
      try {
        await paymentElement(page);
        await page.getByRole("radio", { name: "Monthly" }).check();
        await page.getByRole("radio", { name: /^\$25/ }).check();
        const email = uniqueEmail("update");
        await fillDonor(page, email);
        await fillStripeCard(page, card);
        await page.getByRole("button", { name: "Donate $25 monthly" }).click();
        const dialog = page.getByRole("button", { name: "Complete authentication" });
        const done = page.getByRole("heading", { name: "Thank you!" });
        await Promise.race([dialog.waitFor({ timeout: 15_000 }), done.waitFor({ timeout: 15_000 })]);
        if (await dialog.isVisible()) await dialog.click();
        await done.waitFor({ timeout: 15_000 });
        const payment = await listedPayment(s.served, form.formID, email);
        return String(payment.subscriptionId);
      } finally {
        await page.close();
      }
    }

    it("the donor saves a new card in Stripe's fields; the gift keeps it, the link's returnUrl is offered, and the page passes axe", async () => {
      const subscriptionId = await monthlyGift("4242 4242 4242 4242");
      const link = await api<{ url: string }>(
        s.served,
        "POST",
        `/v1/subscriptions/${subscriptionId}/payment-method-update-link`,
        { returnUrl: "https://charity.example/thanks" },
      );
      const { page, problems } = await open(link.body.url);
      try {
        await page.getByLabel("Card number").waitFor();
        // This link takes cards and bank accounts: Stripe's fields offer both.
        await page.getByRole("tab", { name: "US bank account" }).waitFor();
        expect(await seriousAxeIssues(page)).toEqual([]);
        await fillStripeCard(page, "5555 5555 5555 4444");
        await page.getByRole("button", { name: "Save payment method" }).click();
        await page.getByText("ending 4444").waitFor({ timeout: 15_000 });
        expect(await page.getByRole("link", { name: "Continue" }).getAttribute("href")).toBe(
          "https://charity.example/thanks",
        );
        const sub = await s.served.t.store.db
          .selectFrom("subscriptions")
          .selectAll()
          .where("id", "=", subscriptionId)
          .executeTakeFirstOrThrow();
        expect(sub.last4).toBe("4444");
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    });

    it("a link for cards only: Stripe's fields offer no bank account", async () => {
      const subscriptionId = await monthlyGift("4242 4242 4242 4242");
      const link = await api<{ url: string }>(
        s.served,
        "POST",
        `/v1/subscriptions/${subscriptionId}/payment-method-update-link`,
        { allowedPaymentMethods: ["CARD"] },
      );
      const { page, problems } = await open(link.body.url);
      try {
        await page.getByLabel("Card number").waitFor();
        expect(await page.getByRole("tab", { name: "US bank account" }).count()).toBe(0);
        // No returnUrl: no way on is offered.
        expect(await page.getByRole("link", { name: "Continue" }).count()).toBe(0);
        // The server cannot be reached: the page says so, in its language, and the donor can try again.
        await page.route("**/stripe?*", (route) => route.abort());
        await fillStripeCard(page, "5555 5555 5555 4444");
        await page.getByRole("button", { name: "Save payment method" }).click();
        await page
          .getByText("The server could not be reached. Check your connection and try again.")
          .waitFor();
        await page.unroute("**/stripe?*");
        await page.getByRole("button", { name: "Save payment method" }).click();
        await page.getByText("ending 4444").waitFor({ timeout: 15_000 });
        expect(problems.filter((p) => !p.includes("ERR_FAILED"))).toEqual([]);
      } finally {
        await page.close();
      }
    });

    it("a recurring charge the bank held is confirmed by the donor from the e-mailed link", async () => {
      const subscriptionId = await monthlyGift("4000 0027 6000 3184");
      const sub = await s.served.t.store.db
        .selectFrom("subscriptions")
        .selectAll()
        .where("id", "=", subscriptionId)
        .executeTakeFirstOrThrow();
      const run = await runBillingAt(
        s.served.t.store,
        s.served.t.config,
        Date.parse(sub.next_billing_at) + 1000,
      );
      expect(run.errors).toEqual([]);
      const mail = await s.served.t.store.db
        .selectFrom("email_outbox")
        .selectAll()
        .where("to_address", "=", sub.email)
        .where("subject", "like", "Please confirm%")
        .executeTakeFirstOrThrow();
      const url = /https?:\/\/\S+update-payment-method\/\S+/.exec(mail.text_body)?.[0] ?? "";
      const { page, problems } = await open(url);
      try {
        await page.getByRole("button", { name: "Confirm $25" }).click();
        await page.getByRole("button", { name: "Complete authentication" }).click();
        const status = page.locator("#almoner-confirm-status");
        await page.waitForFunction(
          () => (document.getElementById("almoner-confirm-status")?.textContent ?? "") !== "",
          undefined,
          { timeout: 15_000 },
        );
        expect(await status.textContent()).toContain("went through");
        const charges = await s.served.t.store.db
          .selectFrom("payments")
          .select("status")
          .where("subscription_id", "=", subscriptionId)
          .orderBy("created_at")
          .execute();
        expect(charges.map((c) => c.status)).toEqual(["COMPLETED", "COMPLETED"]);
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    });
  });
});

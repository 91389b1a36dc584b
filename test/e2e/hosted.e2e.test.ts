import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Browser,
  browserAvailable,
  launchBrowser,
  type ServedApp,
  serveTestApp,
} from "./support/browser.js";
import {
  createForm,
  createLink,
  fillCard,
  fillDonor,
  paymentsOf,
  seriousAxeIssues,
  uniqueEmail,
} from "./support/checkout.js";

/**
 * Donors completing the hosted checkout pages (/donate, /attend) in Chromium against the app served over
 * HTTP with the sandbox processor: every kind of form, a decline then a good card, keyboard only, and an
 * axe-core check of each kind. Every completed checkout is looked up in the database afterwards.
 */

const FORMS = {
  standard: {
    title: "Support our work",
    description: "Every gift keeps our programs running.",
    funds: ["General Fund", "Scholarships"],
    frequencies: ["ONE_TIME", "MONTHLY", "ANNUALLY"],
    enableFundraisingBar: true,
    goal: 50000,
    enableDonorList: true,
    customInputs: [{ title: "In honor of", inputType: "short_text" }],
    faqs: [{ question: "Is my gift tax-deductible?", answer: "Yes, to the extent allowed by law." }],
  },
  givingLevel: {
    title: "Giving circles",
    amountType: "giving_level",
    funds: ["General Fund"],
    frequencies: ["ONE_TIME", "MONTHLY"],
    givingLevels: [
      { title: "Friend", amount: 50, description: "Covers a week of supplies" },
      { title: "Champion", amount: 250, description: "Funds a workshop" },
    ],
  },
  sponsorship: {
    title: "Sponsor the spring fair",
    amountType: "sponsorship",
    funds: ["Spring Fair"],
    sponsorshipGroups: [
      {
        groupTitle: "Booths",
        description: "Your name on a booth",
        options: [
          { optionTitle: "Bronze booth", amount: 250, quantity: 20 },
          { optionTitle: "Gold booth", amount: 1000, quantity: 5 },
        ],
      },
    ],
  },
  event: {
    title: "Annual gala",
    formType: "event",
    funds: ["Gala"],
    enableTimeAndLocation: true,
    eventDate: "2027-05-15",
    startTime: "18:30",
    endTime: "22:00",
    location: "Riverside Hall, 12 Main Street",
    timeZone: "America/New_York",
    enableBillingAddress: true,
    enableCountryDropdown: true,
    enablePhone: true,
    enableOrganizationName: true,
    tickets: [
      { name: "General admission", price: 75, quantity: 200, maxPerOrder: 10 },
      { name: "Table for eight", price: 500, ticketType: "GROUP", groupSize: 8, quantity: 20 },
    ],
    promoCodes: [
      {
        code: "EARLYBIRD",
        discountType: "percentage",
        discountValue: 20,
        applicableTickets: ["General admission"],
      },
    ],
  },
} satisfies Record<string, Record<string, unknown>>;

describe.skipIf(!browserAvailable)("hosted checkout in Chromium", () => {
  let served: ServedApp;
  let browser: Browser;
  const ids: Record<keyof typeof FORMS, { formID: string; formUrl: string }> = {} as never;

  beforeAll(async () => {
    served = await serveTestApp({ CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" });
    browser = await launchBrowser();
    for (const [kind, body] of Object.entries(FORMS))
      ids[kind as keyof typeof FORMS] = await createForm(served, body);
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  /** A page that fails the test on any script error or request off the test server. */
  async function open(url: string): Promise<{ page: Page; problems: string[] }> {
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`console: ${m.text()}`);
    });
    page.on("request", (r) => {
      if (new URL(r.url()).origin !== served.baseUrl && !r.url().startsWith("data:"))
        problems.push(`request: ${r.url()}`);
    });
    await page.goto(url);
    // Hydrated: the app has taken over the server's HTML.
    await page.waitForFunction(() => {
      const root = document.getElementById("almoner-app");
      return !!root && Object.keys(root).some((k) => k.startsWith("__"));
    });
    return { page, problems };
  }

  async function pay(page: Page, button: string | RegExp) {
    await page.getByRole("button", { name: button }).click();
  }

  it("a one-time standard gift, with the page's UTM parameters recorded", async () => {
    const { formID, formUrl } = ids.standard;
    const { page, problems } = await open(`${formUrl}?utm_source=newsletter&utm_campaign=spring`);
    try {
      expect(await page.title()).toBe("Support our work");
      await page.getByRole("radio", { name: "$100", exact: true }).check();
      await page.getByLabel("Designate my gift to").selectOption("Scholarships");
      await page.getByLabel("In honor of").fill("Grandma");
      await page.getByLabel("Send me news and updates from Test Org").check();
      const email = uniqueEmail("one-time");
      await fillDonor(page, email);
      await fillCard(page);
      await expect.poll(() => page.locator(".alm-total dd").textContent()).toBe("$100");
      await pay(page, "Donate $100");
      await page.getByRole("heading", { name: "Thank you!" }).waitFor();
      const payment = (await paymentsOf(served, formID)).find((p) => p.email === email);
      expect(payment).toMatchObject({
        status: "COMPLETED",
        amount_cents: 10000,
        frequency: "ONE_TIME",
        fund: "Scholarships",
        last4: "4242",
      });
      const details = JSON.parse(payment?.details ?? "{}");
      expect(details.utm).toEqual({ source: "newsletter", campaign: "spring" });
      expect(details.emailOptIn).toBe(true);
      expect(details.customInputs).toEqual([expect.objectContaining({ value: "Grandma" })]);
      expect(await page.locator(".alm-result").textContent()).toContain(payment?.id);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("a gift in memory of someone: the dedication is recorded, its notice queued, and the open form stays axe clean", async () => {
    const { formID, formUrl } = await createForm(served, {
      title: "Remember with us",
      funds: ["General Fund"],
      enableTribute: true,
    });
    const { page, problems } = await open(formUrl);
    try {
      await page.getByRole("radio", { name: "$50", exact: true }).check();
      await page.getByLabel("Dedicate my gift to someone").check();
      await page.getByLabel("In memory of").check();
      await page.getByLabel("Their name").fill("Grace Hopper");
      await page.getByLabel("Email someone about it (optional)").fill("family@example.org");
      await page.getByLabel("Your message (optional)").fill("For Grace, who taught us.");
      expect(await seriousAxeIssues(page)).toEqual([]);
      const email = uniqueEmail("tribute");
      await fillDonor(page, email);
      await fillCard(page);
      await pay(page, "Donate $50");
      await page.getByRole("heading", { name: "Thank you!" }).waitFor();
      const payment = (await paymentsOf(served, formID)).find((p) => p.email === email);
      expect(payment?.status).toBe("COMPLETED");
      expect(JSON.parse(payment?.details ?? "{}").tribute).toEqual({
        kind: "MEMORY",
        honoreeName: "Grace Hopper",
        notifyEmail: "family@example.org",
        message: "For Grace, who taught us.",
      });
      const notices = await served.t.store.db
        .selectFrom("email_outbox")
        .select(["to_address", "subject"])
        .where("payment_id", "=", payment?.id ?? "")
        .execute();
      expect(notices).toContainEqual({
        to_address: "family@example.org",
        subject: "A gift in memory of Grace Hopper",
      });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("a monthly gift starts a subscription", async () => {
    const { formID, formUrl } = ids.standard;
    const { page, problems } = await open(formUrl);
    try {
      await page.getByRole("radio", { name: "Monthly" }).check();
      await page.getByRole("radio", { name: /^\$25/ }).check();
      const email = uniqueEmail("monthly");
      await fillDonor(page, email);
      await fillCard(page);
      await pay(page, "Donate $25 monthly");
      await page.getByRole("heading", { name: "Thank you!" }).waitFor();
      expect(await page.locator(".alm-result").textContent()).toContain("Next payment");
      const payment = (await paymentsOf(served, formID)).find((p) => p.email === email);
      expect(payment).toMatchObject({ status: "COMPLETED", amount_cents: 2500, frequency: "MONTHLY" });
      expect(payment?.subscription_id).toBeTruthy();
      const sub = await served.t.store.db
        .selectFrom("subscriptions")
        .selectAll()
        .where("id", "=", payment?.subscription_id as string)
        .executeTakeFirst();
      expect(sub).toMatchObject({ status: "ACTIVE", amount_cents: 2500, frequency: "MONTHLY" });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("after Back to the page, what it shows is what is priced and charged: the choices start again, none is put back half", async () => {
    const { formID, formUrl } = ids.standard;
    const { page, problems } = await open(formUrl);
    try {
      await page.getByRole("radio", { name: "Monthly" }).check();
      await page.getByRole("radio", { name: /^\$100/ }).check();
      await page.getByLabel("Designate my gift to").selectOption("Scholarships");
      await fillDonor(page, uniqueEmail("away"));
      const button = page.locator(".alm-submit");
      await expect.poll(() => button.textContent()).toBe("Donate $100 monthly");
      // Away and Back: the page loads again (a browser puts form fields back after such a load, by their
      // places in the page; the amounts' places differ by frequency).
      await page.goto(`${served.baseUrl}/health`);
      await page.goBack();
      await page.getByRole("radio", { name: "One time" }).waitFor();
      await page.waitForLoadState("load");
      const shown = async () => ({
        frequency: await page.locator('input[name="frequency"]:checked').getAttribute("value"),
        amount: await page.locator('input[name="amount"]:checked').getAttribute("value"),
        fund: await page.getByLabel("Designate my gift to").inputValue(),
        button: await button.textContent(),
      });
      await expect
        .poll(shown)
        .toEqual({ frequency: "ONE_TIME", amount: "50", fund: "General Fund", button: "Donate $50" });
      const email = uniqueEmail("back");
      await fillDonor(page, email);
      await fillCard(page);
      await pay(page, "Donate $50");
      await page.getByRole("heading", { name: "Thank you!" }).waitFor();
      const payment = (await paymentsOf(served, formID)).find((p) => p.email === email);
      expect(payment).toMatchObject({
        status: "COMPLETED",
        amount_cents: 5000,
        frequency: "ONE_TIME",
        fund: "General Fund",
      });
      // The page away (JSON) names no icon: the browser's ask for /favicon.ico is answered without an error.
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("a giving level", async () => {
    const { formID, formUrl } = ids.givingLevel;
    const { page, problems } = await open(formUrl);
    try {
      await page.getByRole("radio", { name: /Champion/ }).check();
      const email = uniqueEmail("level");
      await fillDonor(page, email);
      await fillCard(page);
      await pay(page, "Donate $250");
      await page.getByRole("heading", { name: "Thank you!" }).waitFor();
      const payment = (await paymentsOf(served, formID)).find((p) => p.email === email);
      expect(payment).toMatchObject({ status: "COMPLETED", amount_cents: 25000 });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("a sponsorship product, with fees covered", async () => {
    const { formID, formUrl } = ids.sponsorship;
    const { page, problems } = await open(formUrl);
    try {
      await page.getByRole("radio", { name: /Bronze booth/ }).check();
      await page.getByLabel(/so all of my gift goes to/).check();
      const email = uniqueEmail("sponsor");
      await fillDonor(page, email);
      await fillCard(page);
      // $250 plus the fee that nets the organization $250 at 2.9% + $0.30.
      await expect.poll(() => page.locator(".alm-total dd").textContent()).toBe("$257.78");
      await pay(page, "Sponsor for $257.78");
      await page.getByRole("heading", { name: "Thank you!" }).waitFor();
      const payment = (await paymentsOf(served, formID)).find((p) => p.email === email);
      expect(payment).toMatchObject({
        status: "COMPLETED",
        amount_cents: 25778,
        fee_cents: 778,
        cover_fees: 1,
      });
      expect(JSON.parse(payment?.details ?? "{}").lines[0]).toMatchObject({
        kind: "product",
        label: expect.stringContaining("Bronze booth"),
      });
      // The stock left went down on the page for the next donor.
      const again = await open(formUrl);
      expect(await again.page.getByText("19 left").count()).toBe(1);
      await again.page.close();
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("an event order with a group ticket and a promo code", async () => {
    const { formID, formUrl } = ids.event;
    expect(formUrl).toContain("/donate/");
    const { page, problems } = await open(formUrl.replace("/donate/", "/attend/"));
    try {
      expect(await page.getByText("Saturday, May 15, 2027").count()).toBe(1);
      await page.getByLabel("Table for eight").fill("1");
      await page.getByLabel("General admission").fill("2");
      await page.getByLabel("Promo code").fill("earlybird");
      await page.getByRole("button", { name: "Apply" }).click();
      await page.getByText("Promo code EARLYBIRD applied: you save $30.").waitFor();
      // 2 × $75 + $500 − 20% of $150.
      await expect.poll(() => page.locator(".alm-total dd").textContent()).toBe("$620");
      const email = uniqueEmail("event");
      await fillDonor(page, email);
      await page.getByLabel("Organization name").fill("Engines Ltd");
      await page.getByLabel("Phone").fill("+1 555 0100");
      await page.getByLabel("Street address").fill("1 Main St");
      await page.getByLabel("Country").selectOption("US");
      await fillCard(page);
      await pay(page, "Pay $620");
      await page.getByRole("heading", { name: "You're registered!" }).waitFor();
      const payment = (await paymentsOf(served, formID)).find((p) => p.email === email);
      expect(payment).toMatchObject({ status: "COMPLETED", amount_cents: 62000 });
      const details = JSON.parse(payment?.details ?? "{}");
      expect(details).toMatchObject({ promoCode: "EARLYBIRD", discountCents: 3000, attendees: 10 });
      expect(details.donor).toMatchObject({
        organizationName: "Engines Ltd",
        phone: "+1 555 0100",
        address: { line1: "1 Main St", country: "US" },
      });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("a declined card, then a good one", async () => {
    const { formID, formUrl } = ids.standard;
    const { page, problems } = await open(formUrl);
    try {
      await page.getByRole("radio", { name: "$50", exact: true }).check();
      const email = uniqueEmail("decline");
      await fillDonor(page, email);
      await fillCard(page, "4000 0000 0000 0002");
      await pay(page, "Donate $50");
      await page.getByRole("heading", { name: "Payment declined" }).waitFor();
      expect(await page.getByRole("alert").textContent()).toContain("Nothing was charged.");
      expect(await seriousAxeIssues(page, ["color-contrast"])).toEqual([]);
      await page.getByRole("button", { name: "Try another card" }).click();
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("alm-cardNumber");
      expect(await page.getByLabel("Email").inputValue()).toBe(email);
      await fillCard(page);
      await pay(page, "Donate $50");
      await page.getByRole("heading", { name: "Thank you!" }).waitFor();
      const statuses = (await paymentsOf(served, formID))
        .filter((p) => p.email === email)
        .map((p) => p.status);
      expect(statuses).toEqual(["FAILED", "COMPLETED"]);
      expect(problems.filter((p) => !p.includes("402"))).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("a donor completes a gift with the keyboard alone, seeing where the focus is", async () => {
    const { formID, formUrl } = ids.givingLevel;
    const { page, problems } = await open(formUrl);
    try {
      /** Tabs forward until the focused element matches; fails if it takes more than 60 presses. */
      async function tabTo(selector: string) {
        for (let i = 0; i < 60; i++) {
          await page.keyboard.press("Tab");
          if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) {
            const outline = await page.evaluate(() => {
              const el = document.activeElement as HTMLElement;
              const target = el.matches("input[type=radio]") ? (el.nextElementSibling as HTMLElement) : el;
              const style = getComputedStyle(target);
              return `${style.outlineStyle} ${style.outlineWidth}`;
            });
            expect(outline, `visible focus on ${selector}`).not.toMatch(/^none|0px$/);
            return;
          }
        }
        throw new Error(`Tab never reached ${selector}`);
      }
      await tabTo("input[name=frequency]");
      await page.keyboard.press("ArrowRight"); // Monthly
      await tabTo("input[name=level]");
      await page.keyboard.press("ArrowRight"); // Champion
      const email = uniqueEmail("keys");
      for (const [id, text] of [
        ["alm-firstName", "Ada"],
        ["alm-lastName", "Lovelace"],
        ["alm-email", email],
        ["alm-cardNumber", "4242424242424242"],
        ["alm-cardExp", "12/34"],
        ["alm-cardCvc", "123"],
      ]) {
        await tabTo(`#${id}`);
        await page.keyboard.type(text);
      }
      await tabTo("button[type=submit]");
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Donate $250 monthly");
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "Thank you!" }).waitFor();
      // The thank-you takes the focus in an effect that runs after it is drawn.
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.getAttribute("role")))
        .toBe("status");
      expect(await seriousAxeIssues(page, ["color-contrast"])).toEqual([]);
      const payment = (await paymentsOf(served, formID)).find((p) => p.email === email);
      expect(payment).toMatchObject({ status: "COMPLETED", amount_cents: 25000, frequency: "MONTHLY" });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("what a donor types before the app has loaded is kept, and the bare form cannot be submitted", async () => {
    const { formID, formUrl } = ids.standard;
    const page = await browser.context.newPage();
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route("**/checkout/app.js*", async (route) => {
      await gate;
      await route.continue();
    });
    try {
      await page.goto(formUrl, { waitUntil: "commit" });
      const button = page.getByRole("button", { name: /^Donate/ });
      await button.waitFor();
      expect(await button.isDisabled()).toBe(true);
      await page.getByRole("radio", { name: "Monthly" }).check();
      const email = uniqueEmail("early");
      await fillDonor(page, email);
      await fillCard(page);
      release();
      await page.getByRole("button", { name: "Donate $50 monthly" }).click();
      await page.getByRole("heading", { name: "Thank you!" }).waitFor();
      const payment = (await paymentsOf(served, formID)).find((p) => p.email === email);
      expect(payment).toMatchObject({
        status: "COMPLETED",
        amount_cents: 5000,
        frequency: "MONTHLY",
        first_name: "Ada",
      });
    } finally {
      release();
      await page.close();
    }
  });

  it("errors are announced, tied to their fields, and focus goes to the first one", async () => {
    const { page } = await open(ids.standard.formUrl);
    try {
      await page.getByRole("button", { name: /^Donate/ }).click();
      await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/Please fix \d+ fields/);
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("alm-firstName");
      const first = page.getByLabel("First name");
      expect(await first.getAttribute("aria-invalid")).toBe("true");
      const described = await first.getAttribute("aria-describedby");
      expect(await page.locator(`#${described}`).textContent()).toBe("Enter your first name.");
      expect(await seriousAxeIssues(page)).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("keeps its empty live regions in the page (so a message filled in later is announced), taking no room", async () => {
    const { page } = await open(ids.event.formUrl);
    try {
      // The message regions (the submit button speaks its own changes, and has its own room).
      const regions = await page.locator("[aria-live]:not(button)").evaluateAll((els) =>
        els.map((el) => ({
          display: getComputedStyle(el).display,
          height: el.getBoundingClientRect().height,
        })),
      );
      expect(regions.length).toBeGreaterThanOrEqual(2);
      for (const region of regions) expect(region).toEqual({ display: "block", height: 0 });
    } finally {
      await page.close();
    }
  });

  it("in an iframe (transparent over the host's page) gives its language links a white ground of their own", async () => {
    const { page } = await open(`${ids.standard.formUrl}?embed=1`);
    try {
      const ground = await page.locator(".alm-langs").evaluate((el) => getComputedStyle(el).backgroundColor);
      expect(ground).toBe("rgb(255, 255, 255)");
      expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(
        "rgba(0, 0, 0, 0)",
      );
    } finally {
      await page.close();
    }
  });

  it("starts a typed amount after the currency's symbol, however wide the page's language writes it", async () => {
    for (const language of ["en", "es", "fr"]) {
      const { page } = await open(`${ids.standard.formUrl}?lang=${language}`);
      try {
        const room = await page.locator(".alm-custom").evaluate((custom) => {
          const symbol = custom.querySelector(".alm-dollar") as HTMLElement;
          const input = custom.querySelector("input:not([type=radio]):not([type=checkbox])") as HTMLElement;
          const box = input.getBoundingClientRect();
          const textStarts = box.left + Number.parseFloat(getComputedStyle(input).paddingLeft);
          return { symbol: symbol.textContent, gap: textStarts - symbol.getBoundingClientRect().right };
        });
        expect(room.gap, `${language}: ${room.symbol}`).toBeGreaterThanOrEqual(0);
      } finally {
        await page.close();
      }
    }
  });

  it("a checkout link's prefill is shown on the hosted page", async () => {
    const { formID, formUrl } = ids.standard;
    const linkID = await createLink(served, formID, {
      firstName: "Grace",
      email: "grace@example.org",
      amount: 250,
      frequency: "ANNUALLY",
      utmSource: "link",
    });
    const { page } = await open(`${formUrl}?elementid=${linkID}`);
    try {
      expect(await page.getByLabel("First name").inputValue()).toBe("Grace");
      expect(await page.getByRole("radio", { name: "Yearly" }).isChecked()).toBe(true);
      expect(await page.getByRole("button", { name: "Donate $250 yearly" }).count()).toBe(1);
      await page.getByLabel("Last name").fill("Hopper");
      await fillCard(page);
      await pay(page, "Donate $250 yearly");
      await page.getByRole("heading", { name: "Thank you!" }).waitFor();
      const payment = (await paymentsOf(served, formID)).find((p) => p.email === "grace@example.org");
      expect(payment).toMatchObject({ amount_cents: 25000, frequency: "ANNUALLY" });
      expect(JSON.parse(payment?.details ?? "{}")).toMatchObject({
        elementId: linkID,
        utm: { source: "link" },
      });
    } finally {
      await page.close();
    }
  });

  for (const kind of Object.keys(FORMS) as (keyof typeof FORMS)[]) {
    it(`axe finds no serious or critical issue on the ${kind} form`, async () => {
      const { page } = await open(ids[kind].formUrl);
      try {
        expect(await seriousAxeIssues(page)).toEqual([]);
      } finally {
        await page.close();
      }
    });
  }
});

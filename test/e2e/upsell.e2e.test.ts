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
  fillCard,
  fillDonor,
  paymentsOf,
  seriousAxeIssues,
  uniqueEmail,
} from "./support/checkout.js";

/** "Make it monthly" in Chromium: a one-time gift offered as a monthly one, accepted (keyboard and axe clean) or declined. */
describe.skipIf(!browserAvailable)("monthly upsell in Chromium", () => {
  let served: ServedApp;
  let browser: Browser;

  beforeAll(async () => {
    served = await serveTestApp({ CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  /** A form that offers a one-time gift of $75 or more as a monthly gift of a quarter of it. */
  const offerForm = (title: string) =>
    createForm(served, {
      title,
      funds: ["General"],
      frequencies: ["ONE_TIME", "MONTHLY"],
      oneTimeAmounts: [50, 100],
      monthlyAmounts: [10, 25],
      enableMonthlyUpsell: true,
      monthlyUpsellRatio: 0.25,
      monthlyUpsellMinimum: 75,
    });

  /** Opens the hosted page and waits until the checkout is hydrated (Preact's own keys on its root). */
  async function openHydrated(page: Page, url: string): Promise<void> {
    await page.goto(url);
    await page.waitForFunction(() => {
      const root = document.getElementById("almoner-app");
      return !!root && Object.keys(root).some((k) => k.startsWith("__"));
    });
  }

  it("offers a $100 one-time gift as $25 a month; accepting makes a monthly gift with a subscription", async () => {
    const { formID, formUrl } = await offerForm("Keep the lights on");
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    await openHydrated(page, formUrl);
    await page.getByRole("radio", { name: "$100", exact: true }).check();
    const email = uniqueEmail("upsell");
    await fillDonor(page, email);
    await fillCard(page);
    await page.getByRole("button", { name: /^Donate \$100$/ }).click();
    const offer = page.getByRole("region", { name: "Make it monthly?" });
    await offer.waitFor();
    // The offer takes the focus, so a keyboard user lands on it (in an effect that runs after it is drawn).
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.classList.contains("alm-upsell")))
      .toBe(true);
    expect(await seriousAxeIssues(page)).toEqual([]);
    await page.getByRole("button", { name: "Yes, give $25 monthly" }).click();
    await page.getByRole("button", { name: /^Donate \$25 monthly$/ }).click();
    await page.getByRole("heading", { name: "Thank you!" }).waitFor();
    const [payment] = await paymentsOf(served, formID);
    expect(payment).toMatchObject({ email, frequency: "MONTHLY", amount_cents: 2500 });
    expect(payment.subscription_id).toMatch(/^sub_/);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("declining the offer gives the $100 once, with no subscription; the offer is not made again on the page", async () => {
    const { formID, formUrl } = await offerForm("Keep the doors open");
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    await openHydrated(page, formUrl);
    // Counts every time the offer appears on the page, however briefly.
    await page.evaluate(() => {
      const w = window as unknown as { offersShown: number };
      w.offersShown = 0;
      new MutationObserver((records) => {
        for (const r of records)
          for (const node of r.addedNodes)
            if (
              node instanceof Element &&
              [node, ...node.querySelectorAll("h2")].some((e) => e.textContent === "Make it monthly?")
            )
              w.offersShown++;
      }).observe(document.body, { childList: true, subtree: true });
    });
    const offersShown = () => page.evaluate(() => (window as unknown as { offersShown: number }).offersShown);
    const offer = page.getByRole("region", { name: "Make it monthly?" });

    await page.getByRole("radio", { name: "$100", exact: true }).check();
    const email = uniqueEmail("upsell-no");
    await fillDonor(page, email);
    // The first card is declined, so the donor sends the form a second time on this page.
    await fillCard(page, "4000 0000 0000 0002");
    await page.getByRole("button", { name: /^Donate \$100$/ }).click();
    await offer.waitFor();
    expect(await offersShown()).toBe(1);
    await page.getByRole("button", { name: "No, give $100 once" }).click();
    await page.getByRole("heading", { name: "Payment declined" }).waitFor();
    expect(await offer.count()).toBe(0);

    await page.getByRole("button", { name: "Try another card" }).click();
    await fillCard(page);
    await page.getByRole("button", { name: /^Donate \$100$/ }).click();
    const thanks = page
      .getByRole("status")
      .filter({ has: page.getByRole("heading", { name: "Thank you!" }) });
    // What comes next is the thank-you, not the offer again.
    await thanks.or(offer).first().waitFor();
    expect(await offersShown()).toBe(1);
    expect(await offer.count()).toBe(0);
    // The thank-you names the one-time $100: no "monthly", no next payment.
    const shown = await thanks.evaluate((el) =>
      [...el.querySelectorAll("dt")].map((dt) => [dt.textContent, dt.nextElementSibling?.textContent]),
    );
    expect(shown).toContainEqual(["Amount charged", "$100"]);
    expect(shown.map(([dt]) => dt)).not.toContain("Next payment");
    expect(await thanks.textContent()).not.toMatch(/monthly/i);

    // The organization's API: one completed one-time payment of the original $100, and no subscription.
    const key = { Authorization: `Bearer ${served.t.org.key}` };
    const listed = (await (
      await fetch(`${served.baseUrl}/v1/payments?limit=100`, { headers: key })
    ).json()) as {
      payments: {
        formID: string;
        email: string;
        status: string;
        frequency: string;
        amount: number;
        subscriptionId: string | null;
      }[];
    };
    const mine = listed.payments.filter((p) => p.formID === formID && p.email === email);
    expect(mine.filter((p) => p.status === "COMPLETED")).toEqual([
      expect.objectContaining({ frequency: "ONE_TIME", amount: 100, subscriptionId: null }),
    ]);
    expect(mine.every((p) => p.frequency === "ONE_TIME" && p.amount === 100)).toBe(true);
    const subs = (await (
      await fetch(`${served.baseUrl}/v1/subscriptions?limit=100`, { headers: key })
    ).json()) as {
      subscriptions: { email: string }[];
    };
    expect(subs.subscriptions.filter((s) => s.email === email)).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
  it("declining the offer with a card the payment refuses takes the focus to the card's field, not the page", async () => {
    const { formUrl } = await offerForm("Keep the roof on");
    const page = await browser.context.newPage();
    await openHydrated(page, formUrl);
    await page.getByRole("radio", { name: "$100", exact: true }).check();
    await fillDonor(page, uniqueEmail("upsell-bad-card"));
    // Sixteen digits that fail the card number's checksum: the browser sends them, the sandbox refuses them.
    await fillCard(page, "4242 4242 4242 4241");
    await page.getByRole("button", { name: /^Donate \$100$/ }).click();
    await page.getByRole("region", { name: "Make it monthly?" }).waitFor();
    await page.getByRole("button", { name: "No, give $100 once" }).click();
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.id ?? document.activeElement?.tagName))
      .toBe("alm-cardNumber");
    expect(await page.getByLabel("Card number").getAttribute("aria-invalid")).toBe("true");
    await page.close();
  });
});

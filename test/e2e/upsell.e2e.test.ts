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

/** "Make it monthly" in Chromium: a one-time gift offered as a monthly one, accepted, keyboard and axe clean. */
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

  it("offers a $100 one-time gift as $25 a month; accepting makes a monthly gift with a subscription", async () => {
    const { formID, formUrl } = await createForm(served, {
      title: "Keep the lights on",
      funds: ["General"],
      frequencies: ["ONE_TIME", "MONTHLY"],
      oneTimeAmounts: [50, 100],
      monthlyAmounts: [10, 25],
      enableMonthlyUpsell: true,
      monthlyUpsellRatio: 0.25,
      monthlyUpsellMinimum: 75,
    });
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(formUrl);
    await page.waitForFunction(() => {
      const root = document.getElementById("almoner-app");
      return !!root && Object.keys(root).some((k) => k.startsWith("__"));
    });
    await page.getByRole("radio", { name: "$100", exact: true }).check();
    const email = uniqueEmail("upsell");
    await fillDonor(page, email);
    await fillCard(page);
    await page.getByRole("button", { name: /^Donate \$100$/ }).click();
    const offer = page.getByRole("region", { name: "Make it monthly?" });
    await offer.waitFor();
    // The offer takes the focus, so a keyboard user lands on it.
    expect(await page.evaluate(() => document.activeElement?.classList.contains("alm-upsell"))).toBe(true);
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
});

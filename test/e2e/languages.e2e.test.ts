import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { translator } from "../../server/i18n.js";
import { directionOf, LANGUAGE_NAMES, type Language } from "../../shared/languages.js";
import {
  type Browser,
  browserAvailable,
  launchBrowser,
  type ServedApp,
  serveTestApp,
} from "./support/browser.js";
import { createForm, paymentsOf, seriousAxeIssues, uniqueEmail } from "./support/checkout.js";

/** Donors giving in their own language and currency: Spanish, Arabic (right to left), a EUR gift, the language switcher. */
describe.skipIf(!browserAvailable)("checkout languages and currencies in Chromium", () => {
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

  async function open(url: string): Promise<{ page: Page; problems: string[] }> {
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    await page.goto(url);
    await page.waitForFunction(() => {
      const root = document.getElementById("almoner-app");
      return !!root && Object.keys(root).some((k) => k.startsWith("__"));
    });
    return { page, problems };
  }

  async function give(
    page: Page,
    labels: { first: string; last: string; email: string; card: string; exp: string; cvc: string },
    email: string,
  ) {
    await page.getByLabel(labels.first).fill("Ada");
    await page.getByLabel(labels.last).fill("Lovelace");
    await page.getByLabel(new RegExp(`^${labels.email}( \\*)?$`)).fill(email);
    await page.getByLabel(labels.card).fill("4242 4242 4242 4242");
    await page.getByLabel(labels.exp).fill("12/34");
    await page.getByLabel(labels.cvc).fill("123");
  }

  it("a gift in Spanish: Spanish labels, amounts and the thank-you", async () => {
    const { formID, formUrl } = await createForm(served, { title: "Planta un árbol", funds: ["General"] });
    const { page, problems } = await open(`${formUrl}?lang=es`);
    expect(await page.evaluate(() => document.documentElement.lang)).toBe("es");
    await page.getByRole("radio", { name: /^50\s?US\$$|^US\$\s?50$|^50 \$/ }).check();
    const email = uniqueEmail("es");
    await give(
      page,
      {
        first: "Nombre",
        last: "Apellidos",
        email: "Correo electrónico",
        card: "Número de tarjeta",
        exp: "Caducidad (MM/AA)",
        cvc: "CVC",
      },
      email,
    );
    expect(await seriousAxeIssues(page)).toEqual([]);
    await page.getByRole("button", { name: /^Donar / }).click();
    await page.getByRole("heading", { name: "¡Gracias!" }).waitFor();
    const [payment] = await paymentsOf(served, formID);
    expect(payment.email).toBe(email);
    expect(payment.status).toBe("COMPLETED");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("a gift in Arabic: right to left, axe clean, completed", async () => {
    const { formID, formUrl } = await createForm(served, { title: "Plant a tree", funds: ["General"] });
    const { page, problems } = await open(`${formUrl}?lang=ar`);
    expect(await page.evaluate(() => [document.documentElement.lang, document.documentElement.dir])).toEqual([
      "ar",
      "rtl",
    ]);
    // The layout mirrors: the checkout's text starts on the right.
    expect(
      await page.evaluate(() => getComputedStyle(document.querySelector(".alm") as Element).direction),
    ).toBe("rtl");
    await page.locator('input[name="amount"]').first().check();
    const email = uniqueEmail("ar");
    await give(
      page,
      {
        first: "الاسم الأول",
        last: "اسم العائلة",
        email: "البريد الإلكتروني",
        card: "رقم البطاقة",
        exp: "تاريخ الانتهاء (MM/YY)",
        cvc: "رمز التحقق",
      },
      email,
    );
    expect(await seriousAxeIssues(page)).toEqual([]);
    await page.getByRole("button", { name: /^تبرّع/ }).click();
    await page.getByRole("heading", { name: "شكرًا لك!" }).waitFor();
    const [payment] = await paymentsOf(served, formID);
    expect(payment.email).toBe(email);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("on an Arabic page, Latin text of the organization and donors keeps its own direction", async () => {
    const { formID, formUrl } = await createForm(served, {
      title: "Plant a tree!",
      funds: ["General"],
      enableDonorList: true,
      faqs: [{ question: "Is my gift tax-deductible?", answer: "Yes, in the US." }],
    });
    const res = await fetch(`${served.baseUrl}/api/forms/${formID}/checkout`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        amount: 25,
        donor: { firstName: "Jürgen", lastName: "Müller", email: uniqueEmail("bidi") },
        paymentMethod: { type: "card", number: "4242424242424242", expMonth: 12, expYear: 2030, cvc: "123" },
      }),
    });
    expect(res.status, await res.text()).toBe(201);
    const { page, problems } = await open(`${formUrl}?lang=ar`);
    const shown = await page.evaluate(() => {
      /** The element whose own text is `text`: its unicode-bidi, and whether its last character is drawn right of the one before (left to right). */
      const look = (selector: string, text: string) => {
        const el = [...document.querySelectorAll(selector)].find((e) => e.textContent?.trim() === text);
        const node = el?.firstChild;
        if (!el || !node?.textContent) return null;
        const at = (i: number) => {
          const range = document.createRange();
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          return range.getBoundingClientRect().left;
        };
        const end = node.textContent.length - 1;
        return {
          bidi: el.getAttribute("dir") === "auto" ? "dir=auto" : getComputedStyle(el).unicodeBidi,
          leftToRight: at(end) > at(end - 1),
        };
      };
      return {
        donor: look(".alm-donors li span", "Jürgen M."),
        question: look(".alm-faqs summary", "Is my gift tax-deductible?"),
        answer: look(".alm-faqs p", "Yes, in the US."),
        title: look("h1", "Plant a tree!"),
      };
    });
    // The final "." and "?" and "!" are drawn after the Latin text (to its right), not before it.
    expect([shown.donor?.leftToRight, shown.question?.leftToRight, shown.title?.leftToRight]).toEqual([
      true,
      true,
      true,
    ]);
    for (const [what, look] of Object.entries(shown)) {
      expect(look, what).not.toBeNull();
      expect(["plaintext", "isolate", "dir=auto"], what).toContain(look?.bidi);
    }
    expect(problems).toEqual([]);
    await page.close();
  });

  it("a EUR gift, written the German way on a German page, is a EUR payment in /v1/payments", async () => {
    const org = await served.t.newOrg({ name: "Verein" });
    const key = { Authorization: `Bearer ${org.key}`, "Content-Type": "application/json" };
    const put = await fetch(`${served.baseUrl}/v1/organization`, {
      method: "PUT",
      headers: key,
      body: JSON.stringify({ currency: "EUR", language: "de" }),
    });
    expect(put.status).toBe(200);
    const created = await fetch(`${served.baseUrl}/v1/forms`, {
      method: "POST",
      headers: key,
      body: JSON.stringify({ title: "Bäume pflanzen", funds: ["Allgemein"], oneTimeAmounts: [1234.5, 50] }),
    });
    const { formUrl } = (await created.json()) as { formUrl: string };
    // The browser asks for English (Accept-Language), which comes before the organization's language.
    const { page, problems } = await open(`${formUrl}?lang=de`);
    expect(await page.evaluate(() => document.documentElement.lang)).toBe("de");
    const amount = page.getByRole("radio", { name: /1\.234,50\s€/ });
    await amount.check();
    const email = uniqueEmail("eur");
    await give(
      page,
      {
        first: "Vorname",
        last: "Nachname",
        email: "E-Mail",
        card: "Kartennummer",
        exp: "Gültig bis (MM/JJ)",
        cvc: "Prüfnummer",
      },
      email,
    );
    await page.getByRole("button", { name: /spenden$/ }).click();
    await page.getByRole("heading", { name: "Vielen Dank!" }).waitFor();
    const listed = await fetch(`${served.baseUrl}/v1/payments?limit=5`, { headers: key });
    const body = (await listed.json()) as { payments: { email: string; amount: number; currency: string }[] };
    expect(body.payments.find((p) => p.email === email)).toMatchObject({ amount: 1234.5, currency: "EUR" });
    expect(problems).toEqual([]);
    await page.close();
  });

  it("the language switcher turns the page into the chosen language: ?lang=, <html lang> and dir, the catalog's words", async () => {
    const { formUrl } = await createForm(served, {
      title: "Trees for every street",
      funds: ["General"],
      oneTimeAmounts: [50, 100],
    });
    const { page, problems } = await open(formUrl);

    /** What the donor sees in `language`, as the catalogs (shared/i18n/catalogs) word it. */
    async function expectPageIn(language: Language) {
      const tr = translator(language);
      expect(new URL(page.url()).searchParams.get("lang")).toBe(language);
      expect(
        await page.evaluate(() => [document.documentElement.lang, document.documentElement.dir]),
      ).toEqual([language, directionOf(language)]);
      expect(
        await page.evaluate(() => getComputedStyle(document.querySelector(".alm") as Element).direction),
      ).toBe(directionOf(language));
      const switcher = page.getByRole("navigation", { name: tr("page.lang"), exact: true });
      expect(
        await switcher.getByRole("link", { name: LANGUAGE_NAMES[language] }).getAttribute("aria-current"),
      ).toBe("true");
      await page
        .getByRole("heading", { name: tr("checkout.choice.heading", { kind: "EMBED_FORM" }), exact: true })
        .waitFor();
      // The script speaks the language too: the $50 the donor picks is named in the button as the catalog
      // words it (the amount written as the page writes it on the radio).
      const fifty = page.locator('input[name="amount"][value="50"]');
      await fifty.check();
      const amount = (
        await page.locator(`label[for="${await fifty.getAttribute("id")}"]`).textContent()
      )?.trim();
      expect(amount).toMatch(/\p{Nd}/u);
      await expect
        .poll(async () => (await page.locator("button.alm-submit").textContent())?.trim())
        .toBe(tr("checkout.button.donateAmount", { amount: amount as string }));
    }

    /** Clicks the language's link in the page's switcher (worded in the page's current language). */
    async function switchTo(from: Language, to: Language) {
      await page
        .getByRole("navigation", { name: translator(from)("page.lang"), exact: true })
        .getByRole("link", { name: LANGUAGE_NAMES[to], exact: true })
        .click();
      await page.waitForURL((url) => url.searchParams.get("lang") === to);
      await page.waitForFunction(() => {
        const root = document.getElementById("almoner-app");
        return !!root && Object.keys(root).some((k) => k.startsWith("__"));
      });
    }

    // The browser asks for English.
    expect(await page.evaluate(() => [document.documentElement.lang, document.documentElement.dir])).toEqual([
      "en",
      "ltr",
    ]);
    // A choice made in English need not survive the switch: each language's check picks the amount again.
    await page.getByRole("radio", { name: "$50", exact: true }).check();
    await switchTo("en", "es");
    await expectPageIn("es");
    await switchTo("es", "ar");
    await expectPageIn("ar");
    await switchTo("ar", "en");
    await expectPageIn("en");
    expect(problems).toEqual([]);
    await page.close();
  });
});

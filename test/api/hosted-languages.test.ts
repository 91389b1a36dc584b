import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { translator } from "../../server/i18n.js";
import { escapeHtml } from "../../shared/html.js";
import { LANGUAGES } from "../../shared/languages.js";
import { createForm } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/** The hosted page's language: ?lang=, then Accept-Language, then the organization's; RTL for Arabic. */
describe(`hosted page languages (${dialect})`, () => {
  let t: TestApp;
  let formId: string;

  beforeAll(async () => {
    t = await setupTestApp();
    formId = await createForm(t, { ...validForms.standard(), oneTimeAmounts: [25, 1234.5] });
  });
  afterAll(async () => {
    await t.close();
  });

  async function page(query = "", headers: Record<string, string> = {}) {
    const res = await t.app.request(`/donate/${formId}${query}`, { headers });
    const html = await res.text();
    const boot = JSON.parse(
      html.match(/<script type="application\/json" id="almoner-boot">(.*?)<\/script>/s)?.[1] ?? "{}",
    );
    return { res, html, boot };
  }

  it("speaks English by default, with the English labels and amounts", async () => {
    const { res, html } = await page();
    expect(html).toContain('<html lang="en" dir="ltr">');
    expect(res.headers.get("Content-Language")).toBe("en");
    expect(html).toContain("Your details");
    expect(html).toContain("$1,234.50");
  });

  it("speaks Spanish with ?lang=es, sends only Spanish checkout messages, and links every language", async () => {
    const { html, boot } = await page("?lang=es&utm_source=mail");
    expect(html).toContain('<html lang="es" dir="ltr">');
    expect(html).toContain("Tus datos");
    expect(html).toContain("Correo electrónico");
    expect(html).not.toContain("Your details");
    expect(boot.language).toBe("es");
    const keys = Object.keys(boot.messages);
    expect(keys.length).toBeGreaterThan(50);
    expect(keys.every((k) => k.startsWith("checkout."))).toBe(true);
    // The language links keep the rest of the query.
    expect(html).toMatch(/<a href="\?lang=fr&#38;utm_source=mail" hreflang="fr" lang="fr">Français<\/a>/);
    expect(html).toMatch(
      /<a href="\?lang=es&#38;utm_source=mail" hreflang="es" lang="es" aria-current="true">/,
    );
  });

  it("follows Accept-Language, then the organization's language, and writes amounts in that language", async () => {
    const french = await page("", { "Accept-Language": "fr-CA,fr;q=0.9,en;q=0.5" });
    expect(french.html).toContain('<html lang="fr" dir="ltr">');
    expect(french.html).toContain("Vos coordonnées");
    expect(french.html.replace(/[\u00a0\u202f]/g, " ")).toContain("1 234,50 $US");

    await t.request("PUT", "/v1/organization", { body: { language: "de" } });
    const german = await page("", { "Accept-Language": "da" });
    expect(german.html).toContain('<html lang="de" dir="ltr">');
    expect(german.html).toContain("Ihre Angaben");
    await t.request("PUT", "/v1/organization", { body: { language: "en" } });
  });

  it("in embed mode, names the framing page's origin to the checkout and in its language links", async () => {
    const site = "https://site.example";
    const host = "http://localhost";
    const framed = await page("?embed=1&embedId=e1", { Referer: `${site}/giving?x=1` });
    expect(framed.boot.parentOrigin).toBe(site);
    expect(framed.html).toMatch(
      /<a href="\?embed=1&#38;embedId=e1&#38;parentOrigin=https%3A%2F%2Fsite\.example&#38;lang=de" hreflang="de"/,
    );
    // Reached through such a link, the Referer is the form host: the origin the query names is kept.
    const named = (origin: string) =>
      page(`?embed=1&embedId=e1&parentOrigin=${encodeURIComponent(origin)}&lang=de`, {
        Referer: `${host}/donate/${formId}?embed=1`,
      });
    const switched = await named(site);
    expect(switched.boot.parentOrigin).toBe(site);
    expect(switched.html).toContain("parentOrigin=https%3A%2F%2Fsite.example&#38;lang=fr");
    // Only exactly an http(s) origin; and another site's Referer wins over what the query names.
    for (const bad of ["*", "null", `${site}/`, `${site}/path`, "javascript:alert(1)", "data:,x", ""])
      expect((await named(bad)).boot.parentOrigin, bad).toBeUndefined();
    const other = await page(`?embed=1&parentOrigin=${encodeURIComponent("https://evil.example")}`, {
      Referer: `${site}/`,
    });
    expect(other.boot.parentOrigin).toBe(site);
    // Outside embed mode nothing is named.
    const plain = await page("", { Referer: `${site}/` });
    expect(plain.boot.parentOrigin).toBeUndefined();
    expect(plain.html).not.toContain("parentOrigin");
  });

  it("says that the checkout and the portal need JavaScript (<noscript>) in the page's language", async () => {
    const noscript = (html: string) => html.match(/<noscript>(.*?)<\/noscript>/s)?.[1] ?? "";
    for (const language of LANGUAGES) {
      const tr = translator(language);
      const checkoutPage = await page(`?lang=${language}`);
      expect(noscript(checkoutPage.html), language).toBe(
        `<p class="alm-noscript">${escapeHtml(tr("page.noscript.checkout"))}</p>`,
      );
      const portal = await (await t.app.request(`/manage/${t.org.id}?lang=${language}`)).text();
      expect(noscript(portal), language).toBe(escapeHtml(tr("page.noscript.portal")));
    }
    expect(noscript((await page("?lang=de")).html)).toContain("JavaScript: Schalten Sie es ein");
    expect(noscript((await page("", { "Accept-Language": "es" })).html)).toContain("actívalo para donar");
  });

  it("lays Arabic out right to left", async () => {
    const { html } = await page("?lang=ar");
    expect(html).toContain('<html lang="ar" dir="rtl">');
    expect(html).toContain("بياناتك");
  });

  it("answers an unknown form in the donor's language", async () => {
    const res = await t.app.request("/donate/00000000-0000-4000-8000-000000000000?lang=es");
    expect(res.status).toBe(404);
    const html = await res.text();
    expect(html).toContain('<html lang="es" dir="ltr">');
    expect(html).toContain("Formulario no encontrado");
  });

  it("refuses a language the organization setting does not know", async () => {
    const res = await t.request<{ details: string[] }>("PUT", "/v1/organization", {
      body: { language: "xx" },
    });
    expect(res.status).toBe(400);
    expect(res.body.details.join()).toMatch(/^language/);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { translator } from "../../server/i18n.js";
import type { Language } from "../../shared/languages.js";
import { worker } from "../billing/support.js";
import { CARDS, card, checkout, createForm } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/** What reaches the donor by e-mail is in the language they gave in: receipts and the portal's sign-in link. */
describe(`donors' e-mails in their language (${dialect})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" } });
  });
  afterAll(async () => {
    await t.close();
  });

  const mailTo = (to: string) =>
    t.store.db.selectFrom("email_outbox").selectAll().where("to_address", "=", to).orderBy("id").execute();

  it("writes the receipt in the checkout's language, with the language's dates and amounts", async () => {
    const formId = await createForm(t, validForms.standard());
    const res = await checkout(t, formId, {
      amount: 1234.5,
      frequency: "ONE_TIME",
      donor: { firstName: "Ana", lastName: "García", email: "ana@example.org" },
      paymentMethod: card(),
      language: "es",
    });
    expect(res.status, res.text).toBe(201);
    const [receipt] = await mailTo("ana@example.org");
    expect(receipt.subject).toBe("Gracias por tu donación a Test Org");
    expect(receipt.text_body).toContain("Hola, Ana:");
    expect(receipt.text_body).toContain("Número de recibo");
    expect(receipt.text_body.replace(/[\u00a0\u202f]/g, " ")).toContain("1234,50 US$");
    expect(receipt.html_body).toContain('<html lang="es" dir="ltr">');
    // Its link to the donor portal opens the portal in Spanish too.
    expect(receipt.text_body).toContain(`/manage/${t.org.id}?lang=es`);

    const arabic = await checkout(t, formId, {
      amount: 10,
      frequency: "ONE_TIME",
      donor: { firstName: "Omar", lastName: "Haddad", email: "omar@example.org" },
      paymentMethod: card(),
      language: "ar",
    });
    expect(arabic.status).toBe(201);
    const [ar] = await mailTo("omar@example.org");
    expect(ar.subject).toBe("شكرًا لتبرعك إلى Test Org");
    expect(ar.html_body).toContain('<html lang="ar" dir="rtl">');
    // Names and titles in Latin letters are isolates in its body: their punctuation stays with them.
    for (const body of [ar.text_body, ar.html_body]) {
      expect(body).toContain("\u2068Omar\u2069");
      expect(body).toContain("\u2068Test Org\u2069");
    }
    expect(receipt.text_body).not.toContain("\u2068");

    const english = await checkout(t, formId, {
      amount: 10,
      frequency: "ONE_TIME",
      donor: { firstName: "Ada", lastName: "Lovelace", email: "ada-en@example.org" },
      paymentMethod: card(),
    });
    expect(english.status).toBe(201);
    const [en] = await mailTo("ada-en@example.org");
    expect(en.subject).toBe("Thank you for your gift to Test Org");
    // In English, its portal link says so: the portal would otherwise open in the organization's language.
    expect(en.text_body).toContain(`/manage/${t.org.id}?lang=en`);
    const bad = await checkout(t, formId, {
      amount: 10,
      frequency: "ONE_TIME",
      donor: { firstName: "Ada", lastName: "Lovelace", email: "ada-x@example.org" },
      paymentMethod: card(),
      language: "xx",
    });
    expect(bad.status).toBe(400);
  });

  it("tells the honoree of a dedicated gift in the donor's language", async () => {
    const formId = await createForm(t, { ...validForms.standard(), enableTribute: true });
    const res = await checkout(t, formId, {
      amount: 10,
      frequency: "ONE_TIME",
      donor: { firstName: "Ana", lastName: "García", email: "ana-tribute@example.org" },
      paymentMethod: card(),
      tribute: { kind: "MEMORY", honoreeName: "Abuela Rosa", notifyEmail: "familia@example.org" },
      language: "es",
    });
    expect(res.status, res.text).toBe(201);
    const [notice] = await mailTo("familia@example.org");
    expect(notice.subject).toBe("Una donación en memoria de Abuela Rosa");
    expect(notice.text_body).toContain("Ana García hizo una donación a Test Org en memoria de Abuela Rosa");
  });

  it("mails the portal's sign-in link in the language the donor asked in", async () => {
    const formId = await createForm(t, validForms.standard());
    await checkout(t, formId, {
      amount: 10,
      frequency: "ONE_TIME",
      donor: { firstName: "Zoé", lastName: "Martin", email: "zoe@example.org" },
      paymentMethod: card(),
    });
    const res = await t.request("POST", `/api/manage/${t.org.id}/link`, {
      key: null,
      body: { email: "zoe@example.org", language: "fr" },
    });
    expect(res.status).toBe(202);
    const link = (await mailTo("zoe@example.org")).find((m) => m.payment_id === null);
    expect(link?.subject).toBe("Votre lien pour gérer vos dons à Test Org");
    expect(link?.text_body).toContain("Le lien fonctionne une seule fois, pendant 30 minutes.");
    // The link opens the portal in French.
    expect(link?.text_body).toMatch(/\/manage\/org_[0-9a-z]+\?token=[A-Za-z0-9_-]+&lang=fr/);
  });

  it("mails the sign-in link by Accept-Language when the body names no language, else in the organization's", async () => {
    const formId = await createForm(t, validForms.standard());
    for (const email of ["joao@example.org", "jonas-link@example.org"])
      await checkout(t, formId, {
        amount: 10,
        frequency: "ONE_TIME",
        donor: { firstName: "João", lastName: "Silva", email },
        paymentMethod: card(),
      });
    const ask = (email: string, headers: Record<string, string> = {}) =>
      t.request("POST", `/api/manage/${t.org.id}/link`, { key: null, body: { email }, headers });
    const linkMail = async (email: string) =>
      (await mailTo(email)).filter((m) => m.payment_id === null).pop();

    expect((await ask("joao@example.org", { "Accept-Language": "pt-BR,pt;q=0.9,en;q=0.5" })).status).toBe(
      202,
    );
    const portuguese = await linkMail("joao@example.org");
    expect(portuguese?.html_body).toContain('<html lang="pt-BR" dir="ltr">');
    expect(portuguese?.text_body).toMatch(/\?token=[A-Za-z0-9_-]+&lang=pt-BR/);

    await t.request("PUT", "/v1/organization", { body: { language: "de" } });
    try {
      expect((await ask("jonas-link@example.org")).status).toBe(202);
      const german = await linkMail("jonas-link@example.org");
      expect(german?.html_body).toContain('<html lang="de" dir="ltr">');
      expect(german?.text_body).toMatch(/&lang=de/);
    } finally {
      await t.request("PUT", "/v1/organization", { body: { language: "en" } });
    }
  });

  it("shows the payment-method update page in the donor's language", async () => {
    const formId = await createForm(t, { ...validForms.standard(), frequencies: ["ONE_TIME", "MONTHLY"] });
    const res = await checkout(t, formId, {
      amount: 20,
      frequency: "MONTHLY",
      donor: { firstName: "Jonas", lastName: "Weber", email: "jonas@example.org" },
      paymentMethod: card(),
    });
    const subId = (res.body.payment as { subscription: { id: string } }).subscription.id;
    const link = await t.request<{ url: string }>(
      "POST",
      `/v1/subscriptions/${subId}/payment-method-update-link`,
    );
    const path = new URL(link.body.url).pathname;
    const german = await (await t.app.request(`${path}?lang=de`)).text();
    expect(german).toContain('<html lang="de" dir="ltr">');
    expect(german).toContain("Zahlungsmethode aktualisieren");
    expect(german).toContain("Kartennummer");
    const arabic = await (await t.app.request(path, { headers: { "Accept-Language": "ar" } })).text();
    expect(arabic).toContain('<html lang="ar" dir="rtl">');
    const unknown = await t.app.request("/update-payment-method/nope?lang=fr");
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("Ce lien n’est pas valide");
  });

  it("refuses a body too large for the update page in the donor's language, as a page and as JSON", async () => {
    const big = `cardNumber=${"4".repeat(20_000)}`;
    const page = await t.app.request("/update-payment-method/any-token?lang=de", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", "Content-Length": String(big.length) },
      body: big,
    });
    expect(page.status).toBe(413);
    const html = await page.text();
    expect(html).toContain('<html lang="de" dir="ltr">');
    expect(html).toContain(translator("de")("update.tooLarge.body"));
    const json = await t.app.request("/update-payment-method/any-token/stripe", {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Content-Length": String(big.length + 2),
        "Accept-Language": "es",
      },
      body: JSON.stringify(big),
    });
    expect(json.status).toBe(413);
    expect(json.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(await json.json()).toEqual({ status: "error", error: translator("es")("update.tooLarge.body") });
  });

  it("takes a language tag in any case and keeps it canonical (pt-br → pt-BR)", async () => {
    const org = await t.request<{ language: string }>("PUT", "/v1/organization", {
      body: { language: "pt-br" },
    });
    expect(org.status, org.text).toBe(200);
    expect(org.body.language).toBe("pt-BR");
    expect((await t.request<{ language: string }>("GET", "/v1/organization")).body.language).toBe("pt-BR");
    const upper = await t.request<{ language: string }>("PUT", "/v1/organization", {
      body: { language: "EN" },
    });
    expect(upper.body.language).toBe("en");
    expect((await t.request("PUT", "/v1/organization", { body: { language: "pt-xx" } })).status).toBe(400);

    const formId = await createForm(t, validForms.standard());
    const res = await checkout(t, formId, {
      amount: 10,
      frequency: "ONE_TIME",
      donor: { firstName: "João", lastName: "Silva", email: "joao-case@example.org" },
      paymentMethod: card(),
      language: "PT-br",
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.message).toBe(
      translator("pt-BR")("answer.thanks.receipt", { name: "João", email: "joao-case@example.org" }),
    );
    const [receipt] = await mailTo("joao-case@example.org");
    expect(receipt.html_body).toContain('<html lang="pt-BR" dir="ltr">');

    // The document still lists the canonical tags.
    const doc = (
      await t.request<{ components: { schemas: Record<string, unknown> }; paths: unknown }>(
        "GET",
        "/v1/openapi.json",
      )
    ).body;
    const text = JSON.stringify(doc.paths);
    const enums = text.match(/"enum":\["en","es","fr","de","pt-BR","ar"\]/g) ?? [];
    expect(enums.length).toBeGreaterThanOrEqual(3);
  });

  it("answers the checkout in its language: the thanks and a decline's words; the API's English otherwise", async () => {
    const formId = await createForm(t, validForms.standard());
    const gift = (number: string, email: string, language?: string) =>
      checkout(t, formId, {
        amount: 15,
        frequency: "ONE_TIME",
        donor: { firstName: "Lucía", lastName: "Pérez", email },
        paymentMethod: card(number),
        ...(language ? { language } : {}),
      });
    const es = translator("es");
    const thanked = await gift(CARDS.visa, "lucia@example.org", "es");
    expect(thanked.status).toBe(201);
    expect(thanked.body.message).toBe(
      es("answer.thanks.receipt", { name: "Lucía", email: "lucia@example.org" }),
    );
    expect(thanked.body.message).toMatch(/^¡Gracias, Lucía!/);

    const fr = translator("fr");
    const poor = await gift(CARDS.insufficient, "lucia-fr@example.org", "fr");
    expect(poor.status).toBe(402);
    expect(poor.body).toMatchObject({ code: "insufficient_funds", error: fr("answer.decline.funds") });
    const declined = await gift(CARDS.declined, "lucia-ar@example.org", "ar");
    expect(declined.body.error).toBe(translator("ar")("answer.decline.card"));

    // Without a language: the API's English, the processor's own words for a decline.
    const english = await gift(CARDS.insufficient, "lucia-en@example.org");
    expect(english.status).toBe(402);
    expect(english.body.error).not.toBe(fr("answer.decline.funds"));
    expect(String(english.body.error)).toMatch(/insufficient funds/i);
    const englishThanks = await gift(CARDS.visa, "lucia-en2@example.org");
    expect(englishThanks.body.message).toBe(
      "Thank you, Lucía! A receipt is on its way to lucia-en2@example.org.",
    );
  });

  it("decides a checkout's language once: its `language`, else Accept-Language, else the organization's", async () => {
    const formId = await createForm(t, { ...validForms.standard(), frequencies: ["ONE_TIME", "MONTHLY"] });
    const gift = (email: string, extra: Record<string, unknown>, headers: Record<string, string> = {}) =>
      checkout(
        t,
        formId,
        {
          amount: 10,
          frequency: "ONE_TIME",
          donor: { firstName: "Chloé", lastName: "Weber", email },
          paymentMethod: card(),
          ...extra,
        },
        headers,
      );
    const thanks = (language: Language, email: string) =>
      translator(language)("answer.thanks.receipt", { name: "Chloé", email });
    const receiptOf = async (email: string) => {
      const [receipt] = await mailTo(email);
      return receipt;
    };

    await t.request("PUT", "/v1/organization", { body: { language: "de" } });
    try {
      // An integrator's checkout without `language`: the donor's Accept-Language.
      const byHeader = await gift("chloe-fr@example.org", {}, { "Accept-Language": "fr-CH, de;q=0.5" });
      expect(byHeader.status, byHeader.text).toBe(201);
      expect(byHeader.body.message).toBe(thanks("fr", "chloe-fr@example.org"));
      const fr = await receiptOf("chloe-fr@example.org");
      expect(fr.subject).toBe("Merci pour votre don à Test Org");
      expect(fr.html_body).toContain('<html lang="fr" dir="ltr">');
      expect(fr.text_body).toContain(`/manage/${t.org.id}?lang=fr`);

      // Neither: the organization's language, German.
      const byOrganization = await gift("chloe-de@example.org", {});
      expect(byOrganization.status, byOrganization.text).toBe(201);
      expect(byOrganization.body.message).toBe(thanks("de", "chloe-de@example.org"));
      const de = await receiptOf("chloe-de@example.org");
      expect(de.subject).toBe("Vielen Dank für Ihre Spende an Test Org");
      expect(de.html_body).toContain('<html lang="de" dir="ltr">');
      expect(de.text_body).toMatch(/^ +Häufigkeit +Einmalig$/m);

      // An Accept-Language naming no language of ours: the organization's.
      const unknown = await gift("chloe-xx@example.org", {}, { "Accept-Language": "ja, zh;q=0.8" });
      expect(unknown.body.message).toBe(thanks("de", "chloe-xx@example.org"));

      // The body's `language` comes first, English included, whatever the header and the organization say.
      const explicit = await gift("chloe-es@example.org", { language: "es" }, { "Accept-Language": "fr" });
      expect(explicit.status, explicit.text).toBe(201);
      expect(explicit.body.message).toBe(thanks("es", "chloe-es@example.org"));
      const es = await receiptOf("chloe-es@example.org");
      expect(es.html_body).toContain('<html lang="es" dir="ltr">');
      expect(es.text_body).toMatch(/^ +Frecuencia +Una vez$/m);
      const english = await gift("chloe-en@example.org", { language: "en" }, { "Accept-Language": "fr" });
      expect(english.body.message).toBe("Thank you, Chloé! A receipt is on its way to chloe-en@example.org.");
      expect((await receiptOf("chloe-en@example.org")).subject).toBe("Thank you for your gift to Test Org");

      // A recurring gift keeps the language decided at its checkout for its later charges.
      const monthly = await gift(
        "chloe-ar@example.org",
        { frequency: "MONTHLY" },
        { "Accept-Language": "ar" },
      );
      expect(monthly.status, monthly.text).toBe(201);
      expect(monthly.body.message).toBe(thanks("ar", "chloe-ar@example.org"));
      const ar = await receiptOf("chloe-ar@example.org");
      expect(ar.html_body).toContain('<html lang="ar" dir="rtl">');
      expect(ar.text_body).toMatch(/^ +التكرار +شهريًا$/m);
      const subId = (monthly.body.payment as { subscription: { id: string } }).subscription.id;
      const sub = await t.store.db
        .selectFrom("subscriptions")
        .select("details")
        .where("id", "=", subId)
        .executeTakeFirstOrThrow();
      expect(JSON.parse(sub.details)).toMatchObject({ language: "ar" });
      await t.store.db
        .updateTable("subscriptions")
        .set({ next_billing_at: new Date(Date.now() - 60_000).toISOString() })
        .where("id", "=", subId)
        .execute();
      expect((await worker(t.deps).runOnce()).charged).toBe(1);
      const [, charged] = await mailTo("chloe-ar@example.org");
      expect(charged.html_body).toContain('<html lang="ar" dir="rtl">');
      expect(charged.text_body).toMatch(/^ +التكرار +شهريًا$/m);
    } finally {
      await t.request("PUT", "/v1/organization", { body: { language: "en" } });
    }
  });
});

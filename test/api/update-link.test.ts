import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sha256Hex } from "../../server/ids.js";
import { type PaymentProcessor, ProcessorError } from "../../server/processors/port.js";
import { auditTrail } from "../../server/store/auditLog.js";
import {
  at,
  eventsOf,
  JAN_31,
  paymentsOf,
  recurringForm,
  subscribe,
  subscription,
  worker,
} from "../billing/support.js";
import { expectDonorCardSwap } from "../support/auditLog.js";
import { tally } from "../support/race.js";
import { setupTestApp, type TestApp } from "../support/testApp.js";

/**
 * The payment-method update link: created through /v1, used by the donor on its hosted page,
 * and the next charge by the real BillingWorker made with the new method.
 */

type Json = Record<string, unknown>;

let clock = JAN_31;
let t: TestApp;

beforeEach(async () => {
  clock = JAN_31;
  t = await setupTestApp({
    now: () => clock,
    env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" },
  });
});
afterEach(() => t.close());

async function newLink(subId: string, body: Json = {}) {
  return t.request<Json>("POST", `/v1/subscriptions/${subId}/payment-method-update-link`, { body });
}

/** The page's path (the app is requested in process, without the public host). */
const pathOf = (url: unknown) => new URL(String(url)).pathname;

async function open(url: unknown) {
  const res = await t.app.request(pathOf(url));
  return { status: res.status, html: await res.text(), headers: res.headers };
}

async function submit(url: unknown, fields: Record<string, string>) {
  const res = await t.app.request(pathOf(url), { method: "POST", body: new URLSearchParams(fields) });
  return { status: res.status, html: await res.text() };
}

const mastercard = { method: "card", cardNumber: "5555 5555 5555 4444", expiry: "12/34", cvc: "123" };

describe("POST /v1/subscriptions/{id}/payment-method-update-link", () => {
  it("creates a one-hour link by default, answers the documented shape, and stores only the token's hash", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId, { amount: 25 });
    const res = await newLink(sub.id);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^pmu_[0-9a-z]{26}$/),
      url: expect.stringMatching(/^http:\/\/forms\.test\/update-payment-method\/[A-Za-z0-9_-]{43}$/),
      expiresAt: new Date(JAN_31 + 60 * 60_000).toISOString().replace(".000Z", "Z"),
      subscription: {
        id: sub.id,
        status: "ACTIVE",
        amount: 25,
        frequency: "MONTHLY",
        nextBillingDate: "2026-02-28T10:00:00Z",
      },
    });
    const token = String(res.body.url).split("/").pop() as string;
    const rows = await t.store.db.selectFrom("payment_method_update_links").selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(rows[0].token_hash).toBe(sha256Hex(token));
    // Two links never share a token.
    const second = await newLink(sub.id);
    expect(second.body.url).not.toBe(res.body.url);
  });

  it("validates returnUrl (https; http only on localhost), expiresInMinutes (30–1440), methods and delivery", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    const ok = [
      { returnUrl: "https://example.org/thanks?x=1" },
      { returnUrl: "https://example.org/app#/giving" },
      { returnUrl: "http://localhost:3000/back" },
      { returnUrl: "http://127.0.0.1/back" },
      { expiresInMinutes: 30 },
      { expiresInMinutes: 1440, allowedPaymentMethods: ["PAY_BY_BANK"], delivery: "link" },
    ];
    for (const body of ok) expect((await newLink(sub.id, body)).status, JSON.stringify(body)).toBe(201);
    const bad: [Json, string][] = [
      [{ returnUrl: "http://example.org/back" }, "returnUrl must be an https URL (http only on localhost)"],
      [{ returnUrl: "javascript:alert(1)" }, "returnUrl must be an https URL (http only on localhost)"],
      [{ returnUrl: "/relative" }, "returnUrl must be an absolute https URL"],
      [{ returnUrl: "https://user:pw@example.org/" }, "returnUrl must not contain a user name or password"],
      [{ returnUrl: 5 }, "returnUrl must be a string, not a number"],
      [{ expiresInMinutes: 29 }, "expiresInMinutes must be at least 30"],
      [{ expiresInMinutes: 1441 }, "expiresInMinutes must be at most 1440"],
      [{ allowedPaymentMethods: [] }, "allowedPaymentMethods must contain at least 1 item"],
      [{ allowedPaymentMethods: ["CASH"] }, "allowedPaymentMethods[0] must be one of: CARD, PAY_BY_BANK"],
      [{ allowedPaymentMethods: ["CARD", "CARD"] }, "allowedPaymentMethods must not list a method twice"],
      [{ delivery: "email" }, "delivery must be one of: link"],
      [{ other: 1 }, "other is not a recognised field"],
    ];
    for (const [body, detail] of bad) {
      const res = await newLink(sub.id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.details, JSON.stringify(body)).toContain(detail);
    }
    const fraction = await newLink(sub.id, { expiresInMinutes: 60.5 });
    expect(fraction.status).toBe(400);
    expect(fraction.body).toEqual({
      error: "Validation failed",
      details: ["expiresInMinutes must be a whole number"],
    });
    const count = (await t.store.db.selectFrom("payment_method_update_links").select("id").execute()).length;
    expect(count).toBe(ok.length);
  });

  it("refuses a cancelled subscription with 409", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    await t.request("PUT", `/v1/subscriptions/${sub.id}`, { body: { status: "CANCELLED" } });
    const res = await newLink(sub.id);
    expect(res.status).toBe(409);
  });
});

describe("the hosted update page", () => {
  it("shows only organization, amount, frequency and the current card; takes a new card once; the next charge uses it", async () => {
    const formId = await recurringForm(t, { enablePhone: true });
    const sub = await subscribe(t, formId, {
      amount: 25,
      donor: { firstName: "Secret", lastName: "Person", email: "private@example.org", phone: "555 0101" },
    });
    const link = await newLink(sub.id, { returnUrl: "https://example.org/thanks" });
    const page = await open(link.body.url);
    expect(page.status).toBe(200);
    expect(page.headers.get("Cache-Control")).toBe("no-store");
    expect(page.headers.get("Referrer-Policy")).toBe("no-referrer");
    expect(page.html).toContain("Test Org");
    expect(page.html).toContain("$25 every month");
    expect(page.html).toContain("Visa ending 4242");
    for (const secret of [
      "Secret",
      "Person",
      "private@example.org",
      "555 0101",
      sub.id,
      sub.payment_method_token,
    ])
      expect(page.html).not.toContain(secret);
    expect(page.html).toMatch(/<label for="cardNumber">Card number<\/label>/);

    clock += 60_000;
    const done = await submit(link.body.url, mastercard);
    expect(done.status).toBe(200);
    expect(done.html).toContain("Payment method updated");
    expect(done.html).toContain("Mastercard ending 4444");
    expect(done.html).toContain('href="https://example.org/thanks"');
    const row = await subscription(t.store.db, sub.id);
    expect(row).toMatchObject({ card_brand: "mastercard", last4: "4444", payment_method_type: "card" });
    expect(row.payment_method_token).not.toBe(sub.payment_method_token);
    expect(await eventsOf(t.store.db, sub.id)).toEqual(
      expect.arrayContaining(["subscription.payment_method_updated", "subscription.updated"]),
    );
    const read = await t.request<Json>("GET", `/v1/subscriptions/${sub.id}`);
    expect(read.body.paymentMethod).toEqual({ type: "card", brand: "mastercard", last4: "4444" });
    // Written to the audit log as the donor's change: the methods' summaries, never their tokens.
    await expectDonorCardSwap(t, sub.id, "private@example.org", [
      row.payment_method_token,
      sub.payment_method_token,
    ]);

    // Single use: the page and a second submission now answer 410.
    const reopened = await open(link.body.url);
    expect(reopened.status).toBe(410);
    expect(reopened.html).toContain("already been used");
    expect((await submit(link.body.url, { ...mastercard, cardNumber: "4242424242424242" })).status).toBe(410);
    expect((await subscription(t.store.db, sub.id)).last4).toBe("4444");

    clock = at("2026-02-28T10:00:00Z");
    expect((await worker(t.deps).runOnce()).charged).toBe(1);
    const charges = await paymentsOf(t.store.db, sub.id);
    expect(charges[1]).toMatchObject({ status: "COMPLETED", card_brand: "mastercard", last4: "4444" });
  });

  it("lets only one of two simultaneous submissions of a link through", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    const link = await newLink(sub.id);
    const [a, b] = await Promise.all([
      submit(link.body.url, mastercard),
      submit(link.body.url, { ...mastercard, cardNumber: "6011111111111117" }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 410]);
    const loser = a.status === 410 ? a : b;
    expect(loser.html).toContain("already been used");
    const events = await eventsOf(t.store.db, sub.id);
    expect(events.filter((e) => e === "subscription.payment_method_updated")).toHaveLength(1);
    expect(await auditTrail(t.store.db, t.org.id, "subscription", sub.id)).toHaveLength(1);
    const winner = a.status === 200 ? "4444" : "1117";
    expect((await subscription(t.store.db, sub.id)).last4).toBe(winner);
  });

  it("takes a bank account when allowed, and refuses a card when only bank is allowed", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    const link = await newLink(sub.id, { allowedPaymentMethods: ["PAY_BY_BANK"] });
    const page = await open(link.body.url);
    expect(page.html).not.toContain("cardNumber");
    const card = await submit(link.body.url, mastercard);
    expect(card.status).toBe(422);
    expect(card.html).toContain("Choose a payment method.");
    const bank = await submit(link.body.url, {
      method: "bank",
      accountHolder: "Ada Donor",
      routingNumber: "110000000",
      accountNumber: "000123456789",
    });
    expect(bank.status).toBe(200);
    expect(bank.html).toContain("Bank account ending 6789");
    expect(await subscription(t.store.db, sub.id)).toMatchObject({
      payment_method_type: "bank",
      last4: "6789",
    });
  });

  it("keeps the link after a refused card, shows why, and ends it after five refusals", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    const link = await newLink(sub.id);
    const declined = await submit(link.body.url, { ...mastercard, cardNumber: "4000000000000002" });
    expect(declined.status).toBe(422);
    expect(declined.html).toContain("Your card was declined");
    const missing = await submit(link.body.url, { method: "card", cardNumber: "4242424242424242" });
    expect(missing.status).toBe(422);
    expect(missing.html).toContain("Enter the expiry date as MM/YY.");
    for (let i = 0; i < 3; i++)
      expect((await submit(link.body.url, { ...mastercard, cardNumber: "4000000000000069" })).status).toBe(
        422,
      );
    const fifth = await submit(link.body.url, { ...mastercard, cardNumber: "4000000000000002" });
    expect(fifth.status).toBe(410);
    expect(fifth.html).toContain("Too many payment methods were refused");
    expect((await submit(link.body.url, mastercard)).status).toBe(410);
    expect((await subscription(t.store.db, sub.id)).last4).toBe("4242");
  });

  it("asks the processor at most five times when refused cards are submitted all at once", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    const link = await newLink(sub.id);
    const working = t.deps.processors;
    let asked = 0;
    const counting: PaymentProcessor = Object.create(working.sandbox);
    counting.createPaymentMethod = (input) => {
      asked++;
      return working.sandbox.createPaymentMethod(input);
    };
    t.deps.processors = working.withSandbox(counting);
    try {
      const answers = await Promise.all(
        Array.from({ length: 40 }, () =>
          submit(link.body.url, { ...mastercard, cardNumber: "4000000000000002" }),
        ),
      );
      const statuses = tally(answers.map((a) => a.status));
      expect(asked).toBe(5);
      expect(statuses, JSON.stringify(statuses)).toEqual({ 410: 36, 422: 4 });
    } finally {
      t.deps.processors = working;
    }
    const row = await t.store.db
      .selectFrom("payment_method_update_links")
      .select("failed_attempts")
      .executeTakeFirstOrThrow();
    expect(Number(row.failed_attempts)).toBe(5);
    expect((await submit(link.body.url, mastercard)).status).toBe(410);
    expect((await subscription(t.store.db, sub.id)).last4).toBe("4242");
  });

  it("answers 503 when the processor is unreachable, saving nothing and keeping the link usable", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    const link = await newLink(sub.id);
    const working = t.deps.processors;
    const down: PaymentProcessor = Object.create(working.sandbox);
    down.createPaymentMethod = async () => {
      throw new ProcessorError("unavailable", "connection refused");
    };
    t.deps.processors = working.withSandbox(down);
    try {
      const res = await submit(link.body.url, mastercard);
      expect(res.status).toBe(503);
      expect(res.html).toContain("could not reach the payment processor");
    } finally {
      t.deps.processors = working;
    }
    expect((await subscription(t.store.db, sub.id)).last4).toBe("4242");
    // The attempt the unreachable processor was asked with is the link's again.
    const row = await t.store.db
      .selectFrom("payment_method_update_links")
      .select("failed_attempts")
      .executeTakeFirstOrThrow();
    expect(Number(row.failed_attempts)).toBe(0);
    expect((await submit(link.body.url, mastercard)).status).toBe(200);
  });

  it("answers 410 for an expired link or a cancelled subscription, and 404 for an unknown token", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    const link = await newLink(sub.id, { expiresInMinutes: 30 });
    clock += 29 * 60_000;
    expect((await open(link.body.url)).status).toBe(200);
    clock += 60_000;
    const expired = await open(link.body.url);
    expect(expired.status).toBe(410);
    expect(expired.html).toContain("This link has expired.");
    expect((await submit(link.body.url, mastercard)).status).toBe(410);

    const fresh = await newLink(sub.id);
    await t.request("PUT", `/v1/subscriptions/${sub.id}`, { body: { status: "CANCELLED" } });
    const gone = await open(fresh.body.url);
    expect(gone.status).toBe(410);
    expect(gone.html).toContain("no longer active");
    expect((await submit(fresh.body.url, mastercard)).status).toBe(410);
    expect((await subscription(t.store.db, sub.id)).last4).toBe("4242");

    for (const token of ["x".repeat(43), "short", "../../etc/passwd"])
      expect((await t.app.request(`/update-payment-method/${token}`)).status).toBe(404);
  });
});

describe("the update page's language", () => {
  /** The page at `path` (with its query) and its language links, resolved as a browser would. */
  async function openAt(path: string) {
    const res = await t.app.request(path);
    const html = await res.text();
    const nav = /<nav class="alm-langs" aria-label="[^"]*">(.*?)<\/nav>/.exec(html)?.[1] ?? "";
    const links = Object.fromEntries(
      [...nav.matchAll(/<a href="([^"]+)" hreflang="([^"]+)"/g)].map(([, href, lang]) => [
        lang,
        new URL(href.replaceAll("&amp;", "&"), `http://forms.test${path}`),
      ]),
    );
    return { status: res.status, html, headers: res.headers, links };
  }

  it("says its language in Content-Language, offers the others with the token kept, and words the expiry's format", async () => {
    const formId = await recurringForm(t);
    const sub = await subscribe(t, formId);
    const link = await newLink(sub.id);
    const path = pathOf(link.body.url);

    const fr = await openAt(`${path}?lang=fr`);
    expect(fr.status).toBe(200);
    expect(fr.html).toContain('<html lang="fr" dir="ltr">');
    expect(fr.headers.get("Content-Language")).toBe("fr");
    expect(fr.headers.get("Vary")).toContain("Accept-Language");
    expect(fr.html).toContain('<label for="expiry">Expiration (MM/AA)</label>');
    expect(fr.html).toContain('placeholder="MM/AA"');
    expect(fr.html).not.toContain("MM/YY");
    expect(Object.keys(fr.links).sort()).toEqual(["ar", "de", "en", "es", "fr", "pt-BR"]);
    expect(fr.html).toMatch(/hreflang="fr" lang="fr" aria-current="true"/);
    for (const [lang, url] of Object.entries(fr.links)) {
      expect(url.pathname).toBe(path);
      expect(url.searchParams.get("lang")).toBe(lang);
    }

    // The German link opens the same page, usable, in German.
    const de = await openAt(`${fr.links.de.pathname}${fr.links.de.search}`);
    expect(de.status).toBe(200);
    expect(de.html).toContain('<html lang="de" dir="ltr">');
    expect(de.headers.get("Content-Language")).toBe("de");
    expect(de.html).toContain('placeholder="MM/JJ"');

    // By Accept-Language, and English by default.
    const ar = await t.app.request(path, { headers: { "Accept-Language": "ar" } });
    expect(ar.headers.get("Content-Language")).toBe("ar");
    const en = await openAt(path);
    expect(en.headers.get("Content-Language")).toBe("en");
    expect(en.html).toContain('placeholder="MM/YY"');
    expect(en.links.es.pathname).toBe(path);

    // A refused card shows the form again, with its language links and header; so does a page of a link gone.
    const refused = await t.app.request(`${path}?lang=fr`, {
      method: "POST",
      body: new URLSearchParams({ ...mastercard, cardNumber: "4000000000000002" }),
    });
    expect(refused.status).toBe(422);
    expect(refused.headers.get("Content-Language")).toBe("fr");
    expect(await refused.text()).toContain('class="alm-langs"');
    const saved = await t.app.request(`${path}?lang=fr`, {
      method: "POST",
      body: new URLSearchParams(mastercard),
    });
    expect(saved.status).toBe(200);
    expect(saved.headers.get("Content-Language")).toBe("fr");
    const used = await t.app.request(`${path}?lang=es`);
    expect(used.status).toBe(410);
    expect(used.headers.get("Content-Language")).toBe("es");
    const unknown = await t.app.request("/update-payment-method/nope?lang=de");
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("Content-Language")).toBe("de");
  });
});

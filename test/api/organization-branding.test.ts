import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmailOutboxTable } from "../../server/store/schema.js";
import { card, checkout, createForm, donor } from "../support/checkout.js";
import { staffClient } from "../support/staff.js";
import { dialect, setupTestApp, type TestApp, type TestOrg, validForms } from "../support/testApp.js";

/**
 * The organization's branding and receipt defaults (PUT/GET /v1/organization: logo, colour, reply-to,
 * subject, message), used by the receipts of forms without custom e-mail settings; and
 * POST /v1/organization/test-receipt, a sample receipt with those settings, marked as a test, queued in
 * the mail outbox to the signed-in person (or `to`), at most 10 an hour per organization.
 */
describe(`organization branding and test receipts (${dialect})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await setupTestApp({ env: { RATE_LIMIT_PER_HOUR: "1000000", CHECKOUT_LIMIT_PER_IP: "0" } });
  });
  afterAll(() => t.close());

  const { send, member } = staffClient(() => t);

  /** A request with a staff session (from this instance's pages). */
  const asStaff = (cookie: string, method: string, url: string, body?: unknown) =>
    send(method, url, { body, cookie });

  async function put(org: TestOrg, body: unknown) {
    return t.request<Record<string, unknown> & { details?: string[] }>("PUT", "/v1/organization", {
      key: org.key,
      body,
    });
  }

  async function outbox(organizationId: string): Promise<EmailOutboxTable[]> {
    return t.store.db
      .selectFrom("email_outbox")
      .selectAll()
      .where("organization_id", "=", organizationId)
      .orderBy("id")
      .execute();
  }

  const BRANDING = {
    logoUrl: "https://cdn.example.org/logo.png",
    brandColor: "#1a7f5a",
    receiptReplyTo: "giving@example.org",
    receiptSubject: "Thank you from the Shelter",
    receiptMessage: "Every gift keeps a bed warm.\n\nWith gratitude, the Shelter team",
  };

  describe("settings", () => {
    it("stores the logo, colour (upper case) and receipt defaults, GET shows them, and null or '' clears them", async () => {
      const org = await t.newOrg({ name: "Shelter" });
      const res = await put(org, BRANDING);
      expect(res.status, res.text).toBe(200);
      const expected = { ...BRANDING, brandColor: "#1A7F5A" };
      expect(res.body).toMatchObject(expected);
      const got = await t.request("GET", "/v1/organization", { key: org.key });
      expect(got.body).toMatchObject(expected);

      const cleared = await put(org, {
        logoUrl: null,
        brandColor: "",
        receiptReplyTo: "",
        receiptSubject: null,
        receiptMessage: "",
      });
      expect(cleared.status, cleared.text).toBe(200);
      expect(cleared.body).toMatchObject({
        logoUrl: null,
        brandColor: null,
        receiptReplyTo: null,
        receiptSubject: null,
        receiptMessage: null,
      });
    });

    it("changes only the branding field sent", async () => {
      const org = await t.newOrg();
      await put(org, BRANDING);
      const res = await put(org, { receiptSubject: "New subject" });
      expect(res.body).toMatchObject({ ...BRANDING, brandColor: "#1A7F5A", receiptSubject: "New subject" });
    });

    it("refuses an http or non-URL logo, a colour that is not #RRGGBB, a bad reply-to and a subject over 200 characters, naming each field", async () => {
      const org = await t.newOrg();
      const res = await put(org, {
        logoUrl: "http://cdn.example.org/logo.png",
        brandColor: "green",
        receiptReplyTo: "not an address",
        receiptSubject: "x".repeat(201),
      });
      expect(res.status, res.text).toBe(400);
      const details = res.body.details ?? [];
      expect(details.some((d) => d.startsWith("logoUrl") && d.includes("https"))).toBe(true);
      expect(details.some((d) => d.startsWith("brandColor") && d.includes("#3B82F6"))).toBe(true);
      expect(details.some((d) => d.startsWith("receiptReplyTo"))).toBe(true);
      expect(details.some((d) => d.startsWith("receiptSubject"))).toBe(true);
      for (const logoUrl of ["javascript:alert(1)", "logo.png", "https://user:pw@cdn.example.org/l.png"]) {
        const bad = await put(org, { logoUrl });
        expect(bad.status, logoUrl).toBe(400);
        expect(bad.body.details?.[0]).toMatch(/^logoUrl/);
      }
      const got = await t.request("GET", "/v1/organization", { key: org.key });
      expect(got.body).toMatchObject({ logoUrl: null, brandColor: null, receiptReplyTo: null });
    });

    it("records the change in the audit log", async () => {
      const org = await t.newOrg();
      await put(org, { brandColor: "#123456" });
      const log = await t.request<{ entries: { action: string; before: unknown; after: unknown }[] }>(
        "GET",
        "/v1/audit-log",
        { key: org.key },
      );
      const entry = log.body.entries.find((e) => e.action === "organization.updated");
      expect(entry?.before).toEqual({ brandColor: null });
      expect(entry?.after).toEqual({ brandColor: "#123456" });
    });
  });

  describe("receipts", () => {
    it("a form without custom e-mail settings sends receipts with the organization's subject, reply-to, message, logo and colour", async () => {
      const org = await put(t.org, BRANDING);
      expect(org.status, org.text).toBe(200);
      const formId = await createForm(t, validForms.standard());
      const gift = await checkout(t, formId, { amount: 25, donor: donor(), paymentMethod: card() });
      expect(gift.status, gift.text).toBe(201);
      const mail = (await outbox(t.org.id)).find(
        (m) => m.payment_id === (gift.body.payment as { paymentID: string }).paymentID,
      );
      expect(mail?.subject).toBe(BRANDING.receiptSubject);
      expect(mail?.reply_to).toBe(BRANDING.receiptReplyTo);
      expect(mail?.text_body.startsWith("Every gift keeps a bed warm.")).toBe(true);
      expect(mail?.html_body).toContain('<img src="https://cdn.example.org/logo.png" alt="Test Org"');
      expect(mail?.html_body).toContain("border-top:4px solid #1A7F5A");
    });

    it("an organization that states its tax id sends receipts with it, its legal name and the deductible amount", async () => {
      const org = await t.newOrg({ name: "Tax Org" });
      expect((await put(org, { legalName: "Tax Org Foundation Inc.", taxId: "98-7654321" })).status).toBe(
        200,
      );
      const made = await t.request<{ formID: string }>("POST", "/v1/forms", {
        key: org.key,
        body: validForms.standard(),
      });
      expect(made.status, made.text).toBe(201);
      const gift = await checkout({ ...t, org } as TestApp, made.body.formID, {
        amount: 25,
        donor: donor(),
        paymentMethod: card(),
      });
      expect(gift.status, gift.text).toBe(201);
      const [mail] = await outbox(org.id);
      for (const body of [mail?.text_body, mail?.html_body]) {
        expect(body).toContain("Tax Org Foundation Inc.");
        expect(body).toContain("Tax id: 98-7654321");
        expect(body).toContain("Deductible amount");
        expect(body).toContain("No goods or services were provided in return for this gift.");
      }
    });

    it("a form with its own custom e-mail settings keeps them over the organization's", async () => {
      await put(t.org, BRANDING);
      const formId = await createForm(t, {
        ...validForms.standard(),
        enableCustomEmail: true,
        replyToAddress: "gala@example.org",
        emailSubject: "Thanks for coming to the gala",
        customMessage: "See you next year.",
      });
      const gift = await checkout(t, formId, { amount: 25, donor: donor(), paymentMethod: card() });
      const mail = (await outbox(t.org.id)).find(
        (m) => m.payment_id === (gift.body.payment as { paymentID: string }).paymentID,
      );
      expect(mail?.subject).toBe("Thanks for coming to the gala");
      expect(mail?.reply_to).toBe("gala@example.org");
      expect(mail?.text_body.startsWith("See you next year.")).toBe(true);
      expect(mail?.text_body).not.toContain("Every gift keeps a bed warm.");
    });

    it("without organization defaults a receipt has the built-in subject and no reply-to", async () => {
      const org = await t.newOrg({ name: "Plain Org" });
      const res = await t.request<{ formID: string }>("POST", "/v1/forms", {
        key: org.key,
        body: validForms.standard(),
      });
      const gift = await checkout(t, res.body.formID, { amount: 25, donor: donor(), paymentMethod: card() });
      const [mail] = await outbox(org.id);
      expect(gift.status).toBe(201);
      expect(mail.subject).toBe("Thank you for your gift to Plain Org");
      expect(mail.reply_to).toBeNull();
      expect(mail.html_body).not.toContain("<img");
    });
  });

  describe("POST /v1/organization/test-receipt", () => {
    it("sends an Owner's test receipt to their own address, in the organization's language and currency, with its settings and marked as a test", async () => {
      const org = await t.newOrg({ name: "Refuge" });
      await put(org, { ...BRANDING, language: "fr", currency: "EUR" });
      const owner = await member("OWNER", "Owner.Refuge@example.org", org.id);
      const res = await asStaff(owner, "POST", "/v1/organization/test-receipt");
      expect(res.status, res.text).toBe(202);
      expect(res.body).toEqual({
        message: "A test receipt is queued for Owner.Refuge@example.org",
        emailId: expect.stringMatching(/^eml_/),
        to: "Owner.Refuge@example.org",
      });
      const [mail] = await outbox(org.id);
      expect(mail.id).toBe(res.body.emailId);
      expect(mail.to_address).toBe("Owner.Refuge@example.org");
      expect(mail.payment_id).toBeNull();
      expect(mail.subject).toBe(`[TEST] ${BRANDING.receiptSubject}`);
      expect(mail.reply_to).toBe(BRANDING.receiptReplyTo);
      expect(mail.from_name).toBe("Refuge");
      // The notice first, in French; then the organization's message and a made-up gift in euros.
      expect(
        mail.text_body.startsWith("Ceci est un reçu de test envoyé depuis les paramètres de Refuge."),
      ).toBe(true);
      expect(mail.text_body).toContain("Every gift keeps a bed warm.");
      expect(mail.text_body).toMatch(/Montant\s+50\s€/);
      expect(mail.html_body).toContain('lang="fr"');
      expect(mail.html_body).toContain("Ceci est un reçu de test");
      expect(mail.html_body).toContain('<img src="https://cdn.example.org/logo.png"');
    });

    it("from a staff session goes only to the signed-in person: another `to` is a 400 and queues nothing", async () => {
      const org = await t.newOrg({ name: "Shelter" });
      const owner = await member("OWNER", "Owner.Shelter@example.org", org.id);
      const elsewhere = await asStaff(owner, "POST", "/v1/organization/test-receipt", {
        to: "victim@example.org",
      });
      expect(elsewhere.status).toBe(400);
      expect(elsewhere.body.details.join(" ")).toMatch(/own address/);
      expect(await outbox(org.id)).toHaveLength(0);
      // Their own address, written in another case, is theirs.
      const own = await asStaff(owner, "POST", "/v1/organization/test-receipt", {
        to: "owner.shelter@EXAMPLE.org",
      });
      expect(own.status, own.text).toBe(202);
      expect((await outbox(org.id)).map((mail) => mail.to_address)).toEqual(["owner.shelter@EXAMPLE.org"]);
    });

    it("marks a test in the built-in subject too, and sends to `to` when given", async () => {
      const org = await t.newOrg({ name: "Food Bank" });
      const res = await t.request("POST", "/v1/organization/test-receipt", {
        key: org.key,
        body: { to: "someone@example.org" },
      });
      expect(res.status, res.text).toBe(202);
      const [mail] = await outbox(org.id);
      expect(mail.to_address).toBe("someone@example.org");
      expect(mail.subject).toBe("[TEST] Thank you for your gift to Food Bank");
      expect(mail.text_body.startsWith("This is a test receipt from the settings of Food Bank.")).toBe(true);
      expect(mail.text_body).toMatch(/Amount\s+\$50\n/);
    });

    it("with an API key and no `to`, or a bad address, answers 400 and queues nothing", async () => {
      const org = await t.newOrg();
      const none = await t.request<{ details?: string[] }>("POST", "/v1/organization/test-receipt", {
        key: org.key,
      });
      expect(none.status, none.text).toBe(400);
      expect(none.body.details?.[0]).toMatch(/^to is required/);
      const bad = await t.request<{ details?: string[] }>("POST", "/v1/organization/test-receipt", {
        key: org.key,
        body: { to: "nobody" },
      });
      expect(bad.status, bad.text).toBe(400);
      expect(bad.body.details?.[0]).toMatch(/^to/);
      expect(await outbox(org.id)).toHaveLength(0);
    });

    it("sends at most 10 an hour per organization: the 11th answers 429 with Retry-After, another organization is not counted", async () => {
      const org = await t.newOrg();
      for (let i = 0; i < 10; i++) {
        const res = await t.request("POST", "/v1/organization/test-receipt", {
          key: org.key,
          body: { to: `n${i}@example.org` },
        });
        expect(res.status, res.text).toBe(202);
      }
      const refused = await t.request<{ error: string }>("POST", "/v1/organization/test-receipt", {
        key: org.key,
        body: { to: "n10@example.org" },
      });
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatch(/At most 10 test receipts an hour/);
      expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
      expect(await outbox(org.id)).toHaveLength(10);
      const other = await t.newOrg();
      const ok = await t.request("POST", "/v1/organization/test-receipt", {
        key: other.key,
        body: { to: "x@example.org" },
      });
      expect(ok.status).toBe(202);
    });

    it("is refused to Finance and Staff sessions and to a key without organization:write", async () => {
      const org = await t.newOrg();
      for (const role of ["FINANCE", "STAFF"] as const) {
        const cookie = await member(role, `${role.toLowerCase()}-${org.id}@example.org`, org.id);
        const res = await asStaff(cookie, "POST", "/v1/organization/test-receipt");
        expect(res.status, role).toBe(403);
      }
      const reader = await t.newOrg({ permissions: ["organization:read"] });
      const res = await t.request("POST", "/v1/organization/test-receipt", {
        key: reader.key,
        body: { to: "x@example.org" },
      });
      expect(res.status).toBe(403);
      expect(await outbox(org.id)).toHaveLength(0);
    });
  });
});

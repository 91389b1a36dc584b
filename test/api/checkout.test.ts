import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bank, CARDS, card, checkout, createForm, donor } from "../support/checkout.js";
import { setupTestApp, type TestApp, validForms } from "../support/testApp.js";

let t: TestApp;
beforeEach(async () => {
  t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" } });
});
afterEach(async () => {
  await t.close();
});

type Body = Record<string, unknown> & { payment: Record<string, unknown> };

async function rows(table: "payments" | "contacts" | "subscriptions" | "outbox_events" | "email_outbox") {
  return t.store.db.selectFrom(table).selectAll().execute();
}

describe("checkout answers", () => {
  it("names what a custom input's answer must be when it is neither text nor a list", async () => {
    const formId = await createForm(t, validForms.standard());
    const res = await t.request("POST", `/api/forms/${formId}/checkout`, {
      key: null,
      body: { amount: 25, donor: donor(), paymentMethod: card(), customInputs: { a: 12, b: { c: 1 } } },
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([
      "customInputs.a must be text, or a list of options for a multi-select input",
      "customInputs.b must be text, or a list of options for a multi-select input",
    ]);
  });
});

describe("single-line donor text", () => {
  it("refuses a line break or other control character in names, the address, phone, payer name, UTM fields and the honoree's name, naming the field", async () => {
    const formId = await createForm(t, {
      ...validForms.standard(),
      enableTribute: true,
      enableOrganizationName: true,
      enableBillingAddress: true,
    });
    const attempt = (change: Record<string, unknown>) =>
      t.request("POST", `/api/forms/${formId}/checkout`, {
        key: null,
        body: { amount: 25, frequency: "ONE_TIME", donor: donor(), paymentMethod: card(), ...change },
      });
    const line = "must be a single line of text (no line breaks, tabs or other control characters)";
    const cases: [Record<string, unknown>, string][] = [
      [{ donor: { ...donor(), firstName: "Eve\r\nBcc: victim@example.com" } }, "donor.firstName"],
      [{ donor: { ...donor(), lastName: "Doe\tJr" } }, "donor.lastName"],
      [{ donor: { ...donor(), lastName: "Doe\n" } }, "donor.lastName"],
      [{ donor: { ...donor(), organizationName: "Acme\u0085Inc" } }, "donor.organizationName"],
      [{ donor: { ...donor(), address: { line1: "1 Main St\nBcc: x@example.com" } } }, "donor.address.line1"],
      [{ donor: { ...donor(), address: { line2: "Apt\r2" } } }, "donor.address.line2"],
      [{ donor: { ...donor(), address: { city: "Paris\u001b[31m" } } }, "donor.address.city"],
      [{ tribute: { kind: "HONOR", honoreeName: "Rosa\nBcc: x@example.com" } }, "tribute.honoreeName"],
      [{ donor: { ...donor(), phone: "555\r\n0101" } }, "donor.phone"],
      [{ paymentMethod: { ...card(), name: "Ada\r\nBcc: x@example.com" } }, "paymentMethod.name"],
      [{ paymentMethod: { ...bank(), accountHolder: "Ada\r\nDonor" } }, "paymentMethod.accountHolder"],
      [{ paymentMethod: { ...card(), postalCode: "94105\n" } }, "paymentMethod.postalCode"],
      [{ paymentMethod: { ...card(), postalCode: "941\u000705" } }, "paymentMethod.postalCode"],
      [{ paymentMethod: { ...card(), postalCode: "SW1A\t1AA" } }, "paymentMethod.postalCode"],
    ];
    for (const [change, field] of cases) {
      const res = await attempt(change);
      expect(res.status, JSON.stringify(change)).toBe(400);
      expect(res.body.details, JSON.stringify(change)).toEqual([`${field} ${line}`]);
    }
    expect(await rows("payments")).toEqual([]);
    // A message may keep its line breaks; names with spaces, accents and apostrophes are taken.
    const ok = await attempt({
      donor: { ...donor(), firstName: "Zoë Anne", lastName: "O’Brien-Núñez" },
      tribute: { kind: "HONOR", honoreeName: "Rosa", message: "Dear Rosa,\nwith love." },
      utm: { source: "news letter", campaign: "Frühjahr 2026" },
    });
    expect(ok.status, ok.text).toBe(201);
    // UTM parameters come from a page's address, not from the donor: a line break there is a space, and
    // the gift goes through.
    const flattened = await attempt({ utm: { source: "news\r\nletter", medium: "mail\r\n", term: "a\tb" } });
    expect(flattened.status, flattened.text).toBe(201);
    const utms = (await rows("payments")).map(
      (p) => JSON.parse(String((p as { details: string }).details)).utm,
    );
    expect(utms).toContainEqual({ source: "news letter", medium: "mail", term: "a b" });
    // So does the checkout link's id: the page's checkout sends its address's ?elementid= as it is (the page
    // renders whatever it holds), so a stray %0A there is a space, never a refused gift.
    const linked = await attempt({
      elementId: "link\r\n1\u0007",
      paymentMethod: { ...card(), postalCode: "94105" },
    });
    expect(linked.status, linked.text).toBe(201);
    const elementIds = (await rows("payments")).map(
      (p) => JSON.parse(String((p as { details: string }).details)).elementId,
    );
    expect(elementIds).toContain("link 1");

    // The document says so: the donor's names refuse a line break.
    const doc = (await t.request<Record<string, unknown>>("GET", "/v1/openapi.json")).body;
    const text = JSON.stringify(doc);
    expect(text).toContain(JSON.stringify("^[^\\u0000-\\u001F\\u007F-\\u009F]*$"));
  });
});

describe("single-line promo code", () => {
  it("refuses a line break or other control character in the promo code, at the quote and the checkout, naming the field", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      promoCodes: [{ code: "HALF", discountType: "percentage", discountValue: 50 }],
    });
    const order = { tickets: [{ name: "Adult", quantity: 1 }] };
    const line = "must be a single line of text (no line breaks, tabs or other control characters)";
    for (const promoCode of ["HALF\n", "HA\r\nLF", "\tHALF", "HALF\u0007", "HALF\u0085"]) {
      const quote = await t.request("POST", `/api/forms/${formId}/quote`, {
        key: null,
        body: { ...order, promoCode },
      });
      expect(quote.status, JSON.stringify(promoCode)).toBe(400);
      expect(quote.body.details, JSON.stringify(promoCode)).toEqual([`promoCode ${line}`]);
      const res = await checkout(t, formId, { ...order, promoCode, donor: donor(), paymentMethod: card() });
      expect(res.status, JSON.stringify(promoCode)).toBe(400);
      expect(res.body.details, JSON.stringify(promoCode)).toEqual([`promoCode ${line}`]);
    }
    expect(await rows("payments")).toEqual([]);
    // The code itself, in any case and with spaces around it, is taken.
    const ok = await checkout(t, formId, {
      ...order,
      promoCode: " half ",
      donor: donor(),
      paymentMethod: card(),
    });
    expect(ok.status, ok.text).toBe(201);
    expect((ok.body as Body).payment).toMatchObject({ total: 25 });
  });
});

describe("public form view", () => {
  it("shows donor-facing settings and stock but never promo codes or email settings", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "Adult", price: 50, quantity: 10 }],
      promoCodes: [{ code: "SECRET10", discountType: "percentage", discountValue: 10 }],
      enableCustomEmail: true,
      replyToAddress: "staff@example.org",
      emailSubject: "Thanks",
      customMessage: "See you",
    });
    const res = await t.request("GET", `/api/forms/${formId}`, { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.text).not.toContain("SECRET10");
    expect(res.text).not.toContain("staff@example.org");
    expect(res.text).not.toContain(t.org.id);
    const tickets = res.body.tickets as { name: string; remaining: number }[];
    expect(tickets[0]).toMatchObject({ name: "Adult", price: 50, remaining: 10, soldOut: false });
    expect(res.body.hasPromoCodes).toBe(true);
  });

  it("is open to any origin in its errors too, as the quote is", async () => {
    const formId = await createForm(t, validForms.standard());
    await t.request("DELETE", `/v1/forms/${formId}`);
    const answers = [
      await t.request("GET", `/api/forms/${formId}`, { key: null }),
      await t.request("GET", "/api/forms/00000000-0000-4000-8000-000000000000", { key: null }),
      await t.request("GET", `/api/forms/${formId}?elementid=${"x".repeat(101)}`, { key: null }),
      await t.request("POST", `/api/forms/${formId}/quote`, { key: null, body: { amount: 25 } }),
      await t.request("POST", `/api/forms/${formId}/quote`, { key: null, body: { amount: "25" } }),
    ];
    expect(answers.map((res) => res.status)).toEqual([410, 404, 410, 400, 400]);
    for (const res of answers) expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const checkout = await t.request("POST", `/api/forms/${formId}/checkout`, { key: null, body: {} });
    expect(checkout.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("gives no prefill for an elementid longer than any link id, as the hosted page does (no 400)", async () => {
    const formId = await createForm(t, validForms.standard());
    const res = await t.request("GET", `/api/forms/${formId}?elementid=${"x".repeat(101)}`, { key: null });
    expect(res.status, res.text).toBe(200);
    expect(res.body.prefill).toBeNull();
  });

  it("applies an active link's prefill through ?elementid= and answers 404 and 410", async () => {
    const formId = await createForm(t, validForms.standard());
    const link = await t.request<{ linkID: string }>("POST", `/v1/forms/${formId}/links`, {
      body: { prefill: { firstName: "Grace", amount: 50, utmSource: "mail" } },
    });
    const res = await t.request("GET", `/api/forms/${formId}?elementid=${link.body.linkID}`, { key: null });
    expect(res.body.prefill).toMatchObject({ firstName: "Grace", amount: 50, utm: { source: "mail" } });
    const plain = await t.request("GET", `/api/forms/${formId}`, { key: null });
    expect(plain.body.prefill).toBeNull();
    expect((await t.request("GET", `/api/forms/${crypto.randomUUID()}`, { key: null })).status).toBe(404);
    await t.request("DELETE", `/v1/forms/${formId}`);
    expect((await t.request("GET", `/api/forms/${formId}`, { key: null })).status).toBe(410);
  });

  it("shows the fundraising bar's raised total net of covered fees and the donor list", async () => {
    const formId = await createForm(t, {
      ...validForms.standard(),
      enableFundraisingBar: true,
      goal: 1000,
      enableDonorList: true,
    });
    await checkout(t, formId, { amount: 100, coverFees: true, donor: donor(), paymentMethod: card() });
    await checkout(t, formId, { amount: 25, anonymous: true, donor: donor(), paymentMethod: card() });
    const res = await t.request("GET", `/api/forms/${formId}`, { key: null });
    expect(res.body.fundraisingBar).toEqual({ goal: 1000, raised: 125, donors: 2 });
    const list = res.body.donorList as { name: string; amount: number }[];
    expect(list.map((d) => d.name)).toEqual(["Anonymous", "Ada D."]);
    expect(res.text).not.toContain("@example.org");
    // The hosted page names the anonymous supporter in its own language.
    const german = await (await t.app.request(`/donate/${formId}?lang=de`)).text();
    expect(german).toContain(`<span class="alm-anon">Anonym</span>`);
    expect(german).not.toContain("Anonymous");
    // A last name beginning beyond the BMP keeps its whole first letter (not half a surrogate pair).
    await checkout(t, formId, {
      amount: 5,
      donor: { ...donor(), firstName: "Zoë", lastName: "𝒳yz" },
      paymentMethod: card(),
    });
    const again = await t.request("GET", `/api/forms/${formId}`, { key: null });
    expect((again.body.donorList as { name: string }[])[0].name).toBe("Zoë 𝒳.");
  });

  it("counts in the bar and lists only gifts in the organization's current currency", async () => {
    const formId = await createForm(t, {
      ...validForms.standard(),
      enableFundraisingBar: true,
      goal: 50000,
      enableDonorList: true,
    });
    const give = async (amount: number, firstName: string, lastName: string) => {
      const paid = await checkout(t, formId, {
        amount,
        donor: { ...donor(), firstName, lastName },
        paymentMethod: card(),
      });
      expect(paid.status, paid.text).toBe(201);
    };
    const currency = async (code: string) =>
      expect((await t.request("PUT", "/v1/organization", { body: { currency: code } })).status).toBe(200);
    await give(25, "Jürgen", "Müller");
    await currency("JPY");
    await give(1500, "Taro", "Yamada");
    await currency("EUR");
    type View = {
      currency: string;
      fundraisingBar: { raised: number; donors: number };
      donorList: { name: string; amount: number }[];
    };
    const none = await t.request<View>("GET", `/api/forms/${formId}`, { key: null });
    expect(none.body.currency).toBe("EUR");
    expect(none.body.fundraisingBar).toMatchObject({ raised: 0, donors: 0 });
    expect(none.body.donorList).toEqual([]);
    const page = await t.request("GET", `/donate/${formId}`, { key: null });
    expect(page.text).not.toContain("Jürgen M.");
    expect(page.text).not.toContain("Taro Y.");
    await give(10, "Eva", "Schmidt");
    const euros = await t.request<View>("GET", `/api/forms/${formId}`, { key: null });
    expect(euros.body.fundraisingBar).toMatchObject({ raised: 10, donors: 1 });
    expect(euros.body.donorList.map((d) => [d.name, d.amount])).toEqual([["Eva S.", 10]]);
    // Back to yen: the yen gift counts again, alone.
    await currency("JPY");
    const yen = await t.request<View>("GET", `/api/forms/${formId}`, { key: null });
    expect(yen.body.fundraisingBar).toMatchObject({ raised: 1500, donors: 1 });
    expect(yen.body.donorList.map((d) => [d.name, d.amount])).toEqual([["Taro Y.", 1500]]);
  });
});

describe("quote", () => {
  it("prices on the server: cover fees rounded up so the organization nets the gift", async () => {
    const formId = await createForm(t, validForms.standard());
    const res = await t.request("POST", `/api/forms/${formId}/quote`, {
      key: null,
      body: { amount: 100, coverFees: true },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ subtotal: 100, fee: 3.3, total: 103.3 });
  });

  it("takes a promo code off its applicable tickets only, and refuses fields of another form type", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      promoCodes: [
        { code: "HALF", discountType: "percentage", discountValue: 50, applicableTickets: ["Adult"] },
      ],
    });
    const res = await t.request("POST", `/api/forms/${formId}/quote`, {
      key: null,
      body: {
        tickets: [
          { name: "Adult", quantity: 2 },
          { name: "Table", quantity: 1 },
        ],
        promoCode: "half",
      },
    });
    expect(res.body).toMatchObject({
      subtotal: 500,
      discount: 50,
      total: 450,
      attendees: 10,
      promoCode: "HALF",
    });
    const bad = await t.request("POST", `/api/forms/${formId}/quote`, { key: null, body: { amount: 25 } });
    expect(bad.status).toBe(400);
    expect((bad.body.details as string[]).join()).toMatch(/amount/);
  });
});

describe("checkout", () => {
  it("records a completed one-time card gift with its contact, events and receipt; stores only brand and last 4", async () => {
    const formId = await createForm(t, validForms.standard());
    const res = await checkout(t, formId, {
      amount: 50,
      donor: donor("Ada@Example.org"),
      paymentMethod: card(),
      emailOptIn: true,
      utm: { source: "newsletter" },
    });
    expect(res.status).toBe(201);
    const payment = (res.body as Body).payment;
    expect(payment).toMatchObject({ status: "COMPLETED", total: 50, frequency: "ONE_TIME" });
    expect(payment.paymentMethod).toEqual({ type: "card", brand: "visa", last4: "4242" });
    const [p] = await rows("payments");
    expect(p).toMatchObject({ status: "COMPLETED", amount_cents: 5000, last4: "4242", card_brand: "visa" });
    expect(JSON.stringify(await rows("payments"))).not.toContain(CARDS.visa);
    const [contact] = await rows("contacts");
    expect(contact).toMatchObject({ first_name: "Ada", email_consent: "OPTED_IN" });
    expect(p.contact_id).toBe(contact.id);
    const events = (await rows("outbox_events"))
      .map((e) => String(e.type))
      .filter((type) => !type.startsWith("form."))
      .sort();
    expect(events).toEqual(["contact.created", "donation.created"]);
    const mails = await rows("email_outbox");
    expect(mails).toHaveLength(1);
    expect(mails[0].to_address).toBe("Ada@Example.org");
  });

  it("matches a returning donor by email without case and creates no second contact", async () => {
    const formId = await createForm(t, validForms.standard());
    await checkout(t, formId, { amount: 25, donor: donor("same@example.org"), paymentMethod: card() });
    await checkout(t, formId, { amount: 25, donor: donor("SAME@example.org"), paymentMethod: card() });
    expect(await rows("contacts")).toHaveLength(1);
    const payments = await rows("payments");
    expect(new Set(payments.map((p) => p.contact_id)).size).toBe(1);
  });

  it("starts a monthly subscription with a reusable method and the next billing date a month on", async () => {
    const now = Date.parse("2026-01-31T10:00:00Z");
    await t.close();
    t = await setupTestApp({ now: () => now, env: { CHECKOUT_LIMIT_PER_IP: "0" } });
    const formId = await createForm(t, { ...validForms.standard(), frequencies: ["ONE_TIME", "MONTHLY"] });
    const res = await checkout(t, formId, {
      frequency: "MONTHLY",
      amount: 25,
      coverFees: true,
      donor: donor(),
      paymentMethod: card(),
    });
    expect(res.status).toBe(201);
    const payment = (res.body as Body).payment;
    expect(payment.subscription).toMatchObject({
      amount: 25,
      frequency: "MONTHLY",
      nextBillingDate: "2026-02-28T10:00:00Z",
    });
    const [sub] = await rows("subscriptions");
    expect(sub).toMatchObject({ status: "ACTIVE", amount_cents: 2500, cover_fees: 1, frequency: "MONTHLY" });
    expect(sub.payment_method_token).toMatch(/^pm_sandbox_/);
    const [p] = await rows("payments");
    expect(p.subscription_id).toBe(sub.id);
    expect((await rows("outbox_events")).map((e) => e.type)).toContain("subscription.created");
  });

  it("records a declined card as a FAILED payment with no subscription and tells the donor why", async () => {
    const formId = await createForm(t, { ...validForms.standard(), frequencies: ["MONTHLY"] });
    const res = await checkout(t, formId, {
      frequency: "MONTHLY",
      amount: 25,
      donor: donor(),
      paymentMethod: card(CARDS.declined),
    });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ code: "card_declined" });
    expect(String(res.body.error)).toMatch(/declined/i);
    const [p] = await rows("payments");
    expect(p.status).toBe("FAILED");
    expect(await rows("subscriptions")).toHaveLength(0);
    expect(await rows("email_outbox")).toHaveLength(0);
    const insufficient = await checkout(t, formId, {
      frequency: "MONTHLY",
      amount: 25,
      donor: donor(),
      paymentMethod: card(CARDS.insufficient),
    });
    expect(insufficient.status).toBe(402);
    expect(insufficient.body.code).toBe("insufficient_funds");
  });

  it("leaves a bank payment PENDING", async () => {
    const formId = await createForm(t, validForms.standard());
    const res = await checkout(t, formId, { amount: 25, donor: donor(), paymentMethod: bank() });
    expect(res.status).toBe(201);
    expect((res.body as Body).payment).toMatchObject({
      status: "PENDING",
      paymentMethod: { type: "bank", last4: "6789" },
    });
  });

  it("charges once for a submission retried with the same Idempotency-Key", async () => {
    const formId = await createForm(t, validForms.standard());
    const body = { amount: 25, donor: donor(), paymentMethod: card() };
    const first = await checkout(t, formId, body, { "Idempotency-Key": "retry-1" });
    const again = await checkout(t, formId, body, { "Idempotency-Key": "retry-1" });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(await rows("payments")).toHaveLength(1);
  });

  it("sells tickets and redeems promo codes up to their limits, then answers sold out", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [
        { name: "Adult", price: 50, quantity: 3, maxPerOrder: 2 },
        { name: "Table", price: 400, ticketType: "GROUP", groupSize: 8, quantity: 1 },
      ],
      promoCodes: [{ code: "ONCE", discountType: "amount", discountValue: 10, quantity: 1 }],
    });
    const buy = (tickets: { name: string; quantity: number }[], promoCode?: string) =>
      checkout(t, formId, { tickets, promoCode, donor: donor(), paymentMethod: card() });
    const first = await buy([{ name: "Adult", quantity: 2 }], "once");
    expect(first.status).toBe(201);
    expect((first.body as Body).payment).toMatchObject({ total: 90, discount: 10 });
    const exhausted = await buy([{ name: "Adult", quantity: 1 }], "ONCE");
    expect(exhausted.status).toBe(400);
    expect(await buy([{ name: "Adult", quantity: 1 }])).toMatchObject({ status: 201 });
    const soldOut = await buy([{ name: "Adult", quantity: 1 }]);
    expect(soldOut.status).toBe(400);
    expect(String(soldOut.body.error)).toMatch(/sold out/i);
    const form = await t.request<{
      tickets: { quantitySold: number }[];
      promoCodes: { timesRedeemed: number }[];
    }>("GET", `/v1/forms/${formId}`);
    expect(form.body.tickets[0].quantitySold).toBe(3);
    expect(form.body.promoCodes[0].timesRedeemed).toBe(1);
  });

  it("does not use up a limited promo code on an order it takes nothing off (free tickets only)", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [
        { name: "Free", price: 0 },
        { name: "Gala", price: 100 },
      ],
      promoCodes: [{ code: "VIP", discountType: "percentage", discountValue: 50, quantity: 1 }],
    });
    const free = await checkout(t, formId, {
      tickets: [{ name: "Free", quantity: 1 }],
      promoCode: "VIP",
      donor: donor(),
    });
    expect(free.status, free.text).toBe(201);
    expect((free.body as Body).payment).toMatchObject({ total: 0, discount: 0, promoCode: null });
    const gala = await checkout(t, formId, {
      tickets: [{ name: "Gala", quantity: 1 }],
      promoCode: "VIP",
      donor: donor(),
      paymentMethod: card(),
    });
    expect(gala.status, gala.text).toBe(201);
    expect((gala.body as Body).payment).toMatchObject({ total: 50, discount: 50, promoCode: "VIP" });
  });

  it("a free registration's receipt names no payment method: nothing was charged", async () => {
    const formId = await createForm(t, { ...validForms.event(), tickets: [{ name: "Free", price: 0 }] });
    const res = await checkout(t, formId, { tickets: [{ name: "Free", quantity: 1 }], donor: donor() });
    expect(res.status, res.text).toBe(201);
    const paymentId = (res.body as Body).payment.paymentID as string;
    const mail = await t.store.db
      .selectFrom("email_outbox")
      .select(["text_body", "html_body"])
      .where("payment_id", "=", paymentId)
      .executeTakeFirstOrThrow();
    expect(mail.text_body).toMatch(/Amount\s+\$0/);
    expect(mail.text_body).not.toMatch(/Payment method/);
    expect(mail.html_body).not.toMatch(/Payment method/);
  });

  it("counts down a ticket or product named like an object's own property (__proto__, constructor) on the public form", async () => {
    const event = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "__proto__", price: 5, quantity: 1 }],
    });
    const sponsor = await createForm(t, {
      ...validForms.sponsorship(),
      sponsorshipGroups: [
        {
          groupTitle: "__proto__",
          description: "",
          options: [{ optionTitle: "constructor", amount: 10, quantity: 1 }],
        },
      ],
    });
    type View = {
      tickets: { remaining: unknown; soldOut: boolean }[];
      productGroups: { products: { remaining: unknown; soldOut: boolean }[] }[];
    };
    const view = async (id: string) => (await t.request<View>("GET", `/api/forms/${id}`, { key: null })).body;
    expect((await view(event)).tickets[0]).toMatchObject({ remaining: 1, soldOut: false });
    expect((await view(sponsor)).productGroups[0].products[0]).toMatchObject({
      remaining: 1,
      soldOut: false,
    });
    const bought = await checkout(t, event, {
      tickets: [{ name: "__proto__", quantity: 1 }],
      donor: donor(),
      paymentMethod: card(),
    });
    expect(bought.status, bought.text).toBe(201);
    const sold = await checkout(t, sponsor, {
      product: { group: "__proto__", name: "constructor" },
      donor: donor(),
      paymentMethod: card(),
    });
    expect(sold.status, sold.text).toBe(201);
    expect((await view(event)).tickets[0]).toMatchObject({ remaining: 0, soldOut: true });
    expect((await view(sponsor)).productGroups[0].products[0]).toMatchObject({ remaining: 0, soldOut: true });
  });

  it("refuses an unknown ticket name with that one reason, not also 'every quantity is 0'", async () => {
    const formId = await createForm(t, validForms.event());
    for (const name of ["Child", "toString"]) {
      const res = await t.request<{ details: string[] }>("POST", `/api/forms/${formId}/quote`, {
        key: null,
        body: { tickets: [{ name, quantity: 1 }] },
      });
      expect(res.status, name).toBe(400);
      expect(res.body.details, name).toEqual([
        "tickets[0].name must be one of this event's tickets: Adult, Table",
      ]);
    }
  });

  it("gives stock back when the card is declined", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "Adult", price: 50, quantity: 1 }],
    });
    const declined = await checkout(t, formId, {
      tickets: [{ name: "Adult", quantity: 1 }],
      donor: donor(),
      paymentMethod: card(CARDS.declined),
    });
    expect(declined.status).toBe(402);
    const ok = await checkout(t, formId, {
      tickets: [{ name: "Adult", quantity: 1 }],
      donor: donor(),
      paymentMethod: card(),
    });
    expect(ok.status).toBe(201);
  });

  it("refuses bad input with every problem listed and writes nothing", async () => {
    const formId = await createForm(t, {
      ...validForms.standard(),
      allowCustomAmount: false,
      customInputs: [{ title: "Tribute", inputType: "short_text", required: true }],
    });
    const res = await checkout(t, formId, {
      amount: 33,
      fund: "Nope",
      donor: { firstName: "A", lastName: "B", email: "a@example.org", phone: "555" },
      paymentMethod: card(),
    });
    expect(res.status).toBe(400);
    const details = (res.body.details as string[]).join("\n");
    for (const word of ["fund", "amount", "Tribute", "phone"]) expect(details).toContain(word);
    expect(await rows("payments")).toHaveLength(0);
    const noEmail = await checkout(t, formId, {
      amount: 25,
      donor: { firstName: "A", lastName: "B", email: "x" },
    });
    expect(noEmail.status).toBe(400);
  });

  it("refuses inactive and deleted forms with a clear 400", async () => {
    const inactive = await createForm(t, { ...validForms.standard(), active: false });
    const res = await checkout(t, inactive, { amount: 25, donor: donor(), paymentMethod: card() });
    expect(res.status).toBe(400);
    expect(String(res.body.error)).toMatch(/not accepting/);
    const deleted = await createForm(t, validForms.standard());
    await t.request("DELETE", `/v1/forms/${deleted}`);
    const gone = await checkout(t, deleted, { amount: 25, donor: donor(), paymentMethod: card() });
    expect(gone.status).toBe(400);
    expect(String(gone.body.error)).toMatch(/deleted/);
  });
});

describe("card-testing defences", () => {
  it("refuses submissions from another site, and a filled honeypot", async () => {
    const formId = await createForm(t, validForms.standard());
    const body = { amount: 25, donor: donor(), paymentMethod: card() };
    const foreign = await checkout(t, formId, body, { Origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    const own = await checkout(t, formId, body, { Origin: "http://forms.test" });
    expect(own.status).toBe(201);
    const bot = await checkout(t, formId, { ...body, website: "http://spam.example" });
    expect(bot.status).toBe(400);
    expect(await rows("payments")).toHaveLength(1);
  });

  it("caps declines per card fingerprint with a 429 whose Retry-After is when the card is taken again", async () => {
    await t.close();
    let clock = Date.parse("2026-11-26T08:00:00Z");
    t = await setupTestApp({
      env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0", CARD_FAILURE_LIMIT: "2" },
      now: () => clock,
    });
    const formId = await createForm(t, validForms.standard());
    const attempt = () =>
      checkout(t, formId, { amount: 25, donor: donor(), paymentMethod: card(CARDS.declined) });
    expect((await attempt()).status).toBe(402);
    clock += 3 * 3600_000;
    expect((await attempt()).status).toBe(402);
    clock += 2 * 3600_000;
    const capped = await attempt();
    expect(capped.status).toBe(429);
    expect(String(capped.body.error)).toMatch(/declined too many times/);
    // The first decline (5 h ago) leaves the 24-hour window in 19 h: then only one is counted.
    expect(capped.headers.get("retry-after")).toBe(String(19 * 3600));
    clock += 19 * 3600_000 - 1000;
    expect((await attempt()).headers.get("retry-after")).toBe("1");
    clock += 1000;
    expect((await attempt()).status).toBe(402);
  });

  it("a card over its cap of declines is refused before money moves: no payment, no charge, no stock", async () => {
    await t.close();
    t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0", CARD_FAILURE_LIMIT: "1" } });
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "Adult", price: 50, quantity: 5 }],
    });
    const buy = (number: string) =>
      checkout(t, formId, {
        tickets: [{ name: "Adult", quantity: 1 }],
        donor: donor(),
        paymentMethod: card(number),
      });
    expect((await buy(CARDS.declined)).status).toBe(402);
    const charges = () =>
      t.store.db
        .selectFrom("processor_ledger")
        .select("key")
        .where("key", "like", "charge:%")
        .execute()
        .then((r) => r.length);
    const paymentsBefore = (await rows("payments")).length;
    const chargesBefore = await charges();
    const capped = await buy(CARDS.declined);
    expect(capped.status).toBe(429);
    // Its one decline was just made: the card is taken again in 24 hours (give or take the test's second).
    expect(Number(capped.headers.get("retry-after"))).toBeGreaterThan(24 * 3600 - 60);
    expect(Number(capped.headers.get("retry-after"))).toBeLessThanOrEqual(24 * 3600);
    expect((await rows("payments")).length).toBe(paymentsBefore);
    expect(await charges()).toBe(chargesBefore);
    const form = await t.request<{ tickets: { quantitySold: number }[] }>("GET", `/v1/forms/${formId}`);
    expect(form.body.tickets[0].quantitySold).toBe(0);
    // Another card still buys the ticket.
    expect((await buy(CARDS.visa)).status).toBe(201);
  });

  it("limits attempts per address and per form", async () => {
    await t.close();
    t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "2", CHECKOUT_LIMIT_PER_FORM: "1000" } });
    const formId = await createForm(t, validForms.standard());
    const attempt = () => checkout(t, formId, { amount: 25, donor: donor(), paymentMethod: card() });
    expect((await attempt()).status).toBe(201);
    expect((await attempt()).status).toBe(201);
    const limited = await attempt();
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBeTruthy();
    await t.close();
    // Over the form's limit, only an address with a declined attempt on it is refused.
    t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "1" } });
    const other = await createForm(t, validForms.standard());
    expect((await checkout(t, other, { amount: 25, donor: donor(), paymentMethod: card() })).status).toBe(
      201,
    );
    expect((await checkout(t, other, { amount: 25, donor: donor(), paymentMethod: card() })).status).toBe(
      201,
    );
    const declined = { amount: 25, donor: donor(), paymentMethod: card(CARDS.declined) };
    expect((await checkout(t, other, declined)).status).toBe(402);
    const refused = await checkout(t, other, { amount: 25, donor: donor(), paymentMethod: card() });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

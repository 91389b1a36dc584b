import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bank, card, checkout, createForm } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, type TestOrg, validForms } from "../support/testApp.js";

/** The organization's currency: new gifts are taken in it, with its decimals (none for JPY). */
describe(`organization currency (${dialect})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" } });
  });
  afterAll(async () => {
    await t.close();
  });

  const as = (org: TestOrg) => ({ key: org.key });
  /** The test app acting with `org`'s key. */
  const actingAs = (org: TestOrg): TestApp => ({
    ...t,
    request: (method, path, opts = {}) => t.request(method, path, { ...as(org), ...opts }),
  });
  const donor = { firstName: "Ada", lastName: "Lovelace", email: "ada@example.org" };

  async function orgIn(currency: string): Promise<TestOrg> {
    const org = await t.newOrg();
    const res = await t.request("PUT", "/v1/organization", { ...as(org), body: { currency } });
    expect(res.status, res.text).toBe(200);
    return org;
  }

  it("is USD by default, changes with PUT /v1/organization, and refuses codes it does not take", async () => {
    const org = await t.newOrg();
    const got = await t.request<{ currency: string; language: string }>("GET", "/v1/organization", as(org));
    expect(got.body.currency).toBe("USD");
    expect(got.body.language).toBe("en");
    const changed = await t.request<{ currency: string }>("PUT", "/v1/organization", {
      ...as(org),
      body: { currency: "eur" },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.currency).toBe("EUR");
    for (const bad of ["XYZ", "KWD", "US", 12]) {
      const refused = await t.request<{ details: string[] }>("PUT", "/v1/organization", {
        ...as(org),
        body: { currency: bad },
      });
      expect(refused.status, String(bad)).toBe(400);
      expect(refused.body.details.join(" ")).toMatch(/^currency/);
    }
  });

  it("takes a EUR gift in EUR: the quote, the payment, the webhook event and the receipt say so", async () => {
    const org = await orgIn("EUR");
    const formId = await createForm(actingAs(org), validForms.standard());
    const quote = await t.request<{ currency: string; total: number }>("POST", `/api/forms/${formId}/quote`, {
      key: null,
      body: { amount: 1234.5, frequency: "ONE_TIME" },
    });
    expect(quote.status, quote.text).toBe(200);
    expect(quote.body).toMatchObject({ currency: "EUR", total: 1234.5 });
    const res = await checkout(t, formId, {
      amount: 1234.5,
      frequency: "ONE_TIME",
      donor,
      paymentMethod: card(),
    });
    expect(res.status, res.text).toBe(201);
    const id = (res.body.payment as { paymentID: string }).paymentID;
    const payment = await t.request<{ currency: string; amount: number }>(
      "GET",
      `/v1/payments/${id}`,
      as(org),
    );
    expect(payment.body).toMatchObject({ currency: "EUR", amount: 1234.5 });
    const event = await t.store.db
      .selectFrom("outbox_events")
      .select("data")
      .where("subject_id", "=", id)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(event.data)).toMatchObject({ currency: "EUR", amount: 1234.5 });
    const receipt = await t.store.db
      .selectFrom("email_outbox")
      .select("text_body")
      .where("payment_id", "=", id)
      .executeTakeFirstOrThrow();
    expect(receipt.text_body).toContain("€1,234.50");
    const view = await t.request<{ currency: string }>("GET", `/api/forms/${formId}`, { key: null });
    expect(view.body.currency).toBe("EUR");
  });

  it("offers a bank account only in US dollars: a EUR form's page offers cards, and its checkout refuses a bank account", async () => {
    const euro = await orgIn("EUR");
    const formId = await createForm(actingAs(euro), validForms.standard());
    const view = await t.request<{ payment: { methods: string[] } }>("GET", `/api/forms/${formId}`, {
      key: null,
    });
    expect(view.body.payment.methods).toEqual(["card"]);
    const refused = await checkout(t, formId, {
      amount: 25,
      frequency: "ONE_TIME",
      donor,
      paymentMethod: bank(),
    });
    expect(refused.status).toBe(400);
    expect(refused.body.details).toEqual([
      "paymentMethod Bank accounts pay in US dollars only, and this form takes EUR: pay by card",
    ]);
    expect(
      await t.store.db.selectFrom("payments").select("id").where("form_id", "=", formId).execute(),
    ).toEqual([]);
    const dollars = await orgIn("USD");
    const usForm = await createForm(actingAs(dollars), validForms.standard());
    const usView = await t.request<{ payment: { methods: string[] } }>("GET", `/api/forms/${usForm}`, {
      key: null,
    });
    expect(usView.body.payment.methods).toEqual(["card", "bank"]);
    const paid = await checkout(t, usForm, {
      amount: 25,
      frequency: "ONE_TIME",
      donor,
      paymentMethod: bank(),
    });
    expect(paid.status, paid.text).toBe(201);
  });

  it("names amounts in the organization's currency when the checkout refuses one", async () => {
    const org = await orgIn("EUR");
    const open = await createForm(actingAs(org), validForms.standard());
    const fixed = await createForm(actingAs(org), {
      ...validForms.standard(),
      allowCustomAmount: false,
      oneTimeAmounts: [25, 50],
    });
    for (const [formId, amount, detail] of [
      [open, 0.5, "amount must be from €1 to €1,000,000"],
      [
        fixed,
        30,
        "amount must be one of this form's ONE_TIME amounts (€25, €50); custom amounts are not allowed",
      ],
    ] as const) {
      const res = await checkout(t, formId, { amount, frequency: "ONE_TIME", donor, paymentMethod: card() });
      expect(res.status, res.text).toBe(400);
      expect(res.body).toEqual({ error: "Validation failed", details: [detail] });
    }
    const yen = await orgIn("JPY");
    const levels = await createForm(actingAs(yen), {
      ...validForms.givingLevel(),
      allowCustomAmount: false,
      givingLevels: [{ title: "Friend", amount: 1500, description: "" }],
    });
    const quote = await t.request("POST", `/api/forms/${levels}/quote`, {
      key: null,
      body: { amount: 2000, frequency: "ONE_TIME" },
    });
    expect(quote.status, quote.text).toBe(400);
    expect(quote.body).toEqual({
      error: "Validation failed",
      details: [
        "amount must be one of this form's giving levels (Friend ¥1,500); custom amounts are not allowed",
      ],
    });
  });

  it("takes JPY in whole yen: decimals are a 400 in forms, checkouts and subscription changes", async () => {
    const org = await orgIn("JPY");
    const asOrg = actingAs(org);
    const fractional = await t.request<{ details: string[] }>("POST", "/v1/forms", {
      ...as(org),
      body: { ...validForms.standard(), oneTimeAmounts: [1000, 2500.5] },
    });
    expect(fractional.status).toBe(400);
    expect(fractional.body.details).toEqual([
      "oneTimeAmounts[1] must be a whole number of JPY, which has no decimals",
    ]);
    const upsell = await t.request<{ details: string[] }>("POST", "/v1/forms", {
      ...as(org),
      body: {
        ...validForms.standard(),
        frequencies: ["ONE_TIME", "MONTHLY"],
        monthlyAmounts: [500],
        enableMonthlyUpsell: true,
        monthlyUpsellMinimum: 999.5,
      },
    });
    expect(upsell.status).toBe(400);
    expect(upsell.body.details).toEqual([
      "monthlyUpsellMinimum must be a whole number of JPY, which has no decimals",
    ]);
    const formId = await createForm(asOrg, {
      ...validForms.standard(),
      oneTimeAmounts: [1000, 3000],
      monthlyAmounts: [500],
      frequencies: ["ONE_TIME", "MONTHLY"],
      enableCoverFees: true,
    });
    const refused = await checkout(t, formId, {
      amount: 1000.5,
      frequency: "ONE_TIME",
      donor,
      paymentMethod: card(),
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toMatch(/amount must be a whole number of JPY/);

    const res = await checkout(t, formId, {
      amount: 1000,
      frequency: "MONTHLY",
      coverFees: true,
      donor,
      paymentMethod: card(),
    });
    expect(res.status, res.text).toBe(201);
    const paid = res.body.payment as { paymentID: string; subscription: { id: string } };
    const payment = await t.request<{ currency: string; amount: number; feeAmount: number }>(
      "GET",
      `/v1/payments/${paid.paymentID}`,
      as(org),
    );
    expect(payment.body.currency).toBe("JPY");
    // The covered fee is rounded up to whole yen.
    expect(Number.isInteger(payment.body.feeAmount)).toBe(true);
    expect(payment.body.amount).toBe(1000 + payment.body.feeAmount);
    const sub = `/v1/subscriptions/${paid.subscription.id}`;
    expect((await t.request("PUT", sub, { ...as(org), body: { amount: 1500.25 } })).status).toBe(400);
    const changed = await t.request<{ amount: number; currency: string }>("PUT", sub, {
      ...as(org),
      body: { amount: 1500 },
    });
    expect(changed.body).toMatchObject({ amount: 1500, currency: "JPY" });
  });

  it("does not apply (nor redeem) a promo code whose discount rounds down to ¥0 in a currency without decimals", async () => {
    const yen = await orgIn("JPY");
    const formId = await createForm(actingAs(yen), {
      ...validForms.event(),
      tickets: [{ name: "Adult", price: 50 }],
      promoCodes: [
        { code: "ONEPCT", discountType: "percentage", discountValue: 1, quantity: 1 },
        { code: "TENPCT", discountType: "percentage", discountValue: 10, quantity: 1 },
      ],
    });
    const order = (promoCode: string) => ({ tickets: [{ name: "Adult", quantity: 1 }], promoCode });
    // 1% of ¥50 is ¥0.5: nothing off in whole yen, so the code is not named as applied.
    const quote = await t.request("POST", `/api/forms/${formId}/quote`, { key: null, body: order("ONEPCT") });
    expect(quote.status, quote.text).toBe(200);
    expect(quote.body).toMatchObject({ discount: 0, total: 50, promoCode: null });
    const paid = await checkout(t, formId, { ...order("ONEPCT"), donor, paymentMethod: card() });
    expect(paid.status, paid.text).toBe(201);
    // 10% is ¥5 off: applied, as before.
    const tenth = await checkout(t, formId, { ...order("TENPCT"), donor, paymentMethod: card() });
    expect(tenth.status, tenth.text).toBe(201);
    const form = await t.request<{ promoCodes: { code: string; timesRedeemed: number }[] }>(
      "GET",
      `/v1/forms/${formId}`,
      as(yen),
    );
    // The only redemption of ONEPCT is still there for a buyer it would take something off for.
    expect(form.body.promoCodes.map((p) => [p.code, p.timesRedeemed])).toEqual([
      ["ONEPCT", 0],
      ["TENPCT", 1],
    ]);
  });

  it("refuses a currency without decimals while a live form holds amounts with decimals (409 naming them)", async () => {
    const org = await t.newOrg();
    const asOrg = actingAs(org);
    const fractional = await createForm(asOrg, {
      ...validForms.standard(),
      title: "Spring appeal",
      oneTimeAmounts: [12.5, 30],
      defaultAmount: 12.5,
    });
    const levels = await createForm(asOrg, {
      ...validForms.givingLevel(),
      title: "Circles",
      givingLevels: [{ title: "Friend", amount: 50.25, description: "" }],
    });
    await createForm(asOrg, validForms.standard());
    const deleted = await createForm(asOrg, { ...validForms.standard(), monthlyAmounts: [9.99] });
    expect((await t.request("DELETE", `/v1/forms/${deleted}`, as(org))).status).toBe(200);

    const refused = await t.request<{ error: string; details: string[] }>("PUT", "/v1/organization", {
      ...as(org),
      body: { currency: "JPY" },
    });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body.error).toMatch(/^JPY has no decimals/);
    expect(refused.body.details).toHaveLength(2);
    expect(refused.body.details).toEqual(
      expect.arrayContaining([
        `form ${fractional} ("Spring appeal"): defaultAmount, oneTimeAmounts[0]`,
        `form ${levels} ("Circles"): givingLevels[0].amount`,
      ]),
    );
    const kept = await t.request<{ currency: string }>("GET", "/v1/organization", as(org));
    expect(kept.body.currency).toBe("USD");

    // Two decimals stay possible; once the amounts are whole, so is JPY.
    const euro = await t.request("PUT", "/v1/organization", { ...as(org), body: { currency: "EUR" } });
    expect(euro.status, euro.text).toBe(200);
    for (const [id, body] of [
      [fractional, { oneTimeAmounts: [15, 30], defaultAmount: 15 }],
      [levels, { givingLevels: [{ title: "Friend", amount: 50, description: "" }] }],
    ] as const) {
      const res = await t.request("PUT", `/v1/forms/${id}`, { ...as(org), body });
      expect(res.status, res.text).toBe(200);
    }
    const yen = await t.request<{ currency: string }>("PUT", "/v1/organization", {
      ...as(org),
      body: { currency: "JPY" },
    });
    expect(yen.status, yen.text).toBe(200);
    expect(yen.body.currency).toBe("JPY");
  });

  it("holds a checkout link's prefilled amount to the currency's decimals: a 400 naming it, as the checkout would refuse it", async () => {
    const org = await orgIn("JPY");
    const formId = await createForm(actingAs(org), {
      ...validForms.standard(),
      oneTimeAmounts: [1000, 3000],
    });
    const links = `/v1/forms/${formId}/links`;
    const fractional = await t.request<{ error: string; details: string[] }>("POST", links, {
      ...as(org),
      body: { name: "l", prefill: { amount: 25.5 } },
    });
    expect(fractional.status, fractional.text).toBe(400);
    expect(fractional.body).toEqual({
      error: "Validation failed",
      details: ["prefill.amount must be a whole number of JPY, which has no decimals"],
    });
    // Listed with the body's other problems, all at once.
    const both = await t.request<{ details: string[] }>("POST", links, {
      ...as(org),
      body: { prefill: { amount: 0.01, fund: "Nope" } },
    });
    expect(both.status).toBe(400);
    expect(both.body.details).toEqual([
      "prefill.fund must be one of the form's funds: General",
      "prefill.amount must be a whole number of JPY, which has no decimals",
    ]);

    const made = await t.request<{ linkID: string; prefill: { amount: number } }>("POST", links, {
      ...as(org),
      body: { name: "l", prefill: { amount: 2500 } },
    });
    expect(made.status, made.text).toBe(201);
    expect(made.body.prefill.amount).toBe(2500);
    const replaced = await t.request<{ details: string[] }>("PUT", `${links}/${made.body.linkID}`, {
      ...as(org),
      body: { name: "l", prefill: { amount: 2500.5 } },
    });
    expect(replaced.status).toBe(400);
    expect(replaced.body.details).toEqual([
      "prefill.amount must be a whole number of JPY, which has no decimals",
    ]);
    const kept = await t.request<{ prefill: { amount: number } }>(
      "GET",
      `${links}/${made.body.linkID}`,
      as(org),
    );
    expect(kept.body.prefill.amount).toBe(2500);

    // The whole amount the link prefills is one the checkout takes.
    const page = await (await t.app.request(`/donate/${formId}?elementid=${made.body.linkID}`)).text();
    expect(page).toContain('value="2500"');
    const given = await checkout(t, formId, {
      amount: 2500,
      frequency: "ONE_TIME",
      donor,
      paymentMethod: card(),
    });
    expect(given.status, given.text).toBe(201);
  });

  it("refuses a currency without decimals while an active link prefills an amount with decimals (409 naming it)", async () => {
    const org = await t.newOrg();
    const formId = await createForm(actingAs(org), validForms.standard());
    const links = `/v1/forms/${formId}/links`;
    const link = async (name: string, amount: number) => {
      const res = await t.request<{ linkID: string }>("POST", links, {
        ...as(org),
        body: { name, prefill: { amount } },
      });
      expect(res.status, res.text).toBe(201);
      return res.body.linkID;
    };
    const spring = await link("Spring", 25.5);
    await link("Whole", 30);
    const dormant = await link("Dormant", 12.5);
    expect((await t.request("POST", `${links}/${dormant}/deactivate`, as(org))).status).toBe(200);
    // A deleted form's link opens nothing, and another organization's links are its own affair.
    const gone = await createForm(actingAs(org), validForms.standard());
    const goneLink = await t.request("POST", `/v1/forms/${gone}/links`, {
      ...as(org),
      body: { name: "Gone", prefill: { amount: 7.5 } },
    });
    expect(goneLink.status, goneLink.text).toBe(201);
    expect((await t.request("DELETE", `/v1/forms/${gone}`, as(org))).status).toBe(200);
    const other = await t.newOrg();
    const otherForm = await createForm(actingAs(other), validForms.standard());
    const otherLink = await t.request("POST", `/v1/forms/${otherForm}/links`, {
      ...as(other),
      body: { name: "Theirs", prefill: { amount: 9.5 } },
    });
    expect(otherLink.status, otherLink.text).toBe(201);

    const toYen = () =>
      t.request<{ error: string; details: string[]; currency: string }>("PUT", "/v1/organization", {
        ...as(org),
        body: { currency: "JPY" },
      });
    const refused = await toYen();
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body.error).toMatch(/^JPY has no decimals, and these forms and checkout links/);
    // The active link only: an inactive one prefills nothing.
    expect(refused.body.details).toEqual([`link ${spring} ("Spring") of form ${formId}: prefill.amount`]);
    expect((await t.request<{ currency: string }>("GET", "/v1/organization", as(org))).body.currency).toBe(
      "USD",
    );

    const whole = await t.request("PUT", `${links}/${spring}`, {
      ...as(org),
      body: { name: "Spring", prefill: { amount: 25 } },
    });
    expect(whole.status, whole.text).toBe(200);
    const yen = await toYen();
    expect(yen.status, yen.text).toBe(200);
    expect(yen.body.currency).toBe("JPY");

    // The inactive link is held to the new currency when it is activated again.
    const activate = await t.request<{ error: string; details: string[] }>(
      "POST",
      `${links}/${dormant}/activate`,
      as(org),
    );
    expect(activate.status, activate.text).toBe(409);
    expect(activate.body.details).toEqual([
      "prefill.amount must be a whole number of JPY, which has no decimals",
    ]);
    const read = await t.request<{ active: boolean }>("GET", `${links}/${dormant}`, as(org));
    expect(read.body.active).toBe(false);
    const fixed = await t.request("PUT", `${links}/${dormant}`, {
      ...as(org),
      body: { name: "Dormant", prefill: { amount: 12 } },
    });
    expect(fixed.status, fixed.text).toBe(200);
    expect((await t.request("POST", `${links}/${dormant}/activate`, as(org))).status).toBe(200);
  });

  it("opens a link saved with decimals before the rule without its amount, which the checkout would refuse", async () => {
    const org = await orgIn("JPY");
    const formId = await createForm(actingAs(org), { ...validForms.standard(), defaultAmount: 3000 });
    const made = await t.request<{ linkID: string }>("POST", `/v1/forms/${formId}/links`, {
      ...as(org),
      body: { name: "old", prefill: { amount: 2500, firstName: "Aiko" } },
    });
    expect(made.status, made.text).toBe(201);
    // As such a link was stored before links were held to the currency: 25.50.
    await t.store.db
      .updateTable("checkout_links")
      .set({ prefill: JSON.stringify({ amount: 2550, firstName: "Aiko" }) })
      .where("id", "=", made.body.linkID)
      .execute();
    const page = await (await t.app.request(`/donate/${formId}?elementid=${made.body.linkID}`)).text();
    // (Not a bare "25.5": a time in the page, such as a quote's "…:25.512Z", may hold it.)
    expect(page).not.toContain('value="25.5"');
    expect(page).not.toMatch(/"amount":25\.5[,}]/);
    expect(page).toContain('value="3000"');
    expect(page).toContain("Aiko");
  });

  it("refuses, with a 409 and nothing charged, a checkout from a page that showed another currency than the organization's now", async () => {
    const org = await orgIn("JPY");
    const formId = await createForm(actingAs(org), validForms.standard());
    const view = await t.request<{ currency: string }>("GET", `/api/forms/${formId}`, { key: null });
    expect(view.body.currency).toBe("JPY");
    // The organization changes its currency while the donor's page (showing yen) is open.
    await t.request("PUT", "/v1/organization", { ...as(org), body: { currency: "USD" } });
    const gift = { amount: 1000, frequency: "ONE_TIME", donor, paymentMethod: card() };
    const refused = await checkout(t, formId, { ...gift, currency: "JPY" });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body.error).toBe(
      "This form's amounts are now in USD, not in JPY as on your page: reload the page to see them. Nothing was charged.",
    );
    const payments = await t.request<{ payments: unknown[] }>("GET", "/v1/payments", as(org));
    expect(payments.body.payments).toHaveLength(0);
    // The page reloaded names USD: taken.
    const taken = await checkout(t, formId, { ...gift, amount: 10, currency: "USD" });
    expect(taken.status, taken.text).toBe(201);
    const malformed = await checkout(t, formId, { ...gift, currency: "usd" });
    expect(malformed.status).toBe(400);
    expect(String((malformed.body.details as string[])[0])).toMatch(/^currency must be a currency code/);
  });

  it("keeps the currency of gifts already made when the organization changes its own", async () => {
    const org = await t.newOrg();
    const asOrg = actingAs(org);
    const formId = await createForm(asOrg, validForms.standard());
    const before = await checkout(t, formId, {
      amount: 20,
      frequency: "ONE_TIME",
      donor,
      paymentMethod: card(),
    });
    await t.request("PUT", "/v1/organization", { ...as(org), body: { currency: "GBP" } });
    const after = await checkout(t, formId, {
      amount: 20,
      frequency: "ONE_TIME",
      donor,
      paymentMethod: card(),
    });
    const currencyOf = async (r: typeof before) =>
      (
        await t.request<{ currency: string }>(
          "GET",
          `/v1/payments/${(r.body.payment as { paymentID: string }).paymentID}`,
          as(org),
        )
      ).body.currency;
    expect(await currencyOf(before)).toBe("USD");
    expect(await currencyOf(after)).toBe("GBP");
  });
});

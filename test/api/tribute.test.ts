import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BillingWorker } from "../../server/billing/worker.js";
import { card, checkout, createForm } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/** Gifts in honor or in memory of someone: the form's setting, the checkout, the payment, the notice. */
describe(`dedicated gifts (${dialect})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" } });
  });
  afterAll(async () => {
    await t.close();
  });

  const donor = (email: string) => ({ firstName: "Ada", lastName: "Lovelace", email });
  const outboxTo = (to: string) =>
    t.store.db.selectFrom("email_outbox").selectAll().where("to_address", "=", to).execute();

  it("a form offers dedications only when enableTribute is on, and only on donation forms", async () => {
    const created = await t.request<{ formID: string; enableTribute: boolean }>("POST", "/v1/forms", {
      body: { ...validForms.standard(), enableTribute: true },
    });
    expect(created.status, created.text).toBe(201);
    const shown = await t.request<{ enableTribute: boolean }>("GET", `/v1/forms/${created.body.formID}`);
    expect(shown.body.enableTribute).toBe(true);
    const plain = await createForm(t, validForms.standard());
    expect(
      (await t.request<{ enableTribute: boolean }>("GET", `/v1/forms/${plain}`)).body.enableTribute,
    ).toBe(false);
    const event = await t.request<{ details: string[] }>("POST", "/v1/forms", {
      body: { ...validForms.event(), enableTribute: true },
    });
    expect(event.status).toBe(400);
    expect(JSON.stringify(event.body)).toMatch(/enableTribute/);
    const view = await t.request<{ options: { tribute: boolean } }>(
      "GET",
      `/api/forms/${created.body.formID}`,
      {
        key: null,
      },
    );
    expect(view.status, view.text).toBe(200);
    expect(view.body.options.tribute).toBe(true);
  });

  it("records the dedication on the payment, shows it in /v1/payments and the webhook event, and mails the notice", async () => {
    const formId = await createForm(t, { ...validForms.standard(), enableTribute: true });
    const tribute = {
      kind: "MEMORY",
      honoreeName: "Grace <Hopper>",
      notifyEmail: "family@example.org",
      message: "She taught us to ask forgiveness, not permission.",
    };
    const res = await checkout(t, formId, {
      amount: 40,
      frequency: "ONE_TIME",
      donor: donor("ada@example.org"),
      paymentMethod: card(),
      tribute,
    });
    expect(res.status, res.text).toBe(201);
    const paymentId = (res.body as { payment: { paymentID: string } }).payment.paymentID;

    const payment = await t.request<{ tribute: unknown }>("GET", `/v1/payments/${paymentId}`);
    expect(payment.status, payment.text).toBe(200);
    expect(payment.body.tribute).toEqual(tribute);

    const events = await t.store.db
      .selectFrom("outbox_events")
      .select("data")
      .where("subject_id", "=", paymentId)
      .where("type", "=", "donation.created")
      .execute();
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0].data).tribute).toEqual(tribute);

    const [notice] = await outboxTo("family@example.org");
    expect(notice).toBeDefined();
    expect(notice.payment_id).toBe(paymentId);
    expect(notice.subject).toBe("A gift in memory of Grace <Hopper>");
    expect(notice.text_body).toContain(
      "Ada Lovelace has made a gift to Test Org in memory of Grace <Hopper>",
    );
    expect(notice.text_body).toContain("She taught us to ask forgiveness, not permission.");
    expect(notice.text_body).not.toMatch(/\$|40/);
    expect(notice.html_body).toContain("Grace &#60;Hopper&#62;");
    expect(notice.html_body).not.toContain("<Hopper>");
    // The donor's own receipt is still there, to the donor, and names the dedication.
    const receipt = (await outboxTo("ada@example.org")).find((m) => m.payment_id === paymentId);
    expect(receipt?.text_body).toContain("Your gift is dedicated in memory of Grace <Hopper>.");
  });

  it("keeps a monthly gift's dedication on its later charges, without telling the honoree again", async () => {
    const formId = await createForm(t, {
      ...validForms.standard(),
      enableTribute: true,
      frequencies: ["ONE_TIME", "MONTHLY"],
    });
    const tribute = { kind: "HONOR", honoreeName: "Ada", notifyEmail: "ada-family@example.org" };
    const res = await checkout(t, formId, {
      amount: 15,
      frequency: "MONTHLY",
      donor: donor("monthly-tribute@example.org"),
      paymentMethod: card(),
      tribute,
    });
    expect(res.status, res.text).toBe(201);
    const subId = (res.body.payment as { subscription: { id: string } }).subscription.id;
    await t.store.db
      .updateTable("subscriptions")
      .set({ next_billing_at: new Date(Date.now() - 1000).toISOString() })
      .where("id", "=", subId)
      .execute();
    expect((await new BillingWorker({ deps: t.deps }).runOnce()).charged).toBe(1);
    const charges = await t.request<{ payments: { subscriptionId: string; tribute: unknown }[] }>(
      "GET",
      "/v1/payments?limit=100",
    );
    const ofGift = charges.body.payments.filter((p) => p.subscriptionId === subId);
    expect(ofGift).toHaveLength(2);
    for (const p of ofGift) expect(p.tribute).toEqual(tribute);
    expect(await outboxTo("ada-family@example.org")).toHaveLength(1);
  });

  it("an anonymous gift's notice does not name the donor; no address, no notice; a declined card, no notice", async () => {
    const formId = await createForm(t, { ...validForms.standard(), enableTribute: true });
    const anon = await checkout(t, formId, {
      amount: 10,
      frequency: "ONE_TIME",
      donor: donor("quiet@example.org"),
      anonymous: true,
      paymentMethod: card(),
      tribute: { kind: "HONOR", honoreeName: "Alan", notifyEmail: "alan@example.org" },
    });
    expect(anon.status, anon.text).toBe(201);
    const [notice] = await outboxTo("alan@example.org");
    expect(notice.subject).toBe("A gift in honor of Alan");
    expect(notice.text_body).toContain("A donor has made a gift");
    expect(notice.text_body).not.toContain("Ada");

    const silent = await checkout(t, formId, {
      amount: 10,
      frequency: "ONE_TIME",
      donor: donor("silent@example.org"),
      paymentMethod: card(),
      tribute: { kind: "HONOR", honoreeName: "Nobody Told" },
    });
    expect(silent.status, silent.text).toBe(201);
    const notices = await t.store.db
      .selectFrom("email_outbox")
      .select("to_address")
      .where("payment_id", "=", (silent.body as { payment: { paymentID: string } }).payment.paymentID)
      .execute();
    expect(notices.map((n) => n.to_address)).toEqual(["silent@example.org"]);

    const declined = await checkout(t, formId, {
      amount: 10,
      frequency: "ONE_TIME",
      donor: donor("declined@example.org"),
      paymentMethod: card("4000000000000002"),
      tribute: { kind: "HONOR", honoreeName: "Kept", notifyEmail: "kept@example.org" },
    });
    expect(declined.status).toBeGreaterThanOrEqual(400);
    expect(await outboxTo("kept@example.org")).toEqual([]);
  });

  it("refuses a dedication the form does not take, and a malformed one, with 400 and nothing recorded", async () => {
    const plain = await createForm(t, validForms.standard());
    const offered = await createForm(t, { ...validForms.standard(), enableTribute: true });
    const cases: [string, Record<string, unknown>, RegExp][] = [
      [plain, { kind: "HONOR", honoreeName: "Ada" }, /tribute is not taken on this form/],
      [offered, { kind: "BIRTHDAY", honoreeName: "Ada" }, /tribute\.kind/],
      [offered, { kind: "HONOR", honoreeName: "" }, /tribute\.honoreeName/],
      [offered, { kind: "HONOR", honoreeName: "Ada", notifyEmail: "not-an-address" }, /tribute\.notifyEmail/],
      [offered, { kind: "HONOR", honoreeName: "Ada", extra: 1 }, /tribute/],
    ];
    for (const [formId, tribute, message] of cases) {
      const before = await t.store.db.selectFrom("payments").select("id").execute();
      const res = await checkout(t, formId, {
        amount: 10,
        frequency: "ONE_TIME",
        donor: donor("refused@example.org"),
        paymentMethod: card(),
        tribute,
      });
      expect(res.status, JSON.stringify(tribute)).toBe(400);
      expect(res.text).toMatch(message);
      expect(await t.store.db.selectFrom("payments").select("id").execute()).toHaveLength(before.length);
    }
  });
});

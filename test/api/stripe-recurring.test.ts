import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runBillingAt } from "../../server/billing/run.js";
import { SettlementWorker } from "../../server/billing/settlement.js";
import { BillingWorker } from "../../server/billing/worker.js";
import { translator } from "../../server/i18n.js";
import type { PaymentProcessor } from "../../server/processors/port.js";
import { expectDonorCardSwap } from "../support/auditLog.js";
import { tally } from "../support/race.js";
import {
  connectOrganization,
  giveMonthly,
  type StripeTestApp,
  setupStripeApp,
} from "../support/stripeApp.js";

/**
 * Recurring gifts at Stripe after their first payment: the update page saves a new method with the
 * Payment Element in setup mode (a SetupIntent, 3-D Secure included), and a recurring charge the bank holds
 * for authentication waits, PENDING, while the donor is e-mailed a link to confirm that same payment.
 */

let s: StripeTestApp;
beforeEach(async () => {
  s = await setupStripeApp();
});
afterEach(async () => {
  await s.close();
});

/** A monthly gift paid with `card`, 3-D Secure completed when the card asks for it. */
async function subscribe(card = "4242424242424242") {
  const given = await giveMonthly(s, await s.cardToken(card, { setupFutureUsage: "off_session" }));
  const formId = given.formId;
  let res = given.res;
  if (res.status === 202) {
    const row = await s.t.store.db.selectFrom("payments").selectAll().executeTakeFirstOrThrow();
    s.emulator.completeAuthentication(row.processor_payment_id ?? "", "succeed");
    res = await s.t.request("POST", `/api/forms/${formId}/checkout/${String(res.body.paymentID)}/complete`, {
      key: null,
      body: {},
    });
  }
  if (res.status !== 201) throw new Error(`subscribe failed: ${res.status} ${res.text}`);
  return s.t.store.db.selectFrom("subscriptions").selectAll().executeTakeFirstOrThrow();
}

async function linkFor(subscriptionId: string): Promise<string> {
  const res = await s.t.request<{ url: string }>(
    "POST",
    `/v1/subscriptions/${subscriptionId}/payment-method-update-link`,
  );
  if (res.status !== 201) throw new Error(`link failed: ${res.status} ${res.text}`);
  return new URL(res.body.url).pathname;
}

function action(pagePath: string, body: Record<string, unknown>, origin = "http://forms.test") {
  return s.t.request<Record<string, unknown>>("POST", `${pagePath}/stripe`, {
    key: null,
    body,
    headers: { Origin: origin },
  });
}

describe("the update page of a gift at Stripe", () => {
  it("offers Stripe's fields (no card fields of its own) under a CSP naming Stripe's origins", async () => {
    const sub = await subscribe();
    const page = await s.t.app.request(await linkFor(sub.id));
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('id="almoner-update-boot"');
    expect(html).toContain(s.emulator.account.publishableKey);
    expect(html).not.toContain('name="cardNumber"');
    expect(page.headers.get("Content-Security-Policy")).toContain("https://js.stripe.com");
  });

  it("says its language in Content-Language and offers the others, keeping the link's token", async () => {
    const sub = await subscribe();
    const path = await linkFor(sub.id);
    const page = await s.t.app.request(`${path}?lang=es`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('<html lang="es" dir="ltr">');
    expect(page.headers.get("Content-Language")).toBe("es");
    expect(page.headers.get("Vary")).toContain("Accept-Language");
    const hrefs = [...html.matchAll(/<a href="([^"]+)" hreflang="([^"]+)"/g)];
    expect(hrefs.map(([, , lang]) => lang).sort()).toEqual(["ar", "de", "en", "es", "fr", "pt-BR"]);
    for (const [, href, lang] of hrefs) {
      const url = new URL(href, `http://forms.test${path}?lang=es`);
      expect(url.pathname).toBe(path);
      expect(url.searchParams.get("lang")).toBe(lang);
    }
    const german = await s.t.app.request(`${path}?lang=de`);
    expect(german.status).toBe(200);
    expect(german.headers.get("Content-Language")).toBe("de");
  });

  it("saves a new card from its ConfirmationToken to the donor's customer, and uses the link up", async () => {
    const sub = await subscribe();
    const path = await linkFor(sub.id);
    const res = await action(path, {
      action: "save",
      confirmationToken: await s.cardToken("5555555555554444"),
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: "saved", message: expect.stringContaining("4444") });
    const after = await s.t.store.db.selectFrom("subscriptions").selectAll().executeTakeFirstOrThrow();
    expect(after.payment_method_token).toMatch(/^pm_/);
    expect(after.payment_method_token).not.toBe(sub.payment_method_token);
    expect(after.last4).toBe("4444");
    const pm = await s.stripe.paymentMethods.retrieve(after.payment_method_token);
    expect(pm.customer).toBe(sub.processor_customer);
    const again = await action(path, { action: "save", confirmationToken: await s.cardToken() });
    expect(again.status).toBe(410);

    // The donor's replacement is in the audit log, with the summaries of both methods and no token.
    await expectDonorCardSwap(s.t, sub.id, sub.email, [after.payment_method_token, sub.payment_method_token]);
  });

  it("saves a new card when the donor's Stripe customer is gone (deleted), to a new customer the gift then charges", async () => {
    const sub = await subscribe();
    const gone = sub.processor_customer ?? "";
    await s.stripe.customers.del(gone);
    // The renewal fails for it, and is retried: the donor is sent to replace the card meanwhile.
    await runBillingAt(s.t.store, s.t.config, Date.parse(sub.next_billing_at) + 1000);
    const failed = await s.t.store.db.selectFrom("subscriptions").selectAll().executeTakeFirstOrThrow();
    expect(failed).toMatchObject({ status: "ACTIVE", failed_attempts: 1 });

    const res = await action(await linkFor(sub.id), {
      action: "save",
      confirmationToken: await s.cardToken("5555555555554444"),
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: "saved" });
    const after = await s.t.store.db.selectFrom("subscriptions").selectAll().executeTakeFirstOrThrow();
    expect(after.processor_customer).toMatch(/^cus_/);
    expect(after.processor_customer).not.toBe(gone);
    const pm = await s.stripe.paymentMethods.retrieve(after.payment_method_token);
    expect(pm.customer).toBe(after.processor_customer);
    expect((await s.stripe.customers.retrieve(after.processor_customer ?? "")).deleted).not.toBe(true);

    // The retry charges the new card.
    const retry = await runBillingAt(s.t.store, s.t.config, Date.parse(after.retry_at ?? "") + 1000);
    expect(retry.errors).toEqual([]);
    expect(
      await s.t.store.db.selectFrom("subscriptions").selectAll().executeTakeFirstOrThrow(),
    ).toMatchObject({
      status: "ACTIVE",
      failed_attempts: 0,
      cycle: 1,
    });
  });

  it("refuses a card on a link that takes bank accounts only, keeps the gift's method and the link", async () => {
    const sub = await subscribe();
    const res = await s.t.request<{ url: string }>(
      "POST",
      `/v1/subscriptions/${sub.id}/payment-method-update-link`,
      { body: { allowedPaymentMethods: ["PAY_BY_BANK"] } },
    );
    expect(res.status, res.text).toBe(201);
    const path = new URL(res.body.url).pathname;
    const card = await action(path, {
      action: "save",
      confirmationToken: await s.cardToken("5555555555554444"),
    });
    expect(card.status, card.text).toBe(400);
    expect(card.body.error).toBe("This link does not take this kind of payment method. Please use another.");
    const kept = await s.t.store.db.selectFrom("subscriptions").selectAll().executeTakeFirstOrThrow();
    expect([kept.payment_method_token, kept.last4]).toEqual([sub.payment_method_token, sub.last4]);
    const bank = await action(path, { action: "save", confirmationToken: await s.bankToken() });
    expect(bank.status, bank.text).toBe(200);
    expect(bank.body).toMatchObject({ status: "saved" });
    const after = await s.t.store.db.selectFrom("subscriptions").selectAll().executeTakeFirstOrThrow();
    expect(after.payment_method_type).toBe("bank");
  });

  it("gives Stripe's fields the gift's currency and only the kinds of method its link takes", async () => {
    const sub = await subscribe();
    // A gift in euros (made so here: the page must read the gift's currency, not assume dollars).
    await s.t.store.db
      .updateTable("subscriptions")
      .set({ currency: "EUR" })
      .where("id", "=", sub.id)
      .execute();
    const bootOf = async (allowedPaymentMethods?: string[]) => {
      const res = await s.t.request<{ url: string }>(
        "POST",
        `/v1/subscriptions/${sub.id}/payment-method-update-link`,
        { body: allowedPaymentMethods ? { allowedPaymentMethods } : {} },
      );
      expect(res.status, res.text).toBe(201);
      const html = await (await s.t.app.request(new URL(res.body.url).pathname)).text();
      return JSON.parse(
        html.match(/<script type="application\/json" id="almoner-update-boot">(.*?)<\/script>/s)?.[1] ?? "{}",
      ) as { currency?: string; methodTypes?: string[] };
    };
    expect(await bootOf(["CARD"])).toMatchObject({ currency: "eur", methodTypes: ["card", "link"] });
    expect(await bootOf(["PAY_BY_BANK"])).toMatchObject({ methodTypes: ["us_bank_account"] });
    expect((await bootOf())?.methodTypes?.sort()).toEqual(["card", "link", "us_bank_account"]);
  });

  it("saves a card that asks for 3-D Secure once the bank confirms it", async () => {
    const sub = await subscribe();
    const path = await linkFor(sub.id);
    const first = await action(path, {
      action: "save",
      confirmationToken: await s.cardToken("4000002760003184"),
    });
    expect(first.body).toMatchObject({
      status: "requires_action",
      setupIntent: expect.stringMatching(/^seti_/),
    });
    s.emulator.completeAuthentication(String(first.body.setupIntent), "succeed");
    const done = await action(path, { action: "setup-completed", setupIntent: first.body.setupIntent });
    expect(done.body).toMatchObject({ status: "saved" });
  });

  it("takes back only a set-up its own page made: another link's (another donor's card) is refused", async () => {
    const sub = await subscribe();
    const mine = await linkFor(sub.id);
    const theirs = await linkFor(sub.id);
    const started = await action(theirs, {
      action: "save",
      confirmationToken: await s.cardToken("4000002760003184"),
    });
    expect(started.body).toMatchObject({
      status: "requires_action",
      setupIntent: expect.stringMatching(/^seti_/),
    });
    s.emulator.completeAuthentication(String(started.body.setupIntent), "succeed");
    const taken = await action(mine, { action: "setup-completed", setupIntent: started.body.setupIntent });
    expect(taken.status, taken.text).toBe(400);
    expect(taken.body.error).toBe("setupIntent is not a set-up of this page");
    const row = await s.t.store.db.selectFrom("subscriptions").selectAll().executeTakeFirstOrThrow();
    expect(row.payment_method_token).toBe(sub.payment_method_token);
    // Its own page takes it.
    const own = await action(theirs, { action: "setup-completed", setupIntent: started.body.setupIntent });
    expect(own.body).toMatchObject({ status: "saved" });
  });

  it("says a refused card in the page's language: its calls carry the page's ?lang=", async () => {
    const sub = await subscribe();
    const path = await linkFor(sub.id);
    const html = await (await s.t.app.request(`${path}?lang=fr`)).text();
    const boot = JSON.parse(
      html.match(/<script type="application\/json" id="almoner-update-boot">(.*?)<\/script>/s)?.[1] ?? "{}",
    );
    expect(boot.actionUrl).toBe(`${path}/stripe?lang=fr`);
    const res = await s.t.request<Record<string, unknown>>("POST", boot.actionUrl, {
      key: null,
      body: { action: "save", confirmationToken: await s.cardToken("4000000000000002") },
      headers: { Origin: "http://forms.test" },
    });
    expect(res.status, res.text).toBe(402);
    expect(res.body.error).toBe(translator("fr")("answer.decline.card"));
  });

  it("takes at most five refused cards from saves sent all at once, then ends the link", async () => {
    const sub = await subscribe();
    const path = await linkFor(sub.id);
    const tokens = await Promise.all(Array.from({ length: 20 }, () => s.cardToken("4000000000000002")));
    const answers = await Promise.all(
      tokens.map((token) => action(path, { action: "save", confirmationToken: token })),
    );
    const statuses = tally(answers.map((a) => a.status));
    expect(statuses, JSON.stringify(statuses)).toEqual({ 402: 4, 410: 16 });
    const row = await s.t.store.db
      .selectFrom("payment_method_update_links")
      .select("failed_attempts")
      .executeTakeFirstOrThrow();
    expect(Number(row.failed_attempts)).toBe(5);
  });

  it("says a saved card, and a link used up, in the page's language", async () => {
    const sub = await subscribe();
    const path = await linkFor(sub.id);
    const save = () =>
      s.t.request<Record<string, unknown>>("POST", `${path}/stripe?lang=de`, {
        key: null,
        body: { action: "save", confirmationToken: "" },
        headers: { Origin: "http://forms.test" },
      });
    const token = await s.cardToken("4242424242424242");
    const saved = await s.t.request<Record<string, unknown>>("POST", `${path}/stripe?lang=de`, {
      key: null,
      body: { action: "save", confirmationToken: token },
      headers: { Origin: "http://forms.test" },
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body.message).toBe(translator("de")("update.saved.card", { last4: "4242" }));
    expect(saved.body.message).toContain("4242");
    expect(saved.body.message).not.toMatch(/Thank you/);
    const noHeld = await s.t.request<Record<string, unknown>>("POST", `${path}/stripe?lang=es`, {
      key: null,
      body: { action: "confirm-payment" },
      headers: { Origin: "http://forms.test" },
    });
    // The link is used: the page answers in the donor's language either way, never in English.
    expect([409, 410]).toContain(noHeld.status);
    expect(String(noHeld.body.error)).not.toMatch(/^(There|This) /);
    // Saving again on the used link is refused as a used link, in German, before the empty token is read.
    const again = await save();
    expect(again.status, again.text).toBe(410);
    expect(again.body.error).toBe(translator("de")("update.ended.heading"));
  });

  it("refuses calls from another site", async () => {
    const sub = await subscribe();
    const res = await action(
      await linkFor(sub.id),
      { action: "save", confirmationToken: "ctoken_x" },
      "https://evil.example",
    );
    expect(res.status).toBe(403);
  });
});

describe("a recurring charge the bank holds for authentication", () => {
  /** A monthly gift on a card whose bank asks for 3-D Secure, billed once: its held charge and the mailed link. */
  async function heldCharge() {
    const sub = await subscribe("4000002760003184");
    const run = await runBillingAt(s.t.store, s.t.config, Date.parse(sub.next_billing_at) + 1000);
    const held = await s.t.store.db
      .selectFrom("payments")
      .selectAll()
      .where("charge_key", "like", "sub:%")
      .executeTakeFirstOrThrow();
    const mail = await s.t.store.db
      .selectFrom("email_outbox")
      .selectAll()
      .where("subject", "like", "Please confirm%")
      .executeTakeFirstOrThrow();
    const path = new URL(/https?:\/\/\S+update-payment-method\/\S+/.exec(mail.text_body)?.[0] ?? "").pathname;
    return { run, held, mail, path };
  }

  it("has no receipt to send again while it waits for the donor (409), and queues none", async () => {
    const { held } = await heldCharge();
    const resent = await s.t.request("POST", `/v1/payments/${held.id}/receipt`);
    expect(resent.status).toBe(409);
    expect(resent.body).toEqual({
      error: "This payment is waiting for the donor's confirmation: it has no receipt yet",
    });
    const queued = await s.t.store.db
      .selectFrom("email_outbox")
      .select("subject")
      .where("payment_id", "=", held.id)
      .execute();
    expect(queued.filter((q) => q.subject.startsWith("Thank you"))).toEqual([]);
  });

  it("stays PENDING, mails the donor a link, and is COMPLETED once they confirm it on the page", async () => {
    const { run, held, mail, path } = await heldCharge();
    expect(run.errors).toEqual([]);
    expect(held).toMatchObject({ status: "PENDING", failure_code: "authentication_required" });
    expect(mail.to_address).toBe("sam@example.org");

    // The settlement worker leaves it alone while the donor may still confirm it.
    await new SettlementWorker({ deps: s.t.deps, slowRepollMs: 1 }).runOnce();
    expect(
      (
        await s.t.store.db
          .selectFrom("payments")
          .select("status")
          .where("id", "=", held.id)
          .executeTakeFirstOrThrow()
      ).status,
    ).toBe("PENDING");

    const page = await (await s.t.app.request(path)).text();
    expect(page).toContain("Confirm your recurring gift");
    // As on Stripe, the declined method is no longer on the PaymentIntent, only in its last error...
    const declined = await s.stripe.paymentIntents.retrieve(held.processor_payment_id ?? "");
    expect(declined.payment_method).toBeNull();
    const methodId = declined.last_payment_error?.payment_method?.id;
    expect(methodId).toMatch(/^pm_/);
    const asked = await action(path, { action: "confirm-payment" });
    expect(asked.body).toMatchObject({ status: "requires_action", clientSecret: expect.any(String) });
    // ...and the page's confirmation passed it again (a confirm without it is refused).
    const confirming = await s.stripe.paymentIntents.retrieve(held.processor_payment_id ?? "");
    expect(confirming).toMatchObject({ status: "requires_action", payment_method: methodId });
    s.emulator.completeAuthentication(held.processor_payment_id ?? "", "succeed");
    const paid = await action(path, { action: "payment-completed" });
    expect(paid.body).toMatchObject({ status: "paid" });
    const row = await s.t.store.db
      .selectFrom("payments")
      .selectAll()
      .where("id", "=", held.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe("COMPLETED");
    const receipts = await s.t.store.db
      .selectFrom("email_outbox")
      .select("payment_id")
      .where("payment_id", "=", held.id)
      .execute();
    expect(receipts).toHaveLength(1);
  });

  it("is FAILED by Stripe's second payment_failed when the donor fails the bank's challenge", async () => {
    const { held, path } = await heldCharge();
    // The off-session decline's payment_intent.payment_failed: still waiting for the donor.
    const first = await s.deliverEvents();
    expect(first.filter((e) => e.type === "payment_intent.payment_failed")).toHaveLength(1);
    const status = async () =>
      (
        await s.t.store.db
          .selectFrom("payments")
          .select("status")
          .where("id", "=", held.id)
          .executeTakeFirstOrThrow()
      ).status;
    expect(await status()).toBe("PENDING");
    await action(path, { action: "confirm-payment" });
    // The page's confirmation: payment_intent.requires_action, the donor still at the bank's challenge.
    await s.deliverEvents();
    expect(await status()).toBe("PENDING");
    s.emulator.completeAuthentication(held.processor_payment_id ?? "", "fail");
    // A second payment_intent.payment_failed for the same PaymentIntent is news, not a repeat.
    const second = await s.deliverEvents();
    expect(second.map((e) => e.type)).toEqual(["payment_intent.payment_failed"]);
    expect(second.find((e) => e.type === "payment_intent.payment_failed")?.body).toMatchObject({
      result: "applied",
    });
    expect(await status()).toBe("FAILED");
  });

  it("answers the page as paid when Stripe's webhook recorded the confirmation first", async () => {
    const { held, path } = await heldCharge();
    await action(path, { action: "confirm-payment" });
    s.emulator.completeAuthentication(held.processor_payment_id ?? "", "succeed");
    await s.deliverEvents();
    const row = await s.t.store.db
      .selectFrom("payments")
      .select("status")
      .where("id", "=", held.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe("COMPLETED");
    const paid = await action(path, { action: "payment-completed" });
    expect(paid.body).toMatchObject({ status: "paid", message: expect.stringContaining("went through") });
  });
});

describe("a recurring gift at Stripe once the organization has disconnected Stripe", () => {
  it("waits, due and untouched (no charge left in flight), while Stripe is disconnected; is charged once it is back", async () => {
    const sub = await subscribe();
    const dueAt = Date.parse(sub.next_billing_at) + 1000;
    expect((await s.t.request("DELETE", "/v1/organization/payments/stripe")).status).toBe(200);
    for (let pass = 0; pass < 2; pass++) {
      const run = await runBillingAt(s.t.store, s.t.config, dueAt + pass * 60_000);
      expect(run.errors).toHaveLength(1);
      expect(run.errors[0]).toContain("no longer connected");
    }
    const charges = () =>
      s.t.store.db.selectFrom("payments").selectAll().where("charge_key", "like", "sub:%").execute();
    expect(await charges()).toEqual([]);
    const waiting = await s.t.store.db
      .selectFrom("subscriptions")
      .selectAll()
      .where("id", "=", sub.id)
      .executeTakeFirstOrThrow();
    // Its claim was kept (so that other gifts come first in the next passes), by a run that has ended.
    expect(waiting).toMatchObject({ status: "ACTIVE", next_billing_at: sub.next_billing_at });
    // Nothing in flight holds the gift: the organization may still change it.
    const changed = await s.t.request("PUT", `/v1/subscriptions/${sub.id}`, { body: { amount: 30 } });
    expect(changed.status, changed.text).toBe(200);

    await connectOrganization(s.t, s.emulator);
    const run = await runBillingAt(s.t.store, s.t.config, dueAt + 120_000);
    expect(run.errors).toEqual([]);
    expect((await charges()).map((p) => [p.status, Number(p.amount_cents)])).toEqual([["COMPLETED", 3000]]);
  });
});

describe("a renewal left in doubt at Stripe while the donor saves a new card", () => {
  const renewals = () =>
    s.t.store.db
      .selectFrom("payments")
      .selectAll()
      .where("charge_key", "like", "sub:%")
      .orderBy("charge_key")
      .execute();

  /**
   * A monthly gift whose renewal Stripe made (its PaymentIntent stored) and could not confirm (out of
   * reach): left PROCESSING by the pass at `dueAt`.
   */
  async function confirmationOutOfReach() {
    const sub = await subscribe();
    const dueAt = Date.parse(sub.next_billing_at) + 1000;
    s.emulator.faults.add({ method: "POST", path: "/v1/payment_intents/", kind: "500", times: 3 });
    const first = await runBillingAt(s.t.store, s.t.config, dueAt);
    expect(first.errors.length).toBeGreaterThan(0);
    const [inDoubt] = await renewals();
    expect(inDoubt).toMatchObject({ status: "PROCESSING" });
    return { sub, dueAt, inDoubt, firstIntent: inDoubt.processor_payment_id ?? "" };
  }

  /** Stripe's PaymentIntents of one payment of the gift's customer. */
  async function intentsOf(sub: { processor_customer: string | null }, paymentId: string) {
    const listed = await s.stripe.paymentIntents.list({ customer: sub.processor_customer ?? "" });
    return listed.data.filter((pi) => pi.metadata.almoner_payment === paymentId);
  }

  const gift = () => s.t.store.db.selectFrom("subscriptions").selectAll().executeTakeFirstOrThrow();

  /** Saves a Mastercard on the gift through its update page, as the donor would. */
  async function saveNewCard(subscriptionId: string): Promise<string> {
    const res = await action(await linkFor(subscriptionId), {
      action: "save",
      confirmationToken: await s.cardToken("5555555555554444"),
    });
    expect(res.status, res.text).toBe(200);
    const after = await gift();
    expect(after.last4).toBe("4444");
    return after.payment_method_token;
  }

  it("made but never confirmed (confirmation out of reach): the next pass cancels it and charges the new card once", async () => {
    // Stripe makes the PaymentIntent, then cannot be reached to confirm it (nothing is applied).
    const { sub, dueAt, inDoubt, firstIntent } = await confirmationOutOfReach();
    expect((await s.stripe.paymentIntents.retrieve(firstIntent)).status).toBe("requires_confirmation");

    const newCard = await saveNewCard(sub.id);
    const next = await runBillingAt(s.t.store, s.t.config, dueAt + 60_000);
    expect(next.errors).toEqual([]);
    const [renewal] = await renewals();
    expect(renewal).toMatchObject({ id: inDoubt.id, status: "COMPLETED", last4: "4444" });
    expect(renewal.processor_payment_id).not.toBe(firstIntent);
    const charged = await s.stripe.paymentIntents.retrieve(renewal.processor_payment_id ?? "");
    expect(charged).toMatchObject({
      status: "succeeded",
      payment_method: newCard,
      amount: Number(renewal.amount_cents),
    });
    // The first PaymentIntent, made with the card replaced since, is cancelled: it can never move money.
    expect((await s.stripe.paymentIntents.retrieve(firstIntent)).status).toBe("canceled");
    const succeeded = (
      await s.stripe.paymentIntents.list({ customer: sub.processor_customer ?? "" })
    ).data.filter((pi) => pi.status === "succeeded");
    // The first gift and this renewal: one charge each.
    expect(succeeded).toHaveLength(2);
    expect(await gift()).toMatchObject({
      status: "ACTIVE",
      cycle: 1,
      failed_attempts: 0,
    });
  });

  it("made again with the new card and left in doubt again: the next pass cancels that try too and charges once", async () => {
    const { sub, dueAt, inDoubt, firstIntent } = await confirmationOutOfReach();
    const newCard = await saveNewCard(sub.id);

    // The try with the new card is made (after the first one is cancelled), and cannot be confirmed either.
    s.emulator.faults.add({
      method: "POST",
      path: "/v1/payment_intents/pi_",
      kind: "500",
      skip: 1,
      times: 3,
    });
    const second = await runBillingAt(s.t.store, s.t.config, dueAt + 60_000);
    expect(second.errors.length).toBeGreaterThan(0);
    const [again] = await renewals();
    expect(again.status).toBe("PROCESSING");
    const secondIntent = again.processor_payment_id ?? "";
    expect(secondIntent).not.toBe(firstIntent);
    expect(await s.stripe.paymentIntents.retrieve(secondIntent)).toMatchObject({
      status: "requires_confirmation",
      payment_method: newCard,
    });

    const third = await runBillingAt(s.t.store, s.t.config, dueAt + 120_000);
    expect(third.errors).toEqual([]);
    const [renewal] = await renewals();
    expect(renewal.status).toBe("COMPLETED");
    const intents = await intentsOf(sub, inDoubt.id);
    // Three tries, the first two cancelled: one charge, the one the payment names.
    expect(intents.map((pi) => pi.status).sort()).toEqual(["canceled", "canceled", "succeeded"]);
    expect(intents.find((pi) => pi.status === "succeeded")?.id).toBe(renewal.processor_payment_id);
  });

  it("the first try's cancellation, told by Stripe's webhook while the new try is out of reach, settles nothing", async () => {
    const { sub, dueAt, inDoubt, firstIntent } = await confirmationOutOfReach();
    await saveNewCard(sub.id);
    await s.deliverEvents();

    // The old key is refused and the first try cancelled; the new try cannot reach Stripe.
    s.emulator.faults.add({ method: "POST", path: "/v1/payment_intents", kind: "500", skip: 2, times: 3 });
    const second = await runBillingAt(s.t.store, s.t.config, dueAt + 60_000);
    expect(second.errors.length).toBeGreaterThan(0);
    expect((await s.stripe.paymentIntents.retrieve(firstIntent)).status).toBe("canceled");
    const delivered = await s.deliverEvents();
    expect(delivered.map((d) => d.type)).toContain("payment_intent.canceled");
    // Not a failed charge of the donor's: the renewal is still to be made, the gift not retrying.
    expect((await renewals()).map((p) => p.status)).toEqual(["PROCESSING"]);
    expect(await gift()).toMatchObject({
      failed_attempts: 0,
      cycle: 0,
    });

    const third = await runBillingAt(s.t.store, s.t.config, dueAt + 120_000);
    expect(third.errors).toEqual([]);
    expect((await renewals()).map((p) => p.status)).toEqual(["COMPLETED"]);
    const succeeded = (await intentsOf(sub, inDoubt.id)).filter((pi) => pi.status === "succeeded");
    expect(succeeded).toHaveLength(1);
  });

  it("the first try's cancel answered late (its answers lost): asked again, the renewal is made once and Stripe's news of the cancel settles nothing", async () => {
    const { sub, dueAt, firstIntent } = await confirmationOutOfReach();
    await saveNewCard(sub.id);
    await s.deliverEvents();

    // Stripe cancels the first try each time it is asked, and every answer is lost on the way back.
    s.emulator.faults.add({ method: "POST", path: "/v1/payment_intents/pi_", kind: "drop", times: 3 });
    const second = await runBillingAt(s.t.store, s.t.config, dueAt + 60_000);
    expect(second.errors).toEqual([]);
    expect((await s.stripe.paymentIntents.retrieve(firstIntent)).status).toBe("canceled");
    expect((await s.deliverEvents()).map((d) => d.type)).toContain("payment_intent.canceled");
    expect((await renewals()).map((p) => [p.status, p.last4])).toEqual([["COMPLETED", "4444"]]);
    expect(await gift()).toMatchObject({
      failed_attempts: 0,
      cycle: 1,
    });
  });

  it("the first try confirmed meanwhile by another process (its claim lapsed): recorded as made, the new card never charged", async () => {
    const { sub, dueAt, inDoubt, firstIntent } = await confirmationOutOfReach();
    const newCard = await saveNewCard(sub.id);

    // The process that made the first try confirms it just before this pass would cancel it.
    const processors = Object.create(s.t.deps.processors) as typeof s.t.deps.processors;
    processors.named = (name, org) => {
      const real = s.t.deps.processors.named(name, org);
      const racing: PaymentProcessor = Object.create(real);
      racing.cancelPayment = async (id) => {
        await s.stripe.paymentIntents.confirm(id, { off_session: true });
        return (await real.cancelPayment?.(id)) ?? false;
      };
      return racing;
    };
    const errors: unknown[] = [];
    await new BillingWorker({
      deps: { ...s.t.deps, processors, now: () => dueAt + 60_000 },
      onError: (err) => errors.push(err),
    }).runOnce(dueAt + 60_000);
    expect(errors).toEqual([]);

    const [renewal] = await renewals();
    // The money the first try took is the renewal, with the card it was taken from.
    expect(renewal).toMatchObject({ status: "COMPLETED", processor_payment_id: firstIntent, last4: "4242" });
    const intents = await intentsOf(sub, inDoubt.id);
    expect(intents.filter((pi) => pi.status === "succeeded").map((pi) => pi.id)).toEqual([firstIntent]);
    expect(intents.some((pi) => pi.payment_method === newCard)).toBe(false);
  });

  it("made with its answer lost (its id never stored): the next pass charges the new card once", async () => {
    const sub = await subscribe();
    const dueAt = Date.parse(sub.next_billing_at) + 1000;
    // Stripe makes the PaymentIntent each time it is asked, and every answer is lost on the way back.
    s.emulator.faults.add({ method: "POST", path: "/v1/payment_intents", kind: "drop", times: 3 });
    const first = await runBillingAt(s.t.store, s.t.config, dueAt);
    expect(first.errors.length).toBeGreaterThan(0);
    const [inDoubt] = await renewals();
    expect(inDoubt).toMatchObject({ status: "PROCESSING", processor_payment_id: null });

    const newCard = await saveNewCard(sub.id);
    const next = await runBillingAt(s.t.store, s.t.config, dueAt + 60_000);
    expect(next.errors).toEqual([]);
    const [renewal] = await renewals();
    expect(renewal).toMatchObject({ id: inDoubt.id, status: "COMPLETED", last4: "4444" });
    const renewalIntents = await intentsOf(sub, inDoubt.id);
    // The lost one was never confirmed; the new card's is the one charge of this renewal.
    expect(renewalIntents.map((pi) => pi.status).sort()).toEqual(["requires_confirmation", "succeeded"]);
    expect(renewalIntents.find((pi) => pi.status === "succeeded")).toMatchObject({
      id: renewal.processor_payment_id,
      payment_method: newCard,
    });
  });
});

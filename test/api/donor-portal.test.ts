import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LINK_ANSWER_FLOOR_MS } from "../../server/api/manage.js";
import { translator } from "../../server/i18n.js";
import { recordDispute } from "../../server/payments/transition.js";
import { auditTrail } from "../../server/store/auditLog.js";
import { escapeHtml } from "../../shared/html.js";
import { eventsOf, JAN_31, paymentsOf, recurringForm, subscription, worker } from "../billing/support.js";
import { card, checkout, createForm } from "../support/checkout.js";
import { pdfText } from "../support/pdfText.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * The donor portal: a donor asks for a link by e-mail, exchanges its token for a session, and with the
 * session sees, changes and downloads only their own gifts.
 */

const ORIGIN = "http://forms.test";
let clock = JAN_31;
let t: TestApp;

beforeEach(async () => {
  clock = JAN_31;
  t = await setupTestApp({
    now: () => clock,
    env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" },
  });
});
afterEach(async () => {
  await t.close();
});

const person = (email: string) => ({ firstName: "Ada", lastName: "Lovelace", email });

async function give(formId: string, email: string, body: Record<string, unknown> = {}) {
  const res = await checkout(t, formId, {
    amount: 25,
    frequency: "ONE_TIME",
    donor: person(email),
    paymentMethod: card(),
    ...body,
  });
  expect(res.status, res.text).toBe(201);
  return res.body.payment as { paymentID: string; subscription: { id: string } | null };
}

const base = () => `/api/manage/${t.org.id}`;

function linkRequest(email: string, headers: Record<string, string> = {}) {
  return t.request<{ message: string }>("POST", `${base()}/link`, { key: null, body: { email }, headers });
}

/** The token of the latest sign-in link mailed to `email`. */
async function mailedToken(email: string): Promise<string | undefined> {
  const rows = await t.store.db
    .selectFrom("email_outbox")
    .selectAll()
    .where("to_address", "=", email)
    .orderBy("id", "desc")
    .execute();
  const link = rows.find((r) => r.subject.startsWith("Your link"));
  return link?.text_body.match(/\/manage\/org_[0-9a-z]+\?token=([A-Za-z0-9_-]+)/)?.[1];
}

async function signIn(email: string): Promise<string> {
  expect((await linkRequest(email)).status).toBe(202);
  const token = await mailedToken(email);
  expect(token).toBeDefined();
  const res = await t.request("POST", `${base()}/session`, { key: null, body: { token } });
  expect(res.status, res.text).toBe(200);
  const cookie = res.headers.get("Set-Cookie") ?? "";
  return cookie.split(";")[0];
}

const asDonor = (cookie: string, extra: Record<string, string> = {}) => ({
  key: null,
  headers: { Cookie: cookie, Origin: ORIGIN, ...extra },
});

describe(`donor portal (${dialect})`, () => {
  it("answers 202 for any address and mails a single-use link only to an address that has given", async () => {
    const formId = await createForm(t, validForms.standard());
    await give(formId, "Known@Example.org");
    const unknown = await linkRequest("stranger@example.org");
    const known = await linkRequest("known@example.org");
    expect(unknown.status).toBe(202);
    expect(known.status).toBe(202);
    expect(known.body).toEqual(unknown.body);
    expect(await mailedToken("stranger@example.org")).toBeUndefined();
    const token = await mailedToken("known@example.org");
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const first = await t.request("POST", `${base()}/session`, { key: null, body: { token } });
    expect(first.status, first.text).toBe(200);
    const cookie = first.headers.get("Set-Cookie") ?? "";
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    expect(cookie).toMatch(/Max-Age=86400/);
    const again = await t.request("POST", `${base()}/session`, { key: null, body: { token } });
    expect(again.status).toBe(401);
  });

  it("mails the link for a look-alike address (the Kelvin sign for K) to the donor's own address", async () => {
    const formId = await createForm(t, validForms.standard());
    await give(formId, "kate@example.org");
    expect((await linkRequest("\u212Aate@example.org")).status).toBe(202);
    expect(await mailedToken("\u212Aate@example.org")).toBeUndefined();
    expect(await mailedToken("Kate@example.org")).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("takes an accent typed as a letter of its own (NFD) as the same address as the composed one (NFC)", async () => {
    const formId = await createForm(t, validForms.standard());
    const decomposed = "Jose\u0301@example.org";
    const gift = await give(formId, decomposed);
    const row = await t.store.db
      .selectFrom("payments")
      .select("email")
      .where("id", "=", gift.paymentID)
      .executeTakeFirstOrThrow();
    expect(row.email).toBe("Jos\u00e9@example.org");
    // Asked for with the composed form (and the other way round), the same donor's link is mailed.
    const cookie = await signIn("jos\u00e9@example.org");
    const gifts = await t.request<{ payments: { paymentID: string }[] }>(
      "GET",
      `${base()}/gifts`,
      asDonor(cookie),
    );
    expect(gifts.body.payments.map((p) => p.paymentID)).toEqual([gift.paymentID]);
    expect((await linkRequest("jose\u0301@EXAMPLE.org")).status).toBe(202);
    expect(await mailedToken("jos\u00e9@EXAMPLE.org")).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("refuses an expired link and an expired session with 401", async () => {
    const formId = await createForm(t, validForms.standard());
    await give(formId, "late@example.org");
    await linkRequest("late@example.org");
    const token = await mailedToken("late@example.org");
    clock += 31 * 60_000;
    const late = await t.request("POST", `${base()}/session`, { key: null, body: { token } });
    expect(late.status).toBe(401);

    const cookie = await signIn("late@example.org");
    expect((await t.request("GET", `${base()}/gifts`, asDonor(cookie))).status).toBe(200);
    clock += 24 * 3_600_000 + 1000;
    expect((await t.request("GET", `${base()}/gifts`, asDonor(cookie))).status).toBe(401);
  });

  it("previews whose a link is without using it up: the address, then the sign-in still works once", async () => {
    const formId = await createForm(t, validForms.standard());
    await give(formId, "Grace@Example.org");
    await linkRequest("grace@example.org");
    const token = await mailedToken("grace@example.org");
    const preview = () =>
      t.request<{ email: string; expiresAt: string }>("POST", `${base()}/link/preview`, {
        key: null,
        body: { token },
      });
    const first = await preview();
    expect(first.status, first.text).toBe(200);
    expect(first.body.email).toBe("grace@example.org");
    expect(Date.parse(first.body.expiresAt)).toBe(clock + 30 * 60_000);
    expect(first.headers.get("Cache-Control")).toBe("no-store");
    expect(first.headers.get("Set-Cookie")).toBeNull();
    // Looking twice uses nothing up: the link still signs in, once.
    expect((await preview()).status).toBe(200);
    const session = await t.request("POST", `${base()}/session`, { key: null, body: { token } });
    expect(session.status, session.text).toBe(200);
    // A used link shows no address any more.
    const used = await preview();
    expect(used.status).toBe(401);
    expect(used.body).toMatchObject({ error: expect.stringMatching(/used or has expired/) });
  });

  it("shows no address for an unknown, expired or other organization's link, nor from another site", async () => {
    const formId = await createForm(t, validForms.standard());
    await give(formId, "hedy@example.org");
    await linkRequest("hedy@example.org");
    const token = await mailedToken("hedy@example.org");
    const at = (org: string, body: unknown, headers: Record<string, string> = {}) =>
      t.request("POST", `/api/manage/${org}/link/preview`, { key: null, body, headers });
    const elsewhere = await t.newOrg();
    expect((await at(elsewhere.id, { token })).status).toBe(401);
    expect((await at(t.org.id, { token: "a".repeat(43) })).status).toBe(401);
    expect((await at(t.org.id, { token: "not a token" })).status).toBe(401);
    expect((await at(t.org.id, {})).status).toBe(400);
    expect((await at(t.org.id, { token }, { Origin: "https://evil.example" })).status).toBe(403);
    expect((await at("org_00000000000000000000000000", { token })).status).toBe(404);
    clock += 31 * 60_000;
    expect((await at(t.org.id, { token })).status).toBe(401);
  });

  it("rate-limits link requests per address", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await linkRequest("flood@example.org")).status);
    expect(statuses.slice(0, 5)).toEqual([202, 202, 202, 202, 202]);
    const refused = await linkRequest("flood@example.org");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("Retry-After")).toMatch(/^\d+$/);
  });

  it("rate-limits link requests per client address, whatever the addresses asked for", async () => {
    const answers = await Promise.all(
      Array.from({ length: 21 }, (_, i) => linkRequest(`person${i}@example.org`)),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1);
  });

  it("takes as long for an address that has given as for one that has not: its timing tells nothing", async () => {
    const formId = await recurringForm(t);
    await give(formId, "timed@example.org");
    for (const email of ["timed@example.org", "never-gave@example.org"]) {
      const started = performance.now();
      const res = await linkRequest(email);
      expect(res.status).toBe(202);
      // Both wait out the same floor, far longer than mailing a link takes.
      expect(performance.now() - started).toBeGreaterThanOrEqual(LINK_ANSWER_FLOOR_MS - 1);
    }
  });

  it("puts no year on offer for a statement whose only gift a lost dispute took back in full", async () => {
    const formId = await recurringForm(t);
    const gift = await give(formId, "disputed@example.org");
    await t.store.transact((trx) =>
      recordDispute(trx, clock, gift.paymentID as string, {
        id: "dp_lost",
        status: "lost",
        reason: "fraudulent",
        amountCents: 2500,
        fundsWithdrawn: true,
        createdAt: new Date(clock).toISOString(),
      }),
    );
    const cookie = await signIn("disputed@example.org");
    const gifts = await t.request<{ statementYears: number[] }>("GET", `${base()}/gifts`, asDonor(cookie));
    expect(gifts.status, gifts.text).toBe(200);
    expect(gifts.body.statementYears).toEqual([]);
  });

  it("lists the donor's own gifts and recurring gifts only, in the /v1 shapes", async () => {
    const formId = await recurringForm(t);
    const mine = await give(formId, "ada@example.org");
    const monthly = await give(formId, "ADA@example.org", { frequency: "MONTHLY" });
    const theirs = await give(formId, "bob@example.org", { frequency: "MONTHLY" });
    const cookie = await signIn("ada@example.org");
    const gifts = await t.request<{
      payments: { paymentID: string }[];
      subscriptions: { id: string }[];
      statementYears: number[];
    }>("GET", `${base()}/gifts`, asDonor(cookie));
    expect(gifts.status, gifts.text).toBe(200);
    expect(Object.keys(gifts.body).sort()).toEqual([
      "currentYear",
      "payments",
      "statementYears",
      "subscriptions",
      "timeZone",
    ]);
    expect(gifts.body.statementYears).toEqual([2026]);
    expect(gifts.body.payments.map((p) => p.paymentID).sort()).toEqual(
      [mine.paymentID, monthly.paymentID].sort(),
    );
    expect(gifts.body.subscriptions.map((s) => s.id)).toEqual([monthly.subscription?.id]);
    const v1 = await t.request("GET", `/v1/payments/${mine.paymentID}`);
    expect(gifts.body.payments.find((p) => p.paymentID === mine.paymentID)).toEqual(v1.body);
    expect(JSON.stringify(gifts.body)).not.toContain(theirs.paymentID);
  });

  it("finds the gifts of an address with letters beyond ASCII in any case (Ünal@… and ünal@…)", async () => {
    const formId = await recurringForm(t);
    const upper = await give(formId, "Ünal@example.org");
    const lower = await give(formId, "ünal@example.org", { frequency: "MONTHLY" });
    await give(formId, "unal@example.org");
    const cookie = await signIn("Ünal@example.org");
    const gifts = await t.request<{ payments: { paymentID: string }[]; subscriptions: { id: string }[] }>(
      "GET",
      `${base()}/gifts`,
      asDonor(cookie),
    );
    expect(gifts.status, gifts.text).toBe(200);
    expect(gifts.body.payments.map((p) => p.paymentID).sort()).toEqual(
      [upper.paymentID, lower.paymentID].sort(),
    );
    expect(gifts.body.subscriptions.map((s) => s.id)).toEqual([lower.subscription?.id]);
    const receipt = await t.request("GET", `${base()}/receipts/${upper.paymentID}`, asDonor(cookie));
    expect(receipt.status).toBe(200);
  });

  it("matches addresses as the application folds them, whatever the database's locale: İpek@… is not ipek@…, and ΝΙΚΟΣ@… finds its gifts", async () => {
    const formId = await recurringForm(t);
    const ipek = await give(formId, "İpek@example.org", { frequency: "MONTHLY" });
    const nikos = await give(formId, "ΝΙΚΟΣ@example.gr");
    // Another mailbox, which PostgreSQL's lower() of "İpek" can equal: it has given nothing, so it gets no link.
    expect((await linkRequest("ipek@example.org")).status).toBe(202);
    expect(await mailedToken("ipek@example.org")).toBeUndefined();
    const ipekCookie = await signIn("İpek@example.org");
    const ipekGifts = await t.request<{ subscriptions: { id: string }[] }>(
      "GET",
      `${base()}/gifts`,
      asDonor(ipekCookie),
    );
    expect(ipekGifts.body.subscriptions.map((s) => s.id)).toEqual([ipek.subscription?.id]);
    // JavaScript lower-cases a final Σ to ς, PostgreSQL to σ: the donor still gets their link.
    const nikosCookie = await signIn("ΝΙΚΟΣ@example.gr");
    const nikosGifts = await t.request<{ payments: { paymentID: string }[] }>(
      "GET",
      `${base()}/gifts`,
      asDonor(nikosCookie),
    );
    expect(nikosGifts.body.payments.map((p) => p.paymentID)).toEqual([nikos.paymentID]);
  });

  it("changes the amount, skips the next charge, changes the frequency and cancels, with webhooks and the audit log", async () => {
    const formId = await recurringForm(t);
    const gift = await give(formId, "ada@example.org", { frequency: "MONTHLY" });
    const subId = gift.subscription?.id as string;
    let cookie = await signIn("ada@example.org");
    const put = (body: unknown, headers: Record<string, string> = {}) => {
      clock += 1000; // each change at its own time, so the audit log and the events have an order
      return t.request<{ amount: number; frequency: string; nextBillingDate: string | null; status: string }>(
        "PUT",
        `${base()}/subscriptions/${subId}`,
        { ...asDonor(cookie, headers), body },
      );
    };

    const amount = await put({ amount: 30 });
    expect(amount.status, amount.text).toBe(200);
    expect(amount.body.amount).toBe(30);
    expect(amount.body.nextBillingDate).toBe("2026-02-28T10:00:00Z");

    const skipped = await put({ skipNext: true });
    expect(skipped.status, skipped.text).toBe(200);
    expect(skipped.body.nextBillingDate).toBe("2026-03-31T10:00:00Z");

    const yearly = await put({ frequency: "ANNUALLY" });
    expect(yearly.body.frequency).toBe("ANNUALLY");
    expect(yearly.body.nextBillingDate).toBe("2026-03-31T10:00:00Z");

    // The next charge comes on the kept date, at the new amount; the one after a year later.
    clock = Date.parse("2026-03-31T10:00:01Z");
    expect((await worker(t.deps).runOnce()).charged).toBe(1);
    const charges = await paymentsOf(t.store.db, subId);
    expect(charges.map((p) => Number(p.amount_cents))).toEqual([2500, 3000]);
    expect((await subscription(t.store.db, subId)).next_billing_at).toBe("2027-03-31T10:00:00.000Z");

    clock += 60_000;
    cookie = await signIn("ada@example.org"); // two months on: the first session has ended
    const cancelled = await put({ status: "CANCELLED" });
    expect(cancelled.body.status).toBe("CANCELLED");
    expect((await put({ amount: 10 })).status).toBe(409);

    const events = await eventsOf(t.store.db, subId);
    expect(events.filter((e) => e === "subscription.updated").length).toBeGreaterThanOrEqual(3);
    expect(events.at(-1)).toBe("subscription.cancelled");
    const trail = await auditTrail(t.store.db, t.org.id, "subscription", subId);
    expect(trail.map((e) => [e.actor_type, e.actor, e.action])).toEqual([
      ["donor", "ada@example.org", "subscription.updated"],
      ["donor", "ada@example.org", "subscription.updated"],
      ["donor", "ada@example.org", "subscription.updated"],
      ["donor", "ada@example.org", "subscription.cancelled"],
    ]);
    expect(JSON.parse(trail[0].old_values)).toEqual({ amount: 25 });
    expect(JSON.parse(trail[0].new_values)).toEqual({ amount: 30 });
  });

  it("takes only a gift the form's checkout would take: its frequencies and fixed amounts; any once the form is deleted", async () => {
    const formId = await createForm(t, {
      ...validForms.standard(),
      frequencies: ["MONTHLY"],
      defaultFrequency: "MONTHLY",
      allowCustomAmount: false,
      monthlyAmounts: [25, 50],
    });
    const gift = await give(formId, "ada@example.org", { frequency: "MONTHLY" });
    const subId = gift.subscription?.id as string;
    const cookie = await signIn("ada@example.org");
    const path = `${base()}/subscriptions/${subId}`;
    const put = (body: unknown) => t.request("PUT", path, { ...asDonor(cookie), body });

    // The checkout's own refusal of the same amount, word for word.
    const atCheckout = await checkout(t, formId, {
      amount: 3,
      frequency: "MONTHLY",
      donor: person("ada@example.org"),
      paymentMethod: card(),
    });
    const fixedAmounts = {
      error: "Validation failed",
      details: [
        "amount must be one of this form's MONTHLY amounts ($25, $50); custom amounts are not allowed",
      ],
    };
    expect(atCheckout.status).toBe(400);
    expect(atCheckout.body).toEqual(fixedAmounts);

    const amount = await put({ amount: 3 });
    expect(amount.status, amount.text).toBe(400);
    expect(amount.body).toEqual(fixedAmounts);
    const offered = {
      error: "Validation failed",
      details: ["frequency DAILY is not enabled on this form; choose one of: MONTHLY"],
    };
    // The kept amount is checked against the new frequency, and the new amount against the kept one.
    for (const body of [{ frequency: "DAILY" }, { amount: 3, frequency: "DAILY" }]) {
      const res = await put(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual(offered);
    }
    expect(await subscription(t.store.db, subId)).toMatchObject({ amount_cents: 2500, frequency: "MONTHLY" });
    expect((await eventsOf(t.store.db, subId)).filter((e) => e === "subscription.updated")).toEqual([]);

    const preset = await put({ amount: 50 });
    expect(preset.status, preset.text).toBe(200);
    expect(preset.body).toMatchObject({ amount: 50, frequency: "MONTHLY" });

    // The organization's own change keeps the API's rules: the checkout's range, not the form's amounts.
    const byStaff = await t.request("PUT", `/v1/subscriptions/${subId}`, { body: { amount: 3 } });
    expect(byStaff.status, byStaff.text).toBe(200);
    expect(byStaff.body).toMatchObject({ amount: 3 });

    // Once the form is deleted, the general rules alone.
    expect((await t.request("DELETE", `/v1/forms/${formId}`)).status).toBe(200);
    const loose = await put({ amount: 3.5, frequency: "DAILY" });
    expect(loose.status, loose.text).toBe(200);
    expect(loose.body).toMatchObject({ amount: 3.5, frequency: "DAILY" });
  });

  it("refuses a giving-level gift's custom amount when its form takes none; takes one when it does", async () => {
    const fixed = await createForm(t, {
      ...validForms.givingLevel(),
      frequencies: ["ONE_TIME", "MONTHLY"],
      allowCustomAmount: false,
      givingLevels: [
        { title: "Friend", amount: 50, description: "" },
        { title: "Patron", amount: 100, description: "" },
      ],
    });
    const open = await recurringForm(t);
    const onFixed = await give(fixed, "ada@example.org", { frequency: "MONTHLY", amount: 50 });
    const onOpen = await give(open, "ada@example.org", { frequency: "MONTHLY" });
    const cookie = await signIn("ada@example.org");
    const put = (gift: typeof onFixed, body: unknown) =>
      t.request("PUT", `${base()}/subscriptions/${gift.subscription?.id}`, { ...asDonor(cookie), body });

    const custom = await put(onFixed, { amount: 75 });
    expect(custom.status, custom.text).toBe(400);
    expect(custom.body).toEqual({
      error: "Validation failed",
      details: [
        "amount must be one of this form's giving levels (Friend $50, Patron $100); custom amounts are not allowed",
      ],
    });
    expect((await put(onFixed, { amount: 100 })).status).toBe(200);
    expect((await put(onOpen, { amount: 75.25 })).status).toBe(200);
  });

  it("refuses to move the schedule while a billing pass is charging the gift (409), and changes nothing", async () => {
    const formId = await recurringForm(t);
    const gift = await give(formId, "ada@example.org", { frequency: "MONTHLY" });
    const subId = gift.subscription?.id as string;
    await t.store.db
      .updateTable("subscriptions")
      .set({ claim_token: "pass", claimed_until: new Date(clock + 60_000).toISOString() })
      .where("id", "=", subId)
      .execute();
    const cookie = await signIn("ada@example.org");
    const path = `${base()}/subscriptions/${subId}`;
    const skip = await t.request("PUT", path, { ...asDonor(cookie), body: { skipNext: true } });
    expect(skip.status).toBe(409);
    expect(skip.body).toEqual({ error: expect.stringMatching(/being charged/) });
    const before = await subscription(t.store.db, subId);
    expect(before.cycle).toBe(0);
    expect(before.next_billing_at).toBe("2026-02-28T10:00:00.000Z");
    // An amount change applies to this charge or the next, so it is taken meanwhile.
    expect((await t.request("PUT", path, { ...asDonor(cookie), body: { amount: 40 } })).status).toBe(200);
  });

  it("refuses to move the schedule while a charge of the gift is still in flight after its pass has died (409)", async () => {
    const formId = await recurringForm(t);
    const gift = await give(formId, "ada@example.org", { frequency: "MONTHLY" });
    const subId = gift.subscription?.id as string;
    const cookie = await signIn("ada@example.org");
    // A pass that died after asking the processor: its claim has run out, its charge is still PROCESSING.
    await t.store.db
      .updateTable("subscriptions")
      .set({ claim_token: "dead-pass", claimed_until: new Date(clock - 1000).toISOString() })
      .where("id", "=", subId)
      .execute();
    await t.store.db
      .updateTable("payments")
      .set({ status: "PROCESSING" })
      .where("id", "=", gift.paymentID)
      .execute();
    const path = `${base()}/subscriptions/${subId}`;
    for (const body of [{ skipNext: true }, { frequency: "ANNUALLY" }]) {
      const res = await t.request("PUT", path, { ...asDonor(cookie), body });
      expect(res.status, JSON.stringify(body)).toBe(409);
    }
    const after = await subscription(t.store.db, subId);
    expect(after).toMatchObject({
      cycle: 0,
      frequency: "MONTHLY",
      next_billing_at: "2026-02-28T10:00:00.000Z",
    });
    // Once the charge's outcome is recorded the schedule may move again.
    await t.store.db
      .updateTable("payments")
      .set({ status: "COMPLETED" })
      .where("id", "=", gift.paymentID)
      .execute();
    expect((await t.request("PUT", path, { ...asDonor(cookie), body: { skipNext: true } })).status).toBe(200);
  });

  it("a frequency change keeps a pending retry of the due charge; skipping drops it", async () => {
    const formId = await recurringForm(t);
    const gift = await give(formId, "ada@example.org", { frequency: "MONTHLY" });
    const subId = gift.subscription?.id as string;
    const retryAt = "2026-03-02T10:00:00.000Z";
    await t.store.db
      .updateTable("subscriptions")
      .set({ failed_attempts: 1, retry_at: retryAt })
      .where("id", "=", subId)
      .execute();
    const cookie = await signIn("ada@example.org");
    const path = `${base()}/subscriptions/${subId}`;
    const yearly = await t.request("PUT", path, { ...asDonor(cookie), body: { frequency: "ANNUALLY" } });
    expect(yearly.status, yearly.text).toBe(200);
    expect(await subscription(t.store.db, subId)).toMatchObject({
      frequency: "ANNUALLY",
      cycle: 0,
      failed_attempts: 1,
      retry_at: retryAt,
      next_billing_at: "2026-02-28T10:00:00.000Z",
    });
    const skipped = await t.request("PUT", path, { ...asDonor(cookie), body: { skipNext: true } });
    expect(skipped.status, skipped.text).toBe(200);
    expect(await subscription(t.store.db, subId)).toMatchObject({
      cycle: 1,
      failed_attempts: 0,
      retry_at: null,
      next_billing_at: "2027-02-28T10:00:00.000Z",
    });
  });

  it("refuses another donor's records (404), changes without this site's Origin (403) and requests without a session (401)", async () => {
    const formId = await recurringForm(t);
    const theirs = await give(formId, "bob@example.org", { frequency: "MONTHLY" });
    const mine = await give(formId, "ada@example.org", { frequency: "MONTHLY" });
    const cookie = await signIn("ada@example.org");
    const other = `${base()}/subscriptions/${theirs.subscription?.id}`;
    expect((await t.request("PUT", other, { ...asDonor(cookie), body: { amount: 1 } })).status).toBe(404);
    expect((await t.request("GET", `${base()}/receipts/${theirs.paymentID}`, asDonor(cookie))).status).toBe(
      404,
    );
    expect((await subscription(t.store.db, theirs.subscription?.id as string)).amount_cents).toBe(2500);

    const own = `${base()}/subscriptions/${mine.subscription?.id}`;
    const foreign = await t.request("PUT", own, {
      ...asDonor(cookie, { Origin: "https://evil.example" }),
      body: { amount: 1 },
    });
    expect(foreign.status).toBe(403);
    const none = await t.request("PUT", own, { key: null, headers: { Cookie: cookie }, body: { amount: 1 } });
    expect(none.status).toBe(403);
    const anonymous = await t.request("PUT", own, {
      key: null,
      headers: { Origin: ORIGIN },
      body: { amount: 1 },
    });
    expect(anonymous.status).toBe(401);
    expect((await t.request("GET", `${base()}/gifts`, { key: null })).status).toBe(401);
    expect((await subscription(t.store.db, mine.subscription?.id as string)).amount_cents).toBe(2500);

    // A session is the organization's own: another organization's portal does not know it.
    const elsewhere = await t.newOrg();
    const there = await t.request("GET", `/api/manage/${elsewhere.id}/gifts`, asDonor(cookie));
    expect(there.status).toBe(401);

    // A sign-in link asked for from another site: refused in words about this site, not about checkouts.
    const asked = await linkRequest("ada@example.org", { Origin: "https://evil.example" });
    expect(asked.status).toBe(403);
    expect(asked.body).toEqual({ error: "Requests are accepted only from this site's own pages" });
  });

  it("signs out with 204, and answers 404 for a sign-out under an id that is no organization's, whatever its characters", async () => {
    const formId = await recurringForm(t);
    await give(formId, "ada@example.org", { frequency: "MONTHLY" });
    const cookie = await signIn("ada@example.org");
    for (const id of [
      "x%3B%20Domain%3Devil.example",
      "x%0d%0aSet-Cookie:%20a=b",
      "%E2%80%A8",
      "..%2f..%2f",
    ]) {
      const res = await t.request("POST", `/api/manage/${id}/logout`, asDonor(cookie));
      expect(res.status, `${id}: ${res.text}`).toBe(404);
      expect(res.body).toEqual({ error: "Organization not found" });
      expect(res.headers.get("Set-Cookie")).toBeNull();
    }
    expect((await t.request("GET", `${base()}/gifts`, asDonor(cookie))).status).toBe(200);
    const out = await t.request("POST", `${base()}/logout`, asDonor(cookie));
    expect(out.status).toBe(204);
    expect((await t.request("GET", `${base()}/gifts`, asDonor(cookie))).status).toBe(401);
  });

  it("mails no sign-in link to an address whose only attempt was declined: a decline is not a gift", async () => {
    const formId = await createForm(t, validForms.standard());
    const declined = await checkout(t, formId, {
      amount: 25,
      frequency: "ONE_TIME",
      donor: person("someone-else@example.org"),
      paymentMethod: card("4000000000000002"),
    });
    expect(declined.status).toBe(402);
    expect((await linkRequest("someone-else@example.org")).status).toBe(202);
    expect(await mailedToken("someone-else@example.org")).toBeUndefined();
  });

  it("takes 30 changes to a donor's recurring gifts an hour, then answers 429 with Retry-After", async () => {
    const formId = await recurringForm(t);
    const gift = await give(formId, "busy@example.org", { frequency: "MONTHLY" });
    const cookie = await signIn("busy@example.org");
    const put = (amount: number) =>
      t.request("PUT", `${base()}/subscriptions/${gift.subscription?.id}`, {
        ...asDonor(cookie),
        body: { amount },
      });
    for (let i = 0; i < 30; i++) expect((await put(26 + (i % 2))).status).toBe(200);
    const refused = await put(40);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    const row = await t.store.db.selectFrom("subscriptions").select("amount_cents").executeTakeFirstOrThrow();
    expect(Number(row.amount_cents)).toBe(2700);
  });

  it("has no receipt for a declined attempt (404)", async () => {
    const formId = await createForm(t, validForms.standard());
    await give(formId, "ada@example.org");
    const declined = await checkout(t, formId, {
      amount: 25,
      frequency: "ONE_TIME",
      donor: person("ada@example.org"),
      paymentMethod: card("4000000000000002"),
    });
    expect(declined.status).toBe(402);
    const failedId = (declined.body as { paymentID: string }).paymentID;
    expect(failedId).toMatch(/^pay_/);
    const cookie = await signIn("ada@example.org");
    expect((await t.request("GET", `${base()}/receipts/${failedId}`, asDonor(cookie))).status).toBe(404);
  });

  it("downloads a receipt and a year-end statement as PDF, with the legal details and the deductible part of tickets", async () => {
    const legal = await t.request("PUT", "/v1/organization", {
      body: {
        legalName: "Friends of the Library Inc.",
        legalAddress: "1 Main St\nSpringfield",
        taxId: "12-3456789",
      },
    });
    expect(legal.status, legal.text).toBe(200);
    expect(legal.body).toMatchObject({ legalName: "Friends of the Library Inc.", taxId: "12-3456789" });
    const gala = await createForm(t, {
      ...validForms.event(),
      tickets: [{ name: "Dinner", price: 100, fairMarketValue: 40 }],
    });
    const shown = await t.request<{ tickets: { fairMarketValue: number | null }[] }>(
      "GET",
      `/v1/forms/${gala}`,
    );
    expect(shown.body.tickets[0].fairMarketValue).toBe(40);
    const gifts = await createForm(t, validForms.standard());
    const dinner = await checkout(t, gala, {
      tickets: [{ name: "Dinner", quantity: 2 }],
      donor: person("ada@example.org"),
      paymentMethod: card(),
    });
    expect(dinner.status, dinner.text).toBe(201);
    const dinnerId = (dinner.body.payment as { paymentID: string }).paymentID;
    await give(gifts, "ada@example.org", { amount: 50 });
    const cookie = await signIn("ada@example.org");

    const receipt = await t.request("GET", `${base()}/receipts/${dinnerId}`, asDonor(cookie));
    expect(receipt.status).toBe(200);
    expect(receipt.headers.get("Content-Type")).toBe("application/pdf");
    const receiptRes = await t.app.request(`${base()}/receipts/${dinnerId}`, { headers: { Cookie: cookie } });
    const receiptText = pdfText(Buffer.from(await receiptRes.arrayBuffer()));
    expect(receiptText).toContain("Friends of the Library Inc.");
    expect(receiptText).toContain("Tax id: 12-3456789");
    expect(receiptText).toContain(dinnerId);
    expect(receiptText).toContain("$200");
    expect(receiptText).toContain("-$80");
    expect(receiptText).toMatch(/Deductible amount\n\$120/);

    const statement = await t.app.request(`${base()}/statement?year=2026`, { headers: { Cookie: cookie } });
    expect(statement.status).toBe(200);
    const text = pdfText(Buffer.from(await statement.arrayBuffer()));
    expect(text).toContain("Giving statement 2026");
    expect(text).toContain("$200 / $120");
    expect(text).toContain("$50 / $50");
    expect(text).toMatch(/Total given in 2026 \(2 gifts\)\n\$250/);
    expect(text).toMatch(/Total deductible\n\$170/);

    // In the donor's language (the portal asks with ?lang=).
    const spanish = pdfText(
      Buffer.from(
        await (
          await t.app.request(`${base()}/statement?year=2026&lang=es`, { headers: { Cookie: cookie } })
        ).arrayBuffer(),
      ),
    );
    expect(spanish).toContain("Certificado de donaciones 2026");
    expect(spanish).toMatch(/Total donado en 2026 \(2 donaciones\)/);

    const empty = pdfText(
      Buffer.from(
        await (
          await t.app.request(`${base()}/statement?year=2025`, { headers: { Cookie: cookie } })
        ).arrayBuffer(),
      ),
    );
    expect(empty).toContain("No gifts were received from you in 2025.");
    expect((await t.request("GET", `${base()}/statement?year=20x6`, asDonor(cookie))).status).toBe(400);
  });

  /** The statement of `query` as text, and the year its file is named by. */
  async function statement(cookie: string, query = "") {
    const res = await t.app.request(`${base()}/statement${query}`, { headers: { Cookie: cookie } });
    expect(res.status).toBe(200);
    const file = res.headers.get("Content-Disposition")?.match(/statement-(\d+)\.pdf/)?.[1];
    return { text: pdfText(Buffer.from(await res.arrayBuffer())), file: Number(file) };
  }

  it("counts a gift in the year of the organization's time zone: 23:30 on December 31 in New York is 2025's", async () => {
    const zone = await t.request("PUT", "/v1/organization", { body: { timeZone: "America/New_York" } });
    expect(zone.status, zone.text).toBe(200);
    const formId = await createForm(t, validForms.standard());
    clock = Date.parse("2026-01-01T04:30:00Z"); // 2025-12-31 23:30 in New York
    const late = await give(formId, "ada@example.org", { amount: 30 });
    clock = Date.parse("2026-01-01T05:30:00Z"); // 2026-01-01 00:30 there
    const early = await give(formId, "ada@example.org", { amount: 40 });
    clock = Date.parse("2026-01-01T04:40:00Z"); // back to 23:40 on December 31 there (a UTC 2026)
    const cookie = await signIn("ada@example.org");

    const of2025 = await statement(cookie, "?year=2025");
    expect(of2025.text).toContain("Giving statement 2025");
    expect(of2025.text).toContain(late.paymentID);
    expect(of2025.text).not.toContain(early.paymentID);
    expect(of2025.text).toMatch(/Total given in 2025 \(1 gift\)\n\$30/);
    // The row's date is the day in New York, as English writes it.
    expect(of2025.text).toContain(`Dec 31, 2025  ${late.paymentID}`);
    expect(of2025.text).not.toContain("2026-01-01");
    const of2026 = await statement(cookie, "?year=2026");
    expect(of2026.text).toContain(early.paymentID);
    expect(of2026.text).not.toContain(late.paymentID);
    expect(of2026.text).toContain(`Jan 1, 2026  ${early.paymentID}`);

    // Without ?year=, the year it is in New York: 2025 until its midnight, though UTC is in 2026.
    const current = await statement(cookie);
    expect(current.file).toBe(2025);
    expect(current.text).toContain("Giving statement 2025");
    expect(current.text).toContain(late.paymentID);
    clock = Date.parse("2026-01-01T05:00:00Z");
    const next = await statement(cookie);
    expect(next.file).toBe(2026);
    expect(next.text).toContain(early.paymentID);

    const gifts = await t.request<{ statementYears: number[] }>("GET", `${base()}/gifts`, asDonor(cookie));
    expect(gifts.body.statementYears).toEqual([2026, 2025]);
  });

  it("answers the gifts with the organization's time zone and its current year there, the calendar the portal shows", async () => {
    const zone = await t.request("PUT", "/v1/organization", { body: { timeZone: "America/New_York" } });
    expect(zone.status, zone.text).toBe(200);
    // The donor's only gift was refunded in full: no statement lists it.
    const formId = await createForm(t, validForms.standard());
    const gift = await give(formId, "ada@example.org");
    expect((await t.request("POST", `/v1/payments/${gift.paymentID}/refund`)).status).toBe(200);
    clock = Date.parse("2026-01-01T04:40:00Z"); // 23:40 on December 31, 2025 in New York
    const cookie = await signIn("ada@example.org");
    const gifts = await t.request<{ statementYears: number[]; timeZone: string; currentYear: number }>(
      "GET",
      `${base()}/gifts`,
      asDonor(cookie),
    );
    expect(gifts.status, gifts.text).toBe(200);
    // No gift: no statement year, and the picker offers the year it is there (not the UTC one, 2026).
    expect(gifts.body).toMatchObject({ statementYears: [], timeZone: "America/New_York", currentYear: 2025 });
    clock = Date.parse("2026-01-01T05:00:00Z");
    const later = await t.request<{ currentYear: number }>("GET", `${base()}/gifts`, asDonor(cookie));
    expect(later.body.currentYear).toBe(2026);
  });

  it("mails the receipt with the day the gift was made in the organization's time zone", async () => {
    const zone = await t.request("PUT", "/v1/organization", { body: { timeZone: "America/New_York" } });
    expect(zone.status, zone.text).toBe(200);
    const formId = await createForm(t, validForms.standard());
    clock = Date.parse("2026-01-01T04:30:00Z"); // 2025-12-31 23:30 in New York
    const gift = await give(formId, "ada@example.org");
    const [receipt] = await t.store.db
      .selectFrom("email_outbox")
      .selectAll()
      .where("payment_id", "=", gift.paymentID)
      .execute();
    for (const part of [receipt.text_body, receipt.html_body]) {
      expect(part).toContain("December 31, 2025");
      expect(part).not.toContain("January 1, 2026");
    }
  });

  it("counts on the statement only what a gift kept: a chargeback lost takes its amount off", async () => {
    const formId = await createForm(t, validForms.standard());
    clock = Date.parse("2026-03-01T12:00:00Z");
    const lost = await give(formId, "ada@example.org", { amount: 100 });
    const kept = await give(formId, "ada@example.org", { amount: 30 });
    const dispute = (status: string, fundsWithdrawn: boolean) =>
      JSON.stringify({
        id: "dp_1",
        status,
        reason: "fraudulent",
        amountCents: 10000,
        fundsWithdrawn,
        createdAt: "2026-03-05T12:00:00Z",
        updatedAt: "2026-03-05T12:00:00Z",
      });
    await t.store.db
      .updateTable("payments")
      .set({ dispute: dispute("lost", true) })
      .where("id", "=", lost.paymentID)
      .execute();
    const cookie = await signIn("ada@example.org");
    const text = (await statement(cookie, "?year=2026")).text;
    expect(text).not.toContain(lost.paymentID);
    expect(text).toContain(kept.paymentID);
    expect(text).toMatch(/Total deductible\n\$30/);
    // A dispute the organization won gave the money back: the gift counts in full again.
    await t.store.db
      .updateTable("payments")
      .set({ dispute: dispute("won", false) })
      .where("id", "=", lost.paymentID)
      .execute();
    expect((await statement(cookie, "?year=2026")).text).toMatch(/Total deductible\n\$130/);
  });

  it("offers no statement of a year whose only gift was refunded in full (its statement lists nothing)", async () => {
    const formId = await createForm(t, validForms.standard());
    clock = Date.parse("2024-06-01T12:00:00Z");
    const gone = await give(formId, "ada@example.org", { amount: 40 });
    clock = Date.parse("2025-06-01T12:00:00Z");
    const part = await give(formId, "ada@example.org", { amount: 50 });
    clock = Date.parse("2026-02-01T12:00:00Z");
    expect((await t.request("POST", `/v1/payments/${gone.paymentID}/refund`)).status).toBe(200);
    const partly = await t.request("POST", `/v1/payments/${part.paymentID}/refund`, { body: { amount: 20 } });
    expect(partly.status, partly.text).toBe(200);
    const cookie = await signIn("ada@example.org");
    const gifts = await t.request<{
      payments: { paymentID: string; status: string }[];
      statementYears: number[];
    }>("GET", `${base()}/gifts`, asDonor(cookie));
    expect(gifts.status, gifts.text).toBe(200);
    expect(gifts.body.payments.find((p) => p.paymentID === gone.paymentID)?.status).toBe("REFUNDED");
    // 2025's statement lists the partly refunded gift (what it kept); 2024's would list none.
    expect(gifts.body.statementYears).toEqual([2025]);
    expect((await statement(cookie, "?year=2025")).text).toContain(part.paymentID);
    expect((await statement(cookie, "?year=2024")).text).toContain("No gifts");
  });

  it("prints a gift's date on its receipt and statement as the document's language writes the day it was made there", async () => {
    const zone = await t.request("PUT", "/v1/organization", { body: { timeZone: "America/New_York" } });
    expect(zone.status, zone.text).toBe(200);
    const formId = await createForm(t, validForms.standard());
    clock = Date.parse("2026-01-01T04:30:00Z"); // 2025-12-31 23:30 in New York
    const gift = await give(formId, "ada@example.org");
    const cookie = await signIn("ada@example.org");
    const receipt = async (lang: string) =>
      pdfText(
        Buffer.from(
          await (
            await t.app.request(`${base()}/receipts/${gift.paymentID}?lang=${lang}`, {
              headers: { Cookie: cookie },
            })
          ).arrayBuffer(),
        ),
      );
    expect(await receipt("en")).toContain("Date\nDec 31, 2025\n");
    expect(await receipt("de")).toContain("Datum\n31.12.2025\n");
    expect(await receipt("es")).toContain("Fecha\n31 dic 2025\n");
    expect(await receipt("fr")).toContain("Date\n31 déc. 2025\n");
    for (const lang of ["en", "de", "es", "fr"]) expect(await receipt(lang)).not.toMatch(/\b2026\b/);
    expect((await statement(cookie, "?year=2025&lang=de")).text).toContain(`31.12.2025  ${gift.paymentID}`);
  });

  it("offers statements of the years of the donor's completed gifts only, not of a declined attempt's", async () => {
    const formId = await createForm(t, validForms.standard());
    clock = Date.parse("2024-06-01T12:00:00Z");
    const declined = await checkout(t, formId, {
      amount: 25,
      frequency: "ONE_TIME",
      donor: person("ada@example.org"),
      paymentMethod: card("4000000000000002"),
    });
    expect(declined.status).toBe(402);
    clock = Date.parse("2025-06-01T12:00:00Z");
    const gift = await give(formId, "ada@example.org");
    const cookie = await signIn("ada@example.org");
    const gifts = await t.request<{
      payments: { paymentID: string; status: string }[];
      statementYears: number[];
    }>("GET", `${base()}/gifts`, asDonor(cookie));
    expect(gifts.status, gifts.text).toBe(200);
    // The declined attempt is listed (the donor sees it) but makes no statement year.
    expect(gifts.body.payments.map((p) => p.status).sort()).toEqual(["COMPLETED", "FAILED"]);
    expect(gifts.body.payments.map((p) => p.paymentID)).toContain(gift.paymentID);
    expect(gifts.body.statementYears).toEqual([2025]);
  });

  it("the receipt e-mail links to the organization's portal", async () => {
    const formId = await createForm(t, validForms.standard());
    const gift = await give(formId, "ada@example.org");
    const [receipt] = await t.store.db
      .selectFrom("email_outbox")
      .selectAll()
      .where("payment_id", "=", gift.paymentID)
      .execute();
    // In the receipt's language (English here), which the portal then opens in.
    expect(receipt.text_body).toContain(`http://forms.test/manage/${t.org.id}?lang=en`);
    expect(receipt.html_body).toContain(`href="http://forms.test/manage/${t.org.id}?lang=en"`);
  });

  it("serves the portal page in the donor's language, with its messages and no token in its language links", async () => {
    const res = await t.app.request(`/manage/${t.org.id}?lang=ar&token=${"a".repeat(43)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Referrer-Policy")).toBe("no-referrer");
    const html = await res.text();
    expect(html).toContain('<html lang="ar" dir="rtl">');
    expect(html).toContain("تبرعاتك إلى Test Org");
    const messages = JSON.parse(html.match(/id="portal-messages">(.*?)<\/script>/s)?.[1] ?? "{}");
    expect(Object.keys(messages)).toContain("portal.sendLink");
    expect(html).not.toContain("aaaaaaaa");
    const english = await (
      await t.app.request(`/manage/${t.org.id}`, { headers: { "Accept-Language": "en-US" } })
    ).text();
    expect(english).toContain("Your giving to Test Org");
    expect((await t.app.request("/manage/org_00000000000000000000000000")).status).toBe(404);
    const unknown = await t.app.request("/manage/org_00000000000000000000000000?lang=de");
    expect(unknown.status).toBe(404);
    const notFound = await unknown.text();
    expect(notFound).toContain('<html lang="de" dir="ltr">');
    expect(notFound).toContain("Seite nicht gefunden");
  });

  it("opens the payment-method update page for the donor's own recurring gift", async () => {
    const formId = await recurringForm(t);
    const gift = await give(formId, "ada@example.org", { frequency: "MONTHLY" });
    const cookie = await signIn("ada@example.org");
    const res = await t.request<{ url: string }>(
      "POST",
      `${base()}/subscriptions/${gift.subscription?.id}/payment-method-update-link`,
      asDonor(cookie),
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body.url).toMatch(/^http:\/\/forms\.test\/update-payment-method\/[A-Za-z0-9_-]{43}$/);
    const page = await t.app.request(new URL(res.body.url).pathname);
    expect(page.status).toBe(200);
  });

  it("writes the donor's new payment method from the update page to the audit log, as their other changes", async () => {
    const formId = await recurringForm(t);
    const gift = await give(formId, "Ada@Example.org", { frequency: "MONTHLY" });
    const subId = gift.subscription?.id as string;
    const cookie = await signIn("ada@example.org");
    clock += 1000;
    expect(
      (
        await t.request("PUT", `${base()}/subscriptions/${subId}`, {
          ...asDonor(cookie),
          body: { amount: 30 },
        })
      ).status,
    ).toBe(200);
    const link = await t.request<{ url: string }>(
      "POST",
      `${base()}/subscriptions/${subId}/payment-method-update-link`,
      asDonor(cookie),
    );
    clock += 1000;
    const saved = await t.app.request(new URL(link.body.url).pathname, {
      method: "POST",
      body: new URLSearchParams({
        method: "card",
        cardNumber: "5555555555554444",
        expiry: "12/30",
        cvc: "123",
      }),
    });
    expect(saved.status).toBe(200);
    const trail = await auditTrail(t.store.db, t.org.id, "subscription", subId);
    expect(trail.map((e) => [e.actor_type, e.actor, e.action])).toEqual([
      ["donor", "ada@example.org", "subscription.updated"],
      ["donor", "ada@example.org", "subscription.updated"],
    ]);
    expect(JSON.parse(trail[1].old_values)).toEqual({
      paymentMethod: { type: "card", brand: "visa", last4: "4242" },
    });
    expect(JSON.parse(trail[1].new_values)).toEqual({
      paymentMethod: { type: "card", brand: "mastercard", last4: "4444" },
    });
    const token = (await subscription(t.store.db, subId)).payment_method_token;
    expect(`${trail[1].old_values}${trail[1].new_values}`).not.toContain(token);
  });

  it("says a refused card on the update page in the page's language, and its Continue link keeps that language", async () => {
    const formId = await recurringForm(t);
    const gift = await give(formId, "ada@example.org", { frequency: "MONTHLY" });
    const cookie = await signIn("ada@example.org");
    const link = await t.request<{ url: string }>(
      "POST",
      `${base()}/subscriptions/${gift.subscription?.id}/payment-method-update-link`,
      asDonor(cookie),
    );
    const path = `${new URL(link.body.url).pathname}?lang=de`;
    const submit = async (cardNumber: string, expiry = "12/30") => {
      const res = await t.app.request(path, {
        method: "POST",
        body: new URLSearchParams({ method: "card", cardNumber, expiry, cvc: "123" }),
      });
      return { status: res.status, html: await res.text() };
    };
    const de = translator("de");
    const declined = await submit("4000000000000002");
    expect(declined.status).toBe(422);
    expect(declined.html).toContain(escapeHtml(de("answer.decline.card")));
    expect(declined.html).not.toContain("Your card was declined");
    const expired = await submit("4000000000000069");
    expect(expired.status).toBe(422);
    expect(expired.html).toContain(escapeHtml(de("answer.decline.expired")));
    const notTest = await submit("4111111111111111");
    expect(notTest.status).toBe(422);
    expect(notTest.html).toContain(escapeHtml(de("answer.decline.card")));

    const saved = await submit("4242424242424242");
    expect(saved.status, saved.html).toBe(200);
    const next = saved.html.match(/<a href="([^"]+)">([^<]+)<\/a>/);
    expect(next?.[2]).toBe(de("update.continue"));
    expect(next?.[1]).toBe(`http://forms.test/manage/${t.org.id}?lang=de`);
  });

  it("tells the portal the frequencies each recurring gift may change to: its form's, or any once the form is gone", async () => {
    const formId = await recurringForm(t, {
      frequencies: ["ONE_TIME", "MONTHLY", "ANNUALLY"],
      defaultFrequency: "MONTHLY",
      allowCustomAmount: false,
      monthlyAmounts: [25, 50],
      annuallyAmounts: [25, 300],
    });
    const monthly = await give(formId, "ada@example.org", { frequency: "MONTHLY" });
    const other = await give(formId, "ada@example.org", { frequency: "MONTHLY", amount: 50 });
    const cookie = await signIn("ada@example.org");
    type Sub = { id: string; frequencies: string[] };
    const gifts = async () =>
      (await t.request<{ subscriptions: Sub[] }>("GET", `${base()}/gifts`, asDonor(cookie))).body
        .subscriptions;
    const of = (subs: Sub[], id: string | undefined) => subs.find((s) => s.id === id)?.frequencies;

    // $25 is an amount of both frequencies; $50 of monthly gifts only, so it can change to nothing else.
    expect(of(await gifts(), monthly.subscription?.id)).toEqual(["MONTHLY", "ANNUALLY"]);
    expect(of(await gifts(), other.subscription?.id)).toEqual(["MONTHLY"]);
    const weekly = await t.request("PUT", `${base()}/subscriptions/${monthly.subscription?.id}`, {
      ...asDonor(cookie),
      body: { frequency: "WEEKLY" },
    });
    expect(weekly.status).toBe(400);
    expect(weekly.body.details).toEqual([
      "frequency WEEKLY is not enabled on this form; choose one of: ONE_TIME, MONTHLY, ANNUALLY",
    ]);
    const annual = await t.request("PUT", `${base()}/subscriptions/${monthly.subscription?.id}`, {
      ...asDonor(cookie),
      body: { frequency: "ANNUALLY" },
    });
    expect(annual.status, annual.text).toBe(200);

    expect((await t.request("DELETE", `/v1/forms/${formId}`)).status).toBe(200);
    expect(of(await gifts(), other.subscription?.id)).toEqual(["DAILY", "WEEKLY", "MONTHLY", "ANNUALLY"]);
    await t.request("PUT", `${base()}/subscriptions/${other.subscription?.id}`, {
      ...asDonor(cookie),
      body: { status: "CANCELLED" },
    });
    expect(of(await gifts(), other.subscription?.id)).toEqual([]);

    // The document describes the field.
    const doc = await t.request<{ paths: Record<string, Record<string, unknown>> }>(
      "GET",
      "/v1/openapi.json",
    );
    expect(JSON.stringify(doc.body.paths["/api/manage/{organizationId}/gifts"])).toContain(
      "The frequencies this recurring gift may be changed to",
    );
  });

  it("opens at most five payment-method update links an hour per donor, so a session cannot test cards", async () => {
    const formId = await recurringForm(t);
    const gift = await give(formId, "ada@example.org", { frequency: "MONTHLY" });
    const cookie = await signIn("ada@example.org");
    const open = () =>
      t.request(
        "POST",
        `${base()}/subscriptions/${gift.subscription?.id}/payment-method-update-link`,
        asDonor(cookie),
      );
    for (let i = 0; i < 5; i++) expect((await open()).status).toBe(201);
    const refused = await open();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    const links = await t.store.db.selectFrom("payment_method_update_links").select("id").execute();
    expect(links).toHaveLength(5);
  });
});

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createStaffMember } from "../../server/staff/accounts.js";
import { recordChange } from "../../server/store/auditLog.js";
import type { AuditEntryOut } from "../../shared/schemas/auditLog.js";
import type { StaffRole } from "../../shared/schemas/staff.js";
import { databaseUrlOfStore, JAN_31, recurringForm, subscribe } from "../billing/support.js";
import { card, checkout, createForm, donor } from "../support/checkout.js";
import { killAll, runCli, type TempDir, tempDir } from "../support/processes.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * The audit log: every refund, change of a recurring gift, form, setting, webhook and sign-in is written
 * with who made it (a staff member, an API key, a donor), the changed values before and after and never a
 * secret, in the change's own transaction (a refused change writes nothing); `GET /v1/audit-log` shows an
 * organization its own entries only, newest first, filtered and paged, to keys with organization:read and
 * Owners' sessions only.
 */

const ORIGIN = "http://forms.test";
const PASSWORD = "correct horse battery staple";
const DAY = 86_400_000;

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

interface Page {
  entries: AuditEntryOut[];
  count: number;
  hasMore: boolean;
  lastEvaluatedKey?: string;
}

const tokenOf = (url: string) => new URL(url).searchParams.get("token") ?? "";
const cookieOf = (headers: Headers) => (headers.get("Set-Cookie") ?? "").split(";")[0];

/** A person with `role` in the organization, set up and signed in: their id and session cookie. */
async function member(role: StaffRole, email: string, organizationId = t.org.id) {
  const made = await createStaffMember(t.store, {
    organizationId,
    email,
    role,
    publicUrl: t.config.publicUrl,
    nowMs: clock,
  });
  const setup = await t.request("POST", "/api/staff/setup", {
    key: null,
    body: { token: tokenOf(made.setupUrl), password: PASSWORD },
    headers: { Origin: ORIGIN },
  });
  expect(setup.status, setup.text).toBe(200);
  return { userId: made.userId, email, cookie: cookieOf(setup.headers) };
}

async function signIn(email: string): Promise<string> {
  const res = await t.request("POST", "/api/staff/login", {
    key: null,
    body: { email, password: PASSWORD },
    headers: { Origin: ORIGIN },
  });
  expect(res.status, res.text).toBe(200);
  return cookieOf(res.headers);
}

const asStaff = (cookie: string) => ({ key: null, headers: { Cookie: cookie, Origin: ORIGIN } });

function auditLog(query = "", opts: { key?: string | null; headers?: Record<string, string> } = {}) {
  return t.request<Page>("GET", `/v1/audit-log${query}`, opts);
}

async function entries(query = ""): Promise<AuditEntryOut[]> {
  const res = await auditLog(query);
  expect(res.status, res.text).toBe(200);
  return res.body.entries;
}

async function gift(amount = 50): Promise<string> {
  const formId = await createForm(t, validForms.standard());
  const res = await checkout(t, formId, { amount, donor: donor(), paymentMethod: card() });
  expect(res.status, res.text).toBe(201);
  return (res.body.payment as { paymentID: string }).paymentID;
}

/** Every row of the organization's audit log as stored, to look for secrets in. */
async function storedText(): Promise<string> {
  const rows = await t.store.db.selectFrom("audit_log").selectAll().execute();
  return JSON.stringify(rows);
}

describe(`the audit log (${dialect})`, () => {
  it("records a staff member's refund with who made it, the amount and the reason; a refused refund records nothing", async () => {
    const finance = await member("FINANCE", "Finance@Example.org");
    const id = await gift(50);
    clock += 1000;
    const done = await t.request("POST", `/v1/payments/${id}/refund`, {
      ...asStaff(finance.cookie),
      body: { amount: 10, reason: "Given twice by mistake" },
    });
    expect(done.status, done.text).toBe(200);

    const refused = await t.request("POST", `/v1/payments/${id}/refund`, {
      ...asStaff(finance.cookie),
      body: { amount: 100 },
    });
    expect(refused.status).toBe(400);

    const log = await entries("?action=payment.refunded");
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      createdAt: new Date(clock).toISOString().replace(/\.\d+Z$/, "Z"),
      actor: { type: "staff", id: finance.userId, label: "Finance@Example.org" },
      action: "payment.refunded",
      subject: { type: "payment", id },
      before: { status: "COMPLETED", refundedAmount: 0 },
      after: {
        status: "COMPLETED",
        refundedAmount: 10,
        amount: 10,
        currency: "USD",
        reason: "Given twice by mistake",
      },
    });
    expect(log[0].id).toMatch(/^aud_[0-9a-z]{26}$/);
  });

  it("records a refund made with an API key under the key's id", async () => {
    const id = await gift(30);
    expect((await t.request("POST", `/v1/payments/${id}/refund`)).status).toBe(200);
    const [entry] = await entries("?action=payment.refunded");
    expect(entry.actor).toEqual({ type: "key", id: t.org.keyId, label: null });
    expect(entry.after).toMatchObject({ status: "REFUNDED", refundedAmount: 30, reason: null });
  });

  it("records forms created, changed (only the fields that changed) and deleted; a refused change records nothing", async () => {
    const formId = await createForm(t, { ...validForms.standard(), title: "Spring appeal" });
    clock += 1000;
    const changed = await t.request("PUT", `/v1/forms/${formId}`, { body: { title: "Summer appeal" } });
    expect(changed.status, changed.text).toBe(200);
    const same = await t.request("PUT", `/v1/forms/${formId}`, { body: { title: "Summer appeal" } });
    expect(same.status).toBe(200);
    const invalid = await t.request("PUT", `/v1/forms/${formId}`, { body: { title: "" } });
    expect(invalid.status).toBe(400);
    clock += 1000;
    expect((await t.request("DELETE", `/v1/forms/${formId}`)).status).toBe(200);

    const log = await entries(`?subjectType=form&subjectId=${formId}`);
    expect(log.map((e) => e.action)).toEqual(["form.deleted", "form.updated", "form.created"]);
    for (const e of log) expect(e.actor).toEqual({ type: "key", id: t.org.keyId, label: null });
    expect(log[2]).toMatchObject({ before: {}, after: { title: "Spring appeal" } });
    expect(log[1].before).toEqual({ title: "Spring appeal" });
    expect(log[1].after).toEqual({ title: "Summer appeal" });
    expect(log[0]).toMatchObject({ before: { title: "Summer appeal", deletedAt: null } });
  });

  it("keeps a long changed value as a note of its size, not the value", async () => {
    await recordChange(
      t.store.db,
      {
        organizationId: t.org.id,
        actor: { type: "key", id: t.org.keyId },
        action: "form.updated",
        subjectType: "form",
        subjectId: "a-form",
        before: { description: "Short.", title: "Same" },
        after: { description: "A description that goes on. ".repeat(60), title: "Same" },
      },
      clock,
    );
    const [entry] = await entries("?action=form.updated");
    expect(entry.before).toEqual({ description: "Short." });
    expect(entry.after).toEqual({ description: "(1682 characters, not kept)" });
  });

  it("records the organization's settings that changed, before and after; a change to nothing records nothing", async () => {
    const owner = await member("OWNER", "owner@example.org");
    const res = await t.request("PUT", "/v1/organization", {
      ...asStaff(owner.cookie),
      body: { organizationName: "Friends of the Library", legalName: "Friends of the Library Inc." },
    });
    expect(res.status, res.text).toBe(200);
    const again = await t.request("PUT", "/v1/organization", {
      body: { organizationName: "Friends of the Library" },
    });
    expect(again.status).toBe(200);
    const log = await entries("?action=organization.updated");
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      actor: { type: "staff", id: owner.userId, label: "owner@example.org" },
      subject: { type: "organization", id: t.org.id },
    });
    expect(log[0].before).toEqual({ organizationName: "Test Org", legalName: null });
    expect(log[0].after).toEqual({
      organizationName: "Friends of the Library",
      legalName: "Friends of the Library Inc.",
    });
  });

  it("records webhooks created, changed and deleted, never their signing secret", async () => {
    const made = await t.request<{ webhookId: string; secret: string }>("POST", "/v1/webhooks", {
      body: { url: "https://example.org/hooks", events: ["donation.created"] },
    });
    expect(made.status, made.text).toBe(201);
    const id = made.body.webhookId;
    clock += 1000;
    expect(
      (
        await t.request("PUT", `/v1/webhooks/${id}`, {
          body: { events: ["donation.created", "donation.updated"] },
        })
      ).status,
    ).toBe(200);
    clock += 1000;
    expect((await t.request("DELETE", `/v1/webhooks/${id}`)).status).toBe(200);
    expect((await t.request("DELETE", `/v1/webhooks/${id}`)).status).toBe(410);

    const log = await entries("?subjectType=webhook");
    expect(log.map((e) => e.action)).toEqual(["webhook.deleted", "webhook.updated", "webhook.created"]);
    expect(log[2].after).toEqual({
      url: "https://example.org/hooks",
      events: ["donation.created"],
      status: "ACTIVE",
      description: "",
    });
    expect(log[1].before).toEqual({ events: ["donation.created"] });
    expect(log[1].after).toEqual({ events: ["donation.created", "donation.updated"] });
    expect(log[0].after).toEqual({ status: "DELETED" });
    expect(made.body.secret).toMatch(/^whsec_/);
    expect(await storedText()).not.toContain(made.body.secret);
  });

  it("records changes of recurring gifts by staff, by key and by the donor; a refused change records nothing", async () => {
    const finance = await member("FINANCE", "finance@example.org");
    const sub = await subscribe(t, await recurringForm(t));
    clock += 1000;
    const byStaff = await t.request("PUT", `/v1/subscriptions/${sub.id}`, {
      ...asStaff(finance.cookie),
      body: { amount: 30 },
    });
    expect(byStaff.status, byStaff.text).toBe(200);

    // The donor, signed in to the portal by the link mailed to them.
    expect(
      (await t.request("POST", `/api/manage/${t.org.id}/link`, { key: null, body: { email: sub.email } }))
        .status,
    ).toBe(202);
    const mail = await t.store.db
      .selectFrom("email_outbox")
      .selectAll()
      .where("to_address", "=", sub.email)
      .orderBy("id", "desc")
      .executeTakeFirstOrThrow();
    const token = mail.text_body.match(/\?token=([A-Za-z0-9_-]+)/)?.[1];
    const session = await t.request("POST", `/api/manage/${t.org.id}/session`, {
      key: null,
      body: { token },
    });
    expect(session.status, session.text).toBe(200);
    clock += 1000;
    const byDonor = await t.request("PUT", `/api/manage/${t.org.id}/subscriptions/${sub.id}`, {
      key: null,
      headers: { Cookie: cookieOf(session.headers), Origin: ORIGIN },
      body: { amount: 35 },
    });
    expect(byDonor.status, byDonor.text).toBe(200);

    clock += 1000;
    expect(
      (await t.request("PUT", `/v1/subscriptions/${sub.id}`, { body: { status: "CANCELLED" } })).status,
    ).toBe(200);
    const refused = await t.request("PUT", `/v1/subscriptions/${sub.id}`, { body: { amount: 40 } });
    expect(refused.status).toBe(409);

    const log = await entries(`?subjectType=subscription&subjectId=${sub.id}`);
    expect(log.map((e) => [e.action, e.actor.type])).toEqual([
      ["subscription.cancelled", "key"],
      ["subscription.updated", "donor"],
      ["subscription.updated", "staff"],
    ]);
    expect(log[2]).toMatchObject({
      actor: { type: "staff", id: finance.userId, label: "finance@example.org" },
      before: { amount: 25 },
      after: { amount: 30 },
    });
    expect(log[1]).toMatchObject({
      actor: { type: "donor", id: sub.email.toLowerCase(), label: sub.email.toLowerCase() },
      before: { amount: 30 },
      after: { amount: 35 },
    });
    expect(log[0].actor).toEqual({ type: "key", id: t.org.keyId, label: null });
    expect(log[0].after).toMatchObject({ status: "CANCELLED" });
  });

  it("records sign-ins and failed sign-ins of members under their organizations, never the password; an unknown address is recorded nowhere", async () => {
    const owner = await member("OWNER", "owner@example.org");
    const other = await t.newOrg({ name: "Other Org" });
    const login = (email: string, password: string) =>
      t.request("POST", "/api/staff/login", {
        key: null,
        body: { email, password },
        headers: { Origin: ORIGIN },
      });
    clock += 1000;
    expect((await login("owner@example.org", "not the right password")).status).toBe(401);
    expect((await login("nobody@example.org", "not the right password")).status).toBe(401);
    clock += 1000;
    expect((await login("Owner@Example.org", PASSWORD)).status).toBe(200);

    const log = await entries("?subjectType=staff_user&actorType=staff");
    // The set-up link signed the Owner in first; then a wrong password; then the right one.
    expect(log.map((e) => [e.action, e.after.via ?? e.after.reason])).toEqual([
      ["staff.signed_in", "password"],
      ["staff.sign_in_failed", "password"],
      ["staff.signed_in", "setup"],
    ]);
    for (const e of log) {
      expect(e.actor).toEqual({ type: "staff", id: owner.userId, label: "owner@example.org" });
      expect(e.subject).toEqual({ type: "staff_user", id: owner.userId });
    }

    const text = await storedText();
    expect(text).not.toContain("not the right password");
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain("nobody@example.org");
    const elsewhere = await t.request<Page>("GET", "/v1/audit-log", { key: other.key });
    expect(elsewhere.body.entries).toEqual([]);
  });

  it("records the team's changes by the Owner who made them, keeping the person's address after they are removed; a refused change records nothing", async () => {
    const owner = await member("OWNER", "owner@example.org");
    const staff = { key: null, headers: { Cookie: owner.cookie, Origin: ORIGIN } };
    clock += 1000;
    const invited = await t.request<{ userId: string }>("POST", "/api/staff/invites", {
      ...staff,
      body: { email: "Helper@Example.org", role: "STAFF" },
    });
    expect(invited.status, invited.text).toBe(201);
    const userId = invited.body.userId;
    clock += 1000;
    expect(
      (await t.request("PATCH", `/api/staff/team/${userId}`, { ...staff, body: { role: "FINANCE" } })).status,
    ).toBe(200);
    const lastOwner = await t.request("PATCH", `/api/staff/team/${owner.userId}`, {
      ...staff,
      body: { role: "STAFF" },
    });
    expect(lastOwner.status).toBe(409);
    clock += 1000;
    expect((await t.request("DELETE", `/api/staff/team/${userId}`, staff)).status).toBe(204);

    const log = await entries(`?subjectType=staff_user&subjectId=${userId}`);
    expect(log.map((e) => e.action)).toEqual(["staff.removed", "staff.role_changed", "staff.invited"]);
    for (const e of log)
      expect(e.actor).toEqual({ type: "staff", id: owner.userId, label: "owner@example.org" });
    expect(log[2].after).toEqual({ email: "Helper@Example.org", role: "STAFF" });
    expect(log[1].before).toEqual({ email: "Helper@Example.org", role: "STAFF" });
    expect(log[1].after).toEqual({ email: "Helper@Example.org", role: "FINANCE" });
    expect(log[0].before).toEqual({ email: "Helper@Example.org", role: "FINANCE" });
    expect(await entries(`?action=staff.role_changed&subjectId=${owner.userId}`)).toEqual([]);
    // The first Owner, made on the command line, was added by the system.
    const [first] = await entries(`?action=staff.invited&subjectId=${owner.userId}`);
    expect(first.actor).toEqual({ type: "system", id: "system", label: null });
  });

  it("answers Owners' sessions and keys with organization:read; Finance and Staff sessions and other keys get 403", async () => {
    const owner = await member("OWNER", "owner@example.org");
    const finance = await member("FINANCE", "finance@example.org");
    const staff = await member("STAFF", "staff@example.org");
    const reader = await t.newOrg({ permissions: ["organization:read"] });
    const payments = await t.newOrg({ permissions: ["donations:read"] });

    expect((await auditLog("", asStaff(owner.cookie))).status).toBe(200);
    expect((await auditLog("", { key: reader.key })).status).toBe(200);
    expect((await auditLog()).status).toBe(200);
    for (const cookie of [finance.cookie, staff.cookie]) {
      const res = await auditLog("", asStaff(cookie));
      expect(res.status).toBe(403);
      expect(res.text).not.toContain("aud_");
    }
    expect((await auditLog("", { key: payments.key })).status).toBe(403);
    expect((await auditLog("", { key: null })).status).toBe(401);
  });

  it("filters by actor, action and days, pages newest first without repeats, and shows only the organization's own entries", async () => {
    const owner = await member("OWNER", "owner@example.org");
    const other = await t.newOrg({ name: "Other Org" });
    // Five forms on five days (January 31st to February 4th, UTC): two by the Owner, three by the key.
    for (let i = 0; i < 5; i++) {
      clock = JAN_31 + i * DAY;
      // A day later the session has ended (8 hours idle): the Owner signs in again.
      const cookie = i < 2 ? await signIn(owner.email) : undefined;
      const res = await t.request("POST", "/v1/forms", {
        ...(cookie ? asStaff(cookie) : {}),
        body: { ...validForms.standard(), title: `Appeal ${i}` },
      });
      expect(res.status, res.text).toBe(201);
    }
    // The other organization's own form: never in this organization's log.
    expect(
      (
        await t.request("POST", "/v1/forms", {
          key: other.key,
          body: { ...validForms.standard(), title: "Theirs" },
        })
      ).status,
    ).toBe(201);

    const all = await entries("?action=form.created");
    expect(all.map((e) => e.after.title)).toEqual([
      "Appeal 4",
      "Appeal 3",
      "Appeal 2",
      "Appeal 1",
      "Appeal 0",
    ]);

    const byOwner = await entries(`?actor=${owner.userId}&action=form.created`);
    expect(byOwner.map((e) => e.after.title)).toEqual(["Appeal 1", "Appeal 0"]);
    const byKeys = await entries("?actorType=key");
    expect(byKeys.map((e) => e.after.title)).toEqual(["Appeal 4", "Appeal 3", "Appeal 2"]);

    const days = await entries("?action=form.created&from=2026-02-01&to=2026-02-02");
    expect(days.map((e) => e.after.title)).toEqual(["Appeal 2", "Appeal 1"]);

    // The days are the organization's: at 10:00 UTC it is 23:00 the day before in Pago Pago (UTC−11).
    const zone = await t.request("PUT", "/v1/organization", { body: { timeZone: "Pacific/Pago_Pago" } });
    expect(zone.status, zone.text).toBe(200);
    const local = await entries("?action=form.created&from=2026-02-01&to=2026-02-02");
    expect(local.map((e) => e.after.title)).toEqual(["Appeal 3", "Appeal 2"]);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await auditLog(
        `?action=form.created&limit=2${cursor ? `&lastEvaluatedKey=${cursor}` : ""}`,
      );
      expect(res.status, res.text).toBe(200);
      expect(res.body.count).toBeLessThanOrEqual(2);
      seen.push(...res.body.entries.map((e) => String(e.after.title)));
      cursor = res.body.lastEvaluatedKey;
    } while (cursor);
    expect(seen).toEqual(["Appeal 4", "Appeal 3", "Appeal 2", "Appeal 1", "Appeal 0"]);

    const first = await auditLog("?action=form.created&limit=2");
    const crossed = await auditLog(`?actorType=key&limit=2&lastEvaluatedKey=${first.body.lastEvaluatedKey}`);
    expect(crossed.status).toBe(400);
    const theirs = await t.request(
      "GET",
      `/v1/audit-log?action=form.created&limit=2&lastEvaluatedKey=${first.body.lastEvaluatedKey}`,
      {
        key: other.key,
      },
    );
    expect(theirs.status).toBe(400);

    const otherLog = await t.request<Page>("GET", "/v1/audit-log", { key: other.key });
    expect(otherLog.body.entries.map((e) => e.after.title)).toEqual(["Theirs"]);
  });

  it("refuses filters it does not know or cannot read with a 400", async () => {
    for (const query of [
      "?action=form.exploded",
      "?actorType=robot",
      "?from=2026-02-30",
      "?from=2026-02-03&to=2026-02-01",
      "?limit=0",
    ]) {
      const res = await auditLog(query);
      expect(res.status, query).toBe(400);
      expect(res.body).toHaveProperty("error");
    }
  });
});

describe(`the audit log of the command line (${dialect})`, { timeout: 120_000 }, () => {
  let temp: TempDir;
  beforeAll(() => {
    temp = tempDir();
  });
  afterAll(async () => {
    await killAll();
    temp?.remove();
  });

  it("records keys made and revoked and settings changed on the command line by the system, never the key", async () => {
    const env = { DATA_DIR: temp.dir, DATABASE_URL: await databaseUrlOfStore(t.store) };
    const made = await runCli(
      ["key", "create", "--org", t.org.id, "--permissions", "forms:read", "--json"],
      env,
    );
    expect(made.code, made.stderr).toBe(0);
    const { key, keyId } = made.json as { key: string; keyId: string };
    const revoked = await runCli(["key", "revoke", "--key", keyId, "--json"], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    const set = await runCli(
      ["org", "set", "--org", t.org.id, "--name", "Renamed on the server", "--json"],
      env,
    );
    expect(set.code, set.stderr).toBe(0);

    const keys = await entries(`?subjectType=key&subjectId=${keyId}`);
    expect(keys.map((e) => e.action)).toEqual(["key.revoked", "key.created"]);
    for (const e of keys) expect(e.actor).toEqual({ type: "system", id: "system", label: null });
    expect(keys[1].after).toEqual({ prefix: key.slice(0, 12), permissions: ["forms:read"] });
    expect(keys[0].before).toEqual({ revokedAt: null });
    const [renamed] = await entries("?action=organization.updated");
    expect(renamed).toMatchObject({
      actor: { type: "system" },
      before: { organizationName: "Test Org" },
      after: { organizationName: "Renamed on the server" },
    });
    expect(await storedText()).not.toContain(key);
  });
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTransport } from "../../server/mail/transport.js";
import { MailWorker } from "../../server/mail/worker.js";
import { createStaffMember } from "../../server/staff/accounts.js";
import { changeRole, TeamError } from "../../server/staff/team.js";
import type { Store } from "../../server/store/database.js";
import { isoAt } from "../../shared/time.js";
import { parseMail } from "../mail/support.js";
import { card, checkout, createForm } from "../support/checkout.js";
import { PASSWORD, staffClient } from "../support/staff.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * The Team endpoints: an Owner invites a person (a set-up link mailed to them), lists the members,
 * changes a role and removes a person; only Owners, only with a session and from this instance's pages;
 * the last Owner stays (even when two Owners demote each other at once); a change of role or a removal
 * takes effect on the person's very next request.
 */
describe(`staff team (${dialect})`, () => {
  let t: TestApp;
  let mailDir: string;
  let worker: MailWorker;
  let owner: { userId: string; cookie: string };
  const now = Date.parse("2026-11-26T10:00:00Z");
  const SETUP_LINK = /http:\/\/forms\.test\/dashboard\/setup\?token=([A-Za-z0-9_-]{43})/;

  beforeAll(async () => {
    t = await setupTestApp({ now: () => now, env: { CHECKOUT_LIMIT_PER_IP: "0" } });
    mailDir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-team-mail-"));
    const transport = createTransport({ dataDir: mailDir, publicUrl: t.config.publicUrl, now: () => now });
    worker = new MailWorker({ store: t.store, transport, now: () => now });
    owner = await member("OWNER", "owner@example.org");
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
    fs.rmSync(mailDir, { recursive: true, force: true });
  });

  const { send: call, cookieOf, staffMember: member } = staffClient(() => t, { now: () => now });

  async function setUp(token: string) {
    const res = await call("POST", "/api/staff/setup", { body: { token, password: PASSWORD } });
    return { ...res, cookie: cookieOf(res) };
  }

  /** The messages the mail worker has written as .eml files since the last look, to `to`. */
  const seen = new Set<string>();
  async function newMailsTo(to: string) {
    await worker.runOnce();
    const names = fs
      .readdirSync(path.join(mailDir, "mail"))
      .filter((n) => n.endsWith(".eml") && !seen.has(n));
    for (const name of names) seen.add(name);
    const mails = names.map((name) => parseMail(fs.readFileSync(path.join(mailDir, "mail", name), "utf8")));
    // An address's domain is written in lower case.
    return mails.filter((m) => m.header("to")?.toLowerCase() === to.toLowerCase());
  }

  async function ownerCount(organizationId: string, store: Store = t.store): Promise<number> {
    const rows = await store.db
      .selectFrom("staff_memberships")
      .select("user_id")
      .where("organization_id", "=", organizationId)
      .where("role", "=", "OWNER")
      .execute();
    return rows.length;
  }

  it("mails an invitation whose link sets up a Finance person, who then has Finance's permissions", async () => {
    const invited = await call("POST", "/api/staff/invites", {
      cookie: owner.cookie,
      body: { email: "Fin@Example.org", role: "FINANCE" },
    });
    expect(invited.status, invited.text).toBe(201);
    expect(invited.body).toEqual({
      userId: expect.stringMatching(/^usr_/),
      email: "Fin@Example.org",
      role: "FINANCE",
      joinedAt: isoAt(now),
      passwordSet: false,
      invitePending: true,
      inviteExpiresAt: isoAt(now + 24 * 3_600_000),
      lastSignInAt: null,
    });
    // The link goes to the person only, never into the answer.
    expect(invited.text).not.toMatch(/token/i);

    const [mail] = await newMailsTo("Fin@Example.org");
    expect(mail, "an invitation .eml").toBeDefined();
    expect(mail.header("subject")).toMatch(/invited/i);
    expect(mail.header("reply-to")).toBe("owner@example.org");
    const [text, html] = mail.parts;
    const token = SETUP_LINK.exec(text.body)?.[1] ?? "";
    expect(token).not.toBe("");
    expect(html.body).toContain(`href="http://forms.test/dashboard/setup?token=${token}"`);
    expect(text.body).toMatch(/Finance/);

    const setup = await setUp(token);
    expect(setup.status, setup.text).toBe(200);
    expect(setup.body).toMatchObject({ email: "Fin@Example.org", organizationId: t.org.id, role: "FINANCE" });

    const formId = await createForm(t, validForms.standard());
    const gift = await checkout(t, formId, {
      amount: 20,
      frequency: "ONE_TIME",
      donor: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.org" },
      paymentMethod: card(),
    });
    const paymentId = (gift.body.payment as { paymentID: string }).paymentID;
    const refund = await call("POST", `/v1/payments/${paymentId}/refund`, {
      cookie: setup.cookie,
      body: { amount: 5 },
    });
    expect(refund.status, refund.text).toBe(200);
    const form = await call("POST", "/v1/forms", { cookie: setup.cookie, body: validForms.standard() });
    expect(form.status).toBe(403);

    const team = await call("GET", "/api/staff/team", { cookie: owner.cookie });
    expect(team.status).toBe(200);
    expect(team.headers.get("Cache-Control")).toBe("no-store");
    const fin = team.body.members.find((m: { email: string }) => m.email === "Fin@Example.org");
    expect(fin).toMatchObject({
      userId: invited.body.userId,
      role: "FINANCE",
      passwordSet: true,
      invitePending: false,
      inviteExpiresAt: null,
      lastSignInAt: isoAt(now),
    });
  });

  it("re-inviting a person who has not set a password mails a fresh link, and the earlier one stops working", async () => {
    const first = await call("POST", "/api/staff/invites", {
      cookie: owner.cookie,
      body: { email: "late@example.org", role: "STAFF" },
    });
    expect(first.status).toBe(201);
    const [firstMail] = await newMailsTo("late@example.org");
    const again = await call("POST", "/api/staff/invites", {
      cookie: owner.cookie,
      body: { email: "LATE@example.org", role: "FINANCE" },
    });
    expect(again.status, again.text).toBe(201);
    expect(again.body).toMatchObject({ userId: first.body.userId, role: "FINANCE", invitePending: true });

    // Both to the address as the person was first invited.
    const [secondMail] = await newMailsTo("late@example.org");
    const tokens = [firstMail, secondMail].map((m) => SETUP_LINK.exec(m?.parts[0].body ?? "")?.[1]);
    expect(tokens[1]).toBeDefined();
    expect(tokens[0]).not.toBe(tokens[1]);
    expect((await setUp(tokens[0] ?? "")).status).toBe(401);
    const setup = await setUp(tokens[1] ?? "");
    expect(setup.status).toBe(200);
    expect(setup.body.role).toBe("FINANCE");
  });

  it("refuses an invitation of someone already in the organization with 409", async () => {
    await member("STAFF", "here@example.org");
    const res = await call("POST", "/api/staff/invites", {
      cookie: owner.cookie,
      body: { email: " Here@Example.org ", role: "FINANCE" },
    });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/already a member/);
    const bad = await call("POST", "/api/staff/invites", {
      cookie: owner.cookie,
      body: { email: "not an address", role: "CHIEF" },
    });
    expect(bad.status).toBe(400);
  });

  it("is for Owners only: Finance and Staff get 403, no session 401", async () => {
    const someone = await member("STAFF", "target@example.org");
    for (const role of ["FINANCE", "STAFF"] as const) {
      const { cookie } = await member(role, `not-owner-${role.toLowerCase()}@example.org`);
      const answers = [
        await call("GET", "/api/staff/team", { cookie }),
        await call("POST", "/api/staff/invites", { cookie, body: { email: "x@example.org", role: "OWNER" } }),
        await call("PATCH", `/api/staff/team/${someone.userId}`, { cookie, body: { role: "OWNER" } }),
        await call("DELETE", `/api/staff/team/${someone.userId}`, { cookie }),
      ];
      expect(
        answers.map((a) => a.status),
        role,
      ).toEqual([403, 403, 403, 403]);
      expect(answers[0].body.error).toMatch(/Owner/);
    }
    expect((await call("GET", "/api/staff/team")).status).toBe(401);
    expect(
      (await call("POST", "/api/staff/invites", { body: { email: "x@example.org", role: "OWNER" } })).status,
    ).toBe(401);
    const list = await call("GET", "/api/staff/team", { cookie: owner.cookie });
    expect(list.body.members.map((m: { email: string }) => m.email)).not.toContain("x@example.org");
  });

  it("takes no API key, even beside an Owner's cookie", async () => {
    const someone = await member("STAFF", "keyed@example.org");
    const headers = { Authorization: `Bearer ${t.org.key}` };
    const answers = [
      await call("GET", "/api/staff/team", { headers }),
      await call("GET", "/api/staff/team", { cookie: owner.cookie, headers }),
      await call("POST", "/api/staff/invites", {
        cookie: owner.cookie,
        headers,
        body: { email: "bykey@example.org", role: "STAFF" },
      }),
      await call("PATCH", `/api/staff/team/${someone.userId}`, {
        cookie: owner.cookie,
        headers,
        body: { role: "OWNER" },
      }),
      await call("DELETE", `/api/staff/team/${someone.userId}`, { cookie: owner.cookie, headers }),
    ];
    expect(answers.map((a) => a.status)).toEqual([403, 403, 403, 403, 403]);
    expect(answers[0].body.error).toMatch(/API key/);
  });

  it("changes nothing without this instance's Origin", async () => {
    const someone = await member("STAFF", "crossed@example.org");
    for (const origin of ["https://evil.example", null]) {
      const answers = [
        await call("POST", "/api/staff/invites", {
          cookie: owner.cookie,
          origin,
          body: { email: "crosssite@example.org", role: "OWNER" },
        }),
        await call("PATCH", `/api/staff/team/${someone.userId}`, {
          cookie: owner.cookie,
          origin,
          body: { role: "OWNER" },
        }),
        await call("DELETE", `/api/staff/team/${someone.userId}`, { cookie: owner.cookie, origin }),
      ];
      expect(
        answers.map((a) => a.status),
        String(origin),
      ).toEqual([403, 403, 403]);
    }
    const list = await call("GET", "/api/staff/team", { cookie: owner.cookie });
    const emails = list.body.members.map((m: { email: string }) => m.email);
    expect(emails).not.toContain("crosssite@example.org");
    expect(list.body.members.find((m: { email: string }) => m.email === "crossed@example.org").role).toBe(
      "STAFF",
    );
  });

  it("keeps the last Owner: neither demoted nor removed until there is a second Owner", async () => {
    const org = await t.newOrg({ name: "One Owner Org" });
    const only = await member("OWNER", "only@one.example", org.id);
    const demote = await call("PATCH", `/api/staff/team/${only.userId}`, {
      cookie: only.cookie,
      body: { role: "FINANCE" },
    });
    expect(demote.status).toBe(409);
    expect(demote.body.error).toMatch(/at least one Owner/);
    const remove = await call("DELETE", `/api/staff/team/${only.userId}`, { cookie: only.cookie });
    expect(remove.status).toBe(409);
    expect(await ownerCount(org.id)).toBe(1);
    // The refused change ended nothing: the Owner is still signed in.
    expect((await call("GET", "/api/staff/team", { cookie: only.cookie })).status).toBe(200);

    const second = await member("OWNER", "second@one.example", org.id);
    const now1 = await call("PATCH", `/api/staff/team/${only.userId}`, {
      cookie: second.cookie,
      body: { role: "FINANCE" },
    });
    expect(now1.status, now1.text).toBe(200);
    expect(now1.body).toMatchObject({ userId: only.userId, role: "FINANCE" });
    const last = await call("DELETE", `/api/staff/team/${second.userId}`, { cookie: second.cookie });
    expect(last.status).toBe(409);
    const promoted = await call("PATCH", `/api/staff/team/${only.userId}`, {
      cookie: second.cookie,
      body: { role: "OWNER" },
    });
    expect(promoted.status).toBe(200);
    const removed = await call("DELETE", `/api/staff/team/${second.userId}`, { cookie: second.cookie });
    expect(removed.status).toBe(204);
    expect(await ownerCount(org.id)).toBe(1);
  });

  it("keeps an Owner who has joined: one whose only fellow Owner is a pending invitation is neither demoted nor removed", async () => {
    const org = await t.newOrg({ name: "Invited Owner Org" });
    const only = await member("OWNER", "joined@invited.example", org.id);
    const invited = await call("POST", "/api/staff/invites", {
      cookie: only.cookie,
      body: { email: "typo@invited.example", role: "OWNER" },
    });
    expect(invited.status, invited.text).toBe(201);
    expect(await ownerCount(org.id)).toBe(2);
    const remove = await call("DELETE", `/api/staff/team/${only.userId}`, { cookie: only.cookie });
    expect(remove.status).toBe(409);
    expect(remove.body.error).toMatch(/Owner who has joined/);
    const demote = await call("PATCH", `/api/staff/team/${only.userId}`, {
      cookie: only.cookie,
      body: { role: "STAFF" },
    });
    expect(demote.status).toBe(409);
    // The pending invitation itself may be withdrawn: the Owner who has joined remains.
    const withdrawn = await call("DELETE", `/api/staff/team/${invited.body.userId}`, { cookie: only.cookie });
    expect(withdrawn.status, withdrawn.text).toBe(204);
    expect(await ownerCount(org.id)).toBe(1);
  });

  it("limits invitations mailed to one address (5 an hour): the next is a 429 with Retry-After, mailing nothing", async () => {
    const org = await t.newOrg({ name: "Inviting Org" });
    const inviter = await member("OWNER", "inviter@inviting.example", org.id);
    const invite = () =>
      call("POST", "/api/staff/invites", {
        cookie: inviter.cookie,
        body: { email: "victim@elsewhere.example", role: "STAFF" },
      });
    for (let i = 0; i < 5; i++) expect((await invite()).status).toBe(201);
    const mailed = async () =>
      (
        await t.store.db
          .selectFrom("email_outbox")
          .select("id")
          .where("to_address", "=", "victim@elsewhere.example")
          .execute()
      ).length;
    const before = await mailed();
    const refused = await invite();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(await mailed()).toBe(before);
  });

  it("leaves one Owner when the two Owners are demoted at once from two connections", async () => {
    const org = await t.newOrg({ name: "Two Owners Org" });
    const a = await member("OWNER", "a@two.example", org.id);
    const b = await member("OWNER", "b@two.example", org.id);
    // A second store on the same database: another process's connection.
    const other = await t.database.open();
    try {
      for (let round = 0; round < 5; round++) {
        const results = await Promise.allSettled([
          changeRole(t.store, { organizationId: org.id, userId: a.userId, role: "FINANCE", nowMs: now }),
          changeRole(other, { organizationId: org.id, userId: b.userId, role: "STAFF", nowMs: now }),
        ]);
        expect(
          results.filter((r) => r.status === "fulfilled"),
          `round ${round}`,
        ).toHaveLength(1);
        const refused = results.find((r) => r.status === "rejected");
        expect(refused?.status === "rejected" && refused.reason).toBeInstanceOf(TeamError);
        expect(await ownerCount(org.id), `round ${round}`).toBe(1);
        for (const userId of [a.userId, b.userId])
          await changeRole(t.store, { organizationId: org.id, userId, role: "OWNER", nowMs: now });
      }
    } finally {
      await other.close();
    }

    // Through HTTP as well: each Owner demotes the other at once; one Owner is left.
    const c = await member("OWNER", "c@two.example", org.id);
    const d = await member("OWNER", "d@two.example", org.id);
    for (const userId of [a.userId, b.userId])
      expect((await call("DELETE", `/api/staff/team/${userId}`, { cookie: c.cookie })).status).toBe(204);
    const answers = await Promise.all([
      call("PATCH", `/api/staff/team/${d.userId}`, { cookie: c.cookie, body: { role: "STAFF" } }),
      call("PATCH", `/api/staff/team/${c.userId}`, { cookie: d.cookie, body: { role: "STAFF" } }),
    ]);
    expect(answers.filter((x) => x.status === 200)).toHaveLength(1);
    // The other is refused: the last Owner (409), or, had the first change ended its session, 401.
    expect(answers.map((x) => x.status).filter((s) => s !== 200)[0]).toBeOneOf([409, 401]);
    expect(await ownerCount(org.id)).toBe(1);
  });

  it("ends a removed person's sessions: their next /v1 call is 401, and they cannot sign in again", async () => {
    const leaving = await member("FINANCE", "leaving@example.org");
    expect((await call("GET", "/v1/payments", { cookie: leaving.cookie })).status).toBe(200);
    const removed = await call("DELETE", `/api/staff/team/${leaving.userId}`, { cookie: owner.cookie });
    expect(removed.status).toBe(204);
    expect((await call("GET", "/v1/payments", { cookie: leaving.cookie })).status).toBe(401);
    expect((await call("GET", "/api/staff/me", { cookie: leaving.cookie })).status).toBe(401);
    const login = await call("POST", "/api/staff/login", {
      body: { email: "leaving@example.org", password: PASSWORD },
    });
    expect(login.status).toBe(401);
    const list = await call("GET", "/api/staff/team", { cookie: owner.cookie });
    expect(list.body.members.map((m: { userId: string }) => m.userId)).not.toContain(leaving.userId);
    expect((await call("DELETE", `/api/staff/team/${leaving.userId}`, { cookie: owner.cookie })).status).toBe(
      404,
    );
  });

  it("ends a removed person's password-reset links: one asked for before the removal changes nothing after it", async () => {
    const leaving = await member("FINANCE", "reset-leaver@example.org");
    const elsewhere = await t.newOrg({ name: "Elsewhere" });
    // Still on another organization's staff after the removal.
    await createStaffMember(t.store, {
      organizationId: elsewhere.id,
      email: "reset-leaver@example.org",
      role: "STAFF",
      publicUrl: t.config.publicUrl,
      nowMs: now,
    });
    const resetToken = async () => {
      const rows = await t.store.db
        .selectFrom("email_outbox")
        .select("text_body")
        .where("to_address", "=", "reset-leaver@example.org")
        .orderBy("id", "desc")
        .execute();
      return rows
        .map((r) => /\/dashboard\/reset\?token=([A-Za-z0-9_-]{43})/.exec(r.text_body)?.[1])
        .find(Boolean);
    };
    const asked = await call("POST", "/api/staff/password-reset", {
      body: { email: "reset-leaver@example.org" },
    });
    expect(asked.status).toBe(202);
    const token = await resetToken();
    expect(token).toBeDefined();
    const hashOf = async () =>
      (
        await t.store.db
          .selectFrom("staff_users")
          .select("password_hash")
          .where("email_key", "=", "reset-leaver@example.org")
          .executeTakeFirstOrThrow()
      ).password_hash;
    const before = await hashOf();
    const removed = await call("DELETE", `/api/staff/team/${leaving.userId}`, { cookie: owner.cookie });
    expect(removed.status).toBe(204);
    const used = await call("POST", "/api/staff/password-reset/complete", {
      body: { token, password: "a new passphrase after removal" },
    });
    expect(used.status).toBe(401);
    expect(used.headers.get("Set-Cookie")).toBeNull();
    expect(await hashOf()).toBe(before);
  });

  it("a change of role takes effect on the person's next request", async () => {
    const formId = await createForm(t, validForms.standard());
    const gift = await checkout(t, formId, {
      amount: 30,
      frequency: "ONE_TIME",
      donor: { firstName: "Grace", lastName: "Hopper", email: "grace@example.org" },
      paymentMethod: card(),
    });
    const paymentId = (gift.body.payment as { paymentID: string }).paymentID;
    const refund = (cookie: string) =>
      call("POST", `/v1/payments/${paymentId}/refund`, { cookie, body: { amount: 1 } });

    // Through the endpoint: the session ends, and the next one has the smaller role.
    const changing = await member("FINANCE", "changing@example.org");
    const changed = await call("PATCH", `/api/staff/team/${changing.userId}`, {
      cookie: owner.cookie,
      body: { role: "STAFF" },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ role: "STAFF", passwordSet: true });
    // A change that names no role says it is missing, with the roles to choose from.
    const empty = await call("PATCH", `/api/staff/team/${changing.userId}`, {
      cookie: owner.cookie,
      body: {},
    });
    expect(empty.status).toBe(400);
    expect(empty.body.details).toEqual(["role is required: one of OWNER, FINANCE, STAFF"]);
    expect((await call("GET", "/v1/payments", { cookie: changing.cookie })).status).toBe(401);
    const login = await call("POST", "/api/staff/login", {
      body: { email: "changing@example.org", password: PASSWORD },
    });
    expect(login.body.role).toBe("STAFF");
    expect((await refund(cookieOf(login))).status).toBe(403);

    // A session reads its role from the membership at each request, whatever changed it.
    const direct = await member("FINANCE", "direct@example.org");
    expect((await refund(direct.cookie)).status).toBe(200);
    await t.store.db
      .updateTable("staff_memberships")
      .set({ role: "STAFF" })
      .where("user_id", "=", direct.userId)
      .execute();
    expect((await refund(direct.cookie)).status).toBe(403);
    expect((await call("GET", "/api/staff/me", { cookie: direct.cookie })).body.role).toBe("STAFF");
  });

  it("tells the signed-in person the organization's time zone and currency, in which the dashboard writes times and totals", async () => {
    const { cookie } = await member("STAFF", "zone@example.org");
    const before = (await t.request<{ timeZone: string; currency: string }>("GET", "/v1/organization")).body;
    await t.request("PUT", "/v1/organization", { body: { timeZone: "Asia/Tokyo", currency: "EUR" } });
    try {
      const answer = await call("GET", "/api/staff/me", { cookie });
      expect(answer.body).toMatchObject({ role: "STAFF", timeZone: "Asia/Tokyo", currency: "EUR" });
    } finally {
      await t.request("PUT", "/v1/organization", {
        body: { timeZone: before.timeZone, currency: before.currency },
      });
    }
  });

  it("refuses an Owner who must set up two-factor sign-in first, as /v1 does", async () => {
    const org = await t.newOrg({ name: "Two-factor Org" });
    const owner2 = await member("OWNER", "owner@twofactor.example", org.id);
    expect((await call("GET", "/api/staff/team", { cookie: owner2.cookie })).status).toBe(200);
    const required = await t.request("PUT", "/v1/organization", {
      key: org.key,
      body: { requireTwoFactor: true },
    });
    expect(required.status, required.text).toBe(200);
    const list = await call("GET", "/api/staff/team", { cookie: owner2.cookie });
    expect(list.status).toBe(403);
    expect(list.body.error).toMatch(/two-factor/);
    const invite = await call("POST", "/api/staff/invites", {
      cookie: owner2.cookie,
      body: { email: "nope@twofactor.example", role: "OWNER" },
    });
    expect(invite.status).toBe(403);
  });

  it("never reaches another organization's members", async () => {
    const other = await t.newOrg({ name: "Elsewhere" });
    const theirs = await member("STAFF", "theirs@elsewhere.example", other.id);
    const patch = await call("PATCH", `/api/staff/team/${theirs.userId}`, {
      cookie: owner.cookie,
      body: { role: "OWNER" },
    });
    expect(patch.status).toBe(404);
    expect((await call("DELETE", `/api/staff/team/${theirs.userId}`, { cookie: owner.cookie })).status).toBe(
      404,
    );
    const list = await call("GET", "/api/staff/team", { cookie: owner.cookie });
    expect(list.body.members.map((m: { userId: string }) => m.userId)).not.toContain(theirs.userId);
    expect((await call("GET", "/api/staff/me", { cookie: theirs.cookie })).body.role).toBe("STAFF");
  });
});

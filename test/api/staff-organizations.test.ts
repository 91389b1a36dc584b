import { Secret, TOTP } from "otpauth";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createStaffMember } from "../../server/staff/accounts.js";
import type { StaffRole } from "../../shared/schemas/staff.js";
import { PASSWORD, staffClient } from "../support/staff.js";
import { dialect, setupTestApp, type TestApp } from "../support/testApp.js";

/**
 * A person on the staff of several organizations: `GET /api/staff/me` lists those they have joined,
 * sign-in takes the one to open (`organizationId`), and `POST /api/staff/organization` moves a session to
 * another: a new session with the role held there, the old one ended, never an organization the person has
 * not joined (an invitation not yet accepted included).
 */

const ORIGIN = "http://forms.test";
let t: TestApp;

beforeEach(async () => {
  t = await setupTestApp();
});
afterEach(async () => {
  await t.close();
});

const { send, post, cookieOf, tokenOf } = staffClient(() => t);

/** Adds the person to the organization with `role`; the set-up link's token. */
async function add(email: string, role: StaffRole, organizationId: string): Promise<string> {
  const made = await createStaffMember(t.store, {
    organizationId,
    email,
    role,
    publicUrl: t.config.publicUrl,
    nowMs: Date.now(),
  });
  return tokenOf(made.setupUrl);
}

/** The token of the latest password-reset link mailed to `email`, from the e-mail outbox. */
async function mailedResetToken(email: string): Promise<string | undefined> {
  const rows = await t.store.db
    .selectFrom("email_outbox")
    .select("text_body")
    .where("to_address", "=", email)
    .orderBy("id", "desc")
    .execute();
  return rows[0]?.text_body.match(/\/dashboard\/reset\?token=([A-Za-z0-9_-]{43})$/m)?.[1];
}

/** Alice: Owner of the test organization (joined first), Finance of B (joined with its link); and org C. */
async function alice() {
  const orgB = await t.newOrg({ name: "Org B" });
  const orgC = await t.newOrg({ name: "Org C" });
  const setup = await post("/api/staff/setup", {
    token: await add("alice@a.example", "OWNER", t.org.id),
    password: PASSWORD,
  });
  expect(setup.status, setup.text).toBe(200);
  const invitation = await add("alice@a.example", "FINANCE", orgB.id);
  const joined = await post("/api/staff/login", { email: "alice@a.example", password: PASSWORD, invitation });
  expect(joined.status, joined.text).toBe(200);
  return { orgB, orgC, cookie: cookieOf(setup) };
}

describe(`staff on several organizations (${dialect})`, () => {
  it("me lists the organizations the person has joined, in the order joined, with the role in each", async () => {
    const { orgB, cookie } = await alice();
    const me = await send("GET", "/api/staff/me", { cookie });
    expect(me.status, me.text).toBe(200);
    expect(me.body.organizationId).toBe(t.org.id);
    expect(me.body.organizations).toEqual([
      { id: t.org.id, name: "Test Org", role: "OWNER" },
      { id: orgB.id, name: "Org B", role: "FINANCE" },
    ]);
  });

  it("an invitation not yet accepted is not listed and cannot be signed in to or switched to", async () => {
    const { orgC, cookie } = await alice();
    await add("alice@a.example", "STAFF", orgC.id);
    const me = await send("GET", "/api/staff/me", { cookie });
    expect(me.body.organizations.map((o: { id: string }) => o.id)).not.toContain(orgC.id);
    const login = await post("/api/staff/login", {
      email: "alice@a.example",
      password: PASSWORD,
      organizationId: orgC.id,
    });
    expect(login.status).toBe(403);
    expect(login.body.error).toMatch(/invitation/);
    expect(login.headers.get("Set-Cookie")).toBeNull();
    const moved = await post("/api/staff/organization", { organizationId: orgC.id }, cookie);
    expect(moved.status).toBe(403);
    // The session is untouched.
    expect((await send("GET", "/api/staff/me", { cookie })).body.organizationId).toBe(t.org.id);
  });

  it("sign-in opens the organization asked for; without it, the one joined first", async () => {
    const { orgB } = await alice();
    const plain = await post("/api/staff/login", { email: "alice@a.example", password: PASSWORD });
    expect(plain.body).toMatchObject({ organizationId: t.org.id, role: "OWNER" });
    const inB = await post("/api/staff/login", {
      email: "alice@a.example",
      password: PASSWORD,
      organizationId: orgB.id,
    });
    expect(inB.status, inB.text).toBe(200);
    expect(inB.body).toMatchObject({ organizationId: orgB.id, organizationName: "Org B", role: "FINANCE" });
    // Its session reaches B's data with Finance's permissions, not the Owner's of the first organization.
    const payments = await send("GET", "/v1/payments", { cookie: cookieOf(inB) });
    expect(payments.status, payments.text).toBe(200);
    const keys = await send("GET", "/v1/keys", { cookie: cookieOf(inB) });
    expect(keys.status).toBe(403);
  });

  it("a wrong password with organizationId is the plain sign-in refusal; with an invitation it must be the link's organization", async () => {
    const { orgC } = await alice();
    for (const organizationId of [orgC.id, "org_nope"]) {
      const res = await post("/api/staff/login", {
        email: "alice@a.example",
        password: "wrong password!!",
        organizationId,
      });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe("Wrong e-mail address or password");
    }
    // With an invitation, organizationId must be the link's organization; the link stays usable if not.
    const invitation = await add("alice@a.example", "STAFF", orgC.id);
    const mismatched = await post("/api/staff/login", {
      email: "alice@a.example",
      password: PASSWORD,
      organizationId: t.org.id,
      invitation,
    });
    expect(mismatched.status, mismatched.text).toBe(401);
    const accepted = await post("/api/staff/login", {
      email: "alice@a.example",
      password: PASSWORD,
      organizationId: orgC.id,
      invitation,
    });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body).toMatchObject({ organizationId: orgC.id, role: "STAFF" });
  });

  it("keeps two-factor sign-in on while any organization the person joined requires it of their role there", async () => {
    const { orgB, cookie } = await alice();
    const started = await post("/api/staff/two-factor/enrolment", {}, cookie);
    expect(started.status, started.text).toBe(200);
    const code = new TOTP({ secret: Secret.fromBase32(started.body.secret) }).generate();
    expect((await post("/api/staff/two-factor/confirm", { code }, cookie)).status).toBe(200);
    // Org B requires it of Finance, which Alice is there; the test organization, where her session is, does not.
    const requireIn = (id: string, on: number) =>
      t.store.db.updateTable("organizations").set({ require_two_factor: on }).where("id", "=", id).execute();
    await requireIn(orgB.id, 1);
    const refused = await post("/api/staff/two-factor/disable", { password: PASSWORD }, cookie);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe(
      "Org B requires two-factor sign-in of Owners and Finance, and you are one there",
    );
    expect((await send("GET", "/api/staff/two-factor", { cookie })).body.enabled).toBe(true);
    await requireIn(orgB.id, 0);
    expect((await post("/api/staff/two-factor/disable", { password: PASSWORD }, cookie)).status).toBe(204);
  });

  it("switching moves the session: a new cookie in the other organization, the old one ended, an audit entry there", async () => {
    const { orgB, cookie } = await alice();
    const moved = await post("/api/staff/organization", { organizationId: orgB.id }, cookie);
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ organizationId: orgB.id, role: "FINANCE" });
    const next = cookieOf(moved);
    expect(next).toMatch(/^almoner_staff=/);
    expect(next).not.toBe(cookie);
    expect((await send("GET", "/api/staff/me", { cookie: next })).body.organizationId).toBe(orgB.id);
    expect((await send("GET", "/api/staff/me", { cookie })).status).toBe(401);
    const log = await t.store.db
      .selectFrom("audit_log")
      .selectAll()
      .where("organization_id", "=", orgB.id)
      .where("action", "=", "staff.signed_in")
      .execute();
    expect(log.map((row) => JSON.parse(row.new_values).via)).toContain("switch");
    // And back.
    const back = await post("/api/staff/organization", { organizationId: t.org.id }, next);
    expect(back.body).toMatchObject({ organizationId: t.org.id, role: "OWNER" });
  });

  it("switching needs the session, this instance's Origin and a joined organization", async () => {
    const { orgB, cookie } = await alice();
    expect((await post("/api/staff/organization", { organizationId: orgB.id })).status).toBe(401);
    const elsewhere = await send("POST", "/api/staff/organization", {
      body: { organizationId: orgB.id },
      cookie,
      origin: "https://evil.example",
    });
    expect(elsewhere.status).toBe(403);
    const keyed = await t.request("POST", "/api/staff/organization", {
      body: { organizationId: orgB.id },
      headers: { Origin: ORIGIN },
    });
    expect(keyed.status).toBe(403);
    const other = await t.newOrg({ name: "Not hers" });
    const refused = await post("/api/staff/organization", { organizationId: other.id }, cookie);
    expect(refused.status).toBe(403);
    const invalid = await post("/api/staff/organization", { organizationId: "" }, cookie);
    expect(invalid.status).toBe(400);
    // None of those moved the session.
    expect((await send("GET", "/api/staff/me", { cookie })).body.organizationId).toBe(t.org.id);
  });

  it("an invitation older than the person's own membership is entered neither by a plain sign-in nor by a reset link", async () => {
    const orgB = await t.newOrg({ name: "Org B" });
    // Org B invites Vic first: the person's oldest membership, never accepted.
    await add("vic@a.example", "OWNER", orgB.id);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const setup = await post("/api/staff/setup", {
      token: await add("vic@a.example", "STAFF", t.org.id),
      password: PASSWORD,
    });
    expect(setup.status, setup.text).toBe(200);
    const login = await post("/api/staff/login", { email: "vic@a.example", password: PASSWORD });
    expect(login.status, login.text).toBe(200);
    expect(login.body.organizationId).toBe(t.org.id);
    const intoB = await post("/api/staff/login", {
      email: "vic@a.example",
      password: PASSWORD,
      organizationId: orgB.id,
    });
    expect(intoB.status).toBe(403);
    expect(intoB.headers.get("Set-Cookie")).toBeNull();

    expect((await post("/api/staff/password-reset", { email: "vic@a.example" })).status).toBe(202);
    const reset = await post("/api/staff/password-reset/complete", {
      token: await mailedResetToken("vic@a.example"),
      password: "vic's new passphrase 7",
    });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body.organizationId).toBe(t.org.id);
    const me = await send("GET", "/api/staff/me", { cookie: cookieOf(reset) });
    expect(me.body.organizations.map((o: { id: string }) => o.id)).toEqual([t.org.id]);
    // Org B still sees an invitation waiting.
    const inB = await t.store.db
      .selectFrom("staff_sessions")
      .select("token_hash")
      .where("organization_id", "=", orgB.id)
      .execute();
    expect(inB).toEqual([]);
  });

  it("a failed sign-in is written to the audit log of the organizations the person has joined only", async () => {
    const { orgB, orgC } = await alice();
    await add("alice@a.example", "STAFF", orgC.id);
    const wrong = await post("/api/staff/login", {
      email: "alice@a.example",
      password: "not her password at all",
    });
    expect(wrong.status).toBe(401);
    const failures = await t.store.db
      .selectFrom("audit_log")
      .select("organization_id")
      .where("action", "=", "staff.sign_in_failed")
      .execute();
    expect(failures.map((f) => f.organization_id).sort()).toEqual([t.org.id, orgB.id].sort());
  });
});

import { Secret, TOTP } from "otpauth";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createStaffMember, redeemPasswordLink, StaffError } from "../../server/staff/accounts.js";
import { hashPassword } from "../../server/staff/passwords.js";
import { PASSWORD, staffClient } from "../support/staff.js";
import { dialect, setupTestApp, type TestApp } from "../support/testApp.js";

/**
 * Set-up links of people who already have a password: a person on the staff of one organization invited
 * to another, and an invited person who chose a password with a reset link before using the invitation.
 * The link sets no password then, ends none of their sessions and opens none without the checks of a
 * sign-in: they sign in with their own password (and code) and the link, which makes them join.
 */

const START = Date.parse("2026-11-26T10:00:00Z");
let now = START;
let t: TestApp;

beforeEach(async () => {
  now = START;
  t = await setupTestApp({ now: () => now });
});
afterEach(async () => {
  await t.close();
});

const { send, post, cookieOf, tokenOf, member } = staffClient(() => t, { now: () => now });
const codeAt = (secret: string, at = now) =>
  new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: at });

/** Turns TOTP on for the session's person: the secret. */
async function enrol(cookie: string): Promise<string> {
  const started = await post("/api/staff/two-factor/enrolment", {}, cookie);
  expect(started.status, started.text).toBe(200);
  const confirmed = await post(
    "/api/staff/two-factor/confirm",
    { code: codeAt(started.body.secret) },
    cookie,
  );
  expect(confirmed.status, confirmed.text).toBe(200);
  return started.body.secret;
}

/** The token of the newest link of `kind` mailed to `email`. */
async function mailedToken(email: string, kind: "setup" | "reset"): Promise<string> {
  const rows = await t.store.db
    .selectFrom("email_outbox")
    .select("text_body")
    .where("to_address", "=", email)
    .orderBy("id", "desc")
    .execute();
  for (const row of rows) {
    const found = new RegExp(`/dashboard/${kind}\\?token=([A-Za-z0-9_-]{43})`).exec(row.text_body);
    if (found) return found[1];
  }
  throw new Error(`no ${kind} link mailed to ${email}`);
}

async function passwordHashOf(email: string): Promise<string | null> {
  const row = await t.store.db
    .selectFrom("staff_users")
    .select("password_hash")
    .where("email_key", "=", email)
    .executeTakeFirstOrThrow();
  return row.password_hash;
}

describe(`set-up links of people who have a password (${dialect})`, () => {
  it("an Owner of one organization with TOTP, invited to another: the link neither replaces her password nor signs her in without her code", async () => {
    const alice = await member("OWNER", "alice@a.example");
    const secret = await enrol(alice);
    const orgB = await t.newOrg({ name: "Org B" });
    const bob = await member("OWNER", "bob@b.example", orgB.id);

    const invited = await post("/api/staff/invites", { email: "alice@a.example", role: "FINANCE" }, bob);
    expect(invited.status, invited.text).toBe(201);
    // She is a member of B from the invitation, pending until she accepts; B learns nothing of her account.
    expect(invited.body).toMatchObject({ role: "FINANCE", passwordSet: false, invitePending: true });
    const token = await mailedToken("alice@a.example", "setup");
    const mail = await t.store.db
      .selectFrom("email_outbox")
      .select("text_body")
      .where("to_address", "=", "alice@a.example")
      .executeTakeFirstOrThrow();
    expect(mail.text_body).toMatch(/sign in with (it|your password)/i);

    const hash = await passwordHashOf("alice@a.example");
    const setup = await post("/api/staff/setup", { token, password: "replaced passphrase 42" });
    expect(setup.status, setup.text).toBe(409);
    expect(setup.body.signInRequired).toBe(true);
    expect(setup.headers.get("Set-Cookie")).toBeNull();
    expect(await passwordHashOf("alice@a.example")).toBe(hash);
    expect((await send("GET", "/api/staff/me", { cookie: alice })).status).toBe(200);

    // Accepting is a sign-in: the same checks, the password and then the code.
    const wrong = await post("/api/staff/login", {
      email: "alice@a.example",
      password: "replaced passphrase 42",
      invitation: token,
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.twoFactorRequired).toBeUndefined();
    const noCode = await post("/api/staff/login", {
      email: "alice@a.example",
      password: PASSWORD,
      invitation: token,
    });
    expect(noCode.status).toBe(401);
    expect(noCode.body.twoFactorRequired).toBe(true);
    expect(noCode.headers.get("Set-Cookie")).toBeNull();
    now += 30_000;
    const joined = await post("/api/staff/login", {
      email: "alice@a.example",
      password: PASSWORD,
      code: codeAt(secret),
      invitation: token,
    });
    expect(joined.status, joined.text).toBe(200);
    expect(joined.body).toMatchObject({ organizationId: orgB.id, role: "FINANCE", twoFactorEnabled: true });
    // Her session in A goes on; the link is used up.
    expect((await send("GET", "/api/staff/me", { cookie: alice })).body.organizationId).toBe(t.org.id);
    expect((await post("/api/staff/setup", { token, password: "replaced passphrase 42" })).status).toBe(401);
    const team = await send("GET", "/api/staff/team", { cookie: bob });
    expect(team.body.members.find((m: { email: string }) => m.email === "alice@a.example")).toMatchObject({
      passwordSet: true,
      invitePending: false,
    });
    const again = await post("/api/staff/invites", { email: "alice@a.example", role: "STAFF" }, bob);
    expect(again.status).toBe(409);
  });

  it("an invitation answers with the address as the Owner typed it until the person joins, not the spelling of an account elsewhere", async () => {
    await member("OWNER", "Carol.Smith@A.example");
    const orgB = await t.newOrg({ name: "Org B" });
    const bob = await member("OWNER", "bob@b.example", orgB.id);

    // The address comes back as typed, whether or not it has an account.
    const known = await post("/api/staff/invites", { email: "CAROL.SMITH@a.example", role: "STAFF" }, bob);
    expect(known.status, known.text).toBe(201);
    expect(known.body.email).toBe("CAROL.SMITH@a.example");
    const unknown = await post("/api/staff/invites", { email: "Dan.Jones@B.example", role: "STAFF" }, bob);
    expect(unknown.status, unknown.text).toBe(201);
    expect(unknown.body.email).toBe("Dan.Jones@B.example");
    const team = async () =>
      (await send("GET", "/api/staff/team", { cookie: bob })).body.members.map(
        (m: { email: string }) => m.email,
      );
    expect(await team()).toContain("CAROL.SMITH@a.example");
    expect(await team()).not.toContain("Carol.Smith@A.example");

    // Invited again in another spelling: that one.
    now += 60_000;
    const again = await post("/api/staff/invites", { email: "dan.jones@b.example", role: "STAFF" }, bob);
    expect(again.status, again.text).toBe(201);
    expect(again.body.email).toBe("dan.jones@b.example");

    // Once the person has joined, their own spelling.
    const token = await mailedToken("Dan.Jones@B.example", "setup");
    const setup = await post("/api/staff/setup", { token, password: "a long passphrase 42" });
    expect(setup.status, setup.text).toBe(200);
    expect(await team()).toContain("Dan.Jones@B.example");
  });

  it("a person's user id tells no organization when their account was made", async () => {
    now = Date.parse("2026-01-05T09:00:00Z");
    await member("OWNER", "early@a.example");
    const orgB = await t.newOrg({ name: "Org B" });
    now = START;
    const bob = await member("OWNER", "bob@b.example", orgB.id);
    const known = await post("/api/staff/invites", { email: "early@a.example", role: "STAFF" }, bob);
    const fresh = await post("/api/staff/invites", { email: "fresh@b.example", role: "STAFF" }, bob);
    expect(known.status, known.text).toBe(201);
    expect(fresh.status, fresh.text).toBe(201);
    // A ulid's first ten characters are its time (milliseconds, base 32): these ids hold no time.
    const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
    const timeOf = (id: string) => [...id.slice(4, 14)].reduce((t, ch) => t * 32 + ALPHABET.indexOf(ch), 0);
    for (const id of [known.body.userId, fresh.body.userId]) {
      expect(id).toMatch(/^usr_[0-9a-hjkmnp-tv-z]{26}$/);
      const dated = timeOf(id);
      // (A random one falls within a day of either moment once in millions.)
      for (const made of [START, Date.parse("2026-01-05T09:00:00Z")])
        expect(Math.abs(dated - made) < 86_400_000, id).toBe(false);
    }
  });

  it("an invitee who chose a password with a reset link: her unused set-up link later sets nothing and signs in no one", async () => {
    const made = await createStaffMember(t.store, {
      organizationId: t.org.id,
      email: "carol@a.example",
      role: "OWNER",
      publicUrl: t.config.publicUrl,
      nowMs: now,
    });
    expect((await post("/api/staff/password-reset", { email: "carol@a.example" })).status).toBe(202);
    const reset = await post("/api/staff/password-reset/complete", {
      token: await mailedToken("carol@a.example", "reset"),
      password: "carol's own passphrase",
    });
    expect(reset.status, reset.text).toBe(200);
    const carol = cookieOf(reset);
    const secret = await enrol(carol);
    now += 3_600_000;

    const hash = await passwordHashOf("carol@a.example");
    const setup = await post("/api/staff/setup", {
      token: tokenOf(made.setupUrl),
      password: "attacker passphrase 1",
    });
    expect(setup.status, setup.text).toBe(409);
    expect(setup.body.signInRequired).toBe(true);
    expect(setup.headers.get("Set-Cookie")).toBeNull();
    expect(await passwordHashOf("carol@a.example")).toBe(hash);
    expect((await send("GET", "/api/staff/me", { cookie: carol })).status).toBe(200);
    const attacker = await post("/api/staff/login", {
      email: "carol@a.example",
      password: "attacker passphrase 1",
      invitation: tokenOf(made.setupUrl),
    });
    expect(attacker.status).toBe(401);
    const own = await post("/api/staff/login", {
      email: "carol@a.example",
      password: "carol's own passphrase",
      code: codeAt(secret),
      invitation: tokenOf(made.setupUrl),
    });
    expect(own.status, own.text).toBe(200);
    expect(own.body.organizationId).toBe(t.org.id);
  });

  it("a set-up link taken after a password was set (a reset at the same moment) sets nothing", async () => {
    const made = await createStaffMember(t.store, {
      organizationId: t.org.id,
      email: "dana@a.example",
      role: "STAFF",
      publicUrl: t.config.publicUrl,
      nowMs: now,
    });
    await post("/api/staff/password-reset", { email: "dana@a.example" });
    const reset = await post("/api/staff/password-reset/complete", {
      token: await mailedToken("dana@a.example", "reset"),
      password: "dana reset passphrase",
    });
    expect(reset.status).toBe(200);
    const hash = await passwordHashOf("dana@a.example");
    // The step after the set-up page's first look, which found no password yet.
    const taken = redeemPasswordLink(
      t.store,
      {
        token: tokenOf(made.setupUrl),
        kind: "setup",
        passwordHash: await hashPassword("dana set-up passphrase"),
        nowMs: now,
        origin: {},
      },
      new StaffError("token", "refused"),
    );
    await expect(taken).rejects.toMatchObject({ kind: "signInRequired" });
    expect(await passwordHashOf("dana@a.example")).toBe(hash);
    expect((await send("GET", "/api/staff/me", { cookie: cookieOf(reset) })).status).toBe(200);
  });

  it("an invitation link is a sign-in's only for its own person, and once", async () => {
    await member("STAFF", "erin@a.example");
    const orgB = await t.newOrg({ name: "Org B" });
    const bob = await member("OWNER", "bob@b.example", orgB.id);
    await member("STAFF", "frank@a.example");
    expect((await post("/api/staff/invites", { email: "erin@a.example", role: "STAFF" }, bob)).status).toBe(
      201,
    );
    const token = await mailedToken("erin@a.example", "setup");
    // Another person's password with Erin's link: refused, and the link still works for her.
    const other = await post("/api/staff/login", {
      email: "frank@a.example",
      password: PASSWORD,
      invitation: token,
    });
    expect(other.status).toBe(401);
    const erin = await post("/api/staff/login", {
      email: "erin@a.example",
      password: PASSWORD,
      invitation: token,
    });
    expect(erin.status, erin.text).toBe(200);
    expect(erin.body.organizationId).toBe(orgB.id);
    const twice = await post("/api/staff/login", {
      email: "erin@a.example",
      password: PASSWORD,
      invitation: token,
    });
    expect(twice.status).toBe(401);
    expect(twice.body.error).toMatch(/invitation link/);
    // Without the link she signs in to the organization she joined first.
    const plain = await post("/api/staff/login", { email: "erin@a.example", password: PASSWORD });
    expect(plain.body.organizationId).toBe(t.org.id);
  });
});

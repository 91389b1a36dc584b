import { Secret, TOTP } from "otpauth";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createStaffMember } from "../../server/staff/accounts.js";
import { resetTwoFactor } from "../../server/staff/twoFactor.js";
import { PASSWORD, staffClient } from "../support/staff.js";
import { dialect, setupTestApp, type TestApp } from "../support/testApp.js";

/**
 * Staff account security: TOTP enrolment and sign-in with a code (each code once, recovery codes once, a
 * wrong code a failed sign-in), the organization's setting that makes it compulsory for Owners and
 * Finance, password reset by a mailed single-use link, common passwords refused, password change, and a
 * person's own sessions listed and ended.
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
const get = (path: string, cookie: string) => send("GET", path, { cookie, origin: null });
const login = (email: string, code?: string, password = PASSWORD, headers?: Record<string, string>) =>
  post("/api/staff/login", { email, password, ...(code === undefined ? {} : { code }) }, undefined, headers);

/** The code an authenticator app with `secret` shows at `at` (default: now). */
const codeAt = (secret: string, at = now) =>
  new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: at });

/** A 6-digit code that is none of the ones accepted around now. */
function wrongCode(secret: string): string {
  const near = new Set([-30_000, 0, 30_000].map((d) => codeAt(secret, now + d)));
  for (let n = 0; ; n++) {
    const code = String(n).padStart(6, "0");
    if (!near.has(code)) return code;
  }
}

/** Enrols the session's person in TOTP: the secret and the recovery codes. */
async function enrol(cookie: string): Promise<{ secret: string; recoveryCodes: string[] }> {
  const started = await post("/api/staff/two-factor/enrolment", {}, cookie);
  expect(started.status, started.text).toBe(200);
  const confirmed = await post(
    "/api/staff/two-factor/confirm",
    { code: codeAt(started.body.secret) },
    cookie,
  );
  expect(confirmed.status, confirmed.text).toBe(200);
  return { secret: started.body.secret, recoveryCodes: confirmed.body.recoveryCodes };
}

async function failuresOf(email: string): Promise<number> {
  const rows = await t.store.db
    .selectFrom("staff_login_failures")
    .select("id")
    .where("key", "=", `email:${email}`)
    .execute();
  return rows.length;
}

/** Failed sign-ins written to the audit log, every organization's. */
async function auditedFailures(): Promise<number> {
  const rows = await t.store.db
    .selectFrom("audit_log")
    .select("id")
    .where("action", "=", "staff.sign_in_failed")
    .execute();
  return rows.length;
}

/** The token of the latest password-reset link mailed to `email`, from the e-mail outbox. */
async function mailedResetToken(email: string): Promise<string | undefined> {
  const rows = await t.store.db
    .selectFrom("email_outbox")
    .selectAll()
    .where("to_address", "=", email)
    .orderBy("id", "desc")
    .execute();
  return rows[0]?.text_body.match(
    /^http:\/\/forms\.test\/dashboard\/reset\?token=([A-Za-z0-9_-]{43})$/m,
  )?.[1];
}

describe(`staff two-factor sign-in (${dialect})`, () => {
  it("enrols with a confirmed code; then sign-in asks for a code, refuses and counts a wrong one, takes each code once and each recovery code once", async () => {
    const cookie = await member("OWNER", "owner@example.org");
    const started = await post("/api/staff/two-factor/enrolment", {}, cookie);
    expect(started.status).toBe(200);
    const secret: string = started.body.secret;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(started.body.uri).toMatch(/^otpauth:\/\/totp\/Almoner:owner%40example\.org\?/);
    expect(started.body.uri).toContain(`secret=${secret}`);
    // The URI drawn as a QR code, an SVG image (the dashboard's e2e test scans it back to the URI).
    expect(started.body.qrCode).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*<\/svg>\s*$/s);
    // Nothing is on until a code confirms the secret.
    expect((await get("/api/staff/me", cookie)).body.twoFactorEnabled).toBe(false);
    expect((await login("owner@example.org")).status).toBe(200);
    const bad = await post("/api/staff/two-factor/confirm", { code: wrongCode(secret) }, cookie);
    expect(bad.status).toBe(403);

    const confirmCode = codeAt(secret);
    const confirmed = await post("/api/staff/two-factor/confirm", { code: confirmCode }, cookie);
    expect(confirmed.status, confirmed.text).toBe(200);
    const codes: string[] = confirmed.body.recoveryCodes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[0-9a-z]{5}-[0-9a-z]{5}$/);
    expect((await get("/api/staff/me", cookie)).body.twoFactorEnabled).toBe(true);
    expect((await get("/api/staff/two-factor", cookie)).body).toMatchObject({
      enabled: true,
      recoveryCodesLeft: 10,
      required: false,
    });
    // The secret is kept sealed, not as given.
    const stored = await t.store.db.selectFrom("staff_users").select("totp_secret").executeTakeFirstOrThrow();
    expect(stored.totp_secret).toMatch(/^v1\./);
    expect(stored.totp_secret).not.toContain(secret);

    const missing = await login("owner@example.org");
    expect(missing.status).toBe(401);
    expect(missing.body.twoFactorRequired).toBe(true);
    expect(missing.headers.get("Set-Cookie")).toBeNull();
    expect(await failuresOf("owner@example.org")).toBe(0);

    const wrong = await login("owner@example.org", wrongCode(secret));
    expect(wrong.status).toBe(401);
    expect(wrong.body.twoFactorRequired).toBe(true);
    expect(await failuresOf("owner@example.org")).toBe(1);
    // A wrong password with a right code is the plain refusal, and no hint that a code is wanted.
    const wrongPassword = await login("owner@example.org", codeAt(secret, now + 30_000), "not the password");
    expect(wrongPassword.status).toBe(401);
    expect(wrongPassword.body.twoFactorRequired).toBeUndefined();

    // The code that confirmed enrolment has been used.
    expect((await login("owner@example.org", confirmCode)).status).toBe(401);
    now += 30_000;
    const code = codeAt(secret);
    const ok = await login("owner@example.org", code);
    expect(ok.status, ok.text).toBe(200);
    expect(cookieOf(ok)).toMatch(/^almoner_staff=/);
    const replay = await login("owner@example.org", code);
    expect(replay.status).toBe(401);
    expect(replay.body.twoFactorRequired).toBe(true);

    // A recovery code, typed any way, once.
    const typed = codes[0].toUpperCase().replace("-", " ");
    expect((await login("owner@example.org", typed)).status).toBe(200);
    expect((await login("owner@example.org", codes[0])).status).toBe(401);
    expect((await get("/api/staff/two-factor", cookie)).body.recoveryCodesLeft).toBe(9);
  });

  it("counts wrong codes as failed sign-ins: after 10 in 15 minutes even the right code is refused with 429", async () => {
    const cookie = await member("FINANCE", "finance@example.org");
    const { secret } = await enrol(cookie);
    now += 60_000;
    for (let i = 0; i < 10; i++)
      expect((await login("finance@example.org", wrongCode(secret))).status).toBe(401);
    const locked = await login("finance@example.org", codeAt(secret));
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("Retry-After"))).toBeGreaterThan(0);
  });

  it("turns off with the password or a code, and not with a wrong one", async () => {
    const cookie = await member("OWNER", "off@example.org");
    const { secret } = await enrol(cookie);
    const audited = await auditedFailures();
    const wrong = await post("/api/staff/two-factor/disable", { password: "not the password" }, cookie);
    expect(wrong.status).toBe(403);
    expect(await failuresOf("off@example.org")).toBe(1);
    expect(await auditedFailures()).toBe(audited + 1);
    expect((await post("/api/staff/two-factor/disable", {}, cookie)).status).toBe(400);
    const off = await post("/api/staff/two-factor/disable", { password: PASSWORD }, cookie);
    expect(off.status).toBe(204);
    expect((await login("off@example.org")).status).toBe(200);
    const again = await enrol(cookie);
    expect(again.secret).not.toBe(secret);
    now += 30_000;
    expect((await post("/api/staff/two-factor/disable", { code: codeAt(again.secret) }, cookie)).status).toBe(
      204,
    );
    expect((await get("/api/staff/two-factor", cookie)).body).toMatchObject({
      enabled: false,
      recoveryCodesLeft: 0,
    });
    // Each turn on and off is in the organization's audit log, by the person.
    const changes = await t.store.db
      .selectFrom("audit_log")
      .select(["action", "actor_type"])
      .where("subject_id", "=", (await get("/api/staff/me", cookie)).body.userId as string)
      .where("action", "in", ["staff.two_factor_enabled", "staff.two_factor_disabled"])
      .execute();
    // (Made at the same test clock time: compared as a set.)
    expect(changes.map((c) => `${c.action} by ${c.actor_type}`).sort()).toEqual([
      "staff.two_factor_disabled by staff",
      "staff.two_factor_disabled by staff",
      "staff.two_factor_enabled by staff",
      "staff.two_factor_enabled by staff",
    ]);
  });

  it("renews the recovery codes with the password: the old ones stop working, the new ones work once", async () => {
    const cookie = await member("OWNER", "renew@example.org");
    const { recoveryCodes: old } = await enrol(cookie);
    const refused = await post(
      "/api/staff/two-factor/recovery-codes",
      { password: "not the password" },
      cookie,
    );
    expect(refused.status).toBe(403);
    expect(await failuresOf("renew@example.org")).toBe(1);
    const renewed = await post("/api/staff/two-factor/recovery-codes", { password: PASSWORD }, cookie);
    expect(renewed.status, renewed.text).toBe(200);
    const fresh: string[] = renewed.body.recoveryCodes;
    expect(fresh).toHaveLength(10);
    expect(fresh.filter((code) => old.includes(code))).toEqual([]);
    expect((await login("renew@example.org", old[1])).status).toBe(401);
    expect((await login("renew@example.org", fresh[1])).status).toBe(200);
    expect((await login("renew@example.org", fresh[1])).status).toBe(401);
  });

  it("is turned off by the operator for a person who lost authenticator and codes (cli user reset-two-factor)", async () => {
    const cookie = await member("FINANCE", "lost@example.org");
    await enrol(cookie);
    expect((await login("lost@example.org")).status).toBe(401);
    expect(await resetTwoFactor(t.store, " Lost@Example.org ", now)).toBe(true);
    const back = await login("lost@example.org");
    expect(back.status).toBe(200);
    expect(back.body.twoFactorEnabled).toBe(false);
    expect(await resetTwoFactor(t.store, "lost@example.org", now)).toBe(false);
    await expect(resetTwoFactor(t.store, "nobody@example.org", now)).rejects.toThrow(/No staff member/);
  });

  it("refuses enrolment and its endpoints without this instance's Origin, and with an API key", async () => {
    const cookie = await member("OWNER", "origin@example.org");
    const cross = await send("POST", "/api/staff/two-factor/enrolment", {
      body: {},
      cookie,
      origin: "https://evil.example",
    });
    expect(cross.status).toBe(403);
    const keyed = await send("POST", "/api/staff/two-factor/enrolment", {
      body: {},
      headers: { Authorization: `Bearer ${t.org.key}` },
    });
    expect(keyed.status).toBe(403);
  });
});

describe(`compulsory two-factor sign-in for Owners and Finance (${dialect})`, () => {
  it("is an organization setting in the API and its OpenAPI document", async () => {
    const before = await t.request<{ requireTwoFactor: boolean }>("GET", "/v1/organization");
    expect(before.body.requireTwoFactor).toBe(false);
    const put = await t.request<{ requireTwoFactor: boolean }>("PUT", "/v1/organization", {
      body: { requireTwoFactor: true },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body.requireTwoFactor).toBe(true);
    expect((await t.request("PUT", "/v1/organization", { body: { requireTwoFactor: "yes" } })).status).toBe(
      400,
    );
    // Turning it off weakens every staff sign-in: an API key may not; an Owner signed in may.
    const keyOff = await t.request("PUT", "/v1/organization", { body: { requireTwoFactor: false } });
    expect(keyOff.status).toBe(403);
    expect(keyOff.body.error).toMatch(/Only an Owner/);
    const owner = await member("OWNER", "setting-owner@example.org");
    await enrol(owner);
    const ownerOff = await send("PUT", "/v1/organization", {
      body: { requireTwoFactor: false },
      cookie: owner,
    });
    expect(ownerOff.status, JSON.stringify(ownerOff.body)).toBe(200);
    expect(ownerOff.body.requireTwoFactor).toBe(false);
    expect((await t.request("PUT", "/v1/organization", { body: { requireTwoFactor: true } })).status).toBe(
      200,
    );
    const doc = await t.request<{ paths: Record<string, Record<string, unknown>> }>(
      "GET",
      "/v1/openapi.json",
      {
        key: null,
      },
    );
    expect(JSON.stringify(doc.body.paths["/v1/organization"].put)).toContain("requireTwoFactor");
    expect(JSON.stringify(doc.body.paths["/v1/organization"].get)).toContain("requireTwoFactor");
    expect(doc.body.paths["/api/staff/two-factor/enrolment"]).toBeDefined();
    expect(doc.body.paths["/api/staff/sessions/{id}"]).toBeDefined();
  });

  it("gives an Owner without TOTP a session that reaches only enrolment and me, until they enrol; Staff are not asked", async () => {
    const owner = await member("OWNER", "owner@example.org");
    const staff = await member("STAFF", "staff@example.org");
    expect((await t.request("PUT", "/v1/organization", { body: { requireTwoFactor: true } })).status).toBe(
      200,
    );

    const signedIn = await login("owner@example.org");
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toMatchObject({ role: "OWNER", twoFactorEnrolmentRequired: true, permissions: [] });
    const restricted = cookieOf(signedIn);
    // The session from before the setting is held to it as well.
    for (const cookie of [restricted, owner]) {
      const forms = await get("/v1/forms", cookie);
      expect(forms.status).toBe(403);
      expect(forms.body.error).toMatch(/requires two-factor sign-in/);
      expect((await get("/api/staff/sessions", cookie)).status).toBe(403);
    }
    expect(
      (
        await post(
          "/api/staff/password",
          { currentPassword: PASSWORD, newPassword: "another long passphrase" },
          restricted,
        )
      ).status,
    ).toBe(403);
    expect((await get("/api/staff/me", restricted)).body.twoFactorEnrolmentRequired).toBe(true);
    expect((await get("/api/staff/two-factor", restricted)).body).toMatchObject({
      enabled: false,
      required: true,
    });

    const staffSession = await login("staff@example.org");
    expect(staffSession.body.twoFactorEnrolmentRequired).toBe(false);
    expect((await get("/v1/forms", cookieOf(staffSession))).status).toBe(200);
    expect((await get("/v1/forms", staff)).status).toBe(200);

    const { secret } = await enrol(restricted);
    const me = await get("/api/staff/me", restricted);
    expect(me.body).toMatchObject({ twoFactorEnabled: true, twoFactorEnrolmentRequired: false });
    expect(me.body.permissions).toContain("organization:write");
    expect((await get("/v1/forms", restricted)).status).toBe(200);
    // Turning it off is refused while the organization requires it.
    expect((await post("/api/staff/two-factor/disable", { password: PASSWORD }, restricted)).status).toBe(
      409,
    );
    now += 30_000;
    expect((await login("owner@example.org", codeAt(secret))).status).toBe(200);
  });
});

describe(`staff password reset (${dialect})`, () => {
  it("answers 202 alike for an unknown address and mails a known one a link to the dashboard's reset page", async () => {
    await member("STAFF", "known@example.org");
    const unknown = await post("/api/staff/password-reset", { email: "stranger@example.org" });
    const known = await post("/api/staff/password-reset", { email: " Known@Example.org " });
    expect(unknown.status).toBe(202);
    expect(known.status).toBe(202);
    expect(known.body).toEqual(unknown.body);
    expect(await mailedResetToken("stranger@example.org")).toBeUndefined();
    expect(await mailedResetToken("known@example.org")).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("says whose a live link is before it is used (POST /api/staff/link), and refuses it used, of another kind, or unknown", async () => {
    await member("STAFF", "whose@example.org");
    expect((await post("/api/staff/password-reset", { email: "whose@example.org" })).status).toBe(202);
    const token = await mailedResetToken("whose@example.org");
    const described = await post("/api/staff/link", { token, kind: "reset" });
    expect(described.status, described.text).toBe(200);
    expect(described.body).toEqual({
      email: "whose@example.org",
      organizationName: expect.any(String),
      signInRequired: false,
    });
    expect(described.headers.get("Cache-Control")).toBe("no-store");
    // Asking uses nothing up: the link still sets the password, once; then it is dead here too.
    expect((await post("/api/staff/link", { token, kind: "setup" })).status).toBe(401);
    expect((await post("/api/staff/link", { token: "x".repeat(43), kind: "reset" })).status).toBe(401);
    const done = await post("/api/staff/password-reset/complete", {
      token,
      password: "a brand new passphrase",
    });
    expect(done.status, done.text).toBe(200);
    const used = await post("/api/staff/link", { token, kind: "reset" });
    expect(used.status).toBe(401);
    expect(used.body.error).toMatch(/has been used or has expired/);
    // From another site: refused, as every sign-in request is.
    const cross = await send("POST", "/api/staff/link", {
      body: { token, kind: "reset" },
      origin: "https://evil.example",
    });
    expect(cross.status).toBe(403);
  });

  it("sets the password once with a link of 30 minutes, ends every session and signs in", async () => {
    const first = await member("FINANCE", "reset@example.org");
    const second = cookieOf(await login("reset@example.org"));
    expect((await post("/api/staff/password-reset", { email: "reset@example.org" })).status).toBe(202);
    const stale = await mailedResetToken("reset@example.org");
    now += 30 * 60_000 + 1000;
    const late = await post("/api/staff/password-reset/complete", {
      token: stale,
      password: "a brand new passphrase",
    });
    expect(late.status).toBe(401);

    expect((await post("/api/staff/password-reset", { email: "reset@example.org" })).status).toBe(202);
    const token = await mailedResetToken("reset@example.org");
    expect(token).not.toBe(stale);
    const common = await post("/api/staff/password-reset/complete", { token, password: "Password1234" });
    expect(common.status).toBe(400);
    expect(common.body.details.join(" ")).toMatch(/^password: .*most commonly used/);
    const done = await post("/api/staff/password-reset/complete", {
      token,
      password: "a brand new passphrase",
    });
    expect(done.status, done.text).toBe(200);
    expect(done.body).toMatchObject({ email: "reset@example.org", role: "FINANCE" });
    const fresh = cookieOf(done);
    expect(fresh).toMatch(/^almoner_staff=/);
    for (const ended of [first, second]) expect((await get("/api/staff/me", ended)).status).toBe(401);
    expect((await get("/api/staff/me", fresh)).status).toBe(200);
    const again = await post("/api/staff/password-reset/complete", {
      token,
      password: "yet another passphrase",
    });
    expect(again.status).toBe(401);
    expect((await login("reset@example.org")).status).toBe(401);
    expect((await login("reset@example.org", undefined, "a brand new passphrase")).status).toBe(200);
    // Written to the audit log as a change of the password, as a change on the account page is.
    const changed = await t.store.db
      .selectFrom("audit_log")
      .select("actor_label")
      .where("action", "=", "staff.password_changed")
      .execute();
    expect(changed.map((row) => row.actor_label)).toEqual(["reset@example.org"]);
  });

  it("with TOTP on, wants a code besides the link, and keeps the link for the retry", async () => {
    const cookie = await member("OWNER", "totp@example.org");
    const { secret } = await enrol(cookie);
    now += 30_000;
    await post("/api/staff/password-reset", { email: "totp@example.org" });
    const token = await mailedResetToken("totp@example.org");
    const body = { token, password: "a brand new passphrase" };
    const asked = await post("/api/staff/password-reset/complete", body);
    expect(asked.status).toBe(401);
    expect(asked.body.twoFactorRequired).toBe(true);
    const audited = await auditedFailures();
    const wrong = await post("/api/staff/password-reset/complete", { ...body, code: wrongCode(secret) });
    expect(wrong.status).toBe(401);
    expect(await failuresOf("totp@example.org")).toBe(1);
    // Written as a wrong code at sign-in is: a reset link in other hands guessing codes shows.
    expect(await auditedFailures()).toBe(audited + 1);
    const done = await post("/api/staff/password-reset/complete", { ...body, code: codeAt(secret) });
    expect(done.status, done.text).toBe(200);
  });

  it("uses up a reset link asked for before the set-up link was used: it cannot undo the password set up", async () => {
    const made = await createStaffMember(t.store, {
      organizationId: t.org.id,
      email: "invited@example.org",
      role: "STAFF",
      publicUrl: t.config.publicUrl,
      nowMs: now,
    });
    expect((await post("/api/staff/password-reset", { email: "invited@example.org" })).status).toBe(202);
    const earlier = await mailedResetToken("invited@example.org");
    expect(earlier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const setUp = await post("/api/staff/setup", { token: tokenOf(made.setupUrl), password: PASSWORD });
    expect(setUp.status, setUp.text).toBe(200);
    const undo = await post("/api/staff/password-reset/complete", {
      token: earlier,
      password: "the attacker passphrase",
    });
    expect(undo.status).toBe(401);
    expect((await get("/api/staff/me", cookieOf(setUp))).status).toBe(200);
    expect((await login("invited@example.org")).status).toBe(200);
  });

  it("limits reset requests per address", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await post("/api/staff/password-reset", { email: "flood@example.org" })).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);
  });
});

describe(`staff passwords (${dialect})`, () => {
  it("refuses a common password, in any case, at set-up", async () => {
    const made = await createStaffMember(t.store, {
      organizationId: t.org.id,
      email: "common@example.org",
      role: "STAFF",
      publicUrl: t.config.publicUrl,
      nowMs: now,
    });
    for (const password of [
      "password1234",
      "QwertyUiop12",
      "QAZWSXEDCRFV",
      "Password123!",
      "111111111111",
      "abcdefghijkl",
    ]) {
      const res = await post("/api/staff/setup", { token: tokenOf(made.setupUrl), password });
      expect(res.status, password).toBe(400);
      expect(res.body.details, password).toEqual([expect.stringMatching(/^password: .*most commonly used/)]);
    }
    // The link was not used up by the refusals.
    expect(
      (await post("/api/staff/setup", { token: tokenOf(made.setupUrl), password: PASSWORD })).status,
    ).toBe(200);
  });

  it("turning two-factor sign-in on ends the person's other sessions (opened without a code); the one that turned it on goes on", async () => {
    const mine = await member("STAFF", "enrol-sessions@example.org");
    const other = cookieOf(await login("enrol-sessions@example.org"));
    expect((await get("/api/staff/me", other)).status).toBe(200);
    const { secret } = await enrol(mine);
    expect((await get("/api/staff/me", mine)).status).toBe(200);
    expect((await get("/api/staff/me", other)).status).toBe(401);
    // Signing in again takes the code.
    expect((await login("enrol-sessions@example.org", codeAt(secret, now + 30_000))).status).toBe(200);
  });

  it("changes the password with the current one: the other sessions end, this one goes on, and a reset link asked for before stops working", async () => {
    const mine = await member("STAFF", "change@example.org");
    const other = cookieOf(await login("change@example.org"));
    expect((await post("/api/staff/password-reset", { email: "change@example.org" })).status).toBe(202);
    const earlierReset = await mailedResetToken("change@example.org");
    const wrong = await post(
      "/api/staff/password",
      { currentPassword: "not the password", newPassword: "another long passphrase" },
      mine,
    );
    expect(wrong.status).toBe(403);
    expect(await failuresOf("change@example.org")).toBe(1);
    const common = await post(
      "/api/staff/password",
      { currentPassword: PASSWORD, newPassword: "Password1234" },
      mine,
    );
    expect(common.status).toBe(400);
    expect(common.body.details).toEqual([expect.stringMatching(/^newPassword: .*most commonly used/)]);
    const changed = await post(
      "/api/staff/password",
      { currentPassword: PASSWORD, newPassword: "another long passphrase" },
      mine,
    );
    expect(changed.status, changed.text).toBe(204);
    expect((await get("/api/staff/me", mine)).status).toBe(200);
    expect((await get("/api/staff/me", other)).status).toBe(401);
    expect((await login("change@example.org")).status).toBe(401);
    expect((await login("change@example.org", undefined, "another long passphrase")).status).toBe(200);
    const audited = await t.store.db
      .selectFrom("audit_log")
      .select("actor_label")
      .where("action", "=", "staff.password_changed")
      .execute();
    expect(audited.map((c) => c.actor_label)).toEqual(["change@example.org"]);
    const undo = await post("/api/staff/password-reset/complete", {
      token: earlierReset,
      password: "the attacker passphrase",
    });
    expect(undo.status).toBe(401);
  });
});

describe(`a person's own sessions (${dialect})`, () => {
  it("lists them by an id that is not the token, marks the current one, and ends only the person's own", async () => {
    const first = await member("OWNER", "me@example.org");
    const second = cookieOf(
      await login("me@example.org", undefined, PASSWORD, { "User-Agent": "Firefox on a phone" }),
    );
    const theirs = await member("STAFF", "them@example.org");

    const list = await get("/api/staff/sessions", first);
    expect(list.status).toBe(200);
    expect(list.body.sessions).toHaveLength(2);
    for (const session of list.body.sessions) expect(session.id).toMatch(/^ses_[0-9a-f]{24}$/);
    for (const cookie of [first, second]) expect(list.text).not.toContain(cookie.split("=")[1]);
    const current = list.body.sessions.filter((s: { current: boolean }) => s.current);
    expect(current).toHaveLength(1);
    const phone = list.body.sessions.find(
      (s: { userAgent: string | null }) => s.userAgent === "Firefox on a phone",
    );
    expect(phone).toMatchObject({ current: false, createdAt: new Date(now).toISOString() });

    const theirId = (await get("/api/staff/sessions", theirs)).body.sessions[0].id;
    expect((await send("DELETE", `/api/staff/sessions/${theirId}`, { cookie: first })).status).toBe(404);
    expect((await get("/api/staff/me", theirs)).status).toBe(200);
    expect((await send("DELETE", "/api/staff/sessions/ses_nonsense", { cookie: first })).status).toBe(404);
    const crossSite = await send("DELETE", `/api/staff/sessions/${phone.id}`, {
      cookie: first,
      origin: "https://evil.example",
    });
    expect(crossSite.status).toBe(403);

    expect((await send("DELETE", `/api/staff/sessions/${phone.id}`, { cookie: first })).status).toBe(204);
    expect((await get("/api/staff/me", second)).status).toBe(401);
    expect((await get("/api/staff/me", first)).status).toBe(200);
    expect((await get("/api/staff/sessions", first)).body.sessions).toHaveLength(1);
    expect((await send("DELETE", `/api/staff/sessions/${phone.id}`, { cookie: first })).status).toBe(404);
  });
});

import crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStaffMember, StaffError, signIn } from "../../server/staff/accounts.js";
import { verifyPassword } from "../../server/staff/passwords.js";
import { ROLE_PERMISSIONS } from "../../server/staff/roles.js";
import { card, checkout, createForm } from "../support/checkout.js";
import { PASSWORD, staffClient } from "../support/staff.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * Staff accounts: a set-up link sets a password and signs in; e-mail and password sign in; the session
 * cookie reaches `/v1` with its role's permissions, from this instance's own pages only, in its own
 * organization only; sign-out, idleness and age end it; failed sign-ins are limited.
 */
describe(`staff sign-in and sessions (${dialect})`, () => {
  let t: TestApp;
  let now = Date.parse("2026-11-26T10:00:00Z");
  const ORIGIN = "http://forms.test";

  beforeAll(async () => {
    t = await setupTestApp({ now: () => now, env: { CHECKOUT_LIMIT_PER_IP: "0" } });
  });
  afterAll(async () => {
    await t.close();
  });

  const { post, cookieOf, tokenOf, member, staffMember } = staffClient(() => t, { now: () => now });

  const v1 = (method: string, path: string, cookie: string, body?: unknown, origin: string | null = ORIGIN) =>
    t.app.request(path, {
      method,
      headers: {
        Cookie: cookie,
        ...(origin ? { Origin: origin } : {}),
        ...(body ? { "Content-Type": "application/json" } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });

  it("sets the password with the set-up link once, and signs in with a cookie that scripts cannot read", async () => {
    const made = await createStaffMember(t.store, {
      organizationId: t.org.id,
      email: "Owner@Example.org",
      role: "OWNER",
      publicUrl: t.config.publicUrl,
      nowMs: now,
    });
    expect(made.setupUrl).toMatch(/^http:\/\/forms\.test\/dashboard\/setup\?token=[A-Za-z0-9_-]{43}$/);
    const short = await post("/api/staff/setup", { token: tokenOf(made.setupUrl), password: "too short" });
    expect(short.status).toBe(400);
    const setup = await post("/api/staff/setup", { token: tokenOf(made.setupUrl), password: PASSWORD });
    expect(setup.status).toBe(200);
    expect(setup.body).toMatchObject({
      email: "Owner@Example.org",
      organizationId: t.org.id,
      role: "OWNER",
      permissions: [...ROLE_PERMISSIONS.OWNER],
    });
    const cookie = setup.headers.get("Set-Cookie") ?? "";
    expect(cookie).toMatch(/^almoner_staff=[A-Za-z0-9_-]{43};/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\//);
    const again = await post("/api/staff/setup", { token: tokenOf(made.setupUrl), password: PASSWORD });
    expect(again.status).toBe(401);

    const me = await t.app.request("/api/staff/me", { headers: { Cookie: cookieOf(setup) } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ role: "OWNER", email: "Owner@Example.org" });
  });

  it("refuses an unknown address and a wrong password alike, and signs in with the right one", async () => {
    await member("FINANCE", "finance@example.org");
    const wrong = await post("/api/staff/login", {
      email: "finance@example.org",
      password: "not the password",
    });
    const unknown = await post("/api/staff/login", { email: "nobody@example.org", password: PASSWORD });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    const ok = await post("/api/staff/login", { email: " FINANCE@example.org ", password: PASSWORD });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ role: "FINANCE", organizationId: t.org.id });
    expect(cookieOf(ok)).toMatch(/^almoner_staff=/);
  });

  it("keeps passwords hashed with today's scrypt settings, and upgrades an older hash at the next sign-in", async () => {
    const { userId } = await staffMember("STAFF", "older-hash@example.org");
    const hashOf = async () =>
      (
        await t.store.db
          .selectFrom("staff_users")
          .select("password_hash")
          .where("id", "=", userId)
          .executeTakeFirstOrThrow()
      ).password_hash as string;
    expect(await hashOf()).toMatch(/^scrypt\$16384\$8\$5\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    // A hash made before the settings were raised (p = 1) still signs in, and is replaced then.
    const salt = crypto.randomBytes(16);
    const key = crypto.scryptSync(PASSWORD, salt, 32, { N: 16384, r: 8, p: 1 });
    const older = ["scrypt", 16384, 8, 1, salt.toString("base64url"), key.toString("base64url")].join("$");
    await t.store.db
      .updateTable("staff_users")
      .set({ password_hash: older })
      .where("id", "=", userId)
      .execute();
    const wrong = await post("/api/staff/login", {
      email: "older-hash@example.org",
      password: "not it at all",
    });
    expect(wrong.status).toBe(401);
    expect(await hashOf()).toBe(older);
    const ok = await post("/api/staff/login", { email: "older-hash@example.org", password: PASSWORD });
    expect(ok.status, ok.text).toBe(200);
    const upgraded = await hashOf();
    expect(upgraded).toMatch(/^scrypt\$16384\$8\$5\$/);
    expect(await verifyPassword(PASSWORD, upgraded)).toBe(true);
    expect(
      (await post("/api/staff/login", { email: "older-hash@example.org", password: PASSWORD })).status,
    ).toBe(200);
  });

  it("reaches /v1 with its role's permissions: a refused action is the 403 a key would get", async () => {
    const formId = await createForm(t, validForms.standard());
    const gift = await checkout(t, formId, {
      amount: 20,
      frequency: "ONE_TIME",
      donor: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.org" },
      paymentMethod: card(),
    });
    const paymentId = (gift.body.payment as { paymentID: string }).paymentID;

    const staff = await member("STAFF", "staff@example.org");
    expect((await v1("GET", "/v1/payments", staff)).status).toBe(200);
    const refused = await v1("POST", `/v1/payments/${paymentId}/refund`, staff, { amount: 5 });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: expect.stringMatching(/donations:write/) });

    const finance = await member("FINANCE", "finance2@example.org");
    const refund = await v1("POST", `/v1/payments/${paymentId}/refund`, finance, { amount: 5 });
    expect(refund.status).toBe(200);
  });

  it("judges a request by its session when it also carries another Authorization scheme (a proxy's HTTP Basic)", async () => {
    const staff = await member("STAFF", "behind-proxy@example.org");
    const withHeader = (authorization: string, cookie?: string) =>
      t.app.request("/v1/payments", {
        headers: { Authorization: authorization, ...(cookie ? { Cookie: cookie } : {}) },
      });
    expect((await withHeader("Basic Zm9vOmJhcg==", staff)).status).toBe(200);
    // Without a session, or with a Bearer that is not a key, the header is still the request's credential.
    const bare = await withHeader("Basic Zm9vOmJhcg==");
    expect(bare.status).toBe(401);
    expect(await bare.json()).toEqual({ error: "Malformed Authorization header: expected Bearer <API_KEY>" });
    expect((await withHeader("Bearer ", staff)).status).toBe(401);
    expect((await withHeader("Bearer not-a-key", staff)).status).toBe(401);
  });

  it("changes nothing without this instance's Origin: a cross-site post with the cookie is refused", async () => {
    const owner = await member("OWNER", "owner2@example.org");
    const body = { ...validForms.standard(), title: "Posted from elsewhere" };
    for (const origin of ["https://evil.example", null]) {
      const res = await v1("POST", "/v1/forms", owner, body, origin);
      expect(res.status, String(origin)).toBe(403);
    }
    const forms = await t.request<{ forms: { title: string }[] }>("GET", "/v1/forms?limit=100");
    expect(forms.body.forms.map((f) => f.title)).not.toContain("Posted from elsewhere");
    expect((await v1("POST", "/v1/forms", owner, body)).status).toBe(201);
  });

  it("never reaches another organization's data", async () => {
    const other = await t.newOrg({ name: "Other Org" });
    const theirs = await t.request<{ formID: string }>("POST", "/v1/forms", {
      key: other.key,
      body: validForms.standard(),
    });
    const owner = await member("OWNER", "owner3@example.org");
    const res = await v1("GET", `/v1/forms/${theirs.body.formID}`, owner);
    expect([403, 404]).toContain(res.status);
    const mine = (await (await v1("GET", "/v1/forms?limit=100", owner)).json()) as {
      forms: { formID: string }[];
    };
    expect(mine.forms.map((f) => f.formID)).not.toContain(theirs.body.formID);
  });

  it("refuses a sign-in or a reset request posted from another site, in words that fit", async () => {
    await member("STAFF", "cross@example.org");
    const res = await post(
      "/api/staff/login",
      { email: "cross@example.org", password: PASSWORD },
      undefined,
      { Origin: "https://evil.example" },
    );
    expect(res.status).toBe(403);
    expect(res.headers.get("Set-Cookie")).toBeNull();
    const words = { error: "Requests are accepted only from this site's own pages" };
    expect(res.body).toEqual(words);
    const crossSite = await post(
      "/api/staff/login",
      { email: "cross@example.org", password: PASSWORD },
      undefined,
      { "Sec-Fetch-Site": "cross-site" },
    );
    expect(crossSite.status).toBe(403);
    expect(crossSite.body).toEqual(words);
    const reset = await post("/api/staff/password-reset", { email: "cross@example.org" }, undefined, {
      Origin: "https://evil.example",
    });
    expect(reset.status).toBe(403);
    expect(reset.body).toEqual(words);
  });

  it("keeps API keys out of the staff endpoints", async () => {
    const me = await t.app.request("/api/staff/me", { headers: { Authorization: `Bearer ${t.org.key}` } });
    expect(me.status).toBe(403);
    const login = await post(
      "/api/staff/login",
      { email: "finance@example.org", password: PASSWORD },
      undefined,
      { Authorization: `Bearer ${t.org.key}` },
    );
    expect(login.status).toBe(403);
  });

  it("ends the session at sign-out, after 8 idle hours, and 7 days after sign-in", async () => {
    const cookie = await member("STAFF", "staff2@example.org");
    expect((await v1("GET", "/v1/forms", cookie)).status).toBe(200);
    expect((await post("/api/staff/logout", {}, cookie)).status).toBe(204);
    expect((await v1("GET", "/v1/forms", cookie)).status).toBe(401);
    expect((await t.app.request("/api/staff/me", { headers: { Cookie: cookie } })).status).toBe(401);

    const idle = await member("STAFF", "staff3@example.org");
    now += 7 * 3_600_000;
    expect((await v1("GET", "/v1/forms", idle)).status).toBe(200);
    now += 7 * 3_600_000; // 7 idle hours since the last use: still alive
    expect((await v1("GET", "/v1/forms", idle)).status).toBe(200);
    now += 8 * 3_600_000 + 1000;
    expect((await v1("GET", "/v1/forms", idle)).status).toBe(401);

    const busy = await member("STAFF", "staff4@example.org");
    for (let hour = 0; hour < 7 * 24; hour += 6) {
      expect((await v1("GET", "/v1/forms", busy)).status, `hour ${hour}`).toBe(200);
      now += 6 * 3_600_000;
    }
    expect((await v1("GET", "/v1/forms", busy)).status).toBe(401);
  });

  it("refuses sign-ins after 10 failures in 15 minutes for one address, even the right password", async () => {
    await member("FINANCE", "target@example.org");
    for (let i = 0; i < 10; i++) {
      const res = await post("/api/staff/login", {
        email: "target@example.org",
        password: `guess ${i} guess`,
      });
      expect(res.status).toBe(401);
    }
    const locked = await post("/api/staff/login", { email: "target@example.org", password: PASSWORD });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("Retry-After"))).toBeGreaterThan(0);
    // The wait is said in words too, for the person at the sign-in page: the first failure leaves the
    // window in 15 minutes.
    expect(locked.body).toEqual({ error: "Too many failed sign-ins: try again in 15 minutes" });
    now += 14 * 60_000 + 30_000;
    const soon = await post("/api/staff/login", { email: "target@example.org", password: PASSWORD });
    expect(soon.body).toEqual({ error: "Too many failed sign-ins: try again in 1 minute" });
    now += 60_000 + 1000;
    const later = await post("/api/staff/login", { email: "target@example.org", password: PASSWORD });
    expect(later.status).toBe(200);
  });
});

describe(`staff sessions behind https (${dialect})`, () => {
  it("use a Secure __Host- cookie", async () => {
    const t = await setupTestApp({ env: { PUBLIC_URL: "https://give.example.org" } });
    try {
      const made = await createStaffMember(t.store, {
        organizationId: t.org.id,
        email: "owner@example.org",
        role: "OWNER",
        publicUrl: t.config.publicUrl,
        nowMs: Date.now(),
      });
      const res = await t.app.request("/api/staff/setup", {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: "https://give.example.org" },
        body: JSON.stringify({
          token: new URL(made.setupUrl).searchParams.get("token"),
          password: "a long enough password",
        }),
      });
      expect(res.status).toBe(200);
      const cookie = res.headers.get("Set-Cookie") ?? "";
      expect(cookie).toMatch(/^__Host-almoner_staff=/);
      expect(cookie).toMatch(/Secure/);
      expect(cookie).toMatch(/Path=\//);
      expect(cookie).not.toMatch(/Domain=/);
    } finally {
      await t.close();
    }
  });
});

describe(`failed sign-ins counted before the check, when they come at once (${dialect})`, () => {
  let t: TestApp;
  const now = Date.parse("2026-11-26T10:00:00Z");

  beforeAll(async () => {
    t = await setupTestApp({ now: () => now, env: { TRUST_PROXY: "on" } });
  });
  afterAll(async () => {
    await t.close();
  });

  const { post, member } = staffClient(() => t, { now: () => now });

  function tally(statuses: number[]): Record<number, number> {
    const counts: Record<number, number> = {};
    for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
    return counts;
  }

  it("checks at most 10 of 30 wrong passwords sent at once for one address (each from its own client address)", async () => {
    await member("FINANCE", "parallel@example.org");
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        post(
          "/api/staff/login",
          { email: "parallel@example.org", password: `wrong guess number ${i}` },
          undefined,
          { "X-Forwarded-For": `198.51.100.${i + 1}` },
        ),
      ),
    );
    expect(tally(answers.map((a) => a.status))).toEqual({ 401: 10, 429: 20 });
    for (const a of answers.filter((x) => x.status === 429))
      expect(Number(a.headers.get("Retry-After"))).toBeGreaterThan(0);
    // The right password is refused too until the window has passed.
    const right = await post(
      "/api/staff/login",
      { email: "parallel@example.org", password: PASSWORD },
      undefined,
      { "X-Forwarded-For": "198.51.100.200" },
    );
    expect(right.status).toBe(429);
  });

  it("checks at most 10 wrong passwords sent at once from one client address to many addresses", async () => {
    for (let i = 0; i < 3; i++) await member("FINANCE", `spread${i}@example.org`);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        post(
          "/api/staff/login",
          { email: `spread${i % 3}@example.org`, password: `wrong guess number ${i}` },
          undefined,
          { "X-Forwarded-For": "203.0.113.7" },
        ),
      ),
    );
    expect(tally(answers.map((a) => a.status))).toEqual({ 401: 10, 429: 20 });
  });

  it("checks at most 10 when the attempts come through two server processes at once", async () => {
    await member("FINANCE", "two@example.org");
    // A second store on the same database: another process's connection.
    const other = await t.database.open();
    try {
      const attempt = (i: number) =>
        signIn(i % 2 === 0 ? t.store : other, {
          email: "two@example.org",
          password: `wrong guess number ${i}`,
          clientIp: `192.0.2.${i + 1}`,
          nowMs: now,
          secrets: t.deps.secrets,
        }).then(
          () => 200,
          (err: unknown) => (err instanceof StaffError && err.kind === "throttled" ? 429 : 401),
        );
      const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => attempt(i)));
      expect(tally(statuses)).toEqual({ 401: 10, 429: 20 });
    } finally {
      await other.close();
    }
  });

  it("checks at most 10 current passwords of 30 password changes sent at once, and a right one still counts for nothing", async () => {
    const cookie = await member("FINANCE", "changer@example.org");
    const change = (currentPassword: string, i: number) =>
      post("/api/staff/password", { currentPassword, newPassword: "a brand new passphrase here" }, cookie, {
        "X-Forwarded-For": `198.18.0.${i + 1}`,
      });
    const right = await change(PASSWORD, 0);
    expect(right.status).toBe(204);
    const failures = () =>
      t.store.db
        .selectFrom("staff_login_failures")
        .select("id")
        .where("key", "=", "email:changer@example.org")
        .execute();
    expect(await failures()).toHaveLength(0);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => change(`wrong current password ${i}`, i + 1)),
    );
    expect(tally(answers.map((a) => a.status))).toEqual({ 403: 10, 429: 20 });
    expect(await failures()).toHaveLength(10);
    // Each wrong current password is in the audit log as a failed sign-in.
    const audited = await t.store.db
      .selectFrom("audit_log")
      .select("new_values")
      .where("action", "=", "staff.sign_in_failed")
      .where("actor_label", "=", "changer@example.org")
      .execute();
    expect(audited.filter((a) => a.new_values.includes('"password"'))).toHaveLength(10);
  });
});

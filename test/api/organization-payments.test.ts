import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../server/store/keys.js";
import { createOrganization } from "../../server/store/organizations.js";
import { staffClient } from "../support/staff.js";
import { type StripeEmulator, startStripeEmulator } from "../support/stripe/emulator.js";
import { dialect, setupTestApp, type TestApp, type TestOrg } from "../support/testApp.js";

/**
 * The Stripe connection from the dashboard's Settings (/v1/organization/payments): keys checked with
 * Stripe (the emulator, through STRIPE_API_URL) as `org stripe` checks them, the webhook endpoint and
 * wallet domains made there, disconnect; Owners only (and keys with organization:write); never a secret
 * in an answer or in the audit log.
 */
describe(`organization payments (${dialect})`, () => {
  let t: TestApp;
  let emulator: StripeEmulator;
  const ORIGIN = "https://give.example.org";

  beforeAll(async () => {
    emulator = await startStripeEmulator({
      accounts: [{ displayName: "Acme Giving" }, { chargesEnabled: false }],
      webhookMode: "manual",
    });
    t = await setupTestApp({
      env: { PUBLIC_URL: ORIGIN, STRIPE_API_URL: emulator.url, RATE_LIMIT_PER_HOUR: "1000000" },
    });
  });
  afterAll(async () => {
    await t?.close();
    await emulator?.close();
  });

  const { send, member } = staffClient(() => t);

  /** A request with a staff session (from this instance's pages). */
  const asStaff = (cookie: string, method: string, url: string, body?: unknown) =>
    send(method, url, { body, cookie });

  const keys = (i = 0) => ({
    secretKey: emulator.accounts[i].secretKey,
    publishableKey: emulator.accounts[i].publishableKey,
  });

  async function storedProcessor(organizationId: string) {
    return t.store.db
      .selectFrom("organizations")
      .select(["processor", "processor_settings", "processor_secrets"])
      .where("id", "=", organizationId)
      .executeTakeFirstOrThrow();
  }

  async function auditText(organizationId: string): Promise<string> {
    const rows = await t.store.db
      .selectFrom("audit_log")
      .select(["action", "old_values", "new_values"])
      .where("organization_id", "=", organizationId)
      .execute();
    return JSON.stringify(rows);
  }

  it("an organization on the sandbox: processor sandbox, test mode, no Stripe", async () => {
    const org = await t.newOrg();
    const res = await t.request("GET", "/v1/organization/payments", { key: org.key });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ processor: "sandbox", mode: "test", stripe: null });
  });

  it("refuses keys of the wrong shape, of two modes, unknown to Stripe, and an account that cannot take charges (400, nothing stored, no secret echoed)", async () => {
    const org = await t.newOrg();
    const shape = await t.request<{ error: string; details: string[] }>(
      "PUT",
      "/v1/organization/payments/stripe",
      {
        key: org.key,
        body: { secretKey: "not-a-key", publishableKey: "pk_test_x" },
      },
    );
    expect(shape.status, shape.text).toBe(400);
    // The keys' shapes are the schema's (and the API document's): every field's problem at once.
    expect(shape.body.details).toEqual([
      "secretKey must be a Stripe secret key (sk_test_…, sk_live_…) or restricted key (rk_test_…, rk_live_…)",
      "publishableKey must be a Stripe publishable key (pk_test_…, pk_live_…)",
    ]);
    expect(shape.text).not.toContain("not-a-key");
    const mixed = await t.request<{ error: string }>("PUT", "/v1/organization/payments/stripe", {
      key: org.key,
      body: { secretKey: keys().secretKey, publishableKey: "pk_live_abcdefghijklmnop" },
    });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error).toContain("different modes");
    const unknown = await t.request<{ error: string }>("PUT", "/v1/organization/payments/stripe", {
      key: org.key,
      body: { secretKey: "sk_test_nobodyknowsthis123", publishableKey: "pk_test_nobodyknowsthis123" },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toContain("Stripe refused the secret key sk_test_…s123");
    expect(unknown.text).not.toContain("nobodyknowsthis");
    const inactive = await t.request<{ error: string }>("PUT", "/v1/organization/payments/stripe", {
      key: org.key,
      body: keys(1),
    });
    expect(inactive.status).toBe(400);
    expect(inactive.body.error).toContain("cannot take charges yet");
    const missing = await t.request<{ details: string[] }>("PUT", "/v1/organization/payments/stripe", {
      key: org.key,
      body: { secretKey: keys().secretKey },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.details[0]).toMatch(/^publishableKey/);
    expect(await storedProcessor(org.id)).toEqual({
      processor: null,
      processor_settings: null,
      processor_secrets: null,
    });
  });

  it("a sandbox organization (test API keys) takes Stripe test keys only: live keys are a 400, nothing stored", async () => {
    const org = await createOrganization(t.store.db, { name: "Practice", sandbox: true }, Date.now());
    const { key } = await createApiKey(t.store.db, { organizationId: org.id, sandbox: true }, Date.now());
    expect(key).toMatch(/^cs_test_/);
    const before = emulator.countRequests("GET", "/v1/account");
    const live = await t.request<{ error: string }>("PUT", "/v1/organization/payments/stripe", {
      key,
      body: { secretKey: "sk_live_abcdefghijklmnopqrst", publishableKey: "pk_live_abcdefghijklmnopqrst" },
    });
    expect(live.status, live.text).toBe(400);
    expect(live.body.error).toMatch(/must be test keys .*this is a sandbox organization/);
    expect(live.text).not.toContain("abcdefghijklmnopqrst");
    // Refused before Stripe is asked anything.
    expect(emulator.countRequests("GET", "/v1/account")).toBe(before);
    expect(await storedProcessor(org.id)).toEqual({
      processor: null,
      processor_settings: null,
      processor_secrets: null,
    });
    const test = await t.request("PUT", "/v1/organization/payments/stripe", { key, body: keys() });
    expect(test.status, test.text).toBe(200);
  });

  it("an Owner connects, adds a wallet domain and disconnects; the secret is never in an answer or the audit log", async () => {
    const org = await t.newOrg({ name: "Acme" });
    const owner = await member("OWNER", `owner-${org.id}@example.org`, org.id);
    const { secretKey, publishableKey } = keys();
    const before = emulator.countRequests("POST", "/v1/webhook_endpoints");

    const connected = await asStaff(owner, "PUT", "/v1/organization/payments/stripe", {
      secretKey,
      publishableKey,
    });
    expect(connected.status, connected.text).toBe(200);
    const stripe = {
      mode: "test",
      accountId: emulator.accounts[0].id,
      accountName: "Acme Giving",
      publishableKey,
      secretKeyHint: `sk_test_…${secretKey.slice(-4)}`,
      currency: "USD",
      webhook: {
        url: `${ORIGIN}/stripe/webhooks/${org.id}`,
        endpointId: expect.stringMatching(/^we_/),
        setUp: "created",
      },
      walletDomains: ["give.example.org"],
      connectedAt: expect.any(String),
    };
    expect(connected.body).toEqual({ processor: "stripe", mode: "test", stripe, warnings: [] });
    expect(emulator.countRequests("POST", "/v1/webhook_endpoints")).toBe(before + 1);
    const read = await asStaff(owner, "GET", "/v1/organization/payments");
    expect(read.body).toEqual({ processor: "stripe", mode: "test", stripe });
    const settings = await asStaff(owner, "GET", "/v1/organization");
    expect(settings.body.paymentProcessor).toMatchObject({
      name: "stripe",
      accountId: emulator.accounts[0].id,
    });

    const added = await asStaff(owner, "POST", "/v1/organization/payments/stripe/domains", {
      domain: "https://WWW.Acme.org/give",
    });
    expect(added.status, added.text).toBe(200);
    expect(added.body.stripe.walletDomains).toEqual(["give.example.org", "www.acme.org"]);
    const local = await asStaff(owner, "POST", "/v1/organization/payments/stripe/domains", {
      domain: "localhost",
    });
    expect(local.status).toBe(400);
    expect(local.body.error).toContain("not a public domain");

    const off = await asStaff(owner, "DELETE", "/v1/organization/payments/stripe");
    expect(off.status, off.text).toBe(200);
    expect(off.body).toEqual({ processor: "sandbox", mode: "test", stripe: null, warnings: [] });
    expect(
      emulator.requests.some(
        (r) =>
          r.method === "DELETE" &&
          r.path === `/v1/webhook_endpoints/${connected.body.stripe.webhook.endpointId}`,
      ),
    ).toBe(true);
    expect(await storedProcessor(org.id)).toEqual({
      processor: null,
      processor_settings: null,
      processor_secrets: null,
    });
    const again = await asStaff(owner, "DELETE", "/v1/organization/payments/stripe");
    expect(again.body).toEqual({ processor: "sandbox", mode: "test", stripe: null, warnings: [] });

    const every = [connected, read, settings, added, local, off, again].map((r) => r.text).join("\n");
    expect(every).not.toContain(secretKey);
    expect(every).not.toContain("whsec_");
    // Connected, domain added, disconnected: three entries by the Owner, without the secret or its hint.
    const log = await t.store.db
      .selectFrom("audit_log")
      .selectAll()
      .where("organization_id", "=", org.id)
      .where("action", "=", "organization.updated")
      .orderBy("id")
      .execute();
    expect(log.map((e) => [e.action, e.actor_type])).toEqual([
      ["organization.updated", "staff"],
      ["organization.updated", "staff"],
      ["organization.updated", "staff"],
    ]);
    expect(JSON.parse(log[0].old_values ?? "null")).toEqual({ paymentProcessor: null });
    expect(JSON.parse(log[0].new_values ?? "null").paymentProcessor).toMatchObject({
      name: "stripe",
      accountId: emulator.accounts[0].id,
      publishableKey,
    });
    expect(JSON.parse(log[2].new_values ?? "null")).toEqual({ paymentProcessor: null });
    const text = await auditText(org.id);
    expect(text).not.toContain(secretKey);
    expect(text).not.toContain(secretKey.slice(-4));
    expect(text).not.toContain("whsec_");
  });

  it("registering a wallet domain without Stripe connected answers 409", async () => {
    const org = await t.newOrg();
    const res = await t.request<{ error: string }>("POST", "/v1/organization/payments/stripe/domains", {
      key: org.key,
      body: { domain: "www.acme.org" },
    });
    expect(res.status, res.text).toBe(409);
    expect(res.body.error).toMatch(/^Connect Stripe first/);
  });

  it("Finance and Staff sessions may look but not connect, add a domain or disconnect; a key needs organization:write", async () => {
    const org: TestOrg = await t.newOrg();
    for (const role of ["FINANCE", "STAFF"] as const) {
      const cookie = await member(role, `${role.toLowerCase()}-${org.id}@example.org`, org.id);
      expect((await asStaff(cookie, "GET", "/v1/organization/payments")).status).toBe(200);
      expect((await asStaff(cookie, "PUT", "/v1/organization/payments/stripe", keys())).status, role).toBe(
        403,
      );
      expect(
        (
          await asStaff(cookie, "POST", "/v1/organization/payments/stripe/domains", {
            domain: "www.acme.org",
          })
        ).status,
      ).toBe(403);
      expect((await asStaff(cookie, "DELETE", "/v1/organization/payments/stripe")).status).toBe(403);
    }
    const reader = await t.newOrg({ permissions: ["organization:read"] });
    const res = await t.request("PUT", "/v1/organization/payments/stripe", { key: reader.key, body: keys() });
    expect(res.status).toBe(403);
    expect((await storedProcessor(org.id)).processor).toBeNull();
    expect((await storedProcessor(reader.id)).processor).toBeNull();
  });

  it("a Stripe that cannot be reached answers 502 and stores nothing", async () => {
    const unreachable = await setupTestApp({
      env: { PUBLIC_URL: ORIGIN, STRIPE_API_URL: "http://127.0.0.1:9", RATE_LIMIT_PER_HOUR: "1000000" },
    });
    try {
      const res = await unreachable.request<{ error: string }>("PUT", "/v1/organization/payments/stripe", {
        body: keys(),
      });
      expect(res.status, res.text).toBe(502);
      expect(res.body.error).toMatch(/^Stripe could not be reached/);
      expect(res.text).not.toContain(keys().secretKey);
      const row = await unreachable.store.db
        .selectFrom("organizations")
        .select("processor")
        .where("id", "=", unreachable.org.id)
        .executeTakeFirstOrThrow();
      expect(row.processor).toBeNull();
    } finally {
      await unreachable.close();
    }
  }, 60_000);
});

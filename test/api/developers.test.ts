import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createStaffMember } from "../../server/staff/accounts.js";
import type { ApiKeyOut } from "../../shared/schemas/apiKey.js";
import type { AuditEntryOut } from "../../shared/schemas/auditLog.js";
import type { StaffRole } from "../../shared/schemas/staff.js";
import { dialect, setupTestApp, type TestApp } from "../support/testApp.js";

/**
 * The developers' page's API keys: an Owner (or a key with organization:write) makes a key with
 * a name and chosen permissions and sees its secret once; the list shows prefix, permissions, created and
 * last used (noted at most once a minute, never the secret); a revoked key is refused at once; a key can
 * never hand out or take away more than it holds; every change is in the audit log without a secret.
 */

const ORIGIN = "http://forms.test";
const PASSWORD = "correct horse battery staple";
const START = Date.parse("2026-01-31T10:00:00Z");

let clock = START;
let t: TestApp;

beforeEach(async () => {
  clock = START;
  t = await setupTestApp({ now: () => clock });
});
afterEach(async () => {
  await t.close();
});

const tokenOf = (url: string) => new URL(url).searchParams.get("token") ?? "";
const cookieOf = (headers: Headers) => (headers.get("Set-Cookie") ?? "").split(";")[0];

/** A person with `role` in the organization, set up and signed in: request options for their session. */
async function session(role: StaffRole, email: string) {
  const made = await createStaffMember(t.store, {
    organizationId: t.org.id,
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
  return { key: null, headers: { Cookie: cookieOf(setup.headers), Origin: ORIGIN } };
}

type Created = ApiKeyOut & { key: string };
const listKeys = async (opts: { key?: string | null; headers?: Record<string, string> } = {}) => {
  const res = await t.request<{ keys: ApiKeyOut[] }>("GET", "/v1/keys", opts);
  expect(res.status, res.text).toBe(200);
  return res.body.keys;
};

describe(`API keys over /v1 (${dialect})`, () => {
  it("an Owner creates a key with a name and permissions: the secret once, then only its prefix", async () => {
    const owner = await session("OWNER", "owner@example.org");
    const res = await t.request<Created>("POST", "/v1/keys", {
      ...owner,
      body: { name: "Zapier", permissions: ["forms:read", "donations:read"] },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.key).toMatch(/^cs_live_[0-9A-Za-z]{32}$/);
    expect(res.body).toMatchObject({
      name: "Zapier",
      prefix: res.body.key.slice(0, 12),
      permissions: ["forms:read", "donations:read"],
      createdAt: "2026-01-31T10:00:00Z",
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(res.headers.get("Cache-Control")).toBe("no-store");

    const keys = await listKeys(owner);
    const listed = keys.find((k) => k.keyId === res.body.keyId);
    expect(listed).toMatchObject({ name: "Zapier", prefix: res.body.prefix, lastUsedAt: null });
    const listText = JSON.stringify(keys);
    expect(listText).not.toContain(res.body.key);
    expect(listText).not.toContain(t.org.key);

    // The new key works with exactly its permissions.
    expect((await t.request("GET", "/v1/forms", { key: res.body.key })).status).toBe(200);
    expect((await t.request("GET", "/v1/webhooks", { key: res.body.key })).status).toBe(403);
  });

  it("last used: null until the key's first request, then that time; noted again only a minute later", async () => {
    const made = await t.request<Created>("POST", "/v1/keys", {
      body: { name: "reporting", permissions: ["forms:read"] },
    });
    expect(made.status, made.text).toBe(201);
    const lastUsed = async () => {
      await t.deps.metrics.flush();
      return (await listKeys()).find((k) => k.keyId === made.body.keyId)?.lastUsedAt;
    };
    expect(await lastUsed()).toBeNull();

    clock = START + 5_000;
    await t.request("GET", "/v1/forms", { key: made.body.key });
    expect(await lastUsed()).toBe("2026-01-31T10:00:05Z");

    // Within the minute: not written again (no write per request).
    clock = START + 50_000;
    await t.request("GET", "/v1/forms", { key: made.body.key });
    expect(await lastUsed()).toBe("2026-01-31T10:00:05Z");

    clock = START + 70_000;
    await t.request("GET", "/v1/forms", { key: made.body.key });
    expect(await lastUsed()).toBe("2026-01-31T10:01:10Z");

    // The key making the list requests has its own last use, unaffected by the other's.
    const own = (await listKeys()).find((k) => k.keyId === t.org.keyId);
    expect(own?.lastUsedAt).toBe("2026-01-31T10:00:00Z");
  });

  it("a revoked key is refused at once (401) and listed with revokedAt; revoking twice is a 409", async () => {
    const made = await t.request<Created>("POST", "/v1/keys", {
      body: { name: "old integration", permissions: ["forms:read"] },
    });
    expect((await t.request("GET", "/v1/forms", { key: made.body.key })).status).toBe(200);

    clock = START + 60_000;
    const revoked = await t.request<ApiKeyOut>("DELETE", `/v1/keys/${made.body.keyId}`);
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.revokedAt).toBe("2026-01-31T10:01:00Z");

    const refused = await t.request("GET", "/v1/forms", { key: made.body.key });
    expect(refused.status).toBe(401);
    expect((await listKeys()).find((k) => k.keyId === made.body.keyId)?.revokedAt).toBe(
      "2026-01-31T10:01:00Z",
    );
    expect((await t.request("DELETE", `/v1/keys/${made.body.keyId}`)).status).toBe(409);
  });

  it("a key cannot create a key with a permission it lacks, nor revoke a key that holds more", async () => {
    const limited = await t.newOrg();
    // A key of the main organization with organization:write and forms:read only.
    const made = await t.request<Created>("POST", "/v1/keys", {
      body: { name: "key admin", permissions: ["organization:read", "organization:write", "forms:read"] },
    });
    const admin = made.body.key;

    const escalate = await t.request("POST", "/v1/keys", {
      key: admin,
      body: { name: "more", permissions: ["forms:read", "donations:write"] },
    });
    expect(escalate.status).toBe(403);
    expect(escalate.text).toContain("donations:write");

    const subset = await t.request<Created>("POST", "/v1/keys", {
      key: admin,
      body: { name: "less", permissions: ["forms:read"] },
    });
    expect(subset.status, subset.text).toBe(201);

    // The all-permission key holds what `admin` lacks: admin may not revoke it, but may revoke `less`.
    expect((await t.request("DELETE", `/v1/keys/${t.org.keyId}`, { key: admin })).status).toBe(403);
    expect((await t.request("GET", "/v1/forms")).status).toBe(200);
    expect((await t.request("DELETE", `/v1/keys/${subset.body.keyId}`, { key: admin })).status).toBe(200);

    // Another organization's key is not found; a key without organization:write may not create one.
    expect((await t.request("DELETE", `/v1/keys/${limited.keyId}`)).status).toBe(404);
    expect((await t.request("GET", "/v1/forms", { key: limited.key })).status).toBe(200);
    const reader = await t.request<Created>("POST", "/v1/keys", {
      body: { name: "reader", permissions: ["organization:read"] },
    });
    const denied = await t.request("POST", "/v1/keys", {
      key: reader.body.key,
      body: { name: "x", permissions: ["organization:read"] },
    });
    expect(denied.status).toBe(403);
  });

  it("a key's secret is replayed to the key that made it only: another key reusing its Idempotency-Key meets the checks", async () => {
    const made = await t.request<Created>("POST", "/v1/keys", {
      body: { name: "key admin", permissions: ["organization:read", "organization:write", "forms:read"] },
    });
    const admin = made.body.key;
    const strong = { name: "ci", permissions: ["forms:read", "donations:read", "organization:write"] };
    const headers = { "Idempotency-Key": "deploy-1" };
    const first = await t.request<Created>("POST", "/v1/keys", { body: strong, headers });
    expect(first.status, first.text).toBe(201);
    const again = await t.request<Created>("POST", "/v1/keys", { body: strong, headers });
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.headers.get("Cache-Control")).toBe("no-store");
    expect(again.body.key).toBe(first.body.key);
    // The weaker key sending the very same request with the same Idempotency-Key: its own 403, no secret.
    const replayed = await t.request<Created>("POST", "/v1/keys", { key: admin, body: strong, headers });
    expect(replayed.status).toBe(403);
    expect(replayed.text).not.toContain(first.body.key);
  });

  it("only Owners' sessions manage keys; bad bodies are 400s", async () => {
    const finance = await session("FINANCE", "finance@example.org");
    expect((await t.request("GET", "/v1/keys", finance)).status).toBe(403);
    expect(
      (await t.request("POST", "/v1/keys", { ...finance, body: { name: "x", permissions: ["forms:read"] } }))
        .status,
    ).toBe(403);
    for (const body of [
      {},
      { name: "", permissions: ["forms:read"] },
      { name: "x", permissions: [] },
      { name: "x", permissions: ["root"] },
      { name: "x", permissions: ["forms:read", "forms:read"] },
      { name: "x", permissions: ["forms:read"], extra: 1 },
    ]) {
      const res = await t.request("POST", "/v1/keys", { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });

  it("creating and revoking are in the audit log, by who did it, never with the secret", async () => {
    const owner = await session("OWNER", "boss@example.org");
    const made = await t.request<Created>("POST", "/v1/keys", {
      ...owner,
      body: { name: "CRM sync", permissions: ["contacts:read"] },
    });
    await t.request("DELETE", `/v1/keys/${made.body.keyId}`);
    const log = await t.request<{ entries: AuditEntryOut[] }>(
      "GET",
      `/v1/audit-log?subjectType=key&subjectId=${made.body.keyId}`,
    );
    expect(log.status, log.text).toBe(200);
    const byAction = Object.fromEntries(log.body.entries.map((e) => [e.action, e]));
    expect(byAction["key.created"]).toMatchObject({
      actor: { type: "staff", label: "boss@example.org" },
      after: { name: "CRM sync", prefix: made.body.prefix, permissions: ["contacts:read"] },
    });
    expect(byAction["key.revoked"]).toMatchObject({ actor: { type: "key", id: t.org.keyId } });
    expect(log.text).not.toContain(made.body.key);
  });
});

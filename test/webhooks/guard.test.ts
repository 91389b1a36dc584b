import crypto from "node:crypto";
import dgram from "node:dgram";
import dns from "node:dns";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../server/config.js";
import {
  type AddressResolver,
  guardedLookup,
  guardedLookupWith,
  isForbiddenAddress,
  refuseUrl,
} from "../../server/webhooks/guard.js";
import { signWebhook, verifyWebhookSignature } from "../../server/webhooks/signature.js";
import { createForm } from "../support/checkout.js";
import { dialect, validForms } from "../support/testApp.js";
import { type Receiver, sleep, startReceiver } from "./receiver.js";
import { settled, setupWebhookTest, type WebhookTest } from "./support.js";

/** The SSRF guard on its own: https only, no private addresses outside development. */

describe("webhook target guard: addresses", () => {
  it("forbids loopback, private, link-local, metadata, CGNAT, multicast and reserved addresses", () => {
    for (const address of [
      "127.0.0.1",
      "127.9.9.9",
      "0.0.0.0",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "224.0.0.1",
      "255.255.255.255",
      "::1",
      "::",
      "fe80::1",
      "fc00::1",
      "fd00:ec2::254",
      "ff02::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:a9fe:a9fe",
      "64:ff9b::a00:1",
      "2002:c0a8:101::1",
      "[::1]",
      "not-an-address",
    ])
      expect(isForbiddenAddress(address), address).toBe(true);
  });

  it("allows public addresses", () => {
    for (const address of [
      "93.184.216.34",
      "8.8.8.8",
      "172.32.0.1",
      "2606:4700:4700::1111",
      "::ffff:8.8.8.8",
    ])
      expect(isForbiddenAddress(address), address).toBe(false);
  });

  it("refuses http and literal private hosts only when the guard is on", () => {
    const on = { guard: true };
    expect(refuseUrl(new URL("http://example.org/x"), on)).toMatch(/https/);
    expect(refuseUrl(new URL("https://127.0.0.1/x"), on)).toMatch(/not a public address/);
    expect(refuseUrl(new URL("https://[::ffff:10.0.0.1]/x"), on)).toMatch(/not a public address/);
    expect(refuseUrl(new URL("https://example.org/x"), on)).toBeUndefined();
    expect(refuseUrl(new URL("http://127.0.0.1/x"), { guard: false })).toBeUndefined();
  });

  it("fails a lookup whose name resolves to a loopback address", async () => {
    const err = await new Promise<Error | null>((resolve) =>
      guardedLookup("localhost", {}, (e) => resolve(e)),
    );
    expect(err?.message).toBe("localhost does not resolve to a public address");
  });

  /** A resolver answering from a table: a list of addresses, or an error code per name and family. */
  const tableResolver = (table: Record<string, { v4?: string[] | string; v6?: string[] | string }>) => {
    const asked: string[] = [];
    const answer = (name: string, family: "v4" | "v6") => {
      asked.push(name);
      const a = table[name]?.[family] ?? "ENOTFOUND";
      if (typeof a !== "string") return Promise.resolve(a);
      return Promise.reject(Object.assign(new Error(`query ${a} ${name}`), { code: a }));
    };
    const resolver = {
      resolve4: (name: string) => answer(name, "v4"),
      resolve6: (name: string) => answer(name, "v6"),
    } as AddressResolver;
    return { resolver, asked };
  };
  type Answer = { err: NodeJS.ErrnoException | null; addresses: unknown };
  const lookUp = (resolver: AddressResolver, name: string, options: dns.LookupOptions = { all: true }) =>
    new Promise<Answer>((resolve) =>
      guardedLookupWith(resolver)(name, options, (err, addresses) => resolve({ err, addresses })),
    );

  it("connects only to a name's resolved addresses, and refuses it when any of them is not public", async () => {
    const { resolver } = tableResolver({
      "hooks.example.org": { v4: ["93.184.216.34"], v6: ["2606:2800:220:1::1"] },
      "mixed.example.org": { v4: ["93.184.216.34"], v6: ["fd00::5"] },
      "inside.example.org": { v4: ["10.1.2.3"], v6: "ENODATA" },
    });
    expect((await lookUp(resolver, "hooks.example.org")).addresses).toEqual([
      { address: "93.184.216.34", family: 4 },
      { address: "2606:2800:220:1::1", family: 6 },
    ]);
    expect((await lookUp(resolver, "hooks.example.org", {})).addresses).toBe("93.184.216.34");
    for (const name of ["mixed.example.org", "inside.example.org"]) {
      const { err } = await lookUp(resolver, name);
      expect(err?.message, name).toBe(`${name} does not resolve to a public address`);
      expect(err?.message, name).not.toMatch(/10\.1\.2\.3|fd00/);
    }
  });

  it("refuses a name with no address, and tells a name server that failed from a name that does not exist", async () => {
    const { resolver } = tableResolver({ "slow.example.org": { v4: "ETIMEOUT", v6: "ETIMEOUT" } });
    expect((await lookUp(resolver, "nowhere.example.org")).err?.message).toBe(
      "nowhere.example.org does not resolve to a public address",
    );
    const { err } = await lookUp(resolver, "slow.example.org");
    expect(err?.code).toBe("ETIMEOUT");
    expect(err?.message).toBe("the name server did not answer for slow.example.org");
  });

  it("refuses special-use local names (localhost, .local, .internal, home.arpa) without asking a name server", async () => {
    const { resolver, asked } = tableResolver({});
    for (const name of ["localhost", "api.localhost", "printer.local", "db.internal", "nas.home.arpa"]) {
      const { err } = await lookUp(resolver, name);
      expect(err?.message, name).toBe(`${name} does not resolve to a public address`);
    }
    expect(asked).toEqual([]);
  });

  it("asks the name server on the event loop: a server that never answers times out and holds no thread of the pool", async () => {
    const silent = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => silent.bind(0, "127.0.0.1", resolve));
    try {
      const resolver = new dns.promises.Resolver({ timeout: 400, tries: 1 });
      resolver.setServers([`127.0.0.1:${silent.address().port}`]);
      let settledLookups = 0;
      const lookups = Array.from({ length: 8 }, (_, i) =>
        lookUp(resolver, `tenant${i}.example.org`).finally(() => settledLookups++),
      );
      // Eight lookups are waiting on the silent server; work of the thread pool (4 threads) still runs.
      await Promise.all(
        Array.from(
          { length: 8 },
          () =>
            new Promise((resolve, reject) =>
              crypto.pbkdf2("pw", "salt", 1, 32, "sha256", (e, k) => (e ? reject(e) : resolve(k))),
            ),
        ),
      );
      expect(settledLookups).toBe(0);
      for (const { err } of await Promise.all(lookups)) expect(err?.code).toBe("ETIMEOUT");
    } finally {
      silent.close();
    }
  });

  it("is on by default in production and off in development; WEBHOOK_TARGET_GUARD decides either way", () => {
    expect(loadConfig({ NODE_ENV: "production" }).webhookTargetGuard).toBe(true);
    expect(loadConfig({}).webhookTargetGuard).toBe(false);
    expect(loadConfig({ NODE_ENV: "development" }).webhookTargetGuard).toBe(false);
    expect(loadConfig({ WEBHOOK_TARGET_GUARD: "off" }).webhookTargetGuard).toBe(false);
    expect(loadConfig({ WEBHOOK_TARGET_GUARD: "on" }).webhookTargetGuard).toBe(true);
    expect(loadConfig({ NODE_ENV: "production", WEBHOOK_TARGET_GUARD: "off" }).webhookTargetGuard).toBe(
      false,
    );
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: "0.5, 2,10" }).webhookRetryScheduleMs).toEqual([
      500, 2000, 10000,
    ]);
    expect(loadConfig({}).webhookRetryScheduleMs).toEqual(
      [60, 300, 1800, 7200, 21600, 43200, 86400].map((s) => s * 1000),
    );
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: "1,,2" })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
  });
});

describe("webhook signatures", () => {
  const secret = "whsec_test";
  const body = '{"id":"evt_1","event":"form.created","createdAt":1,"data":{}}';
  const now = 1_800_000_000;

  it("accepts its own signature within five minutes and refuses anything altered or stale", () => {
    const ts = String(now);
    const signature = signWebhook(secret, ts, body);
    expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    const ok = { secret, body, timestamp: ts, signature, nowSeconds: now + 299 };
    expect(verifyWebhookSignature(ok)).toBe(true);
    expect(verifyWebhookSignature({ ...ok, body: Buffer.from(body) })).toBe(true);
    expect(verifyWebhookSignature({ ...ok, nowSeconds: now + 301 })).toBe(false);
    expect(verifyWebhookSignature({ ...ok, nowSeconds: now - 301 })).toBe(false);
    expect(verifyWebhookSignature({ ...ok, body: body.replace("form", "from") })).toBe(false);
    expect(verifyWebhookSignature({ ...ok, secret: "whsec_other" })).toBe(false);
    expect(verifyWebhookSignature({ ...ok, timestamp: String(now + 1) })).toBe(false);
    expect(verifyWebhookSignature({ ...ok, signature: signature.toUpperCase() })).toBe(false);
    expect(verifyWebhookSignature({ ...ok, signature: undefined })).toBe(false);
    expect(verifyWebhookSignature({ ...ok, timestamp: "1e9" })).toBe(false);
  });
});

describe(`webhook target guard: registration and delivery (${dialect})`, () => {
  let w: WebhookTest;
  let r: Receiver;
  beforeAll(async () => {
    w = await setupWebhookTest({ env: { WEBHOOK_TARGET_GUARD: "on" } });
    r = await startReceiver();
  });
  afterAll(async () => {
    await r.close();
    await w.close();
  });

  it("refuses to register http URLs and literal private addresses", async () => {
    for (const url of [
      r.url,
      "https://127.0.0.1/hooks",
      "https://169.254.169.254/latest",
      "https://localhost/x",
      "https://printer.local/x",
      "https://db.internal/x",
    ]) {
      const res = await w.t.request<{ details: string[] }>("POST", "/v1/webhooks", {
        body: { url, events: ["form.created"] },
      });
      expect(res.status, url).toBe(400);
      expect(res.body.details[0], url).toMatch(/^url /);
    }
  });

  it("never connects to a name that resolves to a private address: the attempt fails and nothing arrives", async () => {
    // Registered while allowed, then the guard is on for delivery: "localhost" resolves to loopback.
    const port = new URL(r.url).port;
    const now = new Date().toISOString();
    const id = "wh_000000000000000000000guard";
    await w.t.store.db
      .insertInto("webhooks")
      .values({
        id,
        organization_id: w.t.org.id,
        url: `https://localhost:${port}/hooks`,
        events: JSON.stringify(["form.created"]),
        status: "ACTIVE",
        description: "",
        secret: "whsec_x",
        success_count: 0,
        failure_count: 0,
        last_delivery_at: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      })
      .execute();
    await createForm(w.t, validForms.standard());
    await sleep(300);
    const logs = await settled(w.t, id);
    expect(logs.length).toBeGreaterThan(0);
    expect(logs[0]).toMatchObject({ status: "FAILED", httpStatus: null });
    expect(logs[0].error).toBe(
      "refused by the delivery guard: localhost does not resolve to a public address",
    );
    // The internal address the name resolved to is not told to the organization.
    expect(logs[0].error).not.toMatch(/127\.0\.0\.1|::1/);
    expect(r.received).toHaveLength(0);
  });
});

describe("a webhook address's refusal says what the server takes", () => {
  it("an https-only server asks for an https URL; a development one for http or https", async () => {
    const { webhookCreateSchema } = await import("../../shared/schemas/webhook.js");
    const messages = (httpsOnly: boolean, url: string) => {
      const parsed = webhookCreateSchema({ httpsOnly }).safeParse({ url, events: ["form.created"] });
      return parsed.success ? [] : parsed.error.issues.map((i) => i.message);
    };
    expect(messages(true, "not a url")).toEqual(["must be an absolute https URL"]);
    expect(messages(true, "ftp://example.org/x")).toEqual(["must be an absolute https URL"]);
    expect(messages(false, "not a url")).toEqual(["must be an absolute http or https URL"]);
    expect(messages(false, "http://example.org/x")).toEqual([]);
  });
});

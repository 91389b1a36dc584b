import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../server/config.js";
import { isForbiddenAddress } from "../../server/webhooks/guard.js";
import { setupTestApp, type TestApp } from "../support/testApp.js";

/**
 * A production instance must not let an API key point webhook deliveries at its own network: the guard is on
 * there unless turned off (and on in development when asked for), and it sees through IPv6 translation
 * addresses. Development allows http and local receivers.
 */

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("webhook targets", () => {
  it("the guard is on with NODE_ENV=production, off without unless WEBHOOK_TARGET_GUARD=on", () => {
    expect(loadConfig({ NODE_ENV: "production" }).webhookTargetGuard).toBe(true);
    expect(loadConfig({}).webhookTargetGuard).toBe(false);
    expect(loadConfig({ WEBHOOK_TARGET_GUARD: "on" }).webhookTargetGuard).toBe(true);
  });

  it("a development instance refuses loopback, metadata and LAN targets at registration", async () => {
    t = await setupTestApp({ env: { WEBHOOK_TARGET_GUARD: "on" } });
    for (const url of [
      "http://127.0.0.1:8080/hook",
      "https://127.0.0.1/hook",
      "https://169.254.169.254/latest/meta-data/",
      "https://192.168.1.10/hook",
      "https://localhost/hook",
      "https://[::ffff:7f00:1]/hook",
      "https://[64:ff9b:1::a9fe:a9fe]/hook",
    ]) {
      const res = await t.request("POST", "/v1/webhooks", { body: { url, events: ["donation.created"] } });
      expect(res.status, url).toBe(400);
    }
    expect(await t.store.db.selectFrom("webhooks").select("id").execute()).toEqual([]);
  });

  it("judges IPv6 translation addresses by the IPv4 address inside, and the translation ranges as not public", () => {
    for (const address of [
      "::ffff:0:7f00:1", // SIIT
      "64:ff9b:1::a00:1", // local-use NAT64 of 10.0.0.1
      "64:ff9b::a9fe:a9fe", // NAT64 of the metadata address
      "2002:a9fe:a9fe::1", // 6to4 of the metadata address
      "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo of 127.0.0.1
      "2001:0:4136:e378:8000:63bf:3ffd:fdfe", // Teredo of 192.2.2.1... or any Teredo address
    ])
      expect(isForbiddenAddress(address), address).toBe(true);
    for (const address of ["8.8.8.8", "2606:4700:4700::1111", "1.1.1.1"])
      expect(isForbiddenAddress(address), address).toBe(false);
  });
});

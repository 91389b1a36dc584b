import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { setupTestApp, type TestApp } from "../support/testApp.js";

/** Apple Pay's domain verification file, as the operator downloaded it, at the address Apple asks for. */

const WELL_KNOWN = "/.well-known/apple-developer-merchantid-domain-association";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("the Apple Pay domain association file", () => {
  it("is served as the operator gave it when APPLE_PAY_DOMAIN_ASSOCIATION names it", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-applepay-"));
    const file = path.join(dir, "association");
    fs.writeFileSync(file, "7B227073704964223A2239373943394538343346343131343044");
    try {
      t = await setupTestApp({ env: { APPLE_PAY_DOMAIN_ASSOCIATION: file } });
      const res = await t.app.request(WELL_KNOWN);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe("7B227073704964223A2239373943394538343346343131343044");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is 404 while no file is configured", async () => {
    t = await setupTestApp();
    expect((await t.app.request(WELL_KNOWN)).status).toBe(404);
  });
});

import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { instanceSecretBox, SecretsError, secretBox } from "../../server/secrets.js";

/** Processor secrets are sealed with AES-256-GCM under the instance key, bound to their organization. */

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-secrets-"));
  dirs.push(dir);
  return dir;
};

describe("sealed secrets", () => {
  const box = secretBox(crypto.randomBytes(32));

  it("opens what it sealed, and the sealed text shows nothing of the secret", () => {
    const sealed = box.seal("sk_test_abcdef123456", "stripe:org_1");
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain("sk_test");
    expect(box.open(sealed, "stripe:org_1")).toBe("sk_test_abcdef123456");
    expect(box.seal("same", "c")).not.toBe(box.seal("same", "c"));
  });

  it("refuses a sealed value moved to another organization, changed, or opened with another key", () => {
    const sealed = box.seal("sk_test_abcdef123456", "stripe:org_1");
    expect(() => box.open(sealed, "stripe:org_2")).toThrow(SecretsError);
    const [v, iv, body, tag] = sealed.split(".");
    const flipped = `${v}.${iv}.${body.startsWith("A") ? "B" : "A"}${body.slice(1)}.${tag}`;
    expect(() => box.open(flipped, "stripe:org_1")).toThrow(SecretsError);
    expect(() => secretBox(crypto.randomBytes(32)).open(sealed, "stripe:org_1")).toThrow(/SECRETS_KEY/);
    expect(() => box.open("plain text", "stripe:org_1")).toThrow(SecretsError);
  });

  it("outside production makes a key file in the data folder once, readable by its owner only", () => {
    const dir = tempDir();
    const a = instanceSecretBox({ key: undefined, dataDir: dir, production: false });
    const sealed = a.seal("whsec_abc", "x");
    const file = path.join(dir, "secrets.key");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const b = instanceSecretBox({ key: undefined, dataDir: dir, production: false });
    expect(b.open(sealed, "x")).toBe("whsec_abc");
  });

  it("in production without SECRETS_KEY refuses to seal", () => {
    const box = instanceSecretBox({ key: undefined, dataDir: tempDir(), production: true });
    expect(() => box.seal("sk_live_x", "x")).toThrow(/SECRETS_KEY/);
  });
});

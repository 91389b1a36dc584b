import os from "node:os";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../server/config.js";

/**
 * Every numeric setting refused names the range it accepts, both ends, so an operator can fix it in one
 * go. Each setting is tried below its minimum and above its maximum; the message must hold both numbers.
 */

const NUMERIC: Record<string, { below: string; above: string; range: [string, string] }> = {
  PORT: { below: "-1", above: "65536", range: ["0", "65535"] },
  RATE_LIMIT_PER_HOUR: { below: "0", above: "10000001", range: ["1", "10000000"] },
  MAX_BODY_BYTES: { below: "1023", above: "50000001", range: ["1024", "50000000"] },
  CHECKOUT_LIMIT_PER_IP: { below: "-1", above: "10000001", range: ["0", "10000000"] },
  CHECKOUT_LIMIT_PER_FORM: { below: "-1", above: "10000001", range: ["0", "10000000"] },
  CARD_FAILURE_LIMIT: { below: "-1", above: "1001", range: ["0", "1000"] },
  QUOTE_LIMIT_PER_IP: { below: "-1", above: "10000001", range: ["0", "10000000"] },
  QUOTE_LIMIT_PER_FORM: { below: "-1", above: "10000001", range: ["0", "10000000"] },
  PROMO_FAILURE_LIMIT: { below: "-1", above: "10001", range: ["0", "10000"] },
  WORKER_INTERVAL_SECONDS: { below: "0.01", above: "3601", range: ["0.05", "3600"] },
  SANDBOX_BANK_SETTLE_SECONDS: { below: "-1", above: "2592001", range: ["0", "2592000"] },
  TRUST_PROXY: { below: "0", above: "10", range: ["1", "9"] },
};

describe("numeric settings", () => {
  for (const [name, { below, above, range }] of Object.entries(NUMERIC))
    it(`${name}: a value out of range is refused with both ends of the range`, () => {
      for (const value of [below, above]) {
        let message = "";
        try {
          loadConfig({ [name]: value });
        } catch (err) {
          message = (err as Error).message;
        }
        expect(message, `${name}=${value}`).toContain(`Invalid setting ${name}="${value}"`);
        for (const end of range) expect(message, `${name}=${value}`).toContain(end);
      }
    });
});

/** The message loadConfig refuses `env` with, or "" when it takes it. */
function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
    return "";
  } catch (err) {
    return (err as Error).message;
  }
}

describe("how settings are read", () => {
  it("a blank setting (an empty line of an .env file) means its default, never 0 that turns a limit off", () => {
    const config = loadConfig({
      CHECKOUT_LIMIT_PER_IP: "",
      CARD_FAILURE_LIMIT: " ",
      PORT: "",
      SANDBOX_BANK_SETTLE_SECONDS: "",
      WORKER_INTERVAL_SECONDS: "  ",
    });
    expect(config.checkoutLimitPerIp).toBe(30);
    expect(config.cardFailureLimit).toBe(5);
    expect(config.port).toBe(3000);
    expect(config.sandboxBankSettleMs).toBe(120_000);
    expect(config.workerIntervalMs).toBe(15_000);
  });

  it("numbers are written in decimal digits: hexadecimal and exponents are refused", () => {
    for (const value of ["0x50", "1e3", "12abc", "+5"])
      expect(refusal({ CHECKOUT_LIMIT_PER_IP: value }), value).toContain(
        "Invalid setting CHECKOUT_LIMIT_PER_IP",
      );
    expect(refusal({ WORKER_INTERVAL_SECONDS: "1e1" })).toContain("Invalid setting WORKER_INTERVAL_SECONDS");
    expect(loadConfig({ WORKER_INTERVAL_SECONDS: "0.5", CHECKOUT_LIMIT_PER_IP: " 12 " })).toMatchObject({
      workerIntervalMs: 500,
      checkoutLimitPerIp: 12,
    });
  });

  it("NODE_ENV other than production, development or test is refused, not run as development", () => {
    for (const value of ["prod", "Production", "staging"])
      expect(refusal({ NODE_ENV: value }), value).toContain("must be production, development or test");
    expect(loadConfig({ NODE_ENV: "production", SECRETS_KEY: "a".repeat(64) }).production).toBe(true);
  });

  it("PUBLIC_URL with a query or fragment is refused: every link is built on it", () => {
    expect(refusal({ PUBLIC_URL: "https://give.example.org/path?q=1#f" })).toContain(
      "without a query or fragment",
    );
    expect(loadConfig({ PUBLIC_URL: "https://give.example.org/path/" }).publicUrl).toBe(
      "https://give.example.org/path",
    );
  });

  it("a refused SECRETS_KEY is not written out, and a refused URL's password is masked", () => {
    const key = "0123456789abcdef".repeat(4).slice(0, 63);
    const message = refusal({ SECRETS_KEY: key });
    expect(message).toContain("Invalid setting SECRETS_KEY");
    expect(message).not.toContain(key);
    for (const [value, shown] of [
      ["http://mailer:s3cret-pass@mail.example.org:587", '"http://***@mail.example.org:587"'],
      ["mailer:s3cret-pass@mail.example.org:587", '"***@mail.example.org:587"'],
      ["http://mailer:s3cret@pass@mail.example.org:587", '"http://***@mail.example.org:587"'],
    ]) {
      const smtp = refusal({ SMTP_URL: value });
      expect(smtp).toContain(`Invalid setting SMTP_URL=${shown}`);
      expect(smtp).not.toContain("s3cret");
    }
  });
});

describe("APPLE_PAY_DOMAIN_ASSOCIATION", () => {
  it("a file that cannot be read stops the start, not the first request Apple makes", () => {
    expect(refusal({ APPLE_PAY_DOMAIN_ASSOCIATION: "/nonexistent/apple-pay-association" })).toContain(
      "Invalid setting APPLE_PAY_DOMAIN_ASSOCIATION",
    );
    expect(refusal({ APPLE_PAY_DOMAIN_ASSOCIATION: os.tmpdir() })).toContain("no file that can be read");
  });
});

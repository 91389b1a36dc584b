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

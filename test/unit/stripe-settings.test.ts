import { describe, expect, it } from "vitest";
import { paymentOptions } from "../../server/checkout/publicView.js";
import { loadConfig } from "../../server/config.js";
import { StartupError } from "../../server/errors.js";
import { ProcessorError } from "../../server/processors/port.js";
import { statementSuffix, stripeClient, withoutCallSite } from "../../server/processors/stripe/client.js";
import type { Organization } from "../../server/store/organizations.js";

/** STRIPE_API_URL points the stripe package elsewhere: for tests and development only, test keys only. */

describe("STRIPE_API_URL, STRIPE_JS_URL and SECRETS_KEY", () => {
  it("are refused with one line naming them when malformed", () => {
    expect(() => loadConfig({ STRIPE_API_URL: "ftp://x" })).toThrow(/STRIPE_API_URL/);
    expect(() => loadConfig({ SECRETS_KEY: "short" })).toThrow(/SECRETS_KEY.*openssl rand -hex 32/);
    expect(loadConfig({ SECRETS_KEY: "ab".repeat(32) }).secretsKey?.length).toBe(32);
  });

  it("STRIPE_API_URL stops a production server from starting", () => {
    expect(() => loadConfig({ NODE_ENV: "production", STRIPE_API_URL: "http://127.0.0.1:12111" })).toThrow(
      StartupError,
    );
  });

  it("STRIPE_JS_URL stops a production server from starting", () => {
    expect(() => loadConfig({ NODE_ENV: "production", STRIPE_JS_URL: "http://127.0.0.1:12112/v3" })).toThrow(
      /STRIPE_JS_URL.*refused in production/,
    );
    expect(loadConfig({ STRIPE_JS_URL: "http://127.0.0.1:12112/v3" }).stripeJsUrl).toBe(
      "http://127.0.0.1:12112/v3",
    );
  });

  it("a stand-in Stripe.js is given to pages of test keys only", () => {
    const org = { processor: { publishableKey: "pk_test_x" } } as unknown as Organization;
    const urls = { stripeModule: "/checkout/stripe.js", stripeJsUrl: "http://127.0.0.1:12112/v3" };
    expect(paymentOptions(org, { name: "stripe", livemode: false }, urls)).toMatchObject({
      jsUrl: urls.stripeJsUrl,
    });
    expect(paymentOptions(org, { name: "stripe", livemode: true }, urls)).not.toHaveProperty("jsUrl");
  });

  it("STRIPE_API_URL is refused with a live key: live keys only ever reach Stripe", () => {
    expect(() => stripeClient("sk_live_abcdefghijkl", "http://127.0.0.1:12111")).toThrow(ProcessorError);
    expect(() => stripeClient("sk_test_abcdefghijkl", "http://127.0.0.1:12111")).not.toThrow();
  });
});

describe("withoutCallSite", () => {
  it("captures no stack for the call, and puts the limit back even when the call throws", () => {
    const before = Error.stackTraceLimit;
    expect(withoutCallSite(() => new Error("x").stack?.split("\n").length)).toBe(1);
    expect(() =>
      withoutCallSite(() => {
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(Error.stackTraceLimit).toBe(before);
  });
});

describe("statementSuffix", () => {
  it("fits the organization's name to what a card statement shows after the account's descriptor", () => {
    expect(statementSuffix("Friends of the City Library")).toBe("Friends of the City Li");
    expect(statementSuffix("Société <Zoé> & Co")).toBe("Societe Zoe Co");
    expect(statementSuffix("12345")).toBeUndefined();
    expect(statementSuffix("慈善")).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import { loggedPath } from "../../server/app.js";

describe("the path an error log keeps", () => {
  it("leaves out a secret token of a payment-method update link", () => {
    const token = "Zq3v2m8Kx0Jt5bN1rP7sWc4yHd6fLg9aEu2iTo5kRj0";
    expect(loggedPath(`/update-payment-method/${token}/stripe`)).toBe(
      "/update-payment-method/[token]/stripe",
    );
  });

  it("keeps ids, which are shorter than a token", () => {
    const path = "/api/forms/0b6c1a9e-7f7e-4a53-9a39-7c1f3c0d9e11/checkout/pay_01jd3k5m7n9p1q3r5s7t9v1w3x";
    expect(loggedPath(path)).toBe(path);
  });

  it("escapes line breaks, NULs and other characters outside printable ASCII, so a path cannot forge a log line", () => {
    expect(loggedPath("/api/manage/x\r\nSet-Cookie: a=b")).toBe("/api/manage/x\\u000d\\u000aSet-Cookie: a=b");
    expect(loggedPath("/v1/forms/\u0000\u2028é")).toBe("/v1/forms/\\u0000\\u2028\\u00e9");
  });
});

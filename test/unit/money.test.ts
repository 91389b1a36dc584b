import { describe, expect, it } from "vitest";
import { centsToDollars, dollarsToCents, formatDollars } from "../../shared/money.js";

describe("money in cents", () => {
  it("converts dollars with up to two decimals to exact cents", () => {
    expect(dollarsToCents(19.99)).toBe(1999);
    expect(dollarsToCents(0.1 + 0.2)).toBe(30);
    expect(dollarsToCents(1_000_000)).toBe(100_000_000);
    expect(dollarsToCents(25)).toBe(2500);
  });

  it("refuses more than two decimals and non-finite numbers", () => {
    expect(dollarsToCents(2.555)).toBeNull();
    expect(dollarsToCents(Number.NaN)).toBeNull();
    expect(dollarsToCents(Number.POSITIVE_INFINITY)).toBeNull();
  });

  it("turns cents back into dollars and readable text", () => {
    expect(centsToDollars(1999)).toBe(19.99);
    expect(formatDollars(250000)).toBe("$2,500");
    expect(formatDollars(1005)).toBe("$10.05");
  });
});

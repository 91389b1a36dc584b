import { describe, expect, it } from "vitest";
import { parseExpiry } from "../../widget/app/checkoutRequest.js";

/** The card expiry as donors type it, a phone's number pad (no slash key) included. */
describe("card expiry", () => {
  it.each([
    ["12/30", 12, 2030],
    ["12 / 30", 12, 2030],
    ["1/30", 1, 2030],
    ["12/2030", 12, 2030],
    ["12 30", 12, 2030],
    ["12-30", 12, 2030],
    ["12.30", 12, 2030],
    ["1230", 12, 2030],
    ["0130", 1, 2030],
    ["122030", 12, 2030],
    [" 07/29 ", 7, 2029],
  ])("reads %j as month %i of %i", (text, month, year) => {
    expect(parseExpiry(text)).toEqual({ month, year });
  });

  it.each(["", "130", "12", "13/30", "00/30", "1330", "12/3", "12/300", "ab/cd", "12//30", "12/30/1"])(
    "refuses %j",
    (text) => {
      expect(parseExpiry(text)).toBeNull();
    },
  );
});

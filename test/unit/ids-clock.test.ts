import { describe, expect, it } from "vitest";
import { prefixedId, ulid } from "../../server/ids.js";
import { ulidTime } from "../support/ulid.js";

/** Ids are dated by the time they are given (the injected clock), never by the wall clock. */

const PAST = Date.parse("2001-02-03T04:05:06.789Z");

describe("ids take the time they are given", () => {
  it("ulid and prefixedId are dated by their argument, whatever the wall clock says", () => {
    for (const at of [0, 1, PAST, PAST + 1, Date.parse("2099-12-31T23:59:59.999Z"), 2 ** 48 - 1]) {
      expect(ulidTime(ulid(at))).toBe(at);
      expect(ulidTime(prefixedId("pay", at))).toBe(at);
    }
  });

  it("ids of the same millisecond differ, and sort by their time", () => {
    const same = [ulid(PAST), ulid(PAST), ulid(PAST)];
    expect(new Set(same).size).toBe(3);
    expect(same.every((id) => id.slice(0, 10) === same[0].slice(0, 10))).toBe(true);
    const later = ulid(PAST + 1);
    expect(later > same[0] && later > same[1] && later > same[2]).toBe(true);
    expect(prefixedId("key", PAST)).toMatch(/^key_[0-9a-hjkmnp-tv-z]{26}$/);
  });
});

import { describe, expect, it } from "vitest";
import { extend } from "../../shared/objects.js";

describe("extend (the spread-free { ...base, ...extra })", () => {
  it("gives the same properties, values and key order as the spread, without touching its inputs", () => {
    const base = { a: 1, b: "two", c: [3] };
    const extra = { b: "replaced", d: null };
    const result = extend(base, extra);
    expect(result).toEqual({ ...base, ...extra });
    expect(Object.keys(result)).toEqual(Object.keys({ ...base, ...extra }));
    expect(JSON.stringify(result)).toBe(JSON.stringify({ ...base, ...extra }));
    expect(base).toEqual({ a: 1, b: "two", c: [3] });
    expect(result).not.toBe(base);
  });
});

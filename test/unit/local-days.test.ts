import { describe, expect, it } from "vitest";
import { monthlyValueCents, summaryRange } from "../../server/api/analyticsSummary.js";
import { ApiError } from "../../server/errors.js";
import { addDays, isCalendarDate, localDate, startOfLocalDay } from "../../shared/localDays.js";

/** Local days in a time zone, the summary's range rules and the monthly value of recurring gifts. */

describe("local days", () => {
  it("begins a day at local midnight, whatever the offset that day", () => {
    expect(new Date(startOfLocalDay("2026-03-09", "America/New_York")).toISOString()).toBe(
      "2026-03-09T04:00:00.000Z",
    );
    // Winter time: UTC−5.
    expect(new Date(startOfLocalDay("2026-01-15", "America/New_York")).toISOString()).toBe(
      "2026-01-15T05:00:00.000Z",
    );
    expect(new Date(startOfLocalDay("2026-03-10", "Asia/Kathmandu")).toISOString()).toBe(
      "2026-03-09T18:15:00.000Z",
    );
    expect(new Date(startOfLocalDay("2026-03-10", "Pacific/Kiritimati")).toISOString()).toBe(
      "2026-03-09T10:00:00.000Z",
    );
  });

  it("begins a day whose midnight the clocks skip at the first minute that exists", () => {
    // Santiago moves its clocks from 00:00 to 01:00 on the first Sunday of September (6 Sept 2026).
    const start = startOfLocalDay("2026-09-06", "America/Santiago");
    expect(localDate(start, "America/Santiago")).toBe("2026-09-06");
    expect(localDate(start - 60_000, "America/Santiago")).toBe("2026-09-05");
  });

  it("reads the local date of an instant and counts calendar days", () => {
    expect(localDate(Date.parse("2026-03-10T03:30:00Z"), "America/New_York")).toBe("2026-03-09");
    expect(addDays("2024-02-28", 1)).toBe("2024-02-29");
    expect(addDays("2026-03-01", -1)).toBe("2026-02-28");
    expect(isCalendarDate("2026-02-29")).toBe(false);
    expect(isCalendarDate("2024-02-29")).toBe(true);
    expect(isCalendarDate("2026-3-1")).toBe(false);
    // Years before 1000 keep four digits, so that dates still compare as text.
    expect(localDate(Date.parse("0999-06-01T12:00:00Z"), "UTC")).toBe("0999-06-01");
    expect(new Date(startOfLocalDay("0999-06-01", "UTC")).toISOString()).toBe("0999-06-01T00:00:00.000Z");
  });
});

describe("summary range", () => {
  it("defaults to the 90 days ending today and keeps a given range", () => {
    expect(summaryRange({}, "2026-03-10")).toEqual({ from: "2025-12-11", to: "2026-03-10" });
    expect(summaryRange({ to: "2026-01-31" }, "2026-03-10")).toEqual({
      from: "2025-11-03",
      to: "2026-01-31",
    });
    expect(summaryRange({ from: "2026-03-01" }, "2026-03-10")).toEqual({
      from: "2026-03-01",
      to: "2026-03-10",
    });
  });

  it("refuses from after to and more than 366 days", () => {
    expect(() => summaryRange({ from: "2026-03-02", to: "2026-03-01" }, "2026-03-10")).toThrow(ApiError);
    expect(() => summaryRange({ from: "2025-01-01", to: "2026-01-02" }, "2026-03-10")).toThrow(ApiError);
    expect(summaryRange({ from: "2025-01-01", to: "2026-01-01" }, "2026-03-10").from).toBe("2025-01-01");
  });
});

describe("monthly value of recurring gifts", () => {
  it("normalises each frequency to a twelfth of its yearly sum and rounds once", () => {
    const value = (rows: { frequency: string; cents: number }[], currency = "USD") =>
      monthlyValueCents(rows, currency);
    expect(value([{ frequency: "MONTHLY", cents: 1000 }])).toBe(1000);
    expect(value([{ frequency: "ANNUALLY", cents: 12_000 }])).toBe(1000);
    expect(value([{ frequency: "WEEKLY", cents: 1200 }])).toBe(5200);
    expect(value([{ frequency: "DAILY", cents: 100 }])).toBe(3042); // 365 ÷ 12 = 30.416…
    // Three weekly gifts of 1.00: 3 × 52 ÷ 12 = 13.00 (rounding each first would give 4.33 × 3 = 12.99).
    expect(value([{ frequency: "WEEKLY", cents: 300 }])).toBe(1300);
    // JPY has no decimals: whole yen (hundredths that are multiples of 100).
    expect(value([{ frequency: "WEEKLY", cents: 100_000 }], "JPY")).toBe(433_300);
  });
});

import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  billingDate,
  CHARGE_RETRY_DELAYS_DAYS,
  nextCycleAfter,
  parseInstant,
  type RecurringFrequency,
  retryAt,
} from "../../server/billing/schedule.js";

const DAY = 86_400_000;
const FREQUENCIES: RecurringFrequency[] = ["DAILY", "WEEKLY", "MONTHLY", "ANNUALLY"];

const anchorArb = fc
  .date({
    min: new Date("1970-01-01T00:00:00Z"),
    max: new Date("2100-12-31T23:59:59.999Z"),
    noInvalidDate: true,
  })
  .map((d) => d.toISOString());
const frequencyArb = fc.constantFrom(...FREQUENCIES);
const msOfDay = (iso: string) => Date.parse(iso) % DAY;
const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month + 1, 0)).getUTCDate();

describe("monthly and annual dates keep the anchor's day without drifting", () => {
  it("bills an anchor on Jan 31 on the last day of shorter months and back on the 31st", () => {
    const anchor = "2026-01-31T14:05:09.123Z";
    const series = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13].map((n) =>
      billingDate(anchor, "MONTHLY", n),
    );
    expect(series).toEqual([
      "2026-01-31T14:05:09.123Z",
      "2026-02-28T14:05:09.123Z",
      "2026-03-31T14:05:09.123Z",
      "2026-04-30T14:05:09.123Z",
      "2026-05-31T14:05:09.123Z",
      "2026-06-30T14:05:09.123Z",
      "2026-07-31T14:05:09.123Z",
      "2026-08-31T14:05:09.123Z",
      "2026-09-30T14:05:09.123Z",
      "2026-10-31T14:05:09.123Z",
      "2026-11-30T14:05:09.123Z",
      "2026-12-31T14:05:09.123Z",
      "2027-01-31T14:05:09.123Z",
      "2027-02-28T14:05:09.123Z",
    ]);
  });

  it("uses Feb 29 in leap years", () => {
    expect(billingDate("2028-01-31T00:00:00.000Z", "MONTHLY", 1)).toBe("2028-02-29T00:00:00.000Z");
    expect(billingDate("2027-12-30T08:00:00.000Z", "MONTHLY", 2)).toBe("2028-02-29T08:00:00.000Z");
    expect(billingDate("2027-12-30T08:00:00.000Z", "MONTHLY", 3)).toBe("2028-03-30T08:00:00.000Z");
    expect(billingDate("2026-01-29T00:00:00.000Z", "MONTHLY", 1)).toBe("2026-02-28T00:00:00.000Z");
    expect(billingDate("2026-01-28T00:00:00.000Z", "MONTHLY", 1)).toBe("2026-02-28T00:00:00.000Z");
  });

  it("bills a Feb 29 anchor yearly on Feb 28, and on Feb 29 again in leap years", () => {
    const anchor = "2024-02-29T12:00:00.000Z";
    expect([1, 2, 3, 4, 5, 8].map((n) => billingDate(anchor, "ANNUALLY", n))).toEqual([
      "2025-02-28T12:00:00.000Z",
      "2026-02-28T12:00:00.000Z",
      "2027-02-28T12:00:00.000Z",
      "2028-02-29T12:00:00.000Z",
      "2029-02-28T12:00:00.000Z",
      "2032-02-29T12:00:00.000Z",
    ]);
    // Century rule: 2100 is not a leap year, 2000 was.
    expect(billingDate("2096-02-29T00:00:00.000Z", "ANNUALLY", 4)).toBe("2100-02-28T00:00:00.000Z");
    expect(billingDate("1996-02-29T00:00:00.000Z", "ANNUALLY", 4)).toBe("2000-02-29T00:00:00.000Z");
  });

  it("handles many periods: 600 months is 50 years", () => {
    const anchor = "2026-01-31T10:15:30.250Z";
    expect(billingDate(anchor, "MONTHLY", 600)).toBe("2076-01-31T10:15:30.250Z");
    expect(billingDate(anchor, "MONTHLY", 601)).toBe("2076-02-29T10:15:30.250Z");
    expect(billingDate(anchor, "MONTHLY", 1201)).toBe("2126-02-28T10:15:30.250Z");
    expect(billingDate(anchor, "ANNUALLY", 50)).toBe("2076-01-31T10:15:30.250Z");
    expect(billingDate(anchor, "DAILY", 36_524)).toBe("2126-01-31T10:15:30.250Z"); // 24 leap days in the century
  });
});

describe("daily and weekly dates", () => {
  it("add whole UTC days, untouched by daylight saving time", () => {
    // US clocks moved on 2026-03-08 and Europe's on 2026-03-29; UTC does not.
    expect(billingDate("2026-03-07T10:00:00.000Z", "DAILY", 1)).toBe("2026-03-08T10:00:00.000Z");
    expect(billingDate("2026-03-07T10:00:00.000Z", "DAILY", 2)).toBe("2026-03-09T10:00:00.000Z");
    expect(billingDate("2026-03-25T23:30:00.000Z", "WEEKLY", 1)).toBe("2026-04-01T23:30:00.000Z");
    expect(billingDate("2026-12-31T00:00:00.000Z", "DAILY", 1)).toBe("2027-01-01T00:00:00.000Z");
    expect(billingDate("2028-02-28T00:00:00.000Z", "DAILY", 1)).toBe("2028-02-29T00:00:00.000Z");
    expect(billingDate("2026-01-31T00:00:00.000Z", "WEEKLY", 4)).toBe("2026-02-28T00:00:00.000Z");
  });
});

describe("the process time zone makes no difference", () => {
  const saved = process.env.TZ;
  afterEach(() => {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  });

  it("gives the same dates in New York, Sydney and Kathmandu as in UTC", () => {
    const cases: [string, RecurringFrequency, number][] = [
      ["2026-01-31T23:30:00.000Z", "MONTHLY", 1],
      ["2026-03-07T10:00:00.000Z", "DAILY", 1],
      ["2026-10-03T01:00:00.000Z", "WEEKLY", 1],
      ["2024-02-29T00:15:00.000Z", "ANNUALLY", 1],
    ];
    process.env.TZ = "UTC";
    const expected = cases.map(([a, f, n]) => billingDate(a, f, n));
    for (const zone of ["America/New_York", "Australia/Sydney", "Asia/Kathmandu"]) {
      process.env.TZ = zone;
      expect(
        cases.map(([a, f, n]) => billingDate(a, f, n)),
        zone,
      ).toEqual(expected);
    }
    expect(expected).toEqual([
      "2026-02-28T23:30:00.000Z",
      "2026-03-08T10:00:00.000Z",
      "2026-10-10T01:00:00.000Z",
      "2025-02-28T00:15:00.000Z",
    ]);
  });
});

describe("anchors and cycles", () => {
  it("reads offsets and answers in UTC", () => {
    expect(billingDate("2026-01-31T23:30:00-05:00", "MONTHLY", 0)).toBe("2026-02-01T04:30:00.000Z");
    expect(billingDate("2026-01-31T23:30:00-05:00", "MONTHLY", 1)).toBe("2026-03-01T04:30:00.000Z");
    expect(billingDate("2026-04-15T18:32Z", "WEEKLY", 1)).toBe("2026-04-22T18:32:00.000Z");
    expect(billingDate("2026-04-15T18:32:00.123456Z", "DAILY", 1)).toBe("2026-04-16T18:32:00.123Z");
  });

  it("refuses times without an offset, impossible dates and bad cycles", () => {
    for (const bad of [
      "2026-01-31T10:00:00",
      "2026-01-31",
      "2026-02-29T00:00:00Z",
      "2026-04-31T00:00:00Z",
      "2026-13-01T00:00:00Z",
      "2026-01-01T24:00:00Z",
      "2026-01-01T00:00:00+25:00",
      "yesterday",
      "",
    ])
      expect(() => billingDate(bad, "MONTHLY", 1), bad).toThrow(RangeError);
    for (const n of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => billingDate("2026-01-31T00:00:00Z", "MONTHLY", n), String(n)).toThrow(RangeError);
  });
});

describe("properties", () => {
  it("cycle 0 is the anchor, for every frequency", () => {
    fc.assert(
      fc.property(anchorArb, frequencyArb, (anchor, frequency) => {
        expect(billingDate(anchor, frequency, 0)).toBe(anchor);
      }),
    );
  });

  it("every billing date keeps the anchor's time of day and strictly follows the one before", () => {
    fc.assert(
      fc.property(anchorArb, frequencyArb, fc.integer({ min: 0, max: 1200 }), (anchor, frequency, n) => {
        const date = billingDate(anchor, frequency, n);
        expect(msOfDay(date)).toBe(msOfDay(anchor));
        expect(Date.parse(billingDate(anchor, frequency, n + 1))).toBeGreaterThan(Date.parse(date));
      }),
    );
  });

  it("a monthly date is n calendar months on, on the anchor's day or the month's last day", () => {
    fc.assert(
      fc.property(anchorArb, fc.integer({ min: 0, max: 1200 }), (anchor, n) => {
        const a = new Date(anchor);
        const d = new Date(billingDate(anchor, "MONTHLY", n));
        const months = a.getUTCFullYear() * 12 + a.getUTCMonth() + n;
        expect(d.getUTCFullYear()).toBe(Math.floor(months / 12));
        expect(d.getUTCMonth()).toBe(months % 12);
        expect(d.getUTCDate()).toBe(Math.min(a.getUTCDate(), daysIn(d.getUTCFullYear(), d.getUTCMonth())));
      }),
    );
  });

  it("a year is twelve months, a week seven days, a day 86,400 seconds", () => {
    fc.assert(
      fc.property(anchorArb, fc.integer({ min: 0, max: 100 }), (anchor, n) => {
        expect(billingDate(anchor, "ANNUALLY", n)).toBe(billingDate(anchor, "MONTHLY", 12 * n));
        expect(billingDate(anchor, "WEEKLY", n)).toBe(billingDate(anchor, "DAILY", 7 * n));
        expect(Date.parse(billingDate(anchor, "DAILY", n)) - Date.parse(anchor)).toBe(n * DAY);
      }),
    );
  });

  it("the next cycle after a time is the first billing date past it", () => {
    fc.assert(
      fc.property(
        anchorArb,
        frequencyArb,
        fc.integer({ min: -5 * 366 * DAY, max: 60 * 366 * DAY }),
        (anchor, frequency, offset) => {
          const asOf = new Date(Date.parse(anchor) + offset).toISOString();
          const n = nextCycleAfter(anchor, frequency, asOf);
          expect(n).toBeGreaterThanOrEqual(1);
          expect(Date.parse(billingDate(anchor, frequency, n))).toBeGreaterThan(Date.parse(asOf));
          if (n > 1)
            expect(Date.parse(billingDate(anchor, frequency, n - 1))).toBeLessThanOrEqual(Date.parse(asOf));
        },
      ),
    );
  });
});

describe("next cycle", () => {
  const anchor = "2026-01-31T09:00:00.000Z";

  it("is 1 up to the first period, and steps exactly at each billing time", () => {
    expect(nextCycleAfter(anchor, "MONTHLY", "2025-06-01T00:00:00Z")).toBe(1);
    expect(nextCycleAfter(anchor, "MONTHLY", anchor)).toBe(1);
    expect(nextCycleAfter(anchor, "MONTHLY", "2026-02-28T08:59:59.999Z")).toBe(1);
    expect(nextCycleAfter(anchor, "MONTHLY", "2026-02-28T09:00:00.000Z")).toBe(2);
    expect(nextCycleAfter(anchor, "MONTHLY", "2026-03-31T08:59:59Z")).toBe(2);
    expect(nextCycleAfter(anchor, "MONTHLY", "2076-01-31T09:00:00Z")).toBe(601);
    expect(nextCycleAfter(anchor, "ANNUALLY", "2026-12-31T23:59:59Z")).toBe(1);
    expect(nextCycleAfter(anchor, "ANNUALLY", "2027-01-31T09:00:00Z")).toBe(2);
    expect(nextCycleAfter(anchor, "DAILY", "2026-02-01T09:00:00Z")).toBe(2);
    expect(nextCycleAfter(anchor, "WEEKLY", "2026-02-07T08:59:59Z")).toBe(1);
  });
});

describe("failed charge retries", () => {
  const failedAt = "2026-04-15T18:32:00.000Z";

  it("retries 1, 3 and 5 days after each failure, then gives up", () => {
    expect(CHARGE_RETRY_DELAYS_DAYS).toEqual([1, 3, 5]);
    expect(retryAt(1, failedAt)).toBe("2026-04-16T18:32:00.000Z");
    expect(retryAt(2, failedAt)).toBe("2026-04-18T18:32:00.000Z");
    expect(retryAt(3, failedAt)).toBe("2026-04-20T18:32:00.000Z");
    expect(retryAt(4, failedAt)).toBeNull();
    expect(retryAt(40, failedAt)).toBeNull();
  });

  it("makes four attempts in all when every one fails", () => {
    let attempts = 1;
    let at: string | null = failedAt;
    const times = [at];
    while (at !== null) {
      at = retryAt(attempts, at);
      if (at !== null) {
        times.push(at);
        attempts++;
      }
    }
    expect(attempts).toBe(1 + CHARGE_RETRY_DELAYS_DAYS.length);
    expect(times.at(-1)).toBe("2026-04-24T18:32:00.000Z");
  });

  it("refuses a count that is not a failure", () => {
    for (const n of [0, -1, 1.5, Number.NaN])
      expect(() => retryAt(n, failedAt), String(n)).toThrow(RangeError);
    expect(() => retryAt(1, "2026-04-15 18:32")).toThrow(RangeError);
  });

  it("parses the same instants as Date for stored ISO times", () => {
    fc.assert(
      fc.property(anchorArb, (iso) => {
        expect(parseInstant(iso)).toBe(Date.parse(iso));
      }),
    );
  });
});

import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { billingDate, nextCycleAfter, type RecurringFrequency } from "../../server/billing/schedule.js";
import { changeSubscription } from "../../server/billing/subscriptionChanges.js";
import { SYSTEM_ACTOR } from "../../server/store/auditLog.js";
import { localDateTime, wallTimeMs } from "../../shared/localDays.js";
import { card, checkout, donor } from "../support/checkout.js";
import { setupTestApp, type TestApp } from "../support/testApp.js";
import { at, paymentsOf, recurringForm, subscribe, subscription, worker } from "./support.js";

/**
 * Billing dates fall on the calendar of the organization's time zone: the anchor's local date and time of
 * day, periods added on the local calendar, each date at its own offset (daylight saving time included).
 */

const NY = "America/New_York";
const DAY = 86_400_000;

describe("billing dates on a time zone's calendar", () => {
  it("bills a gift made Jan 31 at 23:30 in New York at 23:30 on the last day of each month there", () => {
    const anchor = "2026-02-01T04:30:00.000Z"; // Jan 31, 23:30 EST
    expect([1, 2, 3, 4].map((n) => billingDate(anchor, "MONTHLY", n, NY))).toEqual([
      "2026-03-01T04:30:00.000Z", // Feb 28, 23:30 EST
      "2026-04-01T03:30:00.000Z", // Mar 31, 23:30 EDT
      "2026-05-01T03:30:00.000Z", // Apr 30
      "2026-06-01T03:30:00.000Z", // May 31
    ]);
    expect(billingDate(anchor, "ANNUALLY", 1, NY)).toBe("2027-02-01T04:30:00.000Z");
    // The same gift in UTC is a Feb 1 gift: it bills on the 1st.
    expect(billingDate(anchor, "MONTHLY", 2)).toBe("2026-04-01T04:30:00.000Z");
  });

  it("clamps on the local calendar east of UTC too, and with offsets of whole quarters of an hour", () => {
    const tokyo = "2026-03-30T23:00:00.000Z"; // Mar 31, 08:00 in Tokyo
    expect([1, 2].map((n) => billingDate(tokyo, "MONTHLY", n, "Asia/Tokyo"))).toEqual([
      "2026-04-29T23:00:00.000Z", // Apr 30, 08:00
      "2026-05-30T23:00:00.000Z", // May 31, 08:00
    ]);
    const kathmandu = "2026-01-30T18:20:00.000Z"; // Jan 31, 00:05 at +05:45
    expect(billingDate(kathmandu, "MONTHLY", 1, "Asia/Kathmandu")).toBe("2026-02-27T18:20:00.000Z");
  });

  it("keeps daily and weekly gifts at the same local time across a change of the clocks", () => {
    const anchor = "2026-03-07T04:30:00.000Z"; // Mar 6, 23:30 EST; clocks go forward on Mar 8
    expect([1, 2, 3].map((n) => billingDate(anchor, "DAILY", n, NY))).toEqual([
      "2026-03-08T04:30:00.000Z", // Mar 7, 23:30 EST
      "2026-03-09T03:30:00.000Z", // Mar 8, 23:30 EDT
      "2026-03-10T03:30:00.000Z",
    ]);
    const sunday = "2026-03-02T04:30:00.000Z"; // Sunday Mar 1, 23:30 EST
    expect(billingDate(sunday, "WEEKLY", 1, NY)).toBe("2026-03-09T03:30:00.000Z"); // Sunday Mar 8, 23:30 EDT
    // Back to winter time on Nov 1: Oct 31 and Nov 1 at 23:30 are 25 hours apart.
    const autumn = "2026-11-01T03:30:00.000Z"; // Oct 31, 23:30 EDT
    expect(billingDate(autumn, "DAILY", 1, NY)).toBe("2026-11-02T04:30:00.000Z");
  });

  it("moves a time the clocks skip to the instant they skip at, and takes the first of a time they repeat", () => {
    // 02:30 does not exist in New York on Mar 8, 2026 (02:00 EST is 03:00 EDT).
    const gap = "2026-03-07T07:30:00.000Z"; // Mar 7, 02:30 EST
    expect([1, 2].map((n) => billingDate(gap, "DAILY", n, NY))).toEqual([
      "2026-03-08T07:00:00.000Z", // 03:00 EDT
      "2026-03-09T06:30:00.000Z", // 02:30 EDT
    ]);
    // 01:30 comes twice on Nov 1, 2026 (EDT, then EST).
    const fold = "2026-10-31T05:30:00.000Z"; // Oct 31, 01:30 EDT
    expect([1, 2].map((n) => billingDate(fold, "DAILY", n, NY))).toEqual([
      "2026-11-01T05:30:00.000Z", // 01:30 EDT, the first
      "2026-11-02T06:30:00.000Z", // 01:30 EST
    ]);
    // Santiago skips its midnight on Sep 6, 2026: a gift made at 00:30 bills at 01:00 that day.
    const santiago = "2026-08-06T04:30:00.000Z"; // Aug 6, 00:30 at −04:00
    expect(billingDate(santiago, "MONTHLY", 1, "America/Santiago")).toBe("2026-09-06T04:00:00.000Z");
  });

  it("is the UTC calendar for UTC, as when no zone is given", () => {
    for (const f of ["DAILY", "WEEKLY", "MONTHLY", "ANNUALLY"] as const)
      for (const n of [0, 1, 2, 13])
        expect(billingDate("2026-01-31T23:30:00.123Z", f, n, "UTC")).toBe(
          billingDate("2026-01-31T23:30:00.123Z", f, n),
        );
  });

  const zones = [
    "America/New_York",
    "Australia/Sydney",
    "America/Santiago",
    "Australia/Lord_Howe",
    "Asia/Kathmandu",
  ];
  const anchorArb = fc
    .date({
      min: new Date("2000-01-01T00:00:00Z"),
      max: new Date("2040-12-31T23:59:59Z"),
      noInvalidDate: true,
    })
    .map((d) => d.toISOString());
  const frequencyArb = fc.constantFrom<RecurringFrequency>("DAILY", "WEEKLY", "MONTHLY", "ANNUALLY");
  const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

  /** The local date a cycle should fall on: n periods on from the anchor's, clamped to the month's end. */
  function expectedLocalDate(anchorLocal: string, frequency: RecurringFrequency, n: number): string {
    const [y, m, d] = anchorLocal.slice(0, 10).split("-").map(Number);
    if (frequency === "DAILY" || frequency === "WEEKLY") {
      const days = n * (frequency === "DAILY" ? 1 : 7);
      return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
    }
    const months = m - 1 + n * (frequency === "MONTHLY" ? 1 : 12);
    const year = y + Math.floor(months / 12);
    const month = (months % 12) + 1;
    const day = Math.min(d, daysIn(year, month));
    return `${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
  }

  it("every date is on the right local day at the anchor's local time (or the first instant after a skipped one), after the one before", () => {
    fc.assert(
      fc.property(
        anchorArb,
        frequencyArb,
        fc.integer({ min: 1, max: 40 }),
        fc.constantFrom(...zones),
        (anchor, f, n, zone) => {
          const anchorLocal = localDateTime(Date.parse(anchor), zone);
          const date = Date.parse(billingDate(anchor, f, n, zone));
          const local = localDateTime(date, zone);
          expect(local.slice(0, 10)).toBe(expectedLocalDate(anchorLocal, f, n));
          const wanted = Date.parse(`${local.slice(0, 10)}T${anchorLocal.slice(11)}Z`);
          const shown = Math.floor(wallTimeMs(date, zone) / 1000) * 1000;
          if (shown !== wanted) {
            // Skipped: the instant just before shows a time before the one wanted, this one after it.
            expect(shown).toBeGreaterThan(wanted);
            expect(wallTimeMs(date - 1, zone)).toBeLessThan(wanted);
          }
          expect(date).toBeGreaterThan(Date.parse(billingDate(anchor, f, n - 1, zone)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("the next cycle after a time is the first billing date past it, in a zone too", () => {
    fc.assert(
      fc.property(
        anchorArb,
        frequencyArb,
        fc.integer({ min: -400 * DAY, max: 4 * 366 * DAY }),
        fc.constantFrom(...zones),
        (anchor, f, offset, zone) => {
          const asOf = new Date(Date.parse(anchor) + offset).toISOString();
          const n = nextCycleAfter(anchor, f, asOf, zone);
          expect(Date.parse(billingDate(anchor, f, n, zone))).toBeGreaterThan(Date.parse(asOf));
          if (n > 1)
            expect(Date.parse(billingDate(anchor, f, n - 1, zone))).toBeLessThanOrEqual(Date.parse(asOf));
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("billing an organization in New York", () => {
  let clock = at("2026-02-01T04:30:00Z"); // Jan 31, 23:30 in New York
  let t: TestApp;

  beforeEach(async () => {
    clock = at("2026-02-01T04:30:00Z");
    t = await setupTestApp({
      now: () => clock,
      env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" },
    });
    const res = await t.request("PUT", "/v1/organization", { body: { timeZone: NY } });
    expect(res.status, res.text).toBe(200);
  });
  afterEach(async () => {
    await t.close();
  });

  async function billAt(iso: string) {
    clock = at(iso);
    return worker(t.deps).runOnce();
  }

  /** How many of the subscription's payments fall on an organization day. */
  async function onDay(subId: string, day: string): Promise<number> {
    const res = await t.request<{ count: number }>(
      "GET",
      `/v1/payments?subscriptionId=${subId}&from=${day}&to=${day}`,
    );
    return res.body.count;
  }

  it("bills a Jan 31 gift on the last day of each month there, March included", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    expect(sub.next_billing_at).toBe("2026-03-01T04:30:00.000Z");
    expect((await billAt("2026-03-01T04:30:00Z")).charged).toBe(1);
    expect((await subscription(t.store.db, sub.id)).next_billing_at).toBe("2026-04-01T03:30:00.000Z");
    expect((await billAt("2026-04-01T03:30:00Z")).charged).toBe(1);
    expect((await subscription(t.store.db, sub.id)).next_billing_at).toBe("2026-05-01T03:30:00.000Z");
    expect(await Promise.all(["2026-02-28", "2026-03-31"].map((d) => onDay(sub.id, d)))).toEqual([1, 1]);
    const shown = await t.request<{ nextBillingDate: string }>("GET", `/v1/subscriptions/${sub.id}`);
    expect(shown.body.nextBillingDate).toBe("2026-05-01T03:30:00Z");
  });

  it("tells the donor at checkout the next charge's day on the organization's calendar, as the receipt does", async () => {
    // Jan 31, 23:30 in New York (Feb 1 in UTC): the next charge is Feb 28 there (Mar 1, 04:30 UTC).
    const res = await checkout(t, await recurringForm(t), {
      frequency: "MONTHLY",
      amount: 25,
      donor: donor(),
      paymentMethod: card(),
    });
    expect(res.status, res.text).toBe(201);
    expect((res.body.payment as { subscription: unknown }).subscription).toMatchObject({
      nextBillingDate: "2026-03-01T04:30:00Z",
      nextBillingDay: "2026-02-28",
    });
  });

  it("bills a daily gift once on each local day across the change to summer time", async () => {
    clock = at("2026-03-07T04:30:00Z"); // Mar 6, 23:30 EST
    const sub = await subscribe(t, await recurringForm(t), { frequency: "DAILY" });
    for (let i = 0; i < 3; i++) await billAt((await subscription(t.store.db, sub.id)).next_billing_at);
    const days = ["2026-03-06", "2026-03-07", "2026-03-08", "2026-03-09"];
    expect(await Promise.all(days.map((d) => onDay(sub.id, d)))).toEqual([1, 1, 1, 1]);
    expect((await paymentsOf(t.store.db, sub.id)).map((p) => p.created_at)).toEqual([
      "2026-03-07T04:30:00.000Z",
      "2026-03-08T04:30:00.000Z",
      "2026-03-09T03:30:00.000Z",
      "2026-03-10T03:30:00.000Z",
    ]);
  });

  it("skips a month on the local calendar (the donor portal's skip)", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    const after = await changeSubscription(t.store, sub, { skipNext: true }, SYSTEM_ACTOR, clock);
    expect(after.next_billing_at).toBe("2026-04-01T03:30:00.000Z"); // Mar 31, 23:30 EDT
  });

  it("after a change of time zone, keeps the date already scheduled and computes later ones in the new zone", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    expect(sub.next_billing_at).toBe("2026-03-01T04:30:00.000Z"); // Feb 28, 23:30 in New York
    expect((await t.request("PUT", "/v1/organization", { body: { timeZone: "UTC" } })).status).toBe(200);
    expect((await subscription(t.store.db, sub.id)).next_billing_at).toBe("2026-03-01T04:30:00.000Z");
    expect((await billAt("2026-03-01T04:30:00Z")).charged).toBe(1);
    // The anchor's instant is Feb 1, 04:30 in UTC: two months on is Apr 1, 04:30.
    expect((await subscription(t.store.db, sub.id)).next_billing_at).toBe("2026-04-01T04:30:00.000Z");
  });
});

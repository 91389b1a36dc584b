import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type Availability,
  NO_SALES,
  productKey,
  remainingProducts,
  remainingTickets,
} from "../../shared/pricing/availability.js";
import {
  coverFeeCents,
  DEFAULT_FEE_RATE,
  type FeeRate,
  processingFeeCents,
} from "../../shared/pricing/fees.js";
import { MAX_ORDER_TOTAL_CENTS } from "../../shared/pricing/limits.js";
import type { OrderInput } from "../../shared/pricing/order.js";
import { priceOrder } from "../../shared/pricing/priceOrder.js";
import { percentOf } from "../../shared/pricing/promo.js";
import type { PricingError, PricingResult, Quote } from "../../shared/pricing/quote.js";
import { type FormConfig, formSchema } from "../../shared/schemas/form.js";

/** A stored form, built through the real schema from create input (dollars). */
function form(input: Record<string, unknown>): FormConfig {
  return formSchema({ allowHttpImages: true }).parse({
    title: "Test",
    funds: ["General", "Building"],
    ...input,
  });
}

const embed = form({
  frequencies: ["ONE_TIME", "MONTHLY"],
  oneTimeAmounts: [25, 50, 100],
  monthlyAmounts: [10, 20],
});
const embedNoCustom = form({ oneTimeAmounts: [25, 50], allowCustomAmount: false });
const crowd = form({
  amountType: "giving_level",
  frequencies: ["ONE_TIME", "MONTHLY"],
  givingLevels: [
    { title: "Bronze", amount: 50 },
    { title: "Silver", amount: 100 },
  ],
});
const crowdNoCustom = form({
  amountType: "giving_level",
  allowCustomAmount: false,
  givingLevels: [{ title: "Bronze", amount: 50 }],
});
const product = form({
  amountType: "sponsorship",
  frequencies: ["ONE_TIME", "MONTHLY"],
  sponsorshipGroups: [
    {
      groupTitle: "Gala",
      options: [
        { optionTitle: "Gold Table", amount: 2500, quantity: 5 },
        { optionTitle: "Program Ad", amount: 150.5 },
      ],
    },
    { groupTitle: "Run", options: [{ optionTitle: "Gold Table", amount: 10 }] },
  ],
});
const event = form({
  formType: "event",
  enableCoverFees: true,
  tickets: [
    { name: "Adult", price: 40, quantity: 100, maxPerOrder: 10 },
    { name: "Child", price: 15.5 },
    { name: "Family", price: 100, ticketType: "GROUP", groupSize: 4, quantity: 20 },
    { name: "Volunteer", price: 0 },
  ],
  promoCodes: [
    { code: "SAVE15", discountType: "percentage", discountValue: 15, applicableTickets: ["Adult"] },
    { code: "Kids5", discountType: "amount", discountValue: 5, applicableTickets: ["Child"] },
    { code: "ALLFREE", discountType: "percentage", discountValue: 100 },
    { code: "TENOFF", discountType: "amount", discountValue: 10 },
    { code: "LIMITED", discountType: "percentage", discountValue: 10, quantity: 2 },
  ],
});

function ok(result: PricingResult): Quote {
  if (!result.ok) throw new Error(`expected a quote, got ${JSON.stringify(result.errors)}`);
  return result.quote;
}

function errs(result: PricingResult): PricingError[] {
  if (result.ok) throw new Error(`expected errors, got ${JSON.stringify(result.quote)}`);
  return result.errors;
}

function codes(result: PricingResult): string[] {
  return errs(result).map((e) => `${e.field}:${e.code}`);
}

function sales(partial: Partial<Availability>): Availability {
  return { ticketsSold: {}, productsSold: {}, promoRedemptions: {}, ...partial };
}

const ONE = { frequency: "ONE_TIME" } as const;

describe("processing and cover fees", () => {
  it("charges ceil(total × bps / 10000) + fixed, and nothing on a zero charge", () => {
    expect(processingFeeCents(10330)).toBe(330); // 299.57 → 300, + 30
    expect(processingFeeCents(10000)).toBe(320); // exactly 290 + 30
    expect(processingFeeCents(1)).toBe(31); // 0.029 → 1, + 30
    expect(processingFeeCents(0)).toBe(0);
  });

  it("grosses a $100 gift up to $103.30 at 2.9% + $0.30, and $103.29 would not be enough", () => {
    expect(coverFeeCents(10000, DEFAULT_FEE_RATE)).toBe(330);
    expect(10330 - processingFeeCents(10330)).toBeGreaterThanOrEqual(10000);
    expect(10329 - processingFeeCents(10329)).toBeLessThan(10000);
  });

  it("adds nothing for a free order or a zero rate, and only the fixed part for a 0% rate", () => {
    expect(coverFeeCents(0, DEFAULT_FEE_RATE)).toBe(0);
    expect(coverFeeCents(5000, { percentBps: 0, fixedCents: 0 })).toBe(0);
    expect(coverFeeCents(5000, { percentBps: 0, fixedCents: 25 })).toBe(25);
    expect(coverFeeCents(1, DEFAULT_FEE_RATE)).toBe(31); // 32 - (ceil(0.928) + 30) = 1; 31 would net 0
  });

  it("refuses impossible rates and amounts", () => {
    expect(() => coverFeeCents(100, { percentBps: 10_000, fixedCents: 0 })).toThrow(RangeError);
    expect(() => coverFeeCents(100, { percentBps: 2.5, fixedCents: 0 })).toThrow(RangeError);
    expect(() => coverFeeCents(100, { percentBps: 290, fixedCents: -1 })).toThrow(RangeError);
    expect(() => coverFeeCents(-1, DEFAULT_FEE_RATE)).toThrow(RangeError);
    expect(() => coverFeeCents(10.5, DEFAULT_FEE_RATE)).toThrow(RangeError);
    expect(() =>
      priceOrder(embed, { ...ONE, amount: 2500 }, NO_SALES, { percentBps: -1, fixedCents: 0 }),
    ).toThrow(RangeError);
  });

  const rateArb = fc.record({
    percentBps: fc.integer({ min: 0, max: 2000 }),
    fixedCents: fc.integer({ min: 0, max: 100 }),
  });

  it("equals the smallest fee found by brute force (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200_000 }), rateArb, (gift, rate: FeeRate) => {
        let f = 0;
        while (gift + f - processingFeeCents(gift + f, rate) < gift) f++;
        expect(coverFeeCents(gift, rate)).toBe(f);
      }),
      { numRuns: 400 },
    );
  });

  it("is minimal and sufficient for large gifts and high rates (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: MAX_ORDER_TOTAL_CENTS }),
        fc.record({
          percentBps: fc.integer({ min: 0, max: 9999 }),
          fixedCents: fc.integer({ min: 0, max: 10_000 }),
        }),
        (gift, rate: FeeRate) => {
          const f = coverFeeCents(gift, rate);
          expect(Number.isSafeInteger(f)).toBe(true);
          expect(gift + f - processingFeeCents(gift + f, rate)).toBeGreaterThanOrEqual(gift);
          if (f > 0) expect(gift + f - 1 - processingFeeCents(gift + f - 1, rate)).toBeLessThan(gift);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("frequency and fund", () => {
  it("accepts only a frequency enabled on the form", () => {
    expect(ok(priceOrder(embed, { frequency: "MONTHLY", amount: 1000 }, NO_SALES)).frequency).toBe("MONTHLY");
    const r = priceOrder(embed, { frequency: "WEEKLY", amount: 2500 }, NO_SALES);
    expect(codes(r)).toEqual(["frequency:not_allowed"]);
    expect(errs(r)[0].message).toContain("ONE_TIME, MONTHLY");
    expect(codes(priceOrder(embed, { frequency: "HOURLY" as never, amount: 2500 }, NO_SALES))).toEqual([
      "frequency:invalid",
    ]);
    expect(codes(priceOrder(embed, { amount: 2500 } as OrderInput, NO_SALES))).toEqual([
      "frequency:required",
    ]);
  });

  it("keeps event and sponsorship orders one-time, even when the form lists other frequencies", () => {
    const ev = priceOrder(
      event,
      { frequency: "MONTHLY", tickets: [{ name: "Adult", quantity: 1 }] },
      NO_SALES,
    );
    expect(codes(ev)).toEqual(["frequency:not_allowed"]);
    expect(errs(ev)[0].message).toMatch(/ONE_TIME.*one-time only/);
    const pr = priceOrder(
      product,
      { frequency: "MONTHLY", product: { group: "Gala", name: "Program Ad" } },
      NO_SALES,
    );
    expect(codes(pr)).toEqual(["frequency:not_allowed"]);
    expect(errs(pr)[0].message).toContain("one-time only");
  });

  it("defaults the fund to the form's first and refuses an unknown one", () => {
    expect(ok(priceOrder(embed, { ...ONE, amount: 2500 }, NO_SALES)).fund).toBe("General");
    expect(ok(priceOrder(embed, { ...ONE, amount: 2500, fund: "Building" }, NO_SALES)).fund).toBe("Building");
    expect(codes(priceOrder(embed, { ...ONE, amount: 2500, fund: "building" }, NO_SALES))).toEqual([
      "fund:unknown",
    ]);
  });
});

describe("standard amounts (EMBED_FORM)", () => {
  it("accepts a preset of the chosen frequency's own list", () => {
    const q = ok(priceOrder(embed, { frequency: "MONTHLY", amount: 2000 }, NO_SALES));
    expect(q.lines).toEqual([
      { kind: "donation", label: "Monthly donation", unitCents: 2000, quantity: 1, amountCents: 2000 },
    ]);
    expect(q).toMatchObject({ subtotalCents: 2000, discountCents: 0, feeCents: 0, totalCents: 2000 });
    expect(q.netIntendedCents).toBe(2000);
    expect(q.attendees).toBe(0);
  });

  it("accepts any whole-cent custom amount from $1 to $1,000,000 when allowed", () => {
    expect(ok(priceOrder(embed, { ...ONE, amount: 100 }, NO_SALES)).totalCents).toBe(100);
    expect(ok(priceOrder(embed, { ...ONE, amount: 1234 }, NO_SALES)).totalCents).toBe(1234);
    expect(ok(priceOrder(embed, { ...ONE, amount: 100_000_000 }, NO_SALES)).totalCents).toBe(100_000_000);
    for (const amount of [99, 0, -500, 100_000_001, 12.5, Number.NaN])
      expect(codes(priceOrder(embed, { ...ONE, amount }, NO_SALES))).toEqual(["amount:invalid"]);
  });

  it("refuses an amount off the preset list when custom amounts are off, checking the right frequency", () => {
    expect(ok(priceOrder(embedNoCustom, { ...ONE, amount: 5000 }, NO_SALES)).totalCents).toBe(5000);
    const r = priceOrder(embedNoCustom, { ...ONE, amount: 3000 }, NO_SALES);
    expect(codes(r)).toEqual(["amount:not_allowed"]);
    expect(errs(r)[0].message).toContain("$25, $50");
    // 1000 is a MONTHLY preset on `embed`, not a ONE_TIME one; on a no-custom form it must be refused.
    const monthlyPresetOneTime = form({
      frequencies: ["ONE_TIME", "MONTHLY"],
      oneTimeAmounts: [25],
      monthlyAmounts: [10],
      allowCustomAmount: false,
    });
    expect(codes(priceOrder(monthlyPresetOneTime, { ...ONE, amount: 1000 }, NO_SALES))).toEqual([
      "amount:not_allowed",
    ]);
    expect(
      ok(priceOrder(monthlyPresetOneTime, { frequency: "MONTHLY", amount: 1000 }, NO_SALES)).totalCents,
    ).toBe(1000);
  });

  it("requires an amount and refuses fields that belong to other form types", () => {
    expect(codes(priceOrder(embed, { ...ONE }, NO_SALES))).toEqual(["amount:required"]);
    const r = priceOrder(
      embed,
      {
        ...ONE,
        amount: 2500,
        givingLevel: "Bronze",
        product: { group: "Gala", name: "Program Ad" },
        tickets: [{ name: "Adult", quantity: 1 }],
        promoCode: "SAVE15",
        extraDonation: 500,
      },
      NO_SALES,
    );
    expect(codes(r)).toEqual([
      "givingLevel:not_allowed",
      "product:not_allowed",
      "tickets:not_allowed",
      "promoCode:not_allowed",
      "extraDonation:not_allowed",
    ]);
  });
});

describe("giving levels (CROWDFUNDING_FORM)", () => {
  it("charges the named level's amount", () => {
    const q = ok(priceOrder(crowd, { ...ONE, givingLevel: "Silver" }, NO_SALES));
    expect(q.lines).toEqual([
      { kind: "donation", label: "Silver", unitCents: 10000, quantity: 1, amountCents: 10000 },
    ]);
    expect(q.totalCents).toBe(10000);
    expect(ok(priceOrder(crowd, { frequency: "MONTHLY", givingLevel: "Bronze" }, NO_SALES)).totalCents).toBe(
      5000,
    );
  });

  it("matches a level by its amount, and refuses an amount that contradicts the named level", () => {
    expect(ok(priceOrder(crowd, { ...ONE, amount: 5000 }, NO_SALES)).lines[0].label).toBe("Bronze");
    expect(ok(priceOrder(crowd, { ...ONE, amount: 10000, givingLevel: "Silver" }, NO_SALES)).totalCents).toBe(
      10000,
    );
    const r = priceOrder(crowd, { ...ONE, amount: 100, givingLevel: "Silver" }, NO_SALES);
    expect(codes(r)).toEqual(["amount:invalid"]);
    expect(errs(r)[0].message).toContain('"Silver" ($100)');
  });

  it("refuses an unknown level and requires a choice", () => {
    const r = priceOrder(crowd, { ...ONE, givingLevel: "Platinum" }, NO_SALES);
    expect(codes(r)).toEqual(["givingLevel:unknown"]);
    expect(errs(r)[0].message).toContain("Bronze, Silver");
    expect(codes(priceOrder(crowd, { ...ONE }, NO_SALES))).toEqual(["givingLevel:required"]);
  });

  it("takes a custom amount only when allowed and within $1..$1,000,000", () => {
    expect(ok(priceOrder(crowd, { ...ONE, amount: 7777 }, NO_SALES)).lines[0]).toMatchObject({
      label: "Donation",
      amountCents: 7777,
    });
    expect(codes(priceOrder(crowd, { ...ONE, amount: 50 }, NO_SALES))).toEqual(["amount:invalid"]);
    expect(codes(priceOrder(crowd, { ...ONE, amount: 100_000_001 }, NO_SALES))).toEqual(["amount:invalid"]);
    expect(codes(priceOrder(crowdNoCustom, { ...ONE, amount: 7777 }, NO_SALES))).toEqual([
      "amount:not_allowed",
    ]);
    expect(ok(priceOrder(crowdNoCustom, { ...ONE, amount: 5000 }, NO_SALES)).lines[0].label).toBe("Bronze");
  });
});

describe("refusals name amounts in the form's currency, in English", () => {
  const messages = (currency: string) => {
    const refused = (f: FormConfig, input: OrderInput) =>
      errs(priceOrder(f, input, NO_SALES, DEFAULT_FEE_RATE, currency)).map((e) => e.message);
    return [
      // Out of range, and whole in every currency (so JPY adds no refusal of decimals).
      ...refused(embed, { ...ONE, amount: 100_000_100 }),
      ...refused(embedNoCustom, { ...ONE, amount: 3000 }),
      ...refused(crowd, { ...ONE, amount: 100, givingLevel: "Silver" }),
      ...refused(crowdNoCustom, { ...ONE, amount: 7700 }),
      ...refused(event, { ...ONE, tickets: [{ name: "Adult", quantity: 1 }], extraDonation: 100_000_100 }),
    ];
  };

  it("says dollars for USD, as it always has", () => {
    expect(messages("USD")).toEqual([
      "amount must be from $1 to $1,000,000",
      "amount must be one of this form's ONE_TIME amounts ($25, $50); custom amounts are not allowed",
      'amount $1 does not match the giving level "Silver" ($100)',
      "amount must be one of this form's giving levels (Bronze $50); custom amounts are not allowed",
      "extraDonation must be 0 or from $1 to $1,000,000",
    ]);
  });

  it("says euros for EUR and whole yen for JPY", () => {
    expect(messages("EUR")).toEqual([
      "amount must be from €1 to €1,000,000",
      "amount must be one of this form's ONE_TIME amounts (€25, €50); custom amounts are not allowed",
      'amount €1 does not match the giving level "Silver" (€100)',
      "amount must be one of this form's giving levels (Bronze €50); custom amounts are not allowed",
      "extraDonation must be 0 or from €1 to €1,000,000",
    ]);
    expect(messages("JPY")).toEqual([
      "amount must be from ¥1 to ¥1,000,000",
      "amount must be one of this form's ONE_TIME amounts (¥25, ¥50); custom amounts are not allowed",
      'amount ¥1 does not match the giving level "Silver" (¥100)',
      "amount must be one of this form's giving levels (Bronze ¥50); custom amounts are not allowed",
      "extraDonation must be 0 or from ¥1 to ¥1,000,000",
    ]);
  });
});

describe("sponsorships (PRODUCT)", () => {
  it("charges the product's price times the quantity (default 1)", () => {
    const q = ok(priceOrder(product, { ...ONE, product: { group: "Gala", name: "Program Ad" } }, NO_SALES));
    expect(q.lines).toEqual([
      { kind: "product", label: "Program Ad (Gala)", unitCents: 15050, quantity: 1, amountCents: 15050 },
    ]);
    const three = ok(
      priceOrder(product, { ...ONE, product: { group: "Gala", name: "Program Ad", quantity: 3 } }, NO_SALES),
    );
    expect(three.totalCents).toBe(45150);
    // The same option title in another group is another product.
    expect(
      ok(priceOrder(product, { ...ONE, product: { group: "Run", name: "Gold Table" } }, NO_SALES)).totalCents,
    ).toBe(1000);
  });

  it("refuses an unknown group or product, a bad quantity, and a custom amount", () => {
    expect(
      codes(priceOrder(product, { ...ONE, product: { group: "Golf", name: "Program Ad" } }, NO_SALES)),
    ).toEqual(["product.group:unknown"]);
    expect(
      codes(priceOrder(product, { ...ONE, product: { group: "Run", name: "Program Ad" } }, NO_SALES)),
    ).toEqual(["product.name:unknown"]);
    for (const quantity of [0, 101, 1.5])
      expect(
        codes(
          priceOrder(product, { ...ONE, product: { group: "Gala", name: "Program Ad", quantity } }, NO_SALES),
        ),
      ).toEqual(["product.quantity:invalid"]);
    expect(codes(priceOrder(product, { ...ONE }, NO_SALES))).toEqual(["product:required"]);
    expect(
      codes(
        priceOrder(product, { ...ONE, amount: 1, product: { group: "Gala", name: "Program Ad" } }, NO_SALES),
      ),
    ).toEqual(["amount:not_allowed"]);
  });

  it("refuses more than the stock left, naming the product and how many are left", () => {
    const sold = sales({ productsSold: { [productKey("Gala", "Gold Table")]: 3 } });
    const two = { ...ONE, product: { group: "Gala", name: "Gold Table", quantity: 2 } };
    expect(ok(priceOrder(product, two, sold)).totalCents).toBe(500_000);
    const r = priceOrder(
      product,
      { ...ONE, product: { group: "Gala", name: "Gold Table", quantity: 3 } },
      sold,
    );
    expect(codes(r)).toEqual(["product.quantity:sold_out"]);
    expect(errs(r)[0].message).toBe('Only 2 "Gold Table" are left');
    const gone = sales({ productsSold: { [productKey("Gala", "Gold Table")]: 5 } });
    expect(errs(priceOrder(product, two, gone))[0].message).toBe('"Gold Table" is sold out');
    // Sales of the same title in another group do not count against it.
    const other = sales({ productsSold: { [productKey("Run", "Gold Table")]: 99 } });
    expect(ok(priceOrder(product, two, other)).totalCents).toBe(500_000);
  });
});

describe("event orders", () => {
  it("prices several ticket types; a GROUP ticket admits groupSize people", () => {
    const q = ok(
      priceOrder(
        event,
        {
          ...ONE,
          tickets: [
            { name: "Adult", quantity: 2 },
            { name: "Child", quantity: 3 },
            { name: "Family", quantity: 2 },
            { name: "Volunteer", quantity: 0 },
          ],
        },
        NO_SALES,
      ),
    );
    expect(q.lines).toEqual([
      { kind: "ticket", label: "Adult", unitCents: 4000, quantity: 2, amountCents: 8000, admits: 2 },
      { kind: "ticket", label: "Child", unitCents: 1550, quantity: 3, amountCents: 4650, admits: 3 },
      { kind: "ticket", label: "Family", unitCents: 10000, quantity: 2, amountCents: 20000, admits: 8 },
    ]);
    expect(q.subtotalCents).toBe(32650);
    expect(q.totalCents).toBe(32650);
    expect(q.attendees).toBe(13);
    expect(q.promoCode).toBeNull();
  });

  it("enforces maxPerOrder", () => {
    expect(
      ok(priceOrder(event, { ...ONE, tickets: [{ name: "Adult", quantity: 10 }] }, NO_SALES)).totalCents,
    ).toBe(40000);
    const r = priceOrder(event, { ...ONE, tickets: [{ name: "Adult", quantity: 11 }] }, NO_SALES);
    expect(codes(r)).toEqual(["tickets[0].quantity:limit_exceeded"]);
    expect(errs(r)[0].message).toBe('At most 10 "Adult" tickets per order');
  });

  it("refuses more tickets than are left, and treats a ticket without quantity as unlimited", () => {
    const sold = sales({ ticketsSold: { Adult: 97, Child: 1_000_000 } });
    expect(
      ok(priceOrder(event, { ...ONE, tickets: [{ name: "Adult", quantity: 3 }] }, sold)).totalCents,
    ).toBe(12000);
    const r = priceOrder(event, { ...ONE, tickets: [{ name: "Adult", quantity: 4 }] }, sold);
    expect(codes(r)).toEqual(["tickets[0].quantity:sold_out"]);
    expect(errs(r)[0].message).toBe('Only 3 "Adult" tickets are left');
    const one = priceOrder(
      event,
      { ...ONE, tickets: [{ name: "Adult", quantity: 2 }] },
      sales({ ticketsSold: { Adult: 99 } }),
    );
    expect(errs(one)[0].message).toBe('Only 1 "Adult" ticket is left');
    const none = priceOrder(
      event,
      { ...ONE, tickets: [{ name: "Family", quantity: 1 }] },
      sales({ ticketsSold: { Family: 20 } }),
    );
    expect(errs(none)[0].message).toBe('"Family" tickets are sold out');
    expect(
      ok(priceOrder(event, { ...ONE, tickets: [{ name: "Child", quantity: 1000 }] }, sold)).totalCents,
    ).toBe(1_550_000);
  });

  it("checks every ticket entry and reports every problem at once", () => {
    const r = priceOrder(
      event,
      {
        ...ONE,
        tickets: [
          { name: "VIP", quantity: 1 },
          { name: "Adult", quantity: -1 },
          { name: "Child", quantity: 1.5 },
          { name: "Family", quantity: 1001 },
          { name: "Volunteer", quantity: 1 },
          { name: "Volunteer", quantity: 1 },
        ],
      },
      NO_SALES,
    );
    expect(codes(r)).toEqual([
      "tickets[0].name:unknown",
      "tickets[1].quantity:invalid",
      "tickets[2].quantity:invalid",
      "tickets[3].quantity:invalid",
      "tickets[5].name:invalid",
    ]);
  });

  it("requires at least one ticket", () => {
    expect(codes(priceOrder(event, { ...ONE }, NO_SALES))).toEqual(["tickets:required"]);
    expect(codes(priceOrder(event, { ...ONE, tickets: [] }, NO_SALES))).toEqual(["tickets:required"]);
    expect(codes(priceOrder(event, { ...ONE, tickets: [{ name: "Adult", quantity: 0 }] }, NO_SALES))).toEqual(
      ["tickets:required"],
    );
    expect(codes(priceOrder(event, { ...ONE, tickets: "Adult" as never }, NO_SALES))).toEqual([
      "tickets:invalid",
    ]);
  });

  it("refuses a free amount on an event", () => {
    expect(
      codes(priceOrder(event, { ...ONE, amount: 1, tickets: [{ name: "Adult", quantity: 1 }] }, NO_SALES)),
    ).toEqual(["amount:not_allowed"]);
  });
});

describe("promo codes", () => {
  const adultsAndChild = [
    { name: "Adult", quantity: 3 },
    { name: "Child", quantity: 1 },
  ];

  it("takes a percentage off only the applicable tickets, matched case-insensitively, rounded half up", () => {
    // 15% of 3 × $40 = $18; the child ticket is not discounted.
    const q = ok(priceOrder(event, { ...ONE, tickets: adultsAndChild, promoCode: " save15 " }, NO_SALES));
    expect(q.discountCents).toBe(1800);
    expect(q.promoCode).toBe("SAVE15");
    expect(q.subtotalCents).toBe(12000 + 1550);
    expect(q.totalCents).toBe(12000 + 1550 - 1800);
    // Half-up: 15% of $1.55 × 3 = 69.75¢ → 70¢; 10% of $15.50 = 155¢ exactly; 15% of 4650 = 697.5 → 698.
    expect(percentOf(465, 15)).toBe(70);
    expect(percentOf(1005, 10)).toBe(101);
    expect(percentOf(1004, 10)).toBe(100);
    expect(percentOf(4650, 15)).toBe(698);
    expect(percentOf(999, 12.5)).toBe(125); // 124.875
  });

  it("takes a fixed amount off the applicable subtotal once per order, never below zero", () => {
    const q = ok(
      priceOrder(event, { ...ONE, tickets: [{ name: "Child", quantity: 2 }], promoCode: "kids5" }, NO_SALES),
    );
    expect(q.discountCents).toBe(500);
    expect(q.totalCents).toBe(2600);
    // $10 off a $0 volunteer ticket plus... only a $0 applicable subtotal: discount 0, not negative.
    const free = ok(
      priceOrder(
        event,
        { ...ONE, tickets: [{ name: "Volunteer", quantity: 1 }], promoCode: "TENOFF" },
        NO_SALES,
      ),
    );
    expect(free.discountCents).toBe(0);
    expect(free.totalCents).toBe(0);
    // $10 off one $15.50 child ticket → $5.50; $10 off (TENOFF applies to all) never exceeds the tickets.
    const small = form({
      formType: "event",
      tickets: [{ name: "Cheap", price: 3 }],
      promoCodes: [{ code: "BIG", discountType: "amount", discountValue: 50 }],
    });
    const capped = ok(
      priceOrder(
        small,
        { ...ONE, tickets: [{ name: "Cheap", quantity: 2 }], promoCode: "BIG", extraDonation: 500 },
        NO_SALES,
      ),
    );
    expect(capped.discountCents).toBe(600);
    expect(capped.totalCents).toBe(500); // the extra donation is never discounted
  });

  it("refuses an unknown code, an exhausted code, and a code for tickets not in the order", () => {
    const unknown = priceOrder(event, { ...ONE, tickets: adultsAndChild, promoCode: "NOPE" }, NO_SALES);
    expect(codes(unknown)).toEqual(["promoCode:unknown"]);
    const full = sales({ promoRedemptions: { LIMITED: 2 } });
    const exhausted = priceOrder(event, { ...ONE, tickets: adultsAndChild, promoCode: "limited" }, full);
    expect(codes(exhausted)).toEqual(["promoCode:promo_exhausted"]);
    const oneLeft = sales({ promoRedemptions: { LIMITED: 1 } });
    expect(
      ok(priceOrder(event, { ...ONE, tickets: adultsAndChild, promoCode: "limited" }, oneLeft)).discountCents,
    ).toBe(1355); // 10% of 13550
    const na = priceOrder(
      event,
      { ...ONE, tickets: [{ name: "Child", quantity: 1 }], promoCode: "SAVE15" },
      NO_SALES,
    );
    expect(codes(na)).toEqual(["promoCode:promo_not_applicable"]);
    // The donor is told the same of every refused code: guessing learns nothing from the answer.
    const said = [unknown, exhausted, na].map((r) => errs(r)[0].message.replace(/"[^"]*"/, '"…"'));
    expect(new Set(said)).toEqual(new Set(['Promo code "…" cannot be used for this order']));
    // A zero quantity of the applicable ticket does not make it applicable.
    const zero = priceOrder(
      event,
      {
        ...ONE,
        tickets: [
          { name: "Adult", quantity: 0 },
          { name: "Child", quantity: 1 },
        ],
        promoCode: "SAVE15",
      },
      NO_SALES,
    );
    expect(codes(zero)).toEqual(["promoCode:promo_not_applicable"]);
  });

  it("treats a blank code as none", () => {
    const q = ok(priceOrder(event, { ...ONE, tickets: adultsAndChild, promoCode: "  " }, NO_SALES));
    expect(q.promoCode).toBeNull();
    expect(q.discountCents).toBe(0);
  });

  it("allows a free order (100% off), which adds no cover fee", () => {
    const q = ok(
      priceOrder(
        event,
        { ...ONE, tickets: [{ name: "Family", quantity: 1 }], promoCode: "allfree", coverFees: true },
        NO_SALES,
      ),
    );
    expect(q).toMatchObject({
      subtotalCents: 10000,
      discountCents: 10000,
      feeCents: 0,
      totalCents: 0,
      attendees: 4,
    });
  });
});

describe("extra donation and cover fees", () => {
  it("adds an extra donation line on an event, and refuses one out of range", () => {
    const q = ok(
      priceOrder(event, { ...ONE, tickets: [{ name: "Adult", quantity: 1 }], extraDonation: 2500 }, NO_SALES),
    );
    expect(q.lines[1]).toEqual({
      kind: "extra_donation",
      label: "Additional donation",
      unitCents: 2500,
      quantity: 1,
      amountCents: 2500,
    });
    expect(q.totalCents).toBe(6500);
    expect(
      ok(priceOrder(event, { ...ONE, tickets: [{ name: "Adult", quantity: 1 }], extraDonation: 0 }, NO_SALES))
        .lines,
    ).toHaveLength(1);
    for (const extraDonation of [50, -100, 100_000_001, 150.5])
      expect(
        codes(
          priceOrder(event, { ...ONE, tickets: [{ name: "Adult", quantity: 1 }], extraDonation }, NO_SALES),
        ),
      ).toEqual(["extraDonation:invalid"]);
  });

  it("adds the cover fee on top of the discounted total plus extra donation", () => {
    const q = ok(
      priceOrder(
        event,
        {
          ...ONE,
          tickets: [{ name: "Adult", quantity: 3 }],
          promoCode: "SAVE15",
          extraDonation: 2000,
          coverFees: true,
        },
        NO_SALES,
      ),
    );
    // 12000 - 1800 + 2000 = 12200 intended.
    expect(q.netIntendedCents).toBe(12200);
    expect(q.feeCents).toBe(coverFeeCents(12200, DEFAULT_FEE_RATE));
    expect(q.totalCents).toBe(12200 + q.feeCents);
    expect(q.coverFees).toBe(true);
    expect(q.totalCents - processingFeeCents(q.totalCents)).toBeGreaterThanOrEqual(12200);
  });

  it("grosses a $100 gift up to $103.30 and uses the organization's own rate when given", () => {
    const q = ok(priceOrder(embed, { ...ONE, amount: 10000, coverFees: true }, NO_SALES));
    expect(q).toMatchObject({ feeCents: 330, totalCents: 10330, netIntendedCents: 10000 });
    const custom = ok(
      priceOrder(embed, { ...ONE, amount: 10000, coverFees: true }, NO_SALES, {
        percentBps: 0,
        fixedCents: 50,
      }),
    );
    expect(custom.totalCents).toBe(10050);
    expect(ok(priceOrder(embed, { ...ONE, amount: 10000, coverFees: false }, NO_SALES)).feeCents).toBe(0);
  });

  it("refuses coverFees on a form that does not enable it", () => {
    const noFees = form({ enableCoverFees: false });
    expect(codes(priceOrder(noFees, { ...ONE, amount: 2500, coverFees: true }, NO_SALES))).toEqual([
      "coverFees:not_allowed",
    ]);
    expect(ok(priceOrder(noFees, { ...ONE, amount: 2500, coverFees: false }, NO_SALES)).totalCents).toBe(
      2500,
    );
  });
});

describe("the whole order", () => {
  it("reports every problem at once", () => {
    const noFees = form({ enableCoverFees: false, allowCustomAmount: false, oneTimeAmounts: [25] });
    const r = priceOrder(
      noFees,
      { frequency: "MONTHLY", fund: "Nope", amount: 5000, coverFees: true },
      NO_SALES,
    );
    expect(codes(r)).toEqual(["frequency:not_allowed", "fund:unknown", "coverFees:not_allowed"]);
    const ev = priceOrder(
      event,
      {
        ...ONE,
        fund: "Nope",
        tickets: [{ name: "Adult", quantity: 11 }],
        promoCode: "LIMITED",
        extraDonation: 5,
      },
      sales({ promoRedemptions: { LIMITED: 5 } }),
    );
    expect(codes(ev)).toEqual([
      "fund:unknown",
      "tickets[0].quantity:limit_exceeded",
      "promoCode:promo_exhausted",
      "extraDonation:invalid",
    ]);
  });

  it("never reads a client-sent total, subtotal, fee or discount", () => {
    const forged = {
      ...ONE,
      tickets: [{ name: "Adult", quantity: 2 }],
      total: 1,
      totalCents: 1,
      subtotalCents: 1,
      feeCents: 0,
      discountCents: 8000,
      price: 1,
    } as unknown as OrderInput;
    const q = ok(priceOrder(event, forged, NO_SALES));
    expect(q.totalCents).toBe(8000);
    expect(q.discountCents).toBe(0);
    // A forged ticket price is also ignored: the form's price is used.
    const forgedTicket = {
      ...ONE,
      tickets: [{ name: "Adult", quantity: 1, price: 1 }],
    } as unknown as OrderInput;
    expect(ok(priceOrder(event, forgedTicket, NO_SALES)).lines[0].unitCents).toBe(4000);
  });

  it("refuses an order above the per-order total limit", () => {
    const big = form({ formType: "event", tickets: [{ name: "Seat", price: 1_000_000 }] });
    const r = priceOrder(big, { ...ONE, tickets: [{ name: "Seat", quantity: 11 }] }, NO_SALES);
    expect(codes(r)).toEqual(["total:limit_exceeded"]);
    expect(
      ok(priceOrder(big, { ...ONE, tickets: [{ name: "Seat", quantity: 10 }] }, NO_SALES)).totalCents,
    ).toBe(MAX_ORDER_TOTAL_CENTS);
  });

  it("keeps an event quote's arithmetic consistent for any order (property)", () => {
    const names = event.tickets.map((t) => t.name);
    const codesArb = fc.constantFrom(undefined, ...event.promoCodes.map((p) => p.code.toLowerCase()));
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 10 }), { minLength: names.length, maxLength: names.length }),
        codesArb,
        fc.oneof(fc.constant(0), fc.integer({ min: 100, max: 1_000_000 })),
        fc.boolean(),
        (quantities, promoCode, extraDonation, coverFees) => {
          const tickets = names.map((name, i) => ({ name, quantity: quantities[i] }));
          const r = priceOrder(event, { ...ONE, tickets, promoCode, extraDonation, coverFees }, NO_SALES);
          if (!r.ok) {
            for (const e of r.errors) expect(["tickets", "promoCode"]).toContain(e.field);
            return;
          }
          const q = r.quote;
          const sum = q.lines.reduce((s, l) => s + l.amountCents, 0);
          expect(q.subtotalCents).toBe(sum);
          for (const l of q.lines) expect(l.amountCents).toBe(l.unitCents * l.quantity);
          const ticketSum = q.lines.filter((l) => l.kind === "ticket").reduce((s, l) => s + l.amountCents, 0);
          expect(q.discountCents).toBeGreaterThanOrEqual(0);
          expect(q.discountCents).toBeLessThanOrEqual(ticketSum);
          expect(q.netIntendedCents).toBe(q.subtotalCents - q.discountCents);
          expect(q.totalCents).toBe(q.netIntendedCents + q.feeCents);
          expect(q.totalCents).toBeGreaterThanOrEqual(0);
          if (coverFees && q.totalCents > 0)
            expect(q.totalCents - processingFeeCents(q.totalCents)).toBeGreaterThanOrEqual(
              q.netIntendedCents,
            );
          else expect(q.feeCents).toBe(0);
          const people = names.reduce((s, n, i) => s + quantities[i] * (n === "Family" ? 4 : 1), 0);
          expect(q.attendees).toBe(people);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("remaining stock for the public form", () => {
  it("lists tickets left, null for unlimited, never below zero", () => {
    expect(remainingTickets(event, sales({ ticketsSold: { Adult: 40, Family: 25 } }))).toEqual({
      Adult: 60,
      Child: null,
      Family: 0,
      Volunteer: null,
    });
  });

  it("lists products left per group, null for unlimited", () => {
    expect(
      remainingProducts(product, sales({ productsSold: { [productKey("Gala", "Gold Table")]: 2 } })),
    ).toEqual({
      Gala: { "Gold Table": 3, "Program Ad": null },
      Run: { "Gold Table": null },
    });
  });
});

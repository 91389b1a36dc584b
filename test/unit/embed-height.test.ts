import { describe, expect, it } from "vitest";
import { reservedHeight } from "../../server/api/forms/present.js";
import { formSchema } from "../../shared/schemas/form.js";

/**
 * The height embedHTML reserves for the iframe: close to the rendered checkout (measured in Chromium at
 * 640 px: a plain sponsorship form ≈ 1,290 px, a gala with two tickets ≈ 1,500 px), and growing with
 * what the form shows, so host pages barely move when the loader sets the exact height.
 */

const parse = (body: Record<string, unknown>) => formSchema({ allowHttpImages: true }).parse(body);
const event = (tickets: number) =>
  parse({
    title: "Gala",
    funds: ["Gala"],
    formType: "event",
    tickets: Array.from({ length: tickets }, (_, i) => ({ name: `T${i}`, price: 10 })),
  });

describe("reservedHeight", () => {
  it("is near the measured height of the demo's kinds of form", () => {
    const sponsorship = parse({
      title: "Fair",
      funds: ["Fair"],
      amountType: "sponsorship",
      sponsorshipGroups: [
        {
          groupTitle: "Booths",
          description: "",
          options: [
            { optionTitle: "Bronze", amount: 250 },
            { optionTitle: "Gold", amount: 1000 },
          ],
        },
      ],
    });
    expect(Math.abs(reservedHeight(sponsorship) - 1290)).toBeLessThanOrEqual(100);
    expect(reservedHeight(parse({ title: "Plain", funds: ["General"] }))).toBeGreaterThan(1000);
  });

  it("grows with tickets, custom inputs, FAQs and donor fields", () => {
    expect(reservedHeight(event(6))).toBeGreaterThan(reservedHeight(event(2)));
    const plain = reservedHeight(parse({ title: "A", funds: ["G"] }));
    const rich = reservedHeight(
      parse({
        title: "A",
        funds: ["G", "H"],
        frequencies: ["ONE_TIME", "MONTHLY"],
        enableBillingAddress: true,
        enablePhone: true,
        customInputs: [{ title: "Note", inputType: "long_text" }],
        faqs: [{ question: "Q?", answer: "A." }],
      }),
    );
    expect(rich - plain).toBeGreaterThanOrEqual(600);
  });
});

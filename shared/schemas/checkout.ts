import { z } from "zod";
import { FREQUENCIES, TRIBUTE_KINDS } from "../enums.js";
import { dollarsToCents } from "../money.js";
import type { OrderInput } from "../pricing/order.js";
import {
  boundedString,
  emailAddress,
  flattenedLine,
  languageTag,
  requiredSingleLine,
  requiredString,
  singleLineString,
} from "./common.js";

/**
 * The donor checkout's requests (the public API under /api, no key), shared by the server and the widget.
 * Money arrives in dollars (at most 2 decimals) and leaves these schemas in integer cents; ranges and the
 * rules of each form type are `priceOrder`'s job, so that every pricing problem is reported in one place.
 */

/** Dollars with at most two decimals → cents. Range checks are left to pricing. */
const dollars = z
  .number()
  .meta({ minimum: 0, maximum: 100_000_000, multipleOf: 0.01 })
  .check(
    z.superRefine((n, ctx) => {
      if (!Number.isFinite(n)) ctx.addIssue({ code: "custom", message: "must be a finite number" });
      else if (n < 0) ctx.addIssue({ code: "custom", message: "must not be negative" });
      else if (n > 100_000_000) ctx.addIssue({ code: "custom", message: "must be at most 100000000" });
      else if (dollarsToCents(n) === null)
        ctx.addIssue({ code: "custom", message: "must have at most 2 decimal places" });
    }),
  )
  .transform((n) => dollarsToCents(n) as number);

/** What the donor chose: the order, priced by the server. Shared by quote and checkout. */
export const orderFields = {
  frequency: z.enum(FREQUENCIES).optional().meta({ description: "Default: the form's defaultFrequency" }),
  fund: requiredString(200).optional().meta({ description: "One of the form's funds; default the first" }),
  amount: dollars.optional().meta({
    description:
      "In the organization's currency, major units (whole units for zero-decimal currencies such as JPY). Standard forms: a preset of the frequency or (allowCustomAmount) 1–1,000,000. Giving-level forms: a level's amount",
  }),
  givingLevel: requiredString(200).optional().meta({ description: "Giving-level forms: a level title" }),
  product: z
    .strictObject({
      group: requiredString(200),
      name: requiredString(200),
      quantity: z.number().int().min(1).max(100).optional(),
    })
    .optional()
    .meta({ description: "Sponsorship (PRODUCT) forms: productGroupName and productName" }),
  tickets: z
    .array(z.strictObject({ name: requiredString(200), quantity: z.number().int().min(0).max(1000) }))
    .max(100)
    .optional()
    .meta({ description: "Event forms: quantities per ticket name" }),
  promoCode: singleLineString(50).optional().meta({ description: "Event forms; matched case-insensitively" }),
  extraDonation: dollars
    .optional()
    .meta({ description: "Event forms: an optional gift on top, in the organization's currency" }),
  coverFees: z.boolean().optional().meta({ description: "The donor pays the processing fee on top" }),
};

export const quoteRequestSchema = z.strictObject(orderFields);

/** Single-line fields: a line break or other control character in them is refused (400). */
const name = requiredSingleLine(100);

export const donorSchema = z.strictObject({
  firstName: name,
  lastName: name,
  email: emailAddress,
  phone: singleLineString(40).optional(),
  organizationName: singleLineString(200).optional(),
  address: z
    .strictObject({
      line1: singleLineString(200).optional(),
      line2: singleLineString(200).optional(),
      city: singleLineString(100).optional(),
      region: singleLineString(100).optional(),
      postal: singleLineString(20).optional(),
      country: singleLineString(100).optional(),
    })
    .optional(),
});

/** Digits, which may be grouped by spaces or hyphens as printed on a card or a check. */
const digits = (min: number, max: number, what: string) =>
  z
    .string()
    .meta({
      pattern: `^(?:[ -]*\\d){${min},${max}}[ -]*$`,
      description: `${what}; spaces and hyphens are ignored`,
    })
    .transform((v) => v.replace(/[\s-]/g, ""))
    .check(
      z.superRefine((v, ctx) => {
        if (!/^\d+$/.test(v) || v.length < min || v.length > max)
          ctx.addIssue({ code: "custom", message: `must be ${what}` });
      }),
    );

export const paymentMethodSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("card"),
    number: digits(12, 19, "a card number of 12 to 19 digits"),
    expMonth: z.number().int().min(1).max(12),
    expYear: z.number().int().min(0).max(9999),
    cvc: digits(3, 4, "3 or 4 digits"),
    name: singleLineString(200).optional(),
    postalCode: singleLineString(20).optional(),
  }),
  z.strictObject({
    type: z.literal("bank"),
    routingNumber: digits(9, 9, "9 digits"),
    accountNumber: digits(4, 17, "4 to 17 digits"),
    accountHolder: requiredSingleLine(200),
  }),
  z.strictObject({
    type: z.literal("token"),
    token: requiredString(500).meta({
      description: "A payment method created in the browser by the processor",
    }),
  }),
]);

/** A dedication: the gift is made in honor or in memory of someone, who may be told of it by e-mail. */
export const tributeSchema = z
  .strictObject({
    kind: z.enum(TRIBUTE_KINDS).meta({ description: "In honor of (HONOR) or in memory of (MEMORY)" }),
    honoreeName: requiredSingleLine(200).meta({ description: "The person the gift honors or remembers" }),
    notifyEmail: emailAddress.optional().meta({
      description:
        "Where to send the notice of the gift (the honoree, or their family); no notice without it",
    }),
    message: boundedString(1000).optional().meta({ description: "The donor's words, shown in the notice" }),
  })
  .meta({ description: "On forms with enableTribute: the gift is dedicated to someone" });

export const checkoutRequestSchema = z.strictObject({
  ...orderFields,
  donor: donorSchema,
  paymentMethod: paymentMethodSchema
    .optional()
    .meta({ description: "Required unless the order is free (total 0)" }),
  anonymous: z.boolean().optional(),
  tribute: tributeSchema.optional(),
  language: languageTag.optional().meta({
    description:
      "The donor's language (the page's): the receipts, and this answer's `message` or a decline's `error`, are written in it. Without it, the request's Accept-Language, else the organization's `language`, else English; kept with the payment for its receipts and recurring charges",
  }),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, { message: "must be a currency code of three capital letters, such as USD" })
    .optional()
    .meta({
      description:
        "The currency the donor was shown the amounts in (the form view's `currency`). When the organization's currency is another one by the time of the checkout (it was changed while the page was open), the checkout is refused with a 409 and nothing is charged, rather than charging the same figures in another currency. Left out: not checked",
    }),
  emailOptIn: z.boolean().optional().meta({ description: "The donor's opt-in box: email consent" }),
  customInputs: z
    .record(
      z.string().max(300),
      z.union([z.string().max(2000), z.array(z.string().max(200)).max(100)], {
        error: "must be text, or a list of options for a multi-select input",
      }),
    )
    .optional()
    .meta({ description: "Answers keyed by custom input id or title (form and organization inputs)" }),
  utm: z
    .strictObject({
      source: flattenedLine(200).optional(),
      medium: flattenedLine(200).optional(),
      campaign: flattenedLine(200).optional(),
      term: flattenedLine(200).optional(),
      content: flattenedLine(200).optional(),
    })
    .optional(),
  // From the page's address, not the donor: the hosted page renders for any ?elementid= and its checkout
  // sends it as it is (widget/app/main.tsx), so, as in the UTM fields, control characters become a space
  // rather than refusing the gift.
  elementId: flattenedLine(100).optional().meta({ description: "The checkout link the donor came from" }),
  website: z.string().max(500).meta({ pattern: "^\\s*$" }).optional().meta({
    description: "Honeypot: a hidden field people leave empty. Anything in it refuses the checkout",
  }),
});

export type QuoteRequest = z.output<typeof quoteRequestSchema>;
export type CheckoutRequest = z.output<typeof checkoutRequestSchema>;

/** The order part of a request as pricing takes it. */
export function toOrderInput(req: QuoteRequest, defaultFrequency: OrderInput["frequency"]): OrderInput {
  return {
    frequency: req.frequency ?? defaultFrequency,
    fund: req.fund,
    amount: req.amount,
    givingLevel: req.givingLevel,
    product: req.product,
    tickets: req.tickets,
    promoCode: req.promoCode,
    extraDonation: req.extraDonation,
    coverFees: req.coverFees,
  };
}

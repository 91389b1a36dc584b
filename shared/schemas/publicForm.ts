import { z } from "zod";
import { FREQUENCIES, STORED_FORM_TYPES, TICKET_TYPES } from "../enums.js";

/**
 * What a donor's page receives of a form (`GET /api/forms/{id}`): its donor-facing settings in dollars,
 * stock left, the fundraising bar and donor list when enabled, how it takes payment and the prefill of a
 * checkout link. Never other records' ids, costs, promo codes, processor secrets or email settings. The
 * server builds it to this type and the widget reads it as this type; the API document shows this schema.
 */

const dollars = z.number().min(0);
const text = z.string();
const stock = z.number().int().min(0).nullable().meta({ description: "Left to sell; null when unlimited" });

export const paymentOptionsSchema = z
  .discriminatedUnion("processor", [
    z.strictObject({ processor: z.literal("sandbox"), methods: z.array(z.enum(["card", "bank"])) }),
    z.strictObject({
      processor: z.literal("stripe"),
      publishableKey: text,
      livemode: z.boolean(),
      module: text.meta({ description: "The page's module that drives Stripe's fields" }),
      jsUrl: text.optional().meta({ description: "Where Stripe.js is loaded from when not Stripe's own" }),
    }),
  ])
  .nullable()
  .meta({ description: "How the page takes payment; null while the organization takes none" });

const prefillSchema = z
  .strictObject({
    firstName: text.optional(),
    lastName: text.optional(),
    email: text.optional(),
    phone: text.optional(),
    organizationName: text.optional(),
    address1: text.optional(),
    address2: text.optional(),
    city: text.optional(),
    state: text.optional(),
    postalCode: text.optional(),
    country: text.optional(),
    amount: dollars.optional(),
    fund: text.optional(),
    frequency: z.enum(FREQUENCIES).optional(),
    sponsorshipGroup: text.optional(),
    product: text.optional(),
    ticket: text.optional(),
    customInputs: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
    utm: z.strictObject({
      source: text.optional(),
      medium: text.optional(),
      campaign: text.optional(),
      term: text.optional(),
      content: text.optional(),
    }),
  })
  .nullable()
  .meta({ description: "The values of the checkout link given as ?elementid=, or null" });

export const publicFormViewSchema = z.strictObject({
  formID: z.string().meta({ format: "uuid" }),
  formType: z.enum(STORED_FORM_TYPES),
  title: text,
  description: text,
  color: text,
  headerImage: text.nullable(),
  active: z.boolean(),
  organization: z.strictObject({ name: text }),
  currency: text.meta({ description: "ISO 4217: the currency of every amount here (the organization's)" }),
  funds: z.array(text),
  frequencies: z.array(z.enum(FREQUENCIES)),
  defaultFrequency: z.enum(FREQUENCIES),
  amounts: z.strictObject({
    ONE_TIME: z.array(dollars),
    DAILY: z.array(dollars),
    WEEKLY: z.array(dollars),
    MONTHLY: z.array(dollars),
    ANNUALLY: z.array(dollars),
  }),
  defaultAmount: dollars.nullable().meta({
    description:
      "The amount the checkout starts at, for the default frequency; null when a link opens the form at another frequency without an amount (the checkout then starts at that frequency's presets)",
  }),
  allowCustomAmount: z.boolean(),
  minAmount: dollars,
  maxAmount: dollars,
  givingLevels: z.array(z.strictObject({ title: text, amount: dollars, description: text })),
  productGroups: z.array(
    z.strictObject({
      productGroupName: text,
      description: text,
      products: z.array(
        z.strictObject({
          productName: text,
          price: dollars,
          description: text,
          remaining: stock,
          soldOut: z.boolean(),
        }),
      ),
    }),
  ),
  tickets: z.array(
    z.strictObject({
      name: text,
      price: dollars,
      ticketType: z.enum(TICKET_TYPES),
      groupSize: z.number().int().nullable(),
      description: text,
      maxPerOrder: z.number().int().nullable(),
      remaining: stock,
      soldOut: z.boolean(),
    }),
  ),
  hasPromoCodes: z.boolean(),
  customInputs: z.array(
    z.strictObject({
      id: text,
      title: text,
      inputType: z.enum(["short_text", "long_text", "single_select", "multi_select"]),
      required: z.boolean(),
      options: z.array(text),
    }),
  ),
  faqs: z.array(z.strictObject({ question: text, answer: text })),
  event: z
    .strictObject({
      date: text.nullable(),
      startTime: text.nullable(),
      endTime: text.nullable(),
      timeZone: text.nullable(),
      location: text.nullable(),
      details: text.nullable(),
    })
    .nullable(),
  fundraisingBar: z
    .strictObject({ goal: dollars, raised: dollars, donors: z.number().int().min(0) })
    .nullable(),
  donorList: z
    .array(
      z.strictObject({
        name: text,
        anonymous: z.boolean(),
        amount: dollars,
        date: z.string().meta({ format: "date-time" }),
      }),
    )
    .nullable(),
  options: z.strictObject({
    coverFees: z.boolean(),
    anonymous: z.boolean(),
    organizationName: z.boolean(),
    billingAddress: z.boolean(),
    country: z.boolean(),
    phone: z.boolean(),
    tribute: z.boolean(),
    monthlyUpsell: z.strictObject({ ratio: z.number(), minimum: dollars }).nullable().meta({
      description: "A one-time gift at or above `minimum` is offered, once, a monthly gift of `ratio` of it",
    }),
  }),
  feeRate: z.strictObject({ percent: z.number().min(0), fixed: dollars }),
  payment: paymentOptionsSchema,
  prefill: prefillSchema,
});

export type PublicFormView = z.infer<typeof publicFormViewSchema>;
export type PaymentOptions = NonNullable<z.infer<typeof paymentOptionsSchema>>;

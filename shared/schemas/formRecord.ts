import { z } from "zod";
import {
  CUSTOM_INPUT_TYPES,
  DISCOUNT_TYPES,
  FREQUENCIES,
  STORED_FORM_TYPES,
  TICKET_TYPES,
} from "../enums.js";
import { count, majorUnits, time, uuid } from "./wire.js";

const quantity = z.int().min(1).nullable().meta({ description: "null: unlimited" });

/** A form as the API returns it (and a webhook sends it): exactly these fields. */
export const formRecordSchema = z.strictObject({
  formID: uuid("The form's id"),
  formUrl: z.string().meta({ description: "The hosted page" }),
  title: z.string(),
  description: z.string(),
  formType: z.enum(STORED_FORM_TYPES),
  funds: z.array(z.string()),
  frequencies: z.array(z.enum(FREQUENCIES)),
  color: z
    .string()
    .regex(/^#[0-9A-Fa-f]{6}$/)
    .meta({ description: "As sent: #RRGGBB in either case" }),
  headerImage: z.string().nullable(),
  active: z.boolean(),
  goal: majorUnits("The fundraising goal").nullable(),
  eventDate: z.iso.date().nullable().meta({ description: "YYYY-MM-DD" }),
  startTime: z
    .string()
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/)
    .nullable()
    .meta({ description: "HH:MM, 24-hour" }),
  endTime: z
    .string()
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/)
    .nullable()
    .meta({ description: "HH:MM, 24-hour" }),
  location: z.string().nullable(),
  createdAt: time("When the form was created"),
  updatedAt: time("When it last changed"),
  embedHTML: z.string(),
  defaultFrequency: z.enum(FREQUENCIES),
  oneTimeAmounts: z.array(z.number()),
  dailyAmounts: z.array(z.number()),
  weeklyAmounts: z.array(z.number()),
  monthlyAmounts: z.array(z.number()),
  annuallyAmounts: z.array(z.number()),
  defaultAmount: majorUnits("The preselected amount").nullable(),
  allowCustomAmount: z.boolean(),
  givingLevels: z.array(
    z.strictObject({ title: z.string(), amount: majorUnits("The level's amount"), description: z.string() }),
  ),
  sponsorshipGroups: z.array(
    z.strictObject({
      groupTitle: z.string(),
      description: z.string(),
      options: z.array(
        z.strictObject({
          optionTitle: z.string(),
          amount: majorUnits("The option's price"),
          description: z.string(),
          quantity,
        }),
      ),
    }),
  ),
  productGroups: z
    .array(
      z.strictObject({
        productGroupName: z.string(),
        description: z.string(),
        products: z.array(
          z.strictObject({
            productName: z.string(),
            price: majorUnits("The product's price"),
            description: z.string(),
            quantity,
          }),
        ),
      }),
    )
    .optional()
    .meta({ description: "PRODUCT forms only: the sponsorship groups under their product names" }),
  tickets: z.array(
    z.strictObject({
      name: z.string(),
      price: majorUnits("The ticket's price"),
      quantity,
      ticketType: z.enum(TICKET_TYPES),
      groupSize: z.int().min(1).meta({ description: "Attendees per ticket (1 unless GROUP)" }),
      description: z.string(),
      maxPerOrder: z.int().min(1).nullable(),
      fairMarketValue: majorUnits("What one ticket is worth to its buyer (not a deductible gift)").nullable(),
      quantitySold: count("Tickets sold so far"),
    }),
  ),
  promoCodes: z.array(
    z.strictObject({
      code: z.string(),
      discountType: z.enum(DISCOUNT_TYPES),
      discountValue: z
        .number()
        .meta({ description: "A percentage, or an amount in the organization's currency for `amount`" }),
      quantity,
      applicableTickets: z.array(z.string()),
      timesRedeemed: count("Orders that used the code"),
    }),
  ),
  customInputs: z.array(
    z.strictObject({
      id: z.string(),
      title: z.string(),
      question: z.string().meta({ description: "The same as title" }),
      inputType: z.enum(CUSTOM_INPUT_TYPES),
      required: z.boolean(),
      options: z.array(z.string()),
    }),
  ),
  faqs: z.array(z.strictObject({ question: z.string(), answer: z.string() })),
  enableFundraisingBar: z.boolean(),
  enableDonorList: z.boolean(),
  enableCoverFees: z.boolean(),
  enableAnonymous: z.boolean(),
  enableOrganizationName: z.boolean(),
  enableBillingAddress: z.boolean(),
  enableCountryDropdown: z.boolean(),
  enablePhone: z.boolean(),
  enableTribute: z.boolean(),
  enableMonthlyUpsell: z.boolean(),
  monthlyUpsellRatio: z.number(),
  monthlyUpsellMinimum: majorUnits(
    "One-time gifts at or above this are offered the monthly upsell",
  ).nullable(),
  enableCustomEmail: z.boolean(),
  replyToAddress: z.string().nullable(),
  emailSubject: z.string().nullable(),
  customMessage: z.string().nullable(),
  enableTimeAndLocation: z.boolean(),
  eventDetails: z.string().nullable(),
  timeZone: z.string().nullable().meta({ description: "An IANA time zone name" }),
});

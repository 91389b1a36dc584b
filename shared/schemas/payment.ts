import { z } from "zod";
import { FREQUENCIES } from "../enums.js";
import { money, requiredString } from "./common.js";

/** Payments and the deprecated donations view (seed 2.5, 4.4, 9; contract 7): response shapes. */

export const PAYMENT_STATUSES = ["COMPLETED", "PENDING", "FAILED", "REFUNDED"] as const;

export const paymentSchema = z.object({
  paymentID: z.string(),
  email: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  amount: z.number().meta({ description: "Dollars charged (the gift plus any covered fee)" }),
  currency: z.string(),
  status: z.enum(PAYMENT_STATUSES),
  fund: z.string(),
  form: z.string().meta({ description: "The form's title when the payment was made" }),
  formID: z.string(),
  frequency: z.enum(FREQUENCIES),
  date: z.string().meta({ description: "ISO 8601 UTC" }),
  paymentMethod: z.string().meta({ description: "card, bank, or none (free registrations)" }),
  coverFees: z.boolean(),
  anonymous: z.boolean(),
  contactId: z.string().nullable(),
  subscriptionId: z.string().nullable(),
  feeAmount: z.number().meta({ description: "The covered processing fee inside amount" }),
  refundedAmount: z.number(),
  card: z.object({ brand: z.string(), last4: z.string().nullable() }).nullable(),
  bankLast4: z.string().nullable(),
  tickets: z.array(z.object({ name: z.string(), quantity: z.number(), amount: z.number() })),
  promoCode: z.string().nullable(),
  discount: z.number(),
  customInputs: z.array(
    z.object({ id: z.string(), title: z.string(), value: z.union([z.string(), z.array(z.string())]) }),
  ),
  utm: z.record(z.string(), z.string()),
  failureMessage: z.string().nullable(),
  dispute: z
    .object({
      status: z.string().meta({
        description:
          "The processor's words: warning_needs_response, needs_response, under_review, won, lost (a returned bank debit is a dispute too)",
      }),
      reason: z.string(),
      amount: z.number(),
      fundsWithdrawn: z
        .boolean()
        .meta({ description: "The disputed amount is out of the organization's balance" }),
      createdAt: z.string(),
      updatedAt: z.string(),
    })
    .nullable()
    .meta({ description: "The latest dispute (chargeback) of the payment, or null" }),
});

export const refundRequestSchema = z.strictObject({
  amount: money({ min: 0, max: 1_000_000, minExclusive: true }).optional().meta({
    description: "Dollars to refund (> 0, at most 2 decimals); default: all that is left of the payment",
  }),
  reason: requiredString(500).optional().meta({ description: "Kept with the refund at the processor" }),
});

export const donationSchema = z.object({
  donationID: z.string(),
  donorEmail: z.string(),
  donorFirstName: z.string(),
  donorLastName: z.string(),
  amount: z.number(),
  currency: z.string(),
  status: z.enum(PAYMENT_STATUSES),
  fundName: z.string(),
  formName: z.string(),
  frequency: z.enum(FREQUENCIES),
  donationDate: z.string(),
  paymentMethod: z.string(),
  coverFees: z.boolean(),
  anonymous: z.boolean(),
  merchantName: z.string().meta({ description: "The organization's name" }),
  tipAmount: z.number().meta({ description: "Always 0 (tips are not taken)" }),
  transactionID: z.string().nullable().meta({ description: "The payment processor's id of the charge" }),
});

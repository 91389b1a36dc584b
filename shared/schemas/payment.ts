import { z } from "zod";
import { FREQUENCIES, TRIBUTE_KINDS } from "../enums.js";
import { money, requiredString } from "./common.js";
import { count, currency, majorUnits, time, ulidId, uuid } from "./wire.js";

/** Payments and the deprecated donations view (the same records, legacy field names): response shapes. */

export const PAYMENT_STATUSES = ["COMPLETED", "PENDING", "FAILED", "REFUNDED"] as const;

export const CARD_BRANDS = ["visa", "mastercard", "amex", "discover", "unknown"] as const;

export const paymentFields = {
  paymentID: ulidId("pay"),
  email: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  amount: majorUnits("What the donor was charged: the gift plus any covered fee"),
  currency,
  status: z.enum(PAYMENT_STATUSES),
  fund: z.string(),
  form: z.string().meta({ description: "The form's title when the payment was made" }),
  formID: uuid("The form's id"),
  frequency: z.enum(FREQUENCIES),
  date: time("When the payment was first recorded"),
  paymentMethod: z
    .enum(["card", "bank", "none"])
    .meta({ description: "`none` for an order that cost nothing (a free registration)" }),
  coverFees: z.boolean(),
  anonymous: z.boolean(),
  contactId: uuid("The donor's contact").nullable(),
  subscriptionId: ulidId("sub")
    .nullable()
    .meta({ description: "The recurring gift this payment belongs to" }),
  feeAmount: majorUnits("The covered processing fee inside amount (0 unless coverFees)"),
  refundedAmount: majorUnits("Refunded so far"),
  card: z
    .strictObject({ brand: z.enum(CARD_BRANDS), last4: z.string().nullable() })
    .nullable()
    .meta({ description: "The card's brand and last 4 digits; null for other methods" }),
  bankLast4: z.string().nullable().meta({ description: "Bank payments: the account's last 4 digits" }),
  tickets: z.array(
    z.strictObject({
      name: z.string(),
      quantity: count("Tickets bought"),
      amount: majorUnits("Their price"),
    }),
  ),
  promoCode: z.string().nullable(),
  discount: majorUnits("Taken off by the promo code"),
  customInputs: z.array(
    z.strictObject({
      id: z.string(),
      title: z.string(),
      value: z.union([z.string(), z.array(z.string())]).meta({ description: "A list for multi_select" }),
    }),
  ),
  tribute: z
    .strictObject({
      kind: z.enum(TRIBUTE_KINDS),
      honoreeName: z.string(),
      notifyEmail: z.string().optional(),
      message: z.string().optional(),
    })
    .nullable()
    .meta({ description: "The gift's dedication (in honor or in memory of someone), or null" }),
  utm: z
    .strictObject({
      source: z.string().optional(),
      medium: z.string().optional(),
      campaign: z.string().optional(),
      term: z.string().optional(),
      content: z.string().optional(),
    })
    .meta({ description: "The UTM parameters the donor arrived with; only those given" }),
  failureMessage: z.string().nullable().meta({ description: "FAILED payments: why" }),
  dispute: z
    .strictObject({
      status: z.string().meta({
        description:
          "The processor's words: warning_needs_response, needs_response, under_review, won, lost (a returned bank debit is a dispute too)",
      }),
      reason: z.string(),
      amount: majorUnits("Disputed"),
      fundsWithdrawn: z
        .boolean()
        .meta({ description: "The disputed amount is out of the organization's balance" }),
      createdAt: time("When the dispute was opened"),
      updatedAt: time("When it last changed"),
    })
    .nullable()
    .meta({ description: "The latest dispute (chargeback) of the payment, or null" }),
};

/** A payment as the API returns it (and a webhook sends it): exactly these fields. */
export const paymentSchema = z.strictObject(paymentFields);

export const refundRequestSchema = z.strictObject({
  amount: money({ min: 0, max: 1_000_000, minExclusive: true }).optional().meta({
    description:
      "Amount to refund in the payment's currency (> 0, at most 2 decimals; whole units for zero-decimal currencies); default: all that is left of the payment",
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

import { z } from "zod";
import { FIRST_DAY, isDayInRange, LAST_DAY } from "../localDays.js";
import { paymentFields } from "./payment.js";
import { count, currency, majorUnits } from "./wire.js";

/** The dashboard's summary of giving (`GET /v1/analytics/summary`): its query and its answer. */

/** The longest range one summary covers, in days (a leap year). */
export const SUMMARY_MAX_DAYS = 366;
/** The range a summary covers when none is given: the last 90 days, today included. */
export const SUMMARY_DEFAULT_DAYS = 90;
/** How many failed and disputed payments a summary lists (the most recent). */
export const SUMMARY_ATTENTION_LIMIT = 10;

const calendarDate = (description: string) =>
  z
    .string()
    .meta({ format: "date", pattern: "^\\d{4}-\\d{2}-\\d{2}$", description })
    .check(
      z.superRefine((value, ctx) => {
        if (!isDayInRange(value))
          ctx.addIssue({
            code: "custom",
            message: `must be a calendar date written YYYY-MM-DD, from ${FIRST_DAY} to ${LAST_DAY}`,
          });
      }),
    );

export const summaryQuerySchema = z.object({
  from: calendarDate(
    `The first day of the range, in the organization's time zone (default: ${SUMMARY_DEFAULT_DAYS - 1} days before \`to\`)`,
  ).optional(),
  to: calendarDate(
    "The last day of the range, included (default: today in the organization's time zone)",
  ).optional(),
});

const day = z.string().meta({ format: "date", description: "YYYY-MM-DD, in the organization's time zone" });

const attentionItem = z.strictObject({
  paymentID: paymentFields.paymentID,
  date: paymentFields.date,
  amount: paymentFields.amount,
  currency: paymentFields.currency,
  email: paymentFields.email,
  firstName: paymentFields.firstName,
  lastName: paymentFields.lastName,
  frequency: paymentFields.frequency,
  subscriptionId: paymentFields.subscriptionId,
  paymentMethod: paymentFields.paymentMethod,
  failureMessage: paymentFields.failureMessage,
  dispute: paymentFields.dispute,
});

export const summarySchema = z.strictObject({
  currency: currency.meta({
    description:
      "The organization's currency (ISO 4217): every sum is of payments in it; payments in a currency the organization took before are not added in",
  }),
  timeZone: z.string().meta({ description: "The organization's time zone: the days below are its days" }),
  today: day,
  from: day,
  to: day,
  raised: z
    .strictObject({
      today: majorUnits("Raised today"),
      last30Days: majorUnits("Raised in the last 30 days, today included"),
      thisYear: majorUnits("Raised since 1 January, today included"),
    })
    .meta({
      description:
        "Completed payments net of their refunds (what donors were charged, covered fees included, less what was given back); whatever `from` and `to` are",
    }),
  range: z.strictObject({
    raised: majorUnits("Raised from `from` to `to`, net of refunds"),
    gifts: count("Payments in the range that were not refunded in full"),
    donors: count("Distinct donors of those payments (by contact, else by email address)"),
  }),
  recurring: z.strictObject({
    active: count("Active recurring gifts in the organization's currency"),
    monthlyValue: majorUnits(
      "Their value per month: monthly as is, weekly × 52 ÷ 12, daily × 365 ÷ 12, annually ÷ 12, summed and then rounded to the currency's smallest unit",
    ),
  }),
  byDay: z
    .array(
      z.strictObject({
        date: day,
        amount: majorUnits("Raised that day, net of refunds"),
        count: count("Payments that day not refunded in full"),
      }),
    )
    .meta({ description: "Every day from `from` to `to`, oldest first, days without gifts included" }),
  failed: z.strictObject({
    count: count(
      "Failed recurring charges and bank debits in the range: failures the donor did not see on the page (a card declined at checkout is not counted)",
    ),
    recent: z.array(attentionItem).meta({
      description: `The most recent of them (at most ${SUMMARY_ATTENTION_LIMIT}), newest first; empty without \`donations:read\``,
    }),
  }),
  disputed: z.strictObject({
    count: count(
      "Payments with an open dispute (needs_response, warning_needs_response, under_review, warning_under_review), whenever made",
    ),
    recent: z.array(attentionItem).meta({
      description: `The most recently changed of them (at most ${SUMMARY_ATTENTION_LIMIT}), newest first; empty without \`donations:read\``,
    }),
  }),
});

export type Summary = z.infer<typeof summarySchema>;

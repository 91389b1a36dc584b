import { z } from "zod";
import { MAX_CUSTOM_AMOUNT } from "../pricing/limits.js";
import { hasCredentials, money, NO_CREDENTIALS } from "./common.js";
import { CARD_BRANDS } from "./payment.js";
import { currency, majorUnits, time, ulidId, uuid } from "./wire.js";

/** Subscriptions: the update body, the update-link body, response shapes. */

export const SUBSCRIPTION_STATUSES = ["ACTIVE", "CANCELLED"] as const;
export const UPDATE_LINK_METHODS = ["CARD", "PAY_BY_BANK"] as const;
export type UpdateLinkMethod = (typeof UPDATE_LINK_METHODS)[number];

export const subscriptionUpdateSchema = z
  .strictObject({
    status: z
      .literal("CANCELLED", { error: "must be CANCELLED (the only status change accepted)" })
      .optional()
      .meta({ description: "Cancels the subscription for good" }),
    // Above 0 and at most the checkout's 1,000,000 in the gift's currency, with at most 2 decimals (as the
    // API's clients are promised). The donor portal keeps the form's own rules (portal.ts).
    amount: money({ min: 0, max: MAX_CUSTOM_AMOUNT, minExclusive: true })
      .optional()
      .meta({
        description: `New recurring amount in the gift's currency: greater than 0, at most ${MAX_CUSTOM_AMOUNT.toLocaleString("en-US")}, 2 decimals`,
      }),
  })
  .meta({ minProperties: 1, description: "status, amount or both" })
  .check(
    z.superRefine((body, ctx) => {
      if (body.status === undefined && body.amount === undefined)
        ctx.addIssue({ code: "custom", message: 'needs status ("CANCELLED") or amount', path: [] });
    }),
  );

const LOCAL_HOSTS = ["localhost", "127.0.0.1", "[::1]"];
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * How the document states a return address: https, or http on a local host (as the server takes it), no
 * credentials; a fragment is taken, unlike in HTTPS_URL, since the donor's browser follows it (an anchor, a
 * single-page app's `#/route`).
 */
const RETURN_URL_PATTERN = `^(https://[^/?#@\\s]+|http://(${LOCAL_HOSTS.map(escapeRegExp).join("|")})(:[0-9]+)?)([/?#][^\\s]*)?$`;

/** https, or http on localhost; absolute, no credentials; a fragment is the donor's browser's. */
export const returnUrlSchema = z
  .string()
  .max(2000)
  .meta({
    format: "uri",
    pattern: RETURN_URL_PATTERN,
    description: "Where the page sends the donor afterwards: https (http on localhost)",
  })
  .check(
    z.superRefine((value, ctx) => {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        ctx.addIssue({ code: "custom", message: "must be an absolute https URL" });
        return;
      }
      const local = LOCAL_HOSTS.includes(url.hostname);
      if (url.protocol !== "https:" && !(url.protocol === "http:" && local))
        ctx.addIssue({ code: "custom", message: "must be an https URL (http only on localhost)" });
      else if (hasCredentials(url)) ctx.addIssue({ code: "custom", message: NO_CREDENTIALS });
    }),
  );

export const updateLinkBodySchema = z.strictObject({
  delivery: z
    .literal("link", { error: "must be link" })
    .optional()
    .meta({ description: "How the link reaches the donor: returned to you" }),
  returnUrl: returnUrlSchema.optional(),
  expiresInMinutes: z.number().int().min(30).max(1440).default(60),
  allowedPaymentMethods: z
    .array(z.enum(UPDATE_LINK_METHODS))
    .min(1)
    .max(2)
    .meta({ uniqueItems: true })
    .check(
      z.superRefine((list, ctx) => {
        if (new Set(list).size !== list.length)
          ctx.addIssue({ code: "custom", message: "must not list a method twice" });
      }),
    )
    .default(["CARD", "PAY_BY_BANK"]),
});

export const subscriptionFields = {
  id: ulidId("sub"),
  status: z.enum(SUBSCRIPTION_STATUSES),
  amount: majorUnits("The recurring gift, before any covered fee"),
  currency,
  frequency: z.enum(["DAILY", "WEEKLY", "MONTHLY", "ANNUALLY"]),
  nextBillingDate: time("When the next charge is due: the retry of a failed charge while one is scheduled")
    .nullable()
    .meta({ description: "null once cancelled" }),
  lastBillingDate: time("The last successful charge").nullable(),
  endBillingDate: time("When the gift ends").nullable(),
  coveredFee: z.boolean(),
  formID: uuid("The form of the first gift"),
  contactId: uuid("The donor's contact"),
  email: z.string(),
  fund: z.string(),
  paymentMethod: z.strictObject({
    type: z.enum(["card", "bank"]),
    brand: z.enum(CARD_BRANDS).nullable().meta({ description: "Cards only" }),
    last4: z.string().nullable(),
  }),
  createdAt: time("When the gift began"),
  cancelledAt: time("When it was cancelled").nullable(),
};

/** A subscription as the API returns it (and a webhook sends it): exactly these fields. */
export const subscriptionSchema = z.strictObject(subscriptionFields);

export const updateLinkResponseSchema = z.object({
  id: z.string(),
  url: z.string(),
  expiresAt: z.string(),
  subscription: z.object({
    id: z.string(),
    status: z.enum(SUBSCRIPTION_STATUSES),
    amount: z.number(),
    frequency: z.string(),
    nextBillingDate: z.string().nullable(),
  }),
});

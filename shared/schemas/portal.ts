import { z } from "zod";
import { FREQUENCIES } from "../enums.js";
import { MAX_CUSTOM_AMOUNT, MIN_CUSTOM_AMOUNT } from "../pricing/limits.js";
import { emailAddress, languageTag, money } from "./common.js";

/** The donor portal's request bodies. */

export const RECURRING_FREQUENCIES = FREQUENCIES.filter(
  (f): f is Exclude<(typeof FREQUENCIES)[number], "ONE_TIME"> => f !== "ONE_TIME",
);

export const portalLinkBodySchema = z.strictObject({
  email: emailAddress.meta({ description: "The address the donor gave with their gifts" }),
  language: languageTag.optional().meta({
    description:
      "The language of the e-mail and of the page its link opens (any case); else Accept-Language, else the organization's",
  }),
});

export const portalSessionBodySchema = z.strictObject({
  token: z.string().min(1).max(200).meta({ description: "The `token` of the mailed link" }),
});

export const portalSubscriptionChangeSchema = z
  .strictObject({
    amount: money({ min: MIN_CUSTOM_AMOUNT, max: MAX_CUSTOM_AMOUNT })
      .optional()
      .meta({ description: "New recurring amount in the gift's currency, from the next charge on" }),
    frequency: z.enum(RECURRING_FREQUENCIES).optional().meta({
      description: "New frequency: the next charge keeps its date, later ones follow the new period",
    }),
    skipNext: z.boolean().optional().meta({
      description: "true: the next charge is skipped and the next billing date moves one period on",
    }),
    status: z
      .literal("CANCELLED", { error: "must be CANCELLED (the only status change accepted)" })
      .optional()
      .meta({ description: "Cancels the recurring gift for good" }),
  })
  .meta({ minProperties: 1, description: "Any of amount, frequency, skipNext, status" })
  .check(
    z.superRefine((body, ctx) => {
      if (
        body.amount === undefined &&
        body.frequency === undefined &&
        body.skipNext === undefined &&
        body.status === undefined
      )
        ctx.addIssue({ code: "custom", message: "needs amount, frequency, skipNext or status", path: [] });
    }),
  );

const documentLanguage = z.string().max(35).optional().meta({
  description:
    "The document's language (en, es, fr, de, pt-BR, ar); else Accept-Language, else the organization's",
});

export const portalDocumentQuerySchema = z.object({ lang: documentLanguage });

export const portalStatementQuerySchema = z.object({
  lang: documentLanguage,
  year: z.coerce.number().int().min(2000).max(2100).optional().meta({
    description: "The calendar year in the organization's time zone; default the current one there",
  }),
});

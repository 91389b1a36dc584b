import { z } from "zod";
import { centsToDollars } from "../../shared/money.js";
import { currency, majorUnits } from "../../shared/schemas/wire.js";
import { ApiError } from "../errors.js";
import { isUuid } from "../ids.js";
import { raisedByForm } from "../store/analytics.js";
import { formsOfOthers } from "../store/forms.js";
import type { AppDeps } from "./env.js";
import { loadCallerOrganization } from "./organization.js";
import { defineRoute, type RouteSpec, standardErrors } from "./route.js";

/** What each form raised (the dashboard's forms list: raised against the goal, gifts). */

const MAX_FORMS = 100;
const UUID_TEXT = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";

const query = z.object({
  formIDs: z
    .string()
    .max(MAX_FORMS * 37)
    .meta({
      description: `Up to ${MAX_FORMS} form ids (UUIDs), separated by commas`,
      pattern: `^${UUID_TEXT}(,${UUID_TEXT}){0,${MAX_FORMS - 1}}$`,
    })
    .check(
      z.superRefine((raw, ctx) => {
        const ids = raw.split(",");
        if (ids.length > MAX_FORMS)
          ctx.addIssue({ code: "custom", message: `at most ${MAX_FORMS} form ids` });
        else if (!ids.every((id) => isUuid(id)))
          ctx.addIssue({ code: "custom", message: "must be form ids (UUIDs) separated by commas" });
      }),
    ),
});

const answer = z.object({
  currency: currency.meta({ description: "The organization's currency: the sums are of payments in it" }),
  forms: z
    .array(
      z.object({
        formID: z.uuid(),
        raised: majorUnits(
          "Completed payments in the organization's currency, net of refunds, since the form began",
        ),
        gifts: z.int().min(0).meta({ description: "Payments not refunded in full, in every currency" }),
        otherCurrencies: z
          .array(
            z.object({
              currency,
              raised: majorUnits("Completed payments in this currency, net of refunds"),
              gifts: z.int().min(0),
            }),
          )
          .meta({
            description:
              "Gifts made in other currencies (before the organization changed its currency), by currency; usually empty",
          }),
      }),
    )
    .meta({
      description: "One per id asked for, in the order asked (0 for a form with none, or not the caller's)",
    }),
});

export function analyticsFormRoutes(deps: AppDeps): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/v1/analytics/forms",
      operationId: "listFormTotals",
      // The payments list (donations:read) already shows every gift these figures add up.
      permission: ["analytics:read", "donations:read"],
      tags: ["Analytics"],
      summary: "What each form raised",
      description:
        "For the forms named in `formIDs`: what each raised since it began (completed payments net of refunds, in the organization's currency, as the summary counts them), its number of gifts in every currency, and apart (`otherCurrencies`) what was raised in currencies the organization used before. An id of no form answers 0; another organization's form is a 403. Permission `analytics:read` or `donations:read`: whoever may read the payments may read what they add up to.",
      query,
      responses: { 200: { description: "Per form", schema: answer }, ...standardErrors },
      handler: async (c, { query: q }) => {
        const org = await loadCallerOrganization(deps, c.get("auth").organizationId);
        // Each id answered as it was sent (in its case, repeats included); looked up once, in lower case.
        const asked = q.formIDs.split(",");
        const ids = [...new Set(asked.map((id) => id.toLowerCase()))];
        // Another organization's form is refused, as everywhere; an id of no form answers 0.
        if ((await formsOfOthers(deps.store.db, org.id, ids)).length > 0)
          throw new ApiError(403, "Form belongs to another organization");
        const sums = await raisedByForm(deps.store.db, org.id, org.currency, ids);
        return c.json({
          currency: org.currency,
          forms: asked.map((formID) => {
            const sum = sums.get(formID.toLowerCase());
            return {
              formID,
              raised: centsToDollars(sum?.cents ?? 0),
              gifts: sum?.gifts ?? 0,
              otherCurrencies: [...(sum?.other ?? [])].map(([code, other]) => ({
                currency: code,
                raised: centsToDollars(other.cents),
                gifts: other.gifts,
              })),
            };
          }),
        });
      },
    }),
  ];
}

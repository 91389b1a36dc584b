import type { MiddlewareHandler } from "hono";
import { donationSchema } from "../../shared/schemas/payment.js";
import { ApiError } from "../errors.js";
import type { Db } from "../store/database.js";
import { findPayment } from "../store/payments.js";
import type { PaymentsTable } from "../store/schema.js";
import { presentDonation } from "../wire/donation.js";
import type { AppDeps, AppEnv } from "./env.js";
import { PAYMENT_FILTERS_DOC, PAYMENT_LIST_RULES, paymentFilters, paymentListQuery } from "./listFilters.js";
import { loadCallerOrganization } from "./organization.js";
import { pageSchema } from "./pagination.js";
import { PAYMENT_ID, paymentIdParams, paymentPage } from "./payments.js";
import { defineRoute, errorSchema, type RouteSpec, standardErrors } from "./route.js";

/**
 * The deprecated donations view: the payments under their legacy field names, announced as deprecated
 * (Deprecation, Sunset, Link to the successor) on every response. The Sunset header announces its removal
 * date; a setting turns it off, not the calendar: `LEGACY_DONATIONS_API=off` answers 410 Gone naming
 * /v1/payments, unset (or `on`) serves it, before that date and after.
 */

const DONATIONS_REMOVAL_DATE = "2026-07-01";
const SUNSET_MS = Date.parse(`${DONATIONS_REMOVAL_DATE}T00:00:00Z`);
const DEPRECATION_HEADERS = {
  Deprecation: "true",
  Sunset: new Date(SUNSET_MS).toUTCString(),
  Link: '</v1/payments>; rel="successor-version"',
};

/** Whether /v1/donations answers: unless the server turned it off. */
function donationsServed(setting: boolean | undefined): boolean {
  return setting !== false;
}

/** Runs before the routes (after authentication): the deprecation headers, or 410 when no longer served. */
export function donationsGate(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    for (const [name, value] of Object.entries(DEPRECATION_HEADERS)) c.header(name, value);
    if (!donationsServed(deps.config.legacyDonationsApi))
      throw new ApiError(
        410,
        "The deprecated /v1/donations API is turned off on this server: use /v1/payments",
        undefined,
        DEPRECATION_HEADERS,
      );
    await next();
  };
}

/** The caller's settled payment as a donation (a charge still in flight is not a record yet), or 404 / 403. */
async function loadOwnedDonation(db: Db, organizationId: string, id: string): Promise<PaymentsTable> {
  const row = PAYMENT_ID.test(id) ? await findPayment(db, id) : undefined;
  if (!row || row.status === "PROCESSING") throw new ApiError(404, "Donation not found");
  if (row.organization_id !== organizationId)
    throw new ApiError(403, "Donation belongs to another organization");
  return row;
}

export function donationRoutes(deps: AppDeps): RouteSpec[] {
  const db = deps.store.db;
  const tags = ["Donations (deprecated)"];
  const headers = DEPRECATION_HEADERS;
  const gone = {
    description: "Turned off on this server (LEGACY_DONATIONS_API=off): use /v1/payments",
    schema: errorSchema,
    headers,
  };
  const note = `Deprecated: use /v1/payments. Removal date ${DONATIONS_REMOVAL_DATE} (the Sunset header); served until the server turns it off (LEGACY_DONATIONS_API=off), then 410 Gone naming /v1/payments. Same query parameters; legacy field names (\`donationID\`, \`donorEmail\`, \`donorFirstName\`, \`donorLastName\`, \`fundName\`, \`formName\`, \`donationDate\`) plus \`merchantName\`, \`tipAmount\` (always 0) and \`transactionID\`.`;
  return [
    defineRoute({
      method: "get",
      path: "/v1/donations",
      operationId: "listDonations",
      permission: "donations:read",
      tags,
      summary: "List donations (deprecated)",
      description: `${note} ${PAYMENT_FILTERS_DOC}`,
      deprecated: true,
      query: paymentListQuery,
      rules: PAYMENT_LIST_RULES,
      responses: {
        200: { description: "A page of donations", schema: pageSchema("donations", donationSchema), headers },
        ...standardErrors,
        410: gone,
      },
      handler: async (c, { query }) => {
        const orgId = c.get("auth").organizationId;
        const filters = await paymentFilters(db, orgId, query);
        const org = await loadCallerOrganization(deps, orgId);
        return c.json(
          await paymentPage(db, orgId, "donations", query, (r) => presentDonation(r, org.name), filters),
        );
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/donations/{id}",
      operationId: "getDonation",
      permission: "donations:read",
      tags,
      summary: "Get a donation (deprecated)",
      description: note,
      deprecated: true,
      params: paymentIdParams,
      responses: {
        200: { description: "The donation", schema: donationSchema, headers },
        ...standardErrors,
        404: { description: "No such donation", schema: errorSchema },
        410: gone,
      },
      handler: async (c, { params }) => {
        const orgId = c.get("auth").organizationId;
        const row = await loadOwnedDonation(db, orgId, params.id);
        const org = await loadCallerOrganization(deps, orgId);
        return c.json(presentDonation(row, org.name));
      },
    }),
  ];
}

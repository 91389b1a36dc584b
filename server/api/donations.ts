import type { MiddlewareHandler } from "hono";
import { donationSchema } from "../../shared/schemas/payment.js";
import { ApiError } from "../errors.js";
import type { Db } from "../store/database.js";
import { findPayment } from "../store/payments.js";
import type { PaymentsTable } from "../store/schema.js";
import { presentDonation } from "../wire/donation.js";
import type { AppDeps, AppEnv } from "./env.js";
import { loadCallerOrganization } from "./organization.js";
import { pageSchema, paginationQuery } from "./pagination.js";
import { PAYMENT_ID, paymentIdParams, paymentPage } from "./payments.js";
import { defineRoute, errorSchema, type RouteSpec, standardErrors } from "./route.js";

/**
 * The deprecated donations view: the payments under their legacy field names, announced as deprecated
 * (Deprecation, Sunset, Link to the successor) on every response. It is served until its removal date
 * and answers 410 Gone naming /v1/payments after it; `LEGACY_DONATIONS_API=on` keeps it past that date
 * and `off` turns it off before.
 */

const DONATIONS_REMOVAL_DATE = "2026-07-01";
const SUNSET_MS = Date.parse(`${DONATIONS_REMOVAL_DATE}T00:00:00Z`);
const DEPRECATION_HEADERS = {
  Deprecation: "true",
  Sunset: new Date(SUNSET_MS).toUTCString(),
  Link: '</v1/payments>; rel="successor-version"',
};

/** Whether /v1/donations answers at `now`: the setting when given, else until the removal date. */
function donationsServed(setting: boolean | undefined, now: number): boolean {
  return setting ?? now < SUNSET_MS;
}

/** Runs before the routes (after authentication): the deprecation headers, or 410 when no longer served. */
export function donationsGate(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    for (const [name, value] of Object.entries(DEPRECATION_HEADERS)) c.header(name, value);
    if (!donationsServed(deps.config.legacyDonationsApi, deps.now()))
      throw new ApiError(
        410,
        deps.config.legacyDonationsApi === false
          ? "The deprecated /v1/donations API is turned off on this server: use /v1/payments"
          : `The deprecated /v1/donations API was removed on ${DONATIONS_REMOVAL_DATE}: use /v1/payments (LEGACY_DONATIONS_API=on keeps it)`,
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
    description: `Past the removal date (${DONATIONS_REMOVAL_DATE}) or turned off (LEGACY_DONATIONS_API=off): use /v1/payments`,
    schema: errorSchema,
    headers,
  };
  const note = `Deprecated: use /v1/payments. Removal date ${DONATIONS_REMOVAL_DATE}: from then on 410 Gone naming /v1/payments, unless the server runs with LEGACY_DONATIONS_API=on. Same query parameters; legacy field names (\`donationID\`, \`donorEmail\`, \`donorFirstName\`, \`donorLastName\`, \`fundName\`, \`formName\`, \`donationDate\`) plus \`merchantName\`, \`tipAmount\` (always 0) and \`transactionID\`.`;
  return [
    defineRoute({
      method: "get",
      path: "/v1/donations",
      permission: "donations:read",
      tags,
      summary: "List donations (deprecated)",
      description: note,
      deprecated: true,
      query: paginationQuery(),
      responses: {
        200: { description: "A page of donations", schema: pageSchema("donations", donationSchema), headers },
        ...standardErrors,
        410: gone,
      },
      handler: async (c, { query }) => {
        const orgId = c.get("auth").organizationId;
        const org = await loadCallerOrganization(deps, orgId);
        return c.json(await paymentPage(db, orgId, "donations", query, (r) => presentDonation(r, org.name)));
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/donations/{id}",
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

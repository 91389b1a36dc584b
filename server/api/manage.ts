import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { z } from "zod";
import type { Language } from "../../shared/languages.js";
import { localYear } from "../../shared/localDays.js";
import { paymentSchema } from "../../shared/schemas/payment.js";
import {
  portalDocumentQuerySchema,
  portalLinkBodySchema,
  portalSessionBodySchema,
  portalStatementQuerySchema,
  portalSubscriptionChangeSchema,
  RECURRING_FREQUENCIES,
} from "../../shared/schemas/portal.js";
import { subscriptionSchema, updateLinkResponseSchema } from "../../shared/schemas/subscription.js";
import { wireTime } from "../../shared/time.js";
import { receiptPdf, statementPdf } from "../documents/givingDocuments.js";
import { ApiError } from "../errors.js";
import { chooseLanguage } from "../i18n.js";
import { countAgainstLimit } from "../overLimit.js";
import { portalUrl } from "../payments/portalUrl.js";
import { createUpdateLink } from "../payments/updateLink.js";
import {
  emailKey,
  endDonorSession,
  exchangeLinkToken,
  findDonorSession,
  peekLinkToken,
  requestSignInLink,
  SESSION_HOURS,
} from "../portal/access.js";
import {
  donorPayment,
  donorPayments,
  donorPaymentsOfYear,
  donorStatementYears,
  donorSubscription,
  donorSubscriptions,
} from "../portal/gifts.js";
import { getOrganization, type Organization } from "../store/organizations.js";
import { presentPayment } from "../wire/payment.js";
import { presentSubscription } from "../wire/subscription.js";
import type { AppDeps, AppEnv } from "./env.js";
import { checkOwnOrigin, checkSubmissionOrigin, clientIp, REQUEST_FROM_ELSEWHERE } from "./requestSource.js";
import { defineRoute, errorSchema, pathId, type RouteSpec } from "./route.js";
import { applySubscriptionChange, changeableFrequencies } from "./subscriptions.js";

/**
 * The donor portal's API (`/api/manage/{organizationId}/…`), called by the portal page: a donor signs in
 * with a mailed single-use link, and with the session cookie sees and manages their own gifts only.
 * Changes must come from this instance's own pages (Origin), which with the SameSite=Strict cookie is the
 * CSRF defence.
 */

export const COOKIE = "almoner_donor";
const LINKS_PER_ADDRESS_PER_HOUR = 5;
const LINKS_PER_IP_PER_HOUR = 20;
const SESSIONS_PER_IP_PER_HOUR = 30;
/**
 * Payment-method update links a signed-in donor may open an hour. Each link takes a few refused methods
 * before it stops; without this cap a session could open links without end and test cards through them.
 */
const UPDATE_LINKS_PER_DONOR_PER_HOUR = 5;
/**
 * Changes to recurring gifts a signed-in donor may make an hour (each writes an audit entry and sends the
 * organization webhooks): plenty for a person, a bound on a script.
 */
const CHANGES_PER_DONOR_PER_HOUR = 30;
/**
 * The least time a link request is answered in, whether or not the address has given: mailing a link takes
 * a transaction that an unknown address does not, and the answer's timing must not tell which it was.
 */
export const LINK_ANSWER_FLOOR_MS = 200;

/** An organization's id as ids are made (`org_` and 26 characters); anything else names none. */
const ORG_ID = /^org_[0-9a-z]{26}$/;

const orgParams = z.object({ organizationId: pathId("The organization's id (`org_…`)") });
const subscriptionParams = orgParams.extend({ id: pathId("The recurring gift's id (`sub_…`)") });
const receiptParams = orgParams.extend({ paymentID: pathId("The payment's id (`pay_…`)") });

const e = (description: string) => ({ description, schema: errorSchema });
const invalid = e("Validation failed or invalid JSON body");
const noSession = e("Not signed in, or the session has expired: ask for a new link");
const notOwnOrigin = e("Not sent from this instance's own pages (Origin)");
const noOrg = e("No such organization");
const tooMany = e("Too many requests (see Retry-After)");

const tags = ["Donor portal"];
const LINK_GONE = "This link has been used or has expired: ask for a new one";

export function manageRoutes(deps: AppDeps): RouteSpec[] {
  const store = deps.store;
  const secure = deps.config.publicUrl.startsWith("https:");

  async function organization(id: string): Promise<Organization> {
    const org = ORG_ID.test(id) ? await getOrganization(store.db, id) : undefined;
    if (!org) throw new ApiError(404, "Organization not found");
    return org;
  }

  /** The signed-in donor's address key, or a 401. */
  async function donor(c: Context<AppEnv>, organizationId: string): Promise<string> {
    const token = getCookie(c, COOKIE);
    const session = token ? await findDonorSession(store, organizationId, token, deps.now()) : undefined;
    if (!session) throw new ApiError(401, "Sign in to manage your giving: ask for a link by e-mail");
    return session.emailKey;
  }

  const limit = (key: string, max: number, what: string) =>
    countAgainstLimit(deps, key, max, `Too many requests ${what}; try again later`);

  const cookiePath = (organizationId: string) => `/api/manage/${organizationId}`;

  /**
   * What the two routes taking a mailed link's token share: its body, the Origin rule and the refusals;
   * and, first in their handlers, the organization and the limit on tries per client address.
   */
  const tokenRequest = {
    params: orgParams,
    body: portalSessionBodySchema,
    before: (c: Context<AppEnv>) => checkSubmissionOrigin(c, deps.config, REQUEST_FROM_ELSEWHERE),
  };
  const tokenRefusals = {
    400: invalid,
    401: e("The token is unknown, used or expired"),
    403: notOwnOrigin,
    404: noOrg,
    429: tooMany,
  };
  async function tokenOrganization(
    c: Context<AppEnv>,
    organizationId: string,
    limitKey: string,
  ): Promise<Organization> {
    const org = await organization(organizationId);
    await limit(
      `${limitKey}:${clientIp(c, deps.config.trustProxyHops)}`,
      SESSIONS_PER_IP_PER_HOUR,
      "from this address",
    );
    return org;
  }

  return [
    defineRoute({
      method: "post",
      path: "/api/manage/{organizationId}/link",
      operationId: "portalSendSignInLink",
      auth: false,
      idempotent: false,
      tags,
      summary: "Mail a donor a sign-in link",
      description: `Answers 202 whether or not the address has given to the organization, so that no address can be probed. When it has, a single-use link to \`/manage/{organizationId}?token=…\` valid 30 minutes is mailed to it. At most ${LINKS_PER_ADDRESS_PER_HOUR} per address and ${LINKS_PER_IP_PER_HOUR} per client address an hour (429). Accepted from this instance's own pages or from clients that send no Origin.`,
      params: orgParams,
      body: portalLinkBodySchema,
      before: (c) => checkSubmissionOrigin(c, deps.config, REQUEST_FROM_ELSEWHERE),
      responses: {
        202: { description: "Sent if the address is known", schema: z.object({ message: z.string() }) },
        400: invalid,
        403: notOwnOrigin,
        404: noOrg,
        429: tooMany,
      },
      handler: async (c, { params, body }) => {
        const org = await organization(params.organizationId);
        const ip = clientIp(c, deps.config.trustProxyHops);
        await limit(`portal-link-ip:${ip}`, LINKS_PER_IP_PER_HOUR, "from this address");
        await limit(
          `portal-link-email:${org.id}:${emailKey(body.email)}`,
          LINKS_PER_ADDRESS_PER_HOUR,
          "for this e-mail address",
        );
        const started = performance.now();
        // The mail's language as a document's: the body's, else Accept-Language, else the organization's.
        const language = chooseLanguage(body.language, c.req.header("Accept-Language"), org.language);
        await requestSignInLink(store, org, body.email, deps.config.publicUrl, deps.now(), language);
        const rest = started + LINK_ANSWER_FLOOR_MS - performance.now();
        if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
        return c.json(
          {
            message:
              "If this address has given to us, a sign-in link is on its way to it. It works for 30 minutes.",
          },
          202,
        );
      },
    }),

    defineRoute({
      method: "post",
      path: "/api/manage/{organizationId}/link/preview",
      operationId: "portalPreviewSignInLink",
      auth: false,
      idempotent: false,
      tags,
      summary: "Whose a mailed link's token is, without using it",
      description: `The address (lower-cased, as gifts are found by) a mailed link's token signs in as, and when the link expires; the token stays unused. The portal shows the address and signs in only when the donor confirms it, so a link someone sent (to their own address) cannot sign a visitor in to the sender's session unnoticed. A used, expired or unknown token: 401. At most ${SESSIONS_PER_IP_PER_HOUR} per client address an hour.`,
      ...tokenRequest,
      responses: {
        200: {
          description: "The link's address",
          schema: z.object({
            email: z.string().meta({ description: "The address the link was mailed to, lower-cased" }),
            expiresAt: z.string().meta({ description: "When the link stops working" }),
          }),
        },
        ...tokenRefusals,
      },
      handler: async (c, { params, body }) => {
        const org = await tokenOrganization(c, params.organizationId, "portal-preview-ip");
        const link = await peekLinkToken(store, org.id, body.token, deps.now());
        if (!link) throw new ApiError(401, LINK_GONE);
        return c.json({ email: link.emailKey, expiresAt: wireTime(link.expiresAt) as string }, 200, {
          "Cache-Control": "no-store",
        });
      },
    }),

    defineRoute({
      method: "post",
      path: "/api/manage/{organizationId}/session",
      operationId: "portalSignIn",
      auth: false,
      idempotent: false,
      tags,
      summary: "Exchange a mailed link's token for a session",
      description: `Uses the token up and sets the session cookie (\`${COOKIE}\`: HttpOnly, SameSite=Strict, Secure behind https, ${SESSION_HOURS} hours). A used, expired or unknown token: 401.`,
      ...tokenRequest,
      responses: {
        200: { description: "Signed in", schema: z.object({ expiresAt: z.string() }) },
        ...tokenRefusals,
      },
      handler: async (c, { params, body }) => {
        const org = await tokenOrganization(c, params.organizationId, "portal-session-ip");
        const session = await exchangeLinkToken(store, org.id, body.token, deps.now());
        if (!session) throw new ApiError(401, LINK_GONE);
        setCookie(c, COOKIE, session.token, {
          httpOnly: true,
          secure,
          sameSite: "Strict",
          path: cookiePath(org.id),
          maxAge: SESSION_HOURS * 3600,
        });
        return c.json({ expiresAt: wireTime(session.expiresAt) as string }, 200, {
          "Cache-Control": "no-store",
        });
      },
    }),

    defineRoute({
      method: "post",
      path: "/api/manage/{organizationId}/logout",
      operationId: "portalSignOut",
      auth: false,
      idempotent: false,
      tags,
      summary: "Sign out",
      params: orgParams,
      before: (c) => checkOwnOrigin(c, deps.config),
      responses: { 204: { description: "Signed out" }, 403: notOwnOrigin, 404: e("No such organization") },
      handler: async (c, { params }) => {
        // The cookie's path is made of the id: one that is not an organization's names no cookie.
        if (!ORG_ID.test(params.organizationId)) throw new ApiError(404, "Organization not found");
        const token = getCookie(c, COOKIE);
        if (token) await endDonorSession(store, token);
        deleteCookie(c, COOKIE, { path: cookiePath(params.organizationId), secure });
        return c.body(null, 204);
      },
    }),

    defineRoute({
      method: "get",
      path: "/api/manage/{organizationId}/gifts",
      operationId: "portalListGifts",
      auth: false,
      session: "donor",
      tags,
      summary: "The signed-in donor's gifts and recurring gifts",
      description:
        "The donor's own only (given with their e-mail address), newest first, in the `/v1` shapes; the years a statement lists gifts in; and the organization's time zone and current year there, the calendar the portal shows dates in.",
      params: orgParams,
      responses: {
        200: {
          description: "The donor's gifts",
          schema: z.object({
            payments: z.array(paymentSchema),
            subscriptions: z.array(
              subscriptionSchema.extend({
                frequencies: z.array(z.enum(RECURRING_FREQUENCIES)).meta({
                  description:
                    "The frequencies this recurring gift may be changed to here (its own included): those its form's checkout takes with its amount, or every recurring frequency when the form is gone; none once cancelled",
                }),
              }),
            ),
            statementYears: z.array(z.number().int()).meta({
              description:
                "The calendar years, in the organization's time zone, whose year-end statement lists at least one of the donor's gifts (completed or partly refunded payments; a declined attempt or a fully refunded payment makes none), newest first",
            }),
            timeZone: z.string().meta({
              description:
                "The organization's IANA time zone (`America/New_York`; default `UTC`): a gift's date is the day it was made there",
              example: "America/New_York",
            }),
            currentYear: z.number().int().meta({
              description:
                "The current calendar year in the organization's time zone: the statement downloaded without `?year=`",
            }),
          }),
        },
        401: noSession,
        404: noOrg,
      },
      handler: async (c, { params }) => {
        const org = await organization(params.organizationId);
        const key = await donor(c, org.id);
        const [payments, subscriptions, statementYears] = await Promise.all([
          donorPayments(store.db, org.id, key),
          donorSubscriptions(store.db, org.id, key),
          donorStatementYears(store.db, org.id, key, org.timeZone),
        ]);
        return c.json(
          {
            payments: payments.map(presentPayment),
            subscriptions: await Promise.all(
              subscriptions.map(async (s) => ({
                ...presentSubscription(s),
                frequencies: await changeableFrequencies(deps, s),
              })),
            ),
            statementYears,
            timeZone: org.timeZone,
            currentYear: localYear(deps.now(), org.timeZone),
          },
          200,
          { "Cache-Control": "no-store" },
        );
      },
    }),

    defineRoute({
      method: "put",
      path: "/api/manage/{organizationId}/subscriptions/{id}",
      operationId: "portalUpdateSubscription",
      auth: false,
      session: "donor",
      tags,
      summary: "Change, skip or cancel one of the donor's recurring gifts",
      description:
        "Any of `amount` (dollars), `frequency`, `skipNext: true` (the next billing date moves one period on) and `status: \"CANCELLED\"`. A new `amount` or `frequency` must leave a gift the checkout of the form it was given on would take: a frequency the form offers, one of its amounts for that frequency (or giving levels) when it takes no custom amount, else within the custom range, in the currency's decimals; else a 400 naming each problem as the checkout does. When that form is gone or deleted, any amount from 1 to 1,000,000 and any frequency. Fires the same `subscription.*` webhooks as the API and is written to the audit log with the donor's address. Another donor's recurring gift: 404; a cancelled one: 409; a schedule change while a charge is being made: 409; more than " +
        `${CHANGES_PER_DONOR_PER_HOUR} changes by the donor in an hour: 429.`,
      params: subscriptionParams,
      body: portalSubscriptionChangeSchema,
      rules: [
        {
          fields: ["amount"],
          rule: "a whole amount when the recurring gift's currency has no decimals (JPY)",
        },
        {
          fields: ["amount", "frequency"],
          rule: "the gift they leave is one its form's checkout would take: a frequency the form offers, one of its amounts for it when it takes no custom amount (else within the custom range); when the form is deleted, any",
        },
      ],
      responses: {
        200: { description: "The recurring gift", schema: subscriptionSchema },
        400: e("Validation failed or invalid JSON body, or a gift its form's checkout would refuse"),
        401: noSession,
        403: notOwnOrigin,
        404: e("No such recurring gift of this donor"),
        409: e("Cancelled, or being charged right now"),
      },
      handler: async (c, { params, body }) => {
        // After the body's validation (a bad body is a 400 wherever it comes from), before anything else.
        checkOwnOrigin(c, deps.config);
        const org = await organization(params.organizationId);
        const key = await donor(c, org.id);
        await limit(`portal-change:${org.id}:${key}`, CHANGES_PER_DONOR_PER_HOUR, "to your recurring gifts");
        const sub = await donorSubscription(store.db, org.id, key, params.id);
        if (!sub) throw new ApiError(404, "Recurring gift not found");
        const row = await applySubscriptionChange(
          deps,
          sub,
          {
            amountCents: body.amount,
            frequency: body.frequency,
            skipNext: body.skipNext === true,
            cancel: body.status === "CANCELLED",
          },
          { type: "donor", email: key },
          { formRules: true },
        );
        return c.json(presentSubscription(row));
      },
    }),

    defineRoute({
      method: "post",
      path: "/api/manage/{organizationId}/subscriptions/{id}/payment-method-update-link",
      operationId: "portalCreatePaymentMethodUpdateLink",
      auth: false,
      session: "donor",
      idempotent: false,
      tags,
      summary: "Open the page where the donor replaces a recurring gift's payment method",
      description: `A single-use link to the hosted update page, valid 30 minutes, for the donor's own ACTIVE recurring gift. At most ${UPDATE_LINKS_PER_DONOR_PER_HOUR} per donor an hour (429).`,
      params: subscriptionParams,
      before: (c) => checkOwnOrigin(c, deps.config),
      responses: {
        201: {
          description: "The link",
          schema: updateLinkResponseSchema.pick({ url: true, expiresAt: true }),
        },
        401: noSession,
        403: notOwnOrigin,
        404: e("No such recurring gift of this donor"),
        409: e("The recurring gift is cancelled"),
        429: tooMany,
      },
      handler: async (c, { params }) => {
        const org = await organization(params.organizationId);
        const key = await donor(c, org.id);
        await limit(
          `portal-update-link:${org.id}:${key}`,
          UPDATE_LINKS_PER_DONOR_PER_HOUR,
          "for payment-method changes",
        );
        const sub = await donorSubscription(store.db, org.id, key, params.id);
        if (!sub) throw new ApiError(404, "Recurring gift not found");
        if (sub.status !== "ACTIVE") throw new ApiError(409, "Subscription is cancelled");
        const nowMs = deps.now();
        const link = await createUpdateLink(
          store.db,
          {
            organizationId: org.id,
            subscriptionId: sub.id,
            allowedMethods: ["CARD", "PAY_BY_BANK"],
            // The update page offers the way back to the portal afterwards.
            returnUrl: portalUrl(deps.config.publicUrl, org.id),
            expiresAtMs: nowMs + 30 * 60_000,
          },
          deps.config.publicUrl,
          nowMs,
        );
        return c.json({ url: link.url, expiresAt: wireTime(link.expiresAt) as string }, 201);
      },
    }),

    defineRoute({
      method: "get",
      path: "/api/manage/{organizationId}/receipts/{paymentID}",
      operationId: "portalDownloadReceipt",
      auth: false,
      session: "donor",
      tags,
      summary: "Download the receipt of one of the donor's payments (PDF)",
      params: receiptParams,
      query: portalDocumentQuerySchema,
      responses: {
        200: { description: "The receipt", file: "application/pdf" },
        400: invalid,
        401: noSession,
        404: e("No such payment of this donor"),
      },
      handler: async (c, { params }) => {
        const org = await organization(params.organizationId);
        const key = await donor(c, org.id);
        const payment = await donorPayment(store.db, org.id, key, params.paymentID);
        // A declined attempt was never a gift: it has no receipt.
        if (!payment || payment.status === "FAILED") throw new ApiError(404, "Payment not found");
        const language = documentLanguage(c, org.language);
        return pdf(c, await receiptPdf(org, payment, deps.now(), language), `receipt-${payment.id}.pdf`);
      },
    }),

    defineRoute({
      method: "get",
      path: "/api/manage/{organizationId}/statement",
      operationId: "portalDownloadStatement",
      auth: false,
      session: "donor",
      tags,
      summary: "Download the donor's year-end giving statement (PDF)",
      params: orgParams,
      query: portalStatementQuerySchema,
      responses: {
        200: { description: "The statement", file: "application/pdf" },
        400: invalid,
        401: noSession,
        404: noOrg,
      },
      handler: async (c, { params, query }) => {
        const org = await organization(params.organizationId);
        const key = await donor(c, org.id);
        const nowMs = deps.now();
        // The organization's calendar: its current year, and the gifts made in that year where it is.
        const year = query.year ?? localYear(nowMs, org.timeZone);
        const payments = await donorPaymentsOfYear(store.db, org.id, key, year, org.timeZone);
        return pdf(
          c,
          await statementPdf(org, year, payments, { email: key }, nowMs, documentLanguage(c, org.language)),
          `statement-${year}.pdf`,
        );
      },
    }),
  ];
}

/** A document's language: the page's (`?lang=`), else Accept-Language, else the organization's. */
function documentLanguage(c: Context<AppEnv>, organizationLanguage: Language): Language {
  return chooseLanguage(c.req.query("lang"), c.req.header("Accept-Language"), organizationLanguage);
}

function pdf(c: Context<AppEnv>, bytes: Buffer, name: string): Response {
  return c.body(new Uint8Array(bytes), 200, {
    "Content-Type": "application/pdf",
    "Content-Disposition": `attachment; filename="${name}"`,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
  });
}

import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { z } from "zod";
import { DEFAULT_CURRENCY } from "../../shared/currency.js";
import {
  staffLinkBodySchema,
  staffLinkSchema,
  staffLoginBodySchema,
  staffMeSchema,
  staffSetupBodySchema,
  staffSwitchBodySchema,
} from "../../shared/schemas/staff.js";
import { ApiError } from "../errors.js";
import {
  completeSetup,
  describePasswordLink,
  endStaffSession,
  findStaffSession,
  SESSION_MAX_DAYS,
  StaffError,
  type StaffSession,
  signIn,
} from "../staff/accounts.js";
import { joinedOrganizations } from "../staff/memberships.js";
import { switchOrganization } from "../staff/organizationSwitch.js";
import { getOrganization } from "../store/organizations.js";
import type { AppDeps, AppEnv } from "./env.js";
import { checkOwnOrigin, checkSubmissionOrigin, clientIp, REQUEST_FROM_ELSEWHERE } from "./requestSource.js";
import { defineRoute, errorSchema, type RouteSpec } from "./route.js";
import { staffCookieName, staffSessionOf } from "./staffSession.js";

/**
 * Staff sign-in: a set-up link sets the first password, then e-mail and password open a session whose
 * cookie the dashboard's calls to `/v1` carry instead of an API key. The cookie is HttpOnly and
 * SameSite=Lax; behind https it is `Secure` with the `__Host-` prefix. Signing in is accepted from this
 * instance's own pages or from no browser (as checkouts are); a change made with the session (sign-out)
 * only from its own pages. An API key never reaches these endpoints.
 */

const e = (description: string) => ({ description, schema: errorSchema });
const tags = ["Staff sign-in"];

/** A staff error as the API's answer (staffError.ts lists the kinds). */
export function refusal(error: unknown): never {
  if (!(error instanceof StaffError)) throw error;
  if (error.kind === "throttled") throw ApiError.tooMany(error.message, error.retryAfterSeconds);
  if (error.kind === "member" || error.kind === "conflict") throw new ApiError(409, error.message);
  if (error.kind === "signInRequired")
    throw new ApiError(409, error.message, undefined, undefined, { signInRequired: true });
  if (error.kind === "password") throw ApiError.validation([`password: ${error.message}`]);
  if (error.kind === "twoFactor")
    throw new ApiError(401, error.message, undefined, undefined, { twoFactorRequired: true });
  if (error.kind === "code" || error.kind === "notMember") throw new ApiError(403, error.message);
  if (error.kind === "notFound") throw new ApiError(404, error.message);
  if (error.kind === "unavailable") throw new ApiError(503, error.message);
  throw new ApiError(401, error.message);
}

/** The error body of a sign-in refusal: `twoFactorRequired` when a TOTP or recovery code is wanted. */
export const signInErrorSchema = errorSchema.extend({
  twoFactorRequired: z.boolean().optional().meta({
    description:
      "true: the password was right (or the link good) but a code is wanted, or the code given was wrong or used; send it again with `code`",
  }),
});

/** The error body of a set-up link refused because its person already has a password. */
const setupErrorSchema = errorSchema.extend({
  signInRequired: z.boolean().optional().meta({
    description:
      "true: the person already has a password; the link accepts the invitation through `POST /api/staff/login` with `invitation`",
  }),
});

/** The body of `GET /api/staff/me` (and of a sign-in) for a session. */
export async function meAnswer(deps: AppDeps, c: Context<AppEnv>, session: StaffSession | undefined) {
  if (!session) throw new ApiError(401, "Not signed in, or the session has ended: sign in again");
  const [org, organizations] = await Promise.all([
    getOrganization(deps.store.db, session.organizationId),
    joinedOrganizations(deps.store.db, session.userId),
  ]);
  const body: z.infer<typeof staffMeSchema> = {
    userId: session.userId,
    email: session.email,
    organizationId: session.organizationId,
    organizationName: org?.name ?? "",
    timeZone: org?.timeZone ?? "UTC",
    currency: org?.currency ?? DEFAULT_CURRENCY,
    role: session.role,
    permissions: [...session.permissions],
    twoFactorEnabled: session.twoFactorEnabled,
    organizations,
    twoFactorEnrolmentRequired: session.twoFactorEnrolmentRequired,
  };
  return c.json(body, 200, { "Cache-Control": "no-store" });
}

/** Staff endpoints take no API key: a request that carries one is refused before anything else. */
export function noKey(c: Context): void {
  if (c.req.header("Authorization"))
    throw new ApiError(403, "Staff endpoints take a signed-in session, not an API key");
}

export function staffRoutes(deps: AppDeps): RouteSpec[] {
  const secure = deps.config.publicUrl.startsWith("https:");
  const cookie = staffCookieName(deps.config.publicUrl);
  const startSession = (c: Context<AppEnv>, token: string) =>
    setCookie(c, cookie, token, {
      httpOnly: true,
      secure,
      sameSite: "Lax",
      path: "/",
      maxAge: SESSION_MAX_DAYS * 24 * 3600,
    });
  // Signing in is not yet made with a session: like a checkout, from this instance's pages or no browser.
  const signingIn = (c: Context<AppEnv>) => {
    noKey(c);
    checkSubmissionOrigin(c, deps.config, REQUEST_FROM_ELSEWHERE);
  };
  // A change made with the session: from this instance's own pages only.
  const withSession = (c: Context<AppEnv>) => {
    noKey(c);
    checkOwnOrigin(c, deps.config);
  };

  return [
    defineRoute({
      method: "post",
      path: "/api/staff/setup",
      operationId: "staffSetUpPassword",
      auth: false,
      idempotent: false,
      tags,
      summary: "Set a password with a set-up link's token, and sign in",
      description:
        "The token of a single-use set-up link (24 hours; `npm run cli -- user create`, or an invitation). Sets the password (at least 12 characters) and answers with the session cookie. A link sets a password only while the person has none: for a person who already has one (invited to another organization, or who chose one with a reset link) it is a 409 with `signInRequired: true`, nothing changes, and the link stays live for `POST /api/staff/login` with `invitation`.",
      body: staffSetupBodySchema,
      before: signingIn,
      responses: {
        200: { description: "Signed in", schema: staffMeSchema },
        400: e("Validation failed (the password is too short, too long, or one of the most common)"),
        401: e("The link has been used or has expired"),
        403: e("Not sent from this instance's own pages, or sent with an API key"),
        409: {
          description:
            "The person already has a password: sign in with it and `invitation` (`signInRequired`)",
          schema: setupErrorSchema,
        },
      },
      handler: async (c, { body }) => {
        const { sessionToken } = await completeSetup(deps.store, body.token, body.password, deps.now(), {
          userAgent: c.req.header("User-Agent"),
          clientIp: clientIp(c, deps.config.trustProxyHops),
        }).catch(refusal);
        startSession(c, sessionToken);
        return me(c, await findStaffSession(deps.store, sessionToken, deps.now()));
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/staff/link",
      operationId: "staffDescribeLink",
      auth: false,
      idempotent: false,
      tags,
      summary: "Whose a set-up or password-reset link is",
      description:
        "For the link's page to say before anything is typed: the person's address, the organization the link opens and, for a set-up link of a person who already has a password, that they sign in instead. Nothing is used up. A link used, expired or unknown is a 401, as using it would be.",
      body: staffLinkBodySchema,
      before: signingIn,
      responses: {
        200: { description: "The link is live", schema: staffLinkSchema },
        401: e("The link has been used or has expired"),
        403: e("Not sent from this instance's own pages, or sent with an API key"),
      },
      handler: async (c, { body }) => {
        const link = await describePasswordLink(deps.store, body.token, body.kind, deps.now()).catch(refusal);
        return c.json(link, 200, { "Cache-Control": "no-store" });
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/staff/login",
      operationId: "staffSignIn",
      auth: false,
      idempotent: false,
      tags,
      summary: "Sign in with e-mail and password",
      description:
        "The same 401 for an unknown address and a wrong password. With two-factor sign-in on, a right password without `code` is a 401 with `twoFactorRequired: true` (not counted as a failure); a wrong or already used code is a failed sign-in. After 10 failed sign-ins in 15 minutes for one address, or from one client address, 429 with Retry-After. When the organization requires two-factor sign-in of Owners and Finance and the person has not enrolled, the session reaches only the enrolment endpoints, `/api/staff/me` and sign-out (`twoFactorEnrolmentRequired: true`). With `invitation` (a set-up link's token, for a person who already has a password), every check above is made as for any sign-in; then the link is used up and the session opens in the link's organization (401 when the link is used, expired or another person's). A person on the staff of several organizations signs in to the one they joined first, or to `organizationId` (403 when they have not joined it, said only once the password and code are right).",
      body: staffLoginBodySchema,
      before: signingIn,
      responses: {
        200: { description: "Signed in: the session cookie is set", schema: staffMeSchema },
        400: e("Validation failed"),
        401: {
          description:
            "Wrong e-mail address or password; or, with `twoFactorRequired: true`, a TOTP or recovery code is wanted (missing, wrong or already used); or the `invitation` link has been used or has expired",
          schema: signInErrorSchema,
        },
        403: e(
          "Not sent from this instance's own pages, or sent with an API key; or `organizationId` is not an organization the person has joined",
        ),
        429: e("Too many failed sign-ins (see Retry-After)"),
      },
      handler: async (c, { body }) => {
        const { sessionToken } = await signIn(deps.store, {
          email: body.email,
          password: body.password,
          code: body.code,
          invitation: body.invitation,
          organizationId: body.organizationId,
          clientIp: clientIp(c, deps.config.trustProxyHops),
          userAgent: c.req.header("User-Agent"),
          nowMs: deps.now(),
          secrets: deps.secrets,
        }).catch(refusal);
        startSession(c, sessionToken);
        return me(c, await findStaffSession(deps.store, sessionToken, deps.now()));
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/staff/logout",
      operationId: "staffSignOut",
      auth: false,
      idempotent: false,
      tags,
      summary: "Sign out: the session ends",
      before: withSession,
      responses: {
        204: { description: "Signed out" },
        403: e("Not sent from this instance's own pages, or sent with an API key"),
      },
      handler: async (c) => {
        const token = getCookie(c, cookie);
        if (token) await endStaffSession(deps.store, token, deps.now());
        deleteCookie(c, cookie, { path: "/", secure });
        return c.body(null, 204);
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/staff/organization",
      operationId: "staffSwitchOrganization",
      auth: false,
      idempotent: false,
      tags,
      summary: "Move the session to another organization the person has joined",
      description:
        'For a person on the staff of several organizations (`organizations` of `GET /api/staff/me`): the session ends and a new one opens in `organizationId`, with the role held there, a new cookie and the same absolute end (7 days from sign-in); the organization\'s audit log records a sign-in `via: "switch"`. The organization already signed in to changes nothing.',
      body: staffSwitchBodySchema,
      before: withSession,
      responses: {
        200: {
          description: "Signed in to the organization: the new session cookie is set",
          schema: staffMeSchema,
        },
        400: e("Validation failed"),
        401: e("Not signed in, or the session has ended"),
        403: e(
          "Not sent from this instance's own pages, sent with an API key, or not an organization the person has joined",
        ),
      },
      handler: async (c, { body }) => {
        const { sessionToken } = await switchOrganization(deps.store, {
          token: getCookie(c, cookie) ?? "",
          organizationId: body.organizationId,
          nowMs: deps.now(),
          origin: {
            userAgent: c.req.header("User-Agent"),
            clientIp: clientIp(c, deps.config.trustProxyHops),
          },
        }).catch(refusal);
        startSession(c, sessionToken);
        return me(c, await findStaffSession(deps.store, sessionToken, deps.now()));
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/staff/me",
      operationId: "staffGetMe",
      auth: false,
      session: "staff",
      tags,
      summary: "The signed-in person: organization, role and what it may do",
      before: (c) => noKey(c),
      responses: {
        200: { description: "Signed in", schema: staffMeSchema },
        401: e("Not signed in, or the session has ended"),
        403: e("Sent with an API key"),
      },
      handler: async (c) => me(c, await staffSessionOf(c, deps)),
    }),
  ];

  function me(c: Context<AppEnv>, session: StaffSession | undefined) {
    return meAnswer(deps, c, session);
  }
}

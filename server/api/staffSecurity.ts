import type { Context } from "hono";
import { z } from "zod";
import { emailKey } from "../../shared/email.js";
import {
  staffMeSchema,
  staffPasswordChangeBodySchema,
  staffPasswordResetBodySchema,
  staffPasswordResetCompleteBodySchema,
  staffSessionListSchema,
  twoFactorConfirmBodySchema,
  twoFactorConfirmedSchema,
  twoFactorDisableBodySchema,
  twoFactorEnrolmentSchema,
  twoFactorRecoveryCodesBodySchema,
  twoFactorStatusSchema,
} from "../../shared/schemas/staff.js";
import { ApiError } from "../errors.js";
import { countAgainstLimit } from "../overLimit.js";
import { countAttempt, failureKeys, findStaffSession, type StaffSession } from "../staff/accounts.js";
import { completePasswordReset, RESET_LINK_MINUTES, requestPasswordReset } from "../staff/passwordReset.js";
import { changePassword, listSessions, revokeSession } from "../staff/sessions.js";
import { recordFailedSignIn } from "../staff/signInAudit.js";
import { StaffError } from "../staff/staffError.js";
import {
  confirmEnrolment,
  disableTwoFactor,
  organizationRequiresTwoFactor,
  organizationRequiringTwoFactorOf,
  renewRecoveryCodes,
  startEnrolment,
  TWO_FACTOR_ROLES,
  twoFactorState,
} from "../staff/twoFactor.js";
import type { AppDeps, AppEnv } from "./env.js";
import { checkOwnOrigin, checkSubmissionOrigin, clientIp, REQUEST_FROM_ELSEWHERE } from "./requestSource.js";
import { defineRoute, errorSchema, pathId, type RouteSpec } from "./route.js";
import { meAnswer, noKey, refusal, signInErrorSchema } from "./staff.js";
import { setStaffCookie, staffTokenOf } from "./staffSession.js";

/**
 * The signed-in person's account security, under `/api/staff/`: two-factor sign-in (TOTP) with recovery
 * codes, password change, password reset by a mailed link, and their own sessions. As the other staff
 * endpoints: no API key; a change made with a session only from this instance's own pages (Origin);
 * asking for and using a reset link (no session yet) from those pages or from no browser. A session that
 * must enrol in two-factor sign-in first (the organization's `requireTwoFactor`) reaches only the
 * enrolment endpoints here.
 */

const e = (description: string) => ({ description, schema: errorSchema });
const tags = ["Staff account security"];
const RESETS_PER_ADDRESS_PER_HOUR = 5;
const RESETS_PER_IP_PER_HOUR = 20;
/** The least time a reset request is answered in, so that its timing does not tell a known address. */
export const RESET_ANSWER_FLOOR_MS = 200;

const notSignedIn = e("Not signed in, or the session has ended");
const refusedOrigin = e(
  "Sent with an API key, not from this instance's own pages, or (`twoFactorEnrolmentRequired`) before enrolling in two-factor sign-in",
);
const sessionParams = z.object({ id: pathId("The session's id (`ses_…`)") });

export function staffSecurityRoutes(deps: AppDeps): RouteSpec[] {
  const store = deps.store;
  const ip = (c: Context<AppEnv>) => clientIp(c, deps.config.trustProxyHops);
  const reading = (c: Context<AppEnv>) => noKey(c);
  const withSession = (c: Context<AppEnv>) => {
    noKey(c);
    checkOwnOrigin(c, deps.config);
  };
  const signingIn = (c: Context<AppEnv>) => {
    noKey(c);
    checkSubmissionOrigin(c, deps.config, REQUEST_FROM_ELSEWHERE);
  };

  /** The request's session, or 401; one that must enrol first reaches only what `enrolling` allows. */
  async function signedIn(
    c: Context<AppEnv>,
    enrolling = false,
  ): Promise<{ session: StaffSession; token: string }> {
    const token = staffTokenOf(c, deps);
    const session = token ? await findStaffSession(store, token, deps.now()) : undefined;
    if (!session || !token) throw new ApiError(401, "Not signed in, or the session has ended: sign in again");
    if (session.twoFactorEnrolmentRequired && !enrolling)
      throw new ApiError(
        403,
        "Your organization requires two-factor sign-in: set it up first (POST /api/staff/two-factor/enrolment)",
      );
    return { session, token };
  }

  /**
   * A wrong code or password proving who is asking (to turn two-factor off, to renew recovery codes):
   * counted as a failed sign-in is, and written to the audit log as one.
   */
  async function failedProof(
    c: Context<AppEnv>,
    session: StaffSession,
    attempt: Awaited<ReturnType<typeof countAttempt>>,
  ): Promise<void> {
    await attempt.failed();
    await recordFailedSignIn(
      store,
      { userId: session.userId, email: session.email, clientIp: ip(c) },
      "code",
      deps.now(),
    );
  }

  const limit = (key: string, max: number, what: string) =>
    countAgainstLimit(deps, key, max, `Too many requests ${what}; try again later`);

  return [
    defineRoute({
      method: "get",
      path: "/api/staff/two-factor",
      operationId: "staffGetTwoFactor",
      auth: false,
      session: "staff",
      tags,
      summary: "Whether two-factor sign-in is on for the signed-in person",
      before: reading,
      responses: {
        200: { description: "Two-factor sign-in", schema: twoFactorStatusSchema },
        401: notSignedIn,
        403: e("Sent with an API key"),
      },
      handler: async (c) => {
        const { session } = await signedIn(c, true);
        const state = await twoFactorState(store, session.userId);
        const required =
          TWO_FACTOR_ROLES.includes(session.role) &&
          (await organizationRequiresTwoFactor(store, session.organizationId));
        const body: z.infer<typeof twoFactorStatusSchema> = { ...state, required };
        return c.json(body, 200, { "Cache-Control": "no-store" });
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/staff/two-factor/enrolment",
      operationId: "staffStartTwoFactorEnrolment",
      auth: false,
      session: "staff",
      idempotent: false,
      tags,
      summary: "Start enrolling in two-factor sign-in: a new TOTP secret",
      description:
        "Answers a new secret, its `otpauth://` URI and that URI as a QR code (an SVG image), for an authenticator app to take typed in, opened or scanned. Nothing changes until `POST /api/staff/two-factor/confirm` with a code from it; starting again replaces a secret not yet confirmed. The secret is kept sealed with the instance key (SECRETS_KEY).",
      before: withSession,
      responses: {
        200: { description: "The secret to add to an authenticator app", schema: twoFactorEnrolmentSchema },
        401: notSignedIn,
        403: e("Sent with an API key, or not from this instance's own pages"),
        409: e("Two-factor sign-in is already on"),
        503: e("The instance cannot seal secrets (in production, SECRETS_KEY is not set)"),
      },
      handler: async (c) => {
        const { session } = await signedIn(c, true);
        const started = await startEnrolment(store, deps.secrets, session).catch(refusal);
        return c.json(started, 200, { "Cache-Control": "no-store" });
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/staff/two-factor/confirm",
      operationId: "staffConfirmTwoFactor",
      auth: false,
      session: "staff",
      idempotent: false,
      tags,
      summary: "Turn two-factor sign-in on with a code from the new secret",
      description:
        "Answers ten one-time recovery codes, this once (only their hashes are kept). From now on signing in takes a code; every other session of the person's ends (this one goes on).",
      body: twoFactorConfirmBodySchema,
      before: withSession,
      responses: {
        200: { description: "On: the recovery codes", schema: twoFactorConfirmedSchema },
        400: e("Validation failed"),
        401: notSignedIn,
        403: e("Sent with an API key, not from this instance's own pages, or the code does not match"),
        409: e("Enrolment was not started, or two-factor sign-in is already on"),
        503: e("The instance cannot open sealed secrets"),
      },
      handler: async (c, { body }) => {
        const { session, token } = await signedIn(c, true);
        const confirmed = await confirmEnrolment(
          store,
          deps.secrets,
          { userId: session.userId, currentToken: token },
          body.code,
          deps.now(),
        ).catch(refusal);
        return c.json(confirmed, 200, { "Cache-Control": "no-store" });
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/staff/two-factor/disable",
      operationId: "staffDisableTwoFactor",
      auth: false,
      session: "staff",
      idempotent: false,
      tags,
      summary: "Turn two-factor sign-in off, with the password or a code",
      description:
        "A wrong password or code counts as a failed sign-in (10 in 15 minutes, then 429). Refused while any organization the person belongs to requires two-factor sign-in of their role there.",
      body: twoFactorDisableBodySchema,
      before: withSession,
      responses: {
        204: { description: "Off: the secret and the recovery codes are gone" },
        400: e("Validation failed"),
        401: notSignedIn,
        403: e("The password or code is wrong, sent with an API key, or not from this instance's own pages"),
        409: e("Two-factor sign-in is not on, or an organization of the person's requires it"),
        429: e("Too many failed attempts (see Retry-After)"),
      },
      handler: async (c, { body }) => {
        const { session } = await signedIn(c);
        const requiring = await organizationRequiringTwoFactorOf(store, session.userId);
        if (requiring !== null)
          throw new ApiError(
            409,
            `${requiring} requires two-factor sign-in of Owners and Finance, and you are one there`,
          );
        const attempt = await countAttempt(store, failureKeys(session.email, ip(c)), deps.now()).catch(
          refusal,
        );
        try {
          await disableTwoFactor(store, deps.secrets, session.userId, body, deps.now());
        } catch (err) {
          if (err instanceof StaffError && err.kind === "code") await failedProof(c, session, attempt);
          refusal(err);
        } finally {
          await attempt.release();
        }
        return c.body(null, 204);
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/staff/two-factor/recovery-codes",
      operationId: "staffRenewRecoveryCodes",
      auth: false,
      session: "staff",
      idempotent: false,
      tags,
      summary: "Ten new recovery codes in place of the old ones",
      description:
        "With the password or a code (a wrong one is a failed sign-in). The old codes, used or not, stop working; the new ones are shown this once.",
      body: twoFactorRecoveryCodesBodySchema,
      before: withSession,
      responses: {
        200: { description: "The new recovery codes", schema: twoFactorConfirmedSchema },
        400: e("Validation failed"),
        401: notSignedIn,
        403: e("The password or code is wrong, sent with an API key, or not from this instance's own pages"),
        409: e("Two-factor sign-in is not on"),
        429: e("Too many failed attempts (see Retry-After)"),
      },
      handler: async (c, { body }) => {
        const { session } = await signedIn(c);
        const attempt = await countAttempt(store, failureKeys(session.email, ip(c)), deps.now()).catch(
          refusal,
        );
        try {
          const renewed = await renewRecoveryCodes(store, deps.secrets, session.userId, body, deps.now());
          return c.json(renewed, 200, { "Cache-Control": "no-store" });
        } catch (err) {
          if (err instanceof StaffError && err.kind === "code") await failedProof(c, session, attempt);
          refusal(err);
        } finally {
          await attempt.release();
        }
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/staff/password",
      operationId: "staffChangePassword",
      auth: false,
      session: "staff",
      idempotent: false,
      tags,
      summary: "Change the signed-in person's password",
      description:
        "The current password is checked (a wrong one counts as a failed sign-in); the new one has at least 12 characters and is not one of the most common passwords. Every other session of the person's ends; this one goes on.",
      body: staffPasswordChangeBodySchema,
      before: withSession,
      responses: {
        204: { description: "Changed; the other sessions have ended" },
        400: e("Validation failed (the new password is too short, too long, or one of the most common)"),
        401: notSignedIn,
        403: e(
          "The current password is wrong, or sent with an API key, or not from this instance's own pages",
        ),
        429: e("Too many failed attempts (see Retry-After)"),
      },
      handler: async (c, { body }) => {
        const { session, token } = await signedIn(c);
        await changePassword(store, {
          userId: session.userId,
          email: session.email,
          currentToken: token,
          currentPassword: body.currentPassword,
          newPassword: body.newPassword,
          clientIp: ip(c),
          nowMs: deps.now(),
        }).catch((err) => refusal(passwordProblem(err, "newPassword")));
        return c.body(null, 204);
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/staff/password-reset",
      operationId: "staffRequestPasswordReset",
      auth: false,
      idempotent: false,
      tags,
      summary: "Mail a password-reset link",
      description: `Answers 202 whether or not the address is a staff member's, alike and in about the same time. When it is, a single-use link to \`/dashboard/reset?token=…\`, valid ${RESET_LINK_MINUTES} minutes, is mailed to it (SMTP, or an \`.eml\` under \`$DATA_DIR/mail\`). At most ${RESETS_PER_ADDRESS_PER_HOUR} per address and ${RESETS_PER_IP_PER_HOUR} per client address an hour (429).`,
      body: staffPasswordResetBodySchema,
      before: signingIn,
      responses: {
        202: { description: "Sent if the address is known", schema: z.object({ message: z.string() }) },
        400: e("Validation failed"),
        403: e("Sent with an API key, or from another site"),
        429: e("Too many requests (see Retry-After)"),
      },
      handler: async (c, { body }) => {
        await limit(`staff-reset-ip:${ip(c)}`, RESETS_PER_IP_PER_HOUR, "from this address");
        await limit(
          `staff-reset-email:${emailKey(body.email)}`,
          RESETS_PER_ADDRESS_PER_HOUR,
          "for this e-mail address",
        );
        const started = performance.now();
        await requestPasswordReset(store, body.email, deps.config.publicUrl, deps.now());
        const rest = started + RESET_ANSWER_FLOOR_MS - performance.now();
        if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
        return c.json(
          {
            message: `If this address belongs to a staff account, a link to choose a new password is on its way to it. It works once, for ${RESET_LINK_MINUTES} minutes.`,
          },
          202,
        );
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/staff/password-reset/complete",
      operationId: "staffCompletePasswordReset",
      auth: false,
      idempotent: false,
      tags,
      summary: "Set a new password with a reset link's token, and sign in",
      description:
        "Uses the link up, sets the password, ends every session of the person's and every other reset link, and answers with a new session's cookie. With two-factor sign-in on, a `code` is wanted as for signing in (without one: 401 with `twoFactorRequired: true`, and the link still works).",
      body: staffPasswordResetCompleteBodySchema,
      before: signingIn,
      responses: {
        200: { description: "Signed in: the session cookie is set", schema: staffMeSchema },
        400: e("Validation failed (the password is too short, too long, or one of the most common)"),
        401: {
          description:
            "The link has been used or has expired; or, with `twoFactorRequired: true`, a code is wanted (missing, wrong or used)",
          schema: signInErrorSchema,
        },
        403: e("Sent with an API key, or from another site"),
        429: e("Too many failed codes (see Retry-After)"),
      },
      handler: async (c, { body }) => {
        const { sessionToken } = await completePasswordReset(store, deps.secrets, {
          token: body.token,
          password: body.password,
          code: body.code,
          nowMs: deps.now(),
          userAgent: c.req.header("User-Agent"),
          clientIp: ip(c),
        }).catch(refusal);
        setStaffCookie(c, deps, sessionToken);
        return meAnswer(deps, c, await findStaffSession(store, sessionToken, deps.now()));
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/staff/sessions",
      operationId: "staffListSessions",
      auth: false,
      session: "staff",
      tags,
      summary: "The signed-in person's sessions",
      description:
        "Every session of the person's that has not ended, newest first: when it began and was last used, and the browser and client address it was opened from. `current` marks this request's.",
      before: reading,
      responses: {
        200: { description: "The sessions", schema: staffSessionListSchema },
        401: notSignedIn,
        403: refusedOrigin,
      },
      handler: async (c) => {
        const { session } = await signedIn(c);
        const sessions = (await listSessions(store, session.userId, deps.now())).map((s) => ({
          ...s,
          current: s.id === session.sessionId,
        }));
        return c.json({ sessions }, 200, { "Cache-Control": "no-store" });
      },
    }),
    defineRoute({
      method: "delete",
      path: "/api/staff/sessions/{id}",
      operationId: "staffEndSession",
      auth: false,
      session: "staff",
      tags,
      summary: "End one of the signed-in person's sessions",
      description: "Only the person's own sessions; another's, or one already ended, is a 404.",
      params: sessionParams,
      before: withSession,
      responses: {
        204: { description: "Ended" },
        401: notSignedIn,
        403: refusedOrigin,
        404: e("No such session of the signed-in person's"),
      },
      handler: async (c, { params }) => {
        const { session } = await signedIn(c);
        await revokeSession(store, session.userId, params.id, deps.now()).catch(refusal);
        return c.body(null, 204);
      },
    }),
  ];
}

/** A common new password, named by the body's field that carried it. */
function passwordProblem(err: unknown, field: string): unknown {
  if (err instanceof StaffError && err.kind === "password")
    return ApiError.validation([`${field}: ${err.message}`]);
  return err;
}

import { z } from "zod";
import { emailAddress, NOT_BLANK } from "./common.js";

/** The organization's staff: who they are, their role, and the bodies of the sign-in endpoints. */

export const STAFF_ROLES = ["OWNER", "FINANCE", "STAFF"] as const;
export type StaffRole = (typeof STAFF_ROLES)[number];

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 200;

const password = z
  .string()
  .min(PASSWORD_MIN_LENGTH, `must be at least ${PASSWORD_MIN_LENGTH} characters`)
  .max(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`)
  .meta({ description: `At least ${PASSWORD_MIN_LENGTH} characters` });

const organizationId = z.string().min(1).max(64);

export const staffSetupBodySchema = z.strictObject({
  token: z.string().min(1).max(100).meta({ description: "The token of the set-up link (`?token=`)" }),
  password,
});

export const staffLinkBodySchema = z.strictObject({
  token: z.string().min(1).max(100).meta({ description: "The token of the link (`?token=`)" }),
  kind: z.enum(["setup", "reset"]).meta({
    description:
      "`setup`: a set-up link (`/dashboard/setup`); `reset`: a password-reset link (`/dashboard/reset`)",
  }),
});

export const staffLinkSchema = z.object({
  email: z.string().meta({ description: "The address of the person the link is for" }),
  organizationName: z.string().meta({ description: "The organization the link opens" }),
  signInRequired: z.boolean().meta({
    description:
      "A set-up link of a person who already has a password: they sign in with it (and `invitation`) instead of choosing one",
  }),
});

export const staffLoginBodySchema = z.strictObject({
  email: z.string().min(1).max(254),
  password: z.string().min(1).max(PASSWORD_MAX_LENGTH),
  code: z.string().max(64).optional().meta({
    description:
      "With two-factor sign-in on: the 6-digit code of the authenticator app, or one of the recovery codes (each works once)",
  }),
  invitation: z.string().min(1).max(100).optional().meta({
    description:
      "The token of a set-up link (`?token=`) sent to a person who already has a password: the sign-in accepts the invitation, uses the link up and opens the session in its organization",
  }),
  organizationId: organizationId.optional().meta({
    description:
      "For a person on the staff of several organizations: the one to sign in to (one they have joined; `organizations` of `GET /api/staff/me` lists them). Without it, the one they joined first. With `invitation`, the link's organization must be this one",
  }),
});

/** The body of `POST /api/staff/organization`: the organization to carry on in. */
export const staffSwitchBodySchema = z.strictObject({
  organizationId: organizationId.meta({
    description: "One of the organizations of `organizations` in `GET /api/staff/me`",
  }),
});

export const staffMeSchema = z.object({
  userId: z.string(),
  email: emailAddress,
  organizationId: z.string(),
  organizationName: z.string(),
  timeZone: z.string().meta({
    description:
      "The organization's IANA time zone: the dashboard writes times in it, as its filters and exports count days",
  }),
  currency: z.string().meta({
    description:
      "The organization's currency (ISO 4217): what totals without a currency of their own, such as a contact's `totalTransactionValue`, are counted in",
  }),
  role: z.enum(STAFF_ROLES),
  permissions: z.array(z.string()).meta({ description: "What the role may do, as API key permissions" }),
  twoFactorEnabled: z.boolean().meta({ description: "Whether the person signs in with a TOTP code" }),
  organizations: z.array(z.object({ id: z.string(), name: z.string(), role: z.enum(STAFF_ROLES) })).meta({
    description:
      "Every organization the person has joined, the one signed in to included, in the order they joined them: `POST /api/staff/organization` moves the session to another",
  }),
  twoFactorEnrolmentRequired: z.boolean().meta({
    description:
      "The organization requires two-factor sign-in of this role and the person has not enrolled: until they do, the session reaches only `/api/staff/me`, the enrolment endpoints and sign-out, and its `permissions` are empty",
  }),
});

// Account security: two-factor sign-in, password change and reset, sessions.

const sixDigits = z.string().min(1).max(64).meta({
  description:
    "The 6-digit code the authenticator app shows now, or (to sign in or turn off) a recovery code",
});

export const twoFactorEnrolmentSchema = z.object({
  secret: z
    .string()
    .meta({ description: "The TOTP secret in base 32, for typing into an authenticator app" }),
  uri: z.string().meta({
    description: "The same as an `otpauth://totp/…` URI (SHA-1, 6 digits, 30 seconds), for a QR code",
  }),
  qrCode: z.string().meta({
    description: "The URI drawn as a QR code: an SVG image (`<svg …>…</svg>`) for the app's camera to read",
  }),
});

export const twoFactorConfirmBodySchema = z.strictObject({ code: sixDigits });

export const twoFactorConfirmedSchema = z.object({
  recoveryCodes: z.array(z.string()).meta({
    description:
      "Ten one-time recovery codes (`xxxxx-xxxxx`), shown this once: each signs in once instead of a TOTP code",
  }),
});

export const twoFactorDisableBodySchema = z
  .strictObject({
    password: z.string().min(1).max(PASSWORD_MAX_LENGTH).optional(),
    code: sixDigits.optional(),
  })
  .meta({ anyOf: [{ required: ["password"] }, { required: ["code"] }] })
  .check(
    z.superRefine((body, ctx) => {
      if (body.password === undefined && body.code === undefined)
        ctx.addIssue({ code: "custom", message: "must contain the password or a code", path: [] });
    }),
  );

export const twoFactorStatusSchema = z.object({
  enabled: z.boolean(),
  enabledAt: z.string().nullable(),
  recoveryCodesLeft: z.number().int().meta({ description: "Recovery codes not yet used" }),
  required: z.boolean().meta({ description: "Whether the organization requires it of this person's role" }),
});

export const staffPasswordChangeBodySchema = z.strictObject({
  currentPassword: z.string().min(1).max(PASSWORD_MAX_LENGTH),
  newPassword: password,
});

export const staffPasswordResetBodySchema = z.strictObject({
  email: z.string().trim().min(1).max(254).meta({ pattern: NOT_BLANK }),
});

export const staffPasswordResetCompleteBodySchema = z.strictObject({
  token: z.string().min(1).max(100).meta({ description: "The token of the mailed reset link (`?token=`)" }),
  password,
  code: z.string().max(64).optional().meta({
    description: "With two-factor sign-in on: a TOTP or recovery code, as for signing in",
  }),
});

export const staffSessionSchema = z.object({
  id: z.string().meta({ description: "The session's id (`ses_…`), not its token" }),
  createdAt: z.string().meta({ description: "Signed in at (ISO 8601)" }),
  lastSeenAt: z.string().meta({ description: "Last used at, to the minute" }),
  expiresAt: z.string().meta({ description: "Ends at the latest (7 days after sign-in)" }),
  userAgent: z.string().nullable().meta({ description: "The browser's User-Agent at sign-in" }),
  clientIp: z.string().nullable().meta({ description: "The client address at sign-in" }),
  current: z.boolean().meta({ description: "The session of this request" }),
});

export const staffSessionListSchema = z.object({ sessions: z.array(staffSessionSchema) });

/** New recovery codes are asked for with the password or a code, as turning two-factor sign-in off is. */
export const twoFactorRecoveryCodesBodySchema = twoFactorDisableBodySchema;

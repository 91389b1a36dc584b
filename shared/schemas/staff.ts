import { z } from "zod";
import { emailAddress } from "./common.js";

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

export const staffSetupBodySchema = z.strictObject({
  token: z.string().min(1).max(100).meta({ description: "The token of the set-up link (`?token=`)" }),
  password,
});

export const staffLoginBodySchema = z.strictObject({
  email: z.string().min(1).max(254),
  password: z.string().min(1).max(PASSWORD_MAX_LENGTH),
});

export const staffMeSchema = z.object({
  userId: z.string(),
  email: emailAddress,
  organizationId: z.string(),
  organizationName: z.string(),
  role: z.enum(STAFF_ROLES),
  permissions: z.array(z.string()).meta({ description: "What the role may do, as API key permissions" }),
});

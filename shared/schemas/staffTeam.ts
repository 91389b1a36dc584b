import { z } from "zod";
import { emailAddress } from "./common.js";
import { STAFF_ROLES } from "./staff.js";

/** The organization's team as its Owners manage it: the members, an invitation, a change of role. */

const role = z.enum(STAFF_ROLES).meta({
  description:
    "OWNER: everything, the team and the keys; FINANCE: payments, refunds, recurring gifts, contacts, exports, reports, and reads forms; STAFF: forms and contacts, and reads payments and recurring gifts",
});

export const teamMemberSchema = z.object({
  userId: z.string(),
  email: z.string(),
  role,
  joinedAt: z.string().meta({ description: "When the person was added to the organization (ISO 8601)" }),
  passwordSet: z.boolean().meta({
    description:
      "Whether the person has joined: set a password and signed in to this organization since being added (a person who has a password for another organization joins by signing in with the invitation's link)",
  }),
  invitePending: z
    .boolean()
    .meta({ description: "Not joined yet: the set-up link mailed to them is still to be used" }),
  inviteExpiresAt: z.string().nullable().meta({
    description:
      "When the newest unused set-up link ends (possibly past: invite again for a fresh one); null when none",
  }),
  lastSignInAt: z
    .string()
    .nullable()
    .meta({ description: "The person's latest sign-in to this organization; null when never" }),
});

export const teamListSchema = z.object({
  members: z.array(teamMemberSchema).meta({ description: "Oldest member first" }),
});

export const teamInviteBodySchema = z.strictObject({
  email: emailAddress,
  role,
});

export const teamRoleBodySchema = z.strictObject({ role });

export const teamMemberParamsSchema = z.object({
  userId: z.string().min(1).max(100).meta({ description: "The member's userId" }),
});

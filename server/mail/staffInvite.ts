import type { StaffRole } from "../../shared/schemas/staff.js";
import { renderLetter } from "./letter.js";

/**
 * The e-mail that invites a person to an organization's dashboard: who invited them, with which role,
 * and the single-use set-up link that sets their password, or, for a person who has a password already,
 * with which they sign in to accept. Staff mail is in English (the dashboard is).
 */

export interface StaffInviteInput {
  organizationName: string;
  invitedBy: string;
  role: StaffRole;
  url: string;
  hours: number;
  /** The person has a password already (another organization's, or one they chose): they sign in with it. */
  hasPassword?: boolean;
}

const ROLE_NAMES: Record<StaffRole, string> = { OWNER: "Owner", FINANCE: "Finance", STAFF: "Staff" };

export function renderStaffInvite(input: StaffInviteInput): { subject: string; text: string; html: string } {
  const organization = input.organizationName;
  const intro = [
    "Hello,",
    `${input.invitedBy} has invited you to ${organization}'s donation dashboard, as ${ROLE_NAMES[input.role]}. ${
      input.hasPassword
        ? "You already have a password for this dashboard: open this link and sign in with your password to accept:"
        : "Set your password with this link:"
    }`,
  ];
  const after = [
    `The link can be used once, within ${input.hours} hours. If it has expired, ask ${input.invitedBy} to invite you again. If you did not expect this invitation, you can ignore this message.`,
    organization,
  ];
  const { text, html } = renderLetter({
    language: "en",
    intro,
    link: {
      url: input.url,
      label: input.hasPassword ? "Accept the invitation" : "Set your password",
      showUrl: true,
    },
    after,
  });
  return { subject: `You are invited to ${organization}'s donation dashboard`, text, html };
}

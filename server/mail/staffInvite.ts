import { escapeHtml } from "../../shared/html.js";
import type { StaffRole } from "../../shared/schemas/staff.js";
import { htmlParagraphs } from "./receipt.js";

/**
 * The e-mail that invites a person to an organization's dashboard: who invited them, with which role,
 * and the single-use set-up link that sets their password. Staff mail is in English (the dashboard is).
 */

export interface StaffInviteInput {
  organizationName: string;
  invitedBy: string;
  role: StaffRole;
  url: string;
  hours: number;
}

const ROLE_NAMES: Record<StaffRole, string> = { OWNER: "Owner", FINANCE: "Finance", STAFF: "Staff" };

export function renderStaffInvite(input: StaffInviteInput): { subject: string; text: string; html: string } {
  const organization = input.organizationName;
  const intro = [
    "Hello,",
    `${input.invitedBy} has invited you to ${organization}'s donation dashboard, as ${ROLE_NAMES[input.role]}. Set your password with this link:`,
  ];
  const after = [
    `The link can be used once, within ${input.hours} hours. If it has expired, ask ${input.invitedBy} to invite you again. If you did not expect this invitation, you can ignore this message.`,
    organization,
  ];
  const text = [...intro, input.url, ...after].join("\n\n");
  const html = [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width"></head>',
    '<body style="margin:0;padding:24px;font-family:Helvetica,Arial,sans-serif;font-size:15px;color:#222">',
    '<div style="max-width:560px;margin:0 auto">',
    htmlParagraphs(intro.join("\n\n")),
    `<p style="margin:0 0 12px"><a href="${escapeHtml(input.url)}">Set your password</a></p>`,
    `<p style="margin:0 0 12px;word-break:break-all">${escapeHtml(input.url)}</p>`,
    htmlParagraphs(after.join("\n\n")),
    "</div></body></html>",
  ].join("");
  return { subject: `You are invited to ${organization}'s donation dashboard`, text, html };
}

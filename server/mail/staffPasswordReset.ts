import { escapeHtml } from "../../shared/html.js";
import { htmlParagraphs } from "./receipt.js";

/** The e-mail with a staff member's password-reset link (the dashboard speaks English, so does this). */

export interface StaffPasswordResetInput {
  organizationName: string;
  url: string;
  minutes: number;
}

export function renderStaffPasswordReset(input: StaffPasswordResetInput): {
  subject: string;
  text: string;
  html: string;
} {
  const intro = [
    "Hello,",
    `Someone asked to reset the password of your ${input.organizationName} dashboard account. To choose a new password, open this link:`,
  ];
  const after = [
    `The link works once, for ${input.minutes} minutes. Setting a new password signs you out everywhere else.`,
    "If you did not ask for this, ignore this e-mail: your password stays as it is.",
  ];
  const text = [...intro, input.url, ...after].join("\n\n");
  const html = [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width"></head>',
    '<body style="margin:0;padding:24px;font-family:Helvetica,Arial,sans-serif;font-size:15px;color:#222">',
    '<div style="max-width:560px;margin:0 auto">',
    htmlParagraphs(intro.join("\n\n")),
    `<p style="margin:0 0 12px"><a href="${escapeHtml(input.url)}">Choose a new password</a></p>`,
    htmlParagraphs(after.join("\n\n")),
    "</div></body></html>",
  ].join("");
  return { subject: `Reset your ${input.organizationName} dashboard password`, text, html };
}

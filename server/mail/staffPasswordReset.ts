import { renderLetter } from "./letter.js";

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
  const { text, html } = renderLetter({
    language: "en",
    intro,
    link: { url: input.url, label: "Choose a new password" },
    after,
  });
  return { subject: `Reset your ${input.organizationName} dashboard password`, text, html };
}

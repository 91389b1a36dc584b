import { formatMoney } from "../../shared/currency.js";
import { escapeHtml } from "../../shared/html.js";

/** The e-mail asking a donor to confirm a recurring charge their bank held for authentication. */

export interface ConfirmationRequestInput {
  organizationName: string;
  firstName: string;
  amountCents: number;
  /** "monthly", "yearly", … */
  cadence: string;
  /** ISO 4217 of the amount (default USD). */
  currency?: string;
  url: string;
  expiresOn: string;
}

export function renderConfirmationRequest(input: ConfirmationRequestInput): {
  subject: string;
  text: string;
  html: string;
} {
  const amount = formatMoney(input.amountCents, input.currency ?? "USD");
  const subject = `Please confirm your ${input.cadence} gift to ${input.organizationName}`;
  const lines = [
    `Dear ${input.firstName},`,
    `Your bank asked you to confirm this ${input.cadence} gift of ${amount} to ${input.organizationName} before it can go through. Nothing has been charged yet.`,
    `Confirm it here (the link works until ${input.expiresOn}):`,
    input.url,
    "If you did not expect this, you can ignore this message: the gift will be tried again on its usual schedule.",
    `Thank you,\n${input.organizationName}`,
  ];
  const html = [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeHtml(subject)}</title></head>`,
    '<body style="margin:0;padding:24px;background:#f6f6f6;font-family:Helvetica,Arial,sans-serif;color:#222;line-height:1.5">',
    '<div style="max-width:560px;margin:0 auto;background:#fff;padding:24px;border-radius:6px">',
    `<p>${escapeHtml(lines[0])}</p><p>${escapeHtml(lines[1])}</p>`,
    `<p><a href="${escapeHtml(input.url)}" style="display:inline-block;background:#1f6feb;color:#fff;padding:10px 16px;border-radius:6px;text-decoration:none">Confirm my gift of ${escapeHtml(amount)}</a></p>`,
    `<p style="color:#555">The link works until ${escapeHtml(input.expiresOn)}. ${escapeHtml(lines[4])}</p>`,
    `<p>Thank you,<br>${escapeHtml(input.organizationName)}</p>`,
    "</div></body></html>",
  ].join("\n");
  return { subject, text: lines.join("\n\n"), html };
}

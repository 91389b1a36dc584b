import { formatMoney } from "../../shared/currency.js";
import type { Frequency } from "../../shared/enums.js";
import { escapeHtml } from "../../shared/html.js";
import { DEFAULT_LANGUAGE, directionOf, type Language } from "../../shared/languages.js";
import { translator } from "../i18n.js";
import { formatDate } from "./receipt.js";

/** The e-mail asking a donor to confirm a recurring charge their bank held for authentication, in their language. */

export interface ConfirmationRequestInput {
  organizationName: string;
  firstName: string;
  amountCents: number;
  frequency: Frequency;
  /** ISO 4217 of the amount (default USD). */
  currency?: string;
  url: string;
  /** When the link stops working (ISO 8601). */
  expiresAt: string;
  /** The organization's IANA time zone (default UTC): the date is the day there. */
  timeZone?: string;
  /** The donor's language (default English). */
  language?: Language;
}

export function renderConfirmationRequest(input: ConfirmationRequestInput): {
  subject: string;
  text: string;
  html: string;
} {
  const language = input.language ?? DEFAULT_LANGUAGE;
  const tr = translator(language);
  const amount = formatMoney(input.amountCents, input.currency ?? "USD", language);
  const date = formatDate(input.expiresAt, language, input.timeZone);
  const organization = input.organizationName;
  const cadence = tr(`mail.frequency.${input.frequency}`);
  const subject = tr("mail.confirm.subject", { cadence, organization });
  const lines = [
    tr("mail.confirm.hello", { name: input.firstName }),
    tr("mail.confirm.intro", { cadence, amount, organization }),
    tr("mail.confirm.link", { date }),
    input.url,
    tr("mail.confirm.ignore"),
    `${tr("mail.confirm.thanks")}\n${organization}`,
  ];
  const html = [
    `<!doctype html><html lang="${language}" dir="${directionOf(language)}"><head><meta charset="utf-8">`,
    `<title>${escapeHtml(subject)}</title></head>`,
    '<body style="margin:0;padding:24px;background:#f6f6f6;font-family:Helvetica,Arial,sans-serif;color:#222;line-height:1.5">',
    '<div style="max-width:560px;margin:0 auto;background:#fff;padding:24px;border-radius:6px">',
    `<p>${escapeHtml(lines[0])}</p><p>${escapeHtml(lines[1])}</p>`,
    `<p><a href="${escapeHtml(input.url)}" style="display:inline-block;background:#1f6feb;color:#fff;padding:10px 16px;border-radius:6px;text-decoration:none">${escapeHtml(tr("mail.confirm.button", { amount }))}</a></p>`,
    `<p style="color:#555">${escapeHtml(tr("mail.confirm.until", { date }))} ${escapeHtml(lines[4])}</p>`,
    `<p>${escapeHtml(tr("mail.confirm.thanks"))}<br>${escapeHtml(organization)}</p>`,
    "</div></body></html>",
  ].join("\n");
  return { subject, text: lines.join("\n\n"), html };
}

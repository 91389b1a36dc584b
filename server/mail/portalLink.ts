import { escapeHtml } from "../../shared/html.js";
import { DEFAULT_LANGUAGE, directionOf, type Language } from "../../shared/languages.js";
import { translator } from "../i18n.js";
import { htmlParagraphs } from "./receipt.js";

/** The e-mail with a donor's sign-in link to the organization's donor portal, in the donor's language. */

export interface PortalLinkInput {
  organizationName: string;
  url: string;
  minutes: number;
  language?: Language;
}

export function renderPortalLink(input: PortalLinkInput): { subject: string; text: string; html: string } {
  const language = input.language ?? DEFAULT_LANGUAGE;
  const tr = translator(language);
  const organization = input.organizationName;
  const intro = [tr("mail.receipt.hello"), tr("mail.portalLink.intro", { organization })];
  const after = [tr("mail.portalLink.after", { minutes: input.minutes }), organization];
  const text = [...intro, input.url, ...after].join("\n\n");
  const html = [
    `<!doctype html><html lang="${language}" dir="${directionOf(language)}"><head><meta charset="utf-8">`,
    '<meta name="viewport" content="width=device-width"></head>',
    '<body style="margin:0;padding:24px;font-family:Helvetica,Arial,sans-serif;font-size:15px;color:#222">',
    '<div style="max-width:560px;margin:0 auto">',
    htmlParagraphs(intro.join("\n\n")),
    `<p style="margin:0 0 12px"><a href="${escapeHtml(input.url)}">${escapeHtml(tr("mail.portalLink.button"))}</a></p>`,
    htmlParagraphs(after.join("\n\n")),
    "</div></body></html>",
  ].join("");
  return { subject: tr("mail.portalLink.subject", { organization }), text, html };
}

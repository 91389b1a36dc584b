import type { TributeKind } from "../../shared/enums.js";
import { DEFAULT_LANGUAGE, directionOf, type Language } from "../../shared/languages.js";
import { translator } from "../i18n.js";
import { htmlParagraphs } from "./receipt.js";

/**
 * The notice of a dedicated gift, sent to the address the donor gave for it (the honoree, or the family of
 * the one remembered): who gave, to which organization, in whose honor or memory, and the donor's words.
 * Never the amount. In the donor's language. Every value comes from donors or organizations, so the HTML
 * escapes each one.
 */

export interface TributeNoticeInput {
  organizationName: string;
  /** The donor's name; null for an anonymous gift. */
  donorName: string | null;
  kind: TributeKind;
  honoreeName: string;
  message?: string;
  language?: Language;
}

export interface RenderedNotice {
  subject: string;
  text: string;
  html: string;
}

export function renderTributeNotice(input: TributeNoticeInput): RenderedNotice {
  const language = input.language ?? DEFAULT_LANGUAGE;
  const tr = translator(language);
  const organization = input.organizationName;
  const giver = input.donorName ?? tr("mail.tribute.aDonor");
  const paragraphs = [
    tr("mail.receipt.hello"),
    tr("mail.tribute.body", { giver, organization, kind: input.kind, name: input.honoreeName }),
    ...(input.message ? [`${tr("mail.tribute.message")}\n${input.message}`] : []),
    `${tr("mail.tribute.thanks")}\n${organization}`,
  ];
  const text = paragraphs.join("\n\n");
  const html = [
    `<!doctype html><html lang="${language}" dir="${directionOf(language)}"><head><meta charset="utf-8">`,
    `<meta name="viewport" content="width=device-width"></head>`,
    '<body style="margin:0;padding:24px;font-family:Helvetica,Arial,sans-serif;font-size:15px;color:#222">',
    '<div style="max-width:560px;margin:0 auto">',
    htmlParagraphs(text),
    "</div></body></html>",
  ].join("");
  return { subject: tr("mail.tribute.subject", { kind: input.kind, name: input.honoreeName }), text, html };
}

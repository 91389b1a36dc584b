import type { TributeKind } from "../../shared/enums.js";
import { DEFAULT_LANGUAGE, type Language } from "../../shared/languages.js";
import { translator } from "../i18n.js";
import { renderLetter } from "./letter.js";

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
  const { text, html } = renderLetter({ language, intro: paragraphs });
  return { subject: tr("mail.tribute.subject", { kind: input.kind, name: input.honoreeName }), text, html };
}

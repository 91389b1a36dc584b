import { DEFAULT_LANGUAGE, type Language } from "../../shared/languages.js";
import { translator } from "../i18n.js";
import { renderLetter } from "./letter.js";

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
  const { text, html } = renderLetter({
    language,
    intro,
    link: { url: input.url, label: tr("mail.portalLink.button") },
    after,
  });
  return { subject: tr("mail.portalLink.subject", { organization }), text, html };
}

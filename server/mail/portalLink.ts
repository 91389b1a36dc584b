import { escapeHtml } from "../../shared/html.js";
import { htmlParagraphs } from "./receipt.js";

/** The e-mail with a donor's sign-in link to the organization's donor portal. */

export interface PortalLinkInput {
  organizationName: string;
  url: string;
  minutes: number;
}

export function renderPortalLink(input: PortalLinkInput): { subject: string; text: string; html: string } {
  const intro = [
    "Hello,",
    `Here is your link to see your gifts to ${input.organizationName}, download receipts and statements, and change your recurring gifts.`,
  ];
  const after = [
    `The link works once, for ${input.minutes} minutes. If you did not ask for it, you can ignore this e-mail: nothing changes until the link is used.`,
    input.organizationName,
  ];
  const text = [...intro, input.url, ...after].join("\n\n");
  const html = [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width"></head>',
    '<body style="margin:0;padding:24px;font-family:Helvetica,Arial,sans-serif;font-size:15px;color:#222">',
    '<div style="max-width:560px;margin:0 auto">',
    htmlParagraphs(intro.join("\n\n")),
    `<p style="margin:0 0 12px"><a href="${escapeHtml(input.url)}">Manage my giving</a></p>`,
    htmlParagraphs(after.join("\n\n")),
    "</div></body></html>",
  ].join("");
  return { subject: `Your link to manage your giving to ${input.organizationName}`, text, html };
}

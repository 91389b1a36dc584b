import type { TributeKind } from "../../shared/enums.js";
import { htmlParagraphs } from "./receipt.js";

/**
 * The notice of a dedicated gift, sent to the address the donor gave for it (the honoree, or the family of
 * the one remembered): who gave, to which organization, in whose honor or memory, and the donor's words.
 * Never the amount. Every value comes from donors or organizations, so the HTML escapes each one.
 */

export interface TributeNoticeInput {
  organizationName: string;
  /** The donor's name; null for an anonymous gift. */
  donorName: string | null;
  kind: TributeKind;
  honoreeName: string;
  message?: string;
}

export interface RenderedNotice {
  subject: string;
  text: string;
  html: string;
}

export function renderTributeNotice(input: TributeNoticeInput): RenderedNotice {
  const giver = input.donorName ?? "A donor";
  const dedication = `${input.kind === "HONOR" ? "in honor" : "in memory"} of ${input.honoreeName}`;
  const paragraphs = [
    "Hello,",
    `${giver} has made a gift to ${input.organizationName} ${dedication}, and asked that you be told.`,
    ...(input.message ? [`Their message:\n${input.message}`] : []),
    `With thanks,\n${input.organizationName}`,
  ];
  const text = paragraphs.join("\n\n");
  const html = [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    `<meta name="viewport" content="width=device-width"></head>`,
    '<body style="margin:0;padding:24px;font-family:Helvetica,Arial,sans-serif;font-size:15px;color:#222">',
    '<div style="max-width:560px;margin:0 auto">',
    htmlParagraphs(text),
    "</div></body></html>",
  ].join("");
  return { subject: `A gift ${dedication}`, text, html };
}

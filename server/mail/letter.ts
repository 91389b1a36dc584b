import { escapeHtml } from "../../shared/html.js";
import { directionOf, type Language } from "../../shared/languages.js";

/**
 * A plain e-mail of paragraphs, with at most one link to act on between them (a sign-in, a set-up, a
 * reset): its text and its HTML. Every value is escaped in the HTML, since names and addresses come from
 * donors and organizations.
 */
export interface Letter {
  /** The HTML's language (and so its direction); the text is given already in it. */
  language: Language;
  /** Paragraphs before the link; a paragraph's single newlines are kept as line breaks. */
  intro: string[];
  /** The link: its address (alone on a line in the text), the words of its button in the HTML. */
  link?: {
    url: string;
    label: string;
    /** Also shows the address itself under the button, for a mail program that hides links. */
    showUrl?: boolean;
  };
  /** Paragraphs after the link. */
  after?: string[];
}

export function renderLetter(letter: Letter): { text: string; html: string } {
  const { link } = letter;
  const after = letter.after ?? [];
  const text = [...letter.intro, ...(link ? [link.url] : []), ...after].join("\n\n");
  const linkHtml = link
    ? [
        `<p style="margin:0 0 12px"><a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a></p>`,
        link.showUrl ? `<p style="margin:0 0 12px;word-break:break-all">${escapeHtml(link.url)}</p>` : "",
      ]
    : [];
  const html = [
    `<!doctype html><html lang="${letter.language}" dir="${directionOf(letter.language)}"><head><meta charset="utf-8">`,
    '<meta name="viewport" content="width=device-width"></head>',
    '<body style="margin:0;padding:24px;font-family:Helvetica,Arial,sans-serif;font-size:15px;color:#222">',
    '<div style="max-width:560px;margin:0 auto">',
    htmlParagraphs(letter.intro.join("\n\n")),
    ...linkHtml,
    after.length ? htmlParagraphs(after.join("\n\n")) : "",
    "</div></body></html>",
  ].join("");
  return { text, html };
}

/** Blank lines separate paragraphs; single newlines are kept as line breaks. */
export function htmlParagraphs(text: string): string {
  return text
    .split(/\r?\n\s*\r?\n/)
    .map((p) => `<p style="margin:0 0 12px">${escapeHtml(p.trim()).replace(/\r?\n/g, "<br>")}</p>`)
    .join("");
}

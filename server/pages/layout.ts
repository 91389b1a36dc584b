import { escapeHtml } from "../../shared/html.js";
import { DEFAULT_LANGUAGE, directionOf, type Language } from "../../shared/languages.js";

/** A small, self-contained HTML page (no external assets) for the server's human-facing answers. */
export function page(opts: {
  title: string;
  heading: string;
  body: string;
  color?: string;
  description?: string;
  /** The response's CSP nonce for the inline <style>. */
  nonce?: string;
  /** The page's language (default English). */
  language?: Language;
  /** Markup above the page's card, such as its language links (pages/languageLinks.ts). */
  header?: string;
  /**
   * A script of this host's own build to run in the page, written inline with the nonce (so the policy
   * allows it by nonce, never 'unsafe-inline'); `data` becomes its escaped data-* attributes.
   */
  script?: { code: string; data?: Record<string, string> };
}): string {
  const language = opts.language ?? DEFAULT_LANGUAGE;
  const script = opts.script && opts.nonce ? inlineScript(opts.script, opts.nonce) : "";
  const color = opts.color && /^#[0-9A-Fa-f]{6}$/.test(opts.color) ? opts.color : "#3B82F6";
  return `<!doctype html>
<html lang="${language}" dir="${directionOf(language)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(opts.title)}</title>
${opts.description ? `<meta name="description" content="${escapeHtml(opts.description)}">` : ""}
<style${opts.nonce ? ` nonce="${opts.nonce}"` : ""}>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1f2328;line-height:1.5}
main{max-width:40rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:12px;border-top:6px solid ${color};box-shadow:0 1px 3px rgba(0,0,0,.08)}
h1{margin-top:0;font-size:1.6rem}
</style>
${script}</head>
<body>${opts.header ?? ""}<main><h1>${escapeHtml(opts.heading)}</h1>${opts.body}</main></body>
</html>`;
}

function inlineScript(script: { code: string; data?: Record<string, string> }, nonce: string): string {
  // Built code never holds "</script" or "<!--"; were it ever to, the page goes without it, not broken.
  if (/<\/script|<!--/i.test(script.code)) return "";
  const data = Object.entries(script.data ?? {})
    .map(([name, value]) => ` data-${name}="${escapeHtml(value)}"`)
    .join("");
  return `<script nonce="${nonce}"${data}>${script.code}</script>\n`;
}

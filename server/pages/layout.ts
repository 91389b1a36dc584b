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
}): string {
  const language = opts.language ?? DEFAULT_LANGUAGE;
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
</head>
<body><main><h1>${escapeHtml(opts.heading)}</h1>${opts.body}</main></body>
</html>`;
}

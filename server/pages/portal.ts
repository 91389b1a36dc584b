import { randomBytes } from "node:crypto";
import type { Context } from "hono";
import { escapeHtml } from "../../shared/html.js";
import type { CompiledCatalog } from "../../shared/i18n/format.js";
import { DEFAULT_LANGUAGE, directionOf, type Language } from "../../shared/languages.js";
import type { AppDeps, AppEnv } from "../api/env.js";
import { chooseLanguage, messagesFor, translator } from "../i18n.js";
import { getOrganization } from "../store/organizations.js";
import { checkoutAssetUrl } from "./assets.js";
import { jsonForScript } from "./json.js";
import { languageSwitcher } from "./languageLinks.js";
import { page } from "./layout.js";

/**
 * The donor portal's page, `/manage/<organizationId>`: a shell that names the organization, and the
 * portal script (widget/portal/) that signs the donor in and calls `/api/manage/…`. The page may carry a
 * sign-in token in its address, so it is never cached, framed or sent as a referrer.
 */

const ORG_ID = /^org_[0-9a-z]{26}$/;

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1f2328;line-height:1.5}
main{max-width:48rem;margin:2rem auto;padding:1.5rem 2rem;background:#fff;border-radius:12px;border-top:6px solid #2563eb;box-shadow:0 1px 3px rgba(0,0,0,.08)}
h1{margin-top:0;font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem}h3{font-size:1rem;margin:0 0 .25rem}
label{display:block;font-weight:600;margin:.5rem 0 .25rem}
input,select{font:inherit;padding:.45rem .6rem;border:1px solid #6b7280;border-radius:6px;max-width:100%}
button{font:inherit;padding:.45rem .9rem;border-radius:6px;border:1px solid #1d4ed8;background:#1d4ed8;color:#fff;cursor:pointer;margin:.5rem .5rem 0 0}
button.danger{background:#fff;color:#b91c1c;border-color:#b91c1c}
button.link{background:none;border:none;color:#1d4ed8;text-decoration:underline;padding:0;margin:0}
button:disabled{opacity:.6}
a{color:#1d4ed8}
table{width:100%;border-collapse:collapse;font-size:.95rem}th,td{text-align:start;padding:.4rem;border-bottom:1px solid #e5e7eb}
.recurring{border:1px solid #e5e7eb;border-radius:8px;padding:1rem;margin:.75rem 0}
.recurring form{display:inline-block;margin-inline-end:1rem;vertical-align:bottom}
[role=alert],.error{color:#b91c1c}.notice{color:#166534}
.alm-langs{max-width:48rem;margin:.5rem auto 0;padding:0 1rem;display:flex;flex-wrap:wrap;gap:.25rem .75rem;justify-content:flex-end;font-size:14px}.alm-langs a[aria-current]{font-weight:600;text-decoration:none;color:#1f2328}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
:focus-visible{outline:3px solid #2563eb;outline-offset:2px}
`;

/** The messages the portal's page is sent with: its own, and the checkout's frequencies and kinds of method. */
export function portalMessages(language: Language): CompiledCatalog {
  return {
    ...messagesFor(language, "portal."),
    ...messagesFor(language, "checkout.frequency."),
    ...messagesFor(language, "checkout.method."),
  };
}

export async function portalPage(
  c: Context<AppEnv>,
  deps: AppDeps,
  organizationId: string,
): Promise<Response> {
  const org = ORG_ID.test(organizationId) ? await getOrganization(deps.store.db, organizationId) : undefined;
  const nonce = randomBytes(16).toString("base64");
  const headers = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": [
      "default-src 'none'",
      "script-src 'self'",
      `style-src 'nonce-${nonce}'`,
      "connect-src 'self'",
      "img-src 'self' data:",
      "form-action 'self'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ].join("; "),
  };
  const language = chooseLanguage(
    c.req.query("lang"),
    c.req.header("Accept-Language"),
    org?.language ?? DEFAULT_LANGUAGE,
  );
  if (!org) {
    const tr = translator(language);
    const heading = tr("page.portalNotFound.title");
    const body = `<p>${escapeHtml(tr("page.portalNotFound.body"))}</p>`;
    return c.html(page({ title: heading, heading, body, nonce, language }), 404, headers);
  }
  const messages = portalMessages(language);
  // The language links never carry a sign-in token.
  const params = new URL(c.req.url).searchParams;
  params.delete("token");
  const query = params.toString();
  const title = escapeHtml(translator(language)("portal.title", { organization: org.name }));
  return c.html(
    `<!doctype html>
<html lang="${language}" dir="${directionOf(language)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
${languageSwitcher(language, query)}
<main>
<h1>${title}</h1>
<div id="portal" data-org="${escapeHtml(org.id)}"><noscript>${escapeHtml(translator(language)("page.noscript.portal"))}</noscript></div>
</main>
<script type="application/json" id="portal-messages">${jsonForScript(messages)}</script>
<script type="module" src="${escapeHtml(checkoutAssetUrl("portal.js"))}"></script>
</body>
</html>`,
    200,
    { ...headers, "Content-Language": language, Vary: "Accept-Language" },
  );
}

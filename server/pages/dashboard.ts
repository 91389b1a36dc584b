import type { Context, Hono } from "hono";
import type { AppEnv } from "../api/env.js";
import { builtFile, isVersionOf } from "./assets.js";

/**
 * The staff dashboard's page: one shell for every path under `/dashboard` (so a deep link or a reload opens
 * the right page), which loads the dashboard's module (widget/dashboard/). The module signs the person in with
 * `/api/staff/…` and calls `/v1` with the session cookie. The page may carry a set-up or reset token in its
 * address, so it is never cached, framed or sent as a referrer; its policy allows its own scripts, styles and
 * calls only, and images from https addresses too (the live preview of a form).
 */

export const DASHBOARD_PATH = "/dashboard";
const dashboardDir = new URL("../../dist/dashboard/", import.meta.url);
/** What the build writes: the module, its stylesheet, and one chunk per page. */
const DASHBOARD_ASSET = /^(dashboard\.js|dashboard\.css|dashboard-[A-Za-z0-9]+-[\w-]+\.js)$/;

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  // The form editor's live preview shows the form's header image and the organization's logo, https
  // addresses of their own sites (never sent a referrer: the policy below).
  "img-src 'self' data: https:",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE_HEADERS = {
  "Cache-Control": "no-store",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy": DASHBOARD_CSP,
};

function shell(): string {
  const css = builtFile(dashboardDir, "dashboard.css");
  const cssLink = css
    ? `<link rel="stylesheet" href="${DASHBOARD_PATH}/assets/dashboard.css?v=${css.etag.slice(1, 13)}">`
    : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Almoner dashboard</title>
${cssLink}
</head>
<body>
<div id="dashboard"><noscript>The dashboard needs JavaScript.</noscript></div>
<script type="module" src="${DASHBOARD_PATH}/assets/dashboard.js"></script>
</body>
</html>`;
}

function asset(c: Context<AppEnv>, name: string): Response {
  const file = DASHBOARD_ASSET.test(name) ? builtFile(dashboardDir, name) : undefined;
  if (!file) return c.text("Not found", 404, { "X-Content-Type-Options": "nosniff" });
  // The module keeps its plain name (its chunks import it by that name): revalidated on each load. A
  // chunk's name changes with its content, and the stylesheet is named with ?v=: both kept for good.
  const forGood =
    name !== "dashboard.js" && (name !== "dashboard.css" || isVersionOf(file, c.req.query("v")));
  const headers = {
    "Content-Type": `${name.endsWith(".css") ? "text/css" : "application/javascript"}; charset=utf-8`,
    "Cache-Control": forGood ? "public, max-age=31536000, immutable" : "no-cache",
    "X-Content-Type-Options": "nosniff",
    ETag: file.etag,
  };
  if (c.req.header("If-None-Match") === file.etag) return c.body(null, 304, headers);
  return c.body(file.body, 200, headers);
}

export function mountDashboard(app: Hono<AppEnv>): void {
  app.get(`${DASHBOARD_PATH}/assets/:name`, (c) => asset(c, c.req.param("name")));
  const page = (c: Context<AppEnv>) => c.html(shell(), 200, PAGE_HEADERS);
  app.get(DASHBOARD_PATH, page);
  app.get(`${DASHBOARD_PATH}/*`, page);
}

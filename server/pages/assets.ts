import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

/**
 * The built widget scripts (`npm run build` writes them to dist/widget/), read once and kept in memory
 * with a strong ETag of their content. A file not built yet is looked for again on the next request, so
 * building while the server runs is enough.
 */

export type WidgetAsset = "embed.js" | "overlay.js" | "app.js" | "app.css" | "stripe.js" | "portal.js";

const WIDGET_ASSETS: ReadonlySet<string> = new Set<WidgetAsset>([
  "embed.js",
  "overlay.js",
  "app.js",
  "app.css",
  "stripe.js",
  "portal.js",
]);
const widgetDir = new URL("../../dist/widget/", import.meta.url);
const cache = new Map<WidgetAsset, { body: string; etag: string }>();

export function serveWidgetAsset(name: WidgetAsset): { body: string; etag: string } | undefined {
  const cached = cache.get(name);
  if (cached) return cached;
  // The type allows only known names; the check keeps a cast string from reaching the file system.
  if (!WIDGET_ASSETS.has(name)) return undefined;
  let body: string;
  try {
    body = readFileSync(new URL(name, widgetDir), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
  const asset = { body, etag };
  cache.set(name, asset);
  return asset;
}

/** The path pages name a checkout asset by: its content hash makes it cacheable for good. */
export function checkoutAssetUrl(name: "app.js" | "app.css" | "stripe.js" | "portal.js"): string {
  const asset = serveWidgetAsset(name);
  return `/checkout/${name}${asset ? `?v=${encodeURIComponent(asset.etag.slice(1, 13))}` : ""}`;
}

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

/**
 * The built widget scripts (`npm run build` writes them to dist/widget/), read once and kept in memory
 * with a strong ETag of their content. A file not built yet is looked for again on the next request, so
 * building while the server runs is enough.
 */

export type WidgetAsset =
  | "embed.js"
  | "overlay.js"
  | "app.js"
  | "app.css"
  | "stripe.js"
  | "portal.js"
  | "frame.js";

const WIDGET_ASSETS: ReadonlySet<string> = new Set<WidgetAsset>([
  "embed.js",
  "overlay.js",
  "app.js",
  "app.css",
  "stripe.js",
  "portal.js",
  "frame.js",
]);

/**
 * A chunk of the checkout app, which app.js imports when it needs it (vite.config.ts): `app-<name>-<hash>.js`,
 * its name changing with its content and app.js's, so it is cacheable for good under that name.
 */
export const CHECKOUT_CHUNK = /^app-[A-Za-z0-9]+-[\w-]+\.js$/;

const widgetDir = new URL("../../dist/widget/", import.meta.url);
const cache = new Map<string, BuiltFile>();

export interface BuiltFile {
  body: string;
  etag: string;
}

/** The hash a file's ETag is made of (27 characters of base64url). */
const contentHash = (body: string): string =>
  createHash("sha256").update(body).digest("base64url").slice(0, 27);

/**
 * The version pages name a checkout asset by (`?v=`): the start of its content hash. The build names
 * app.js the same way where its chunks import it (vite.config.ts), so a chunk and the page load one
 * app.js, not two.
 */
export const assetVersion = (body: string): string => contentHash(body).slice(0, 12);

/**
 * Whether `v` (a URL's `?v=`) is the version of this very file: only then is the answer kept for good. A
 * page of another build (a rolling deploy, a rollback) names another version, which must not be cached
 * for a year under its name with this build's file.
 */
export const isVersionOf = (file: BuiltFile, v: string | undefined): boolean => v === file.etag.slice(1, 13);

export function serveWidgetAsset(name: string): BuiltFile | undefined {
  // Only known names and chunk names: nothing else reaches the file system.
  if (!WIDGET_ASSETS.has(name) && !CHECKOUT_CHUNK.test(name)) return undefined;
  return builtFile(widgetDir, name);
}

/**
 * A file the build wrote to `dir`, read once and kept with its ETag; undefined while it is not built. The
 * caller has checked `name` against the names it serves.
 */
export function builtFile(dir: URL, name: string): BuiltFile | undefined {
  const key = new URL(name, dir).href;
  const cached = cache.get(key);
  if (cached) return cached;
  let body: string;
  try {
    body = readFileSync(new URL(name, dir), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const asset = { body, etag: `"${contentHash(body)}"` };
  cache.set(key, asset);
  return asset;
}

/** The path pages name a checkout asset by: its content hash makes it cacheable for good. */
export function checkoutAssetUrl(name: "app.js" | "app.css" | "stripe.js" | "portal.js"): string {
  const asset = serveWidgetAsset(name);
  return `/checkout/${name}${asset ? `?v=${encodeURIComponent(assetVersion(asset.body))}` : ""}`;
}

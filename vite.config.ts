import { createHash } from "node:crypto";
import { rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { defineConfig, type EnvironmentOptions, type Plugin, type Rollup } from "vite";
import { assetVersion } from "./server/pages/assets.js";

/**
 * The widget build. Each widget file is its own Vite environment, built separately, because a script that
 * host pages include with <script src> must be one self-contained IIFE, and Rollup cannot split several
 * entries into IIFEs in one build. `vite build` builds every environment below into dist/widget/ under
 * fixed names (the server serves them by name, with an ETag). Add the overlay script as another
 * scriptEnvironment, and the checkout app as an environment with its own (ES module) output.
 */

const root = fileURLToPath(new URL(".", import.meta.url));
const WIDGET_OUT_DIR = "dist/widget";

function scriptEnvironment(entry: string, fileName: string): EnvironmentOptions {
  return {
    consumer: "client",
    build: {
      outDir: WIDGET_OUT_DIR,
      // buildApp empties the folder once; each environment emptying it would delete the others' files.
      emptyOutDir: false,
      copyPublicDir: false,
      // Terser, which packs these two host-page scripts a few percent tighter than esbuild: each must stay
      // within 2 KB gzipped. The scripts are modules run in an IIFE, so the "use strict" line is dropped.
      minify: "terser",
      terserOptions: { compress: { passes: 3, unsafe: true }, mangle: { toplevel: true } },
      rollupOptions: { input: entry, output: { format: "iife", entryFileNames: fileName, strict: false } },
    },
  };
}

/**
 * The checkout app: an ES module (app.js) loaded with <script type="module"> by the hosted pages, which
 * are also the iframe and overlay pages, plus its stylesheet (app.css). What the page needs to draw and
 * hydrate is those two, within 20 KB gzipped together (test/widget/budget.test.ts); what the app imports
 * dynamically (widget/app/later.ts: what runs only once the donor acts) is a chunk of its own,
 * `app-<name>-<hash>.js` next to it, loaded once the page is up and served by name (server/pages/assets.ts).
 * Terser packs the app about 3% tighter than esbuild. The module that drives Stripe's fields (stripe.js) is
 * built the same way but as one file, on its own: the app imports it by URL only for forms of
 * organizations on Stripe; so is the portal's page (portal.js).
 */
function appEnvironment(entry: string, fileName: string, chunked = false): EnvironmentOptions {
  return {
    consumer: "client",
    build: {
      outDir: WIDGET_OUT_DIR,
      emptyOutDir: false,
      copyPublicDir: false,
      ...(chunked
        ? { minify: "terser", terserOptions: { compress: { passes: 3 }, module: true } }
        : { minify: "esbuild" }),
      target: "es2020",
      modulePreload: false,
      cssCodeSplit: false,
      rollupOptions: {
        input: entry,
        // Keep the entry's exports (stripe.js is imported for `mountStripe`; app builds drop them by default).
        preserveEntrySignatures: "exports-only",
        output: {
          format: "es",
          entryFileNames: fileName,
          assetFileNames: (asset) =>
            asset.names.some((n) => n.endsWith(".css")) ? "app.css" : "[name][extname]",
          ...(chunked ? { chunkFileNames: "app-[name]-[hash].js" } : { inlineDynamicImports: true }),
        },
      },
    },
  };
}

/**
 * The checkout app's chunks (widget/app/later.ts). Two things Vite does not do by itself:
 *
 * - The chunks import what they share with app.js from app.js itself, and the page loads it as
 *   /checkout/app.js?v=<version>: a chunk must import that very URL, or the browser would run a second
 *   app.js. So each chunk's import of app.js gets the version the server names it by (`assetVersion`), and
 *   the chunks are named by a hash of their code and of app.js's, not of their own code alone: a chunk's
 *   name, under which it is cached for good, then always goes with the one app.js it imports.
 * - Vite wraps every dynamic import in its preload helper (about 0.5 KB gzipped), even with modulePreload
 *   off (vitejs/vite#13952, #18551); with no CSS chunks and nothing to preload it has nothing to do, so the
 *   plain import() is put back. Should Vite change how it wraps, the wrapper stays: slower to notice (the
 *   budget test would), never wrong.
 */
function checkoutChunks(): Plugin {
  const wrapped =
    /__vitePreload\(\(\) => (import\((["'])[^"'\n]+\2\)),__VITE_IS_MODERN__\?__VITE_PRELOAD__:void 0(?:,import\.meta\.url)?\)/g;
  return {
    name: "almoner:checkout-chunks",
    applyToEnvironment: (environment) => environment.name === "app",
    transform: {
      order: "post",
      handler(code) {
        if (!code.includes("__vitePreload(")) return null;
        const plain = code.replace(wrapped, "$1");
        if (plain.includes("__vitePreload(")) return null;
        return { code: plain.replace(/^import \{ __vitePreload \} from "[^"]+";/m, ""), map: null };
      },
    },
    generateBundle: {
      order: "post",
      handler(_options, bundle) {
        const entry = bundle["app.js"];
        if (entry?.type !== "chunk") return;
        const chunks = Object.values(bundle).filter(
          (file): file is Rollup.OutputChunk => file.type === "chunk" && file !== entry,
        );
        if (chunks.length === 0) return;
        const hash = createHash("sha256");
        for (const file of [entry, ...chunks])
          hash.update(chunks.reduce((code, chunk) => code.replaceAll(chunk.fileName, chunk.name), file.code));
        const id = hash.digest("base64url").slice(0, 10);
        const renamed = new Map(chunks.map((chunk) => [chunk.fileName, `app-${chunk.name}-${id}.js`]));
        const rename = (code: string) =>
          [...renamed].reduce((out, [from, to]) => out.replaceAll(from, to), code);
        entry.code = rename(entry.code);
        entry.dynamicImports = entry.dynamicImports.map((name) => renamed.get(name) ?? name);
        const version = assetVersion(entry.code);
        for (const chunk of chunks) {
          delete bundle[chunk.fileName];
          chunk.fileName = renamed.get(chunk.fileName) as string;
          chunk.code = rename(chunk.code).replace(/(["'])\.\/app\.js\1/g, `$1./app.js?v=${version}$1`);
          chunk.imports = chunk.imports.map((name) => renamed.get(name) ?? name);
          chunk.dynamicImports = chunk.dynamicImports.map((name) => renamed.get(name) ?? name);
          bundle[chunk.fileName] = chunk;
        }
      },
    },
  };
}

/**
 * The staff dashboard (/dashboard/*): an ES module (dashboard.js) and its stylesheet (dashboard.css) in
 * dist/dashboard/, and one chunk per page (dashboard-<name>-<hash>.js) that the shell imports when the page is
 * first opened. The page loads dashboard.js by its plain name (revalidated by ETag), so the chunks, which import
 * "./dashboard.js", share that one module; a chunk is named by the hash of its content and cached for good.
 */
const DASHBOARD_OUT_DIR = "dist/dashboard";
function dashboardEnvironment(): EnvironmentOptions {
  return {
    consumer: "client",
    build: {
      outDir: DASHBOARD_OUT_DIR,
      emptyOutDir: false,
      copyPublicDir: false,
      minify: "terser",
      terserOptions: { compress: { passes: 2 }, module: true },
      target: "es2020",
      modulePreload: false,
      cssCodeSplit: false,
      rollupOptions: {
        input: "widget/dashboard/main.tsx",
        output: {
          format: "es",
          entryFileNames: "dashboard.js",
          chunkFileNames: "dashboard-[name]-[hash].js",
          assetFileNames: (asset) =>
            asset.names.some((n) => n.endsWith(".css")) ? "dashboard.css" : "[name][extname]",
        },
      },
    },
  };
}

const widgetEnvironments: Record<string, EnvironmentOptions> = {
  embed: scriptEnvironment("widget/embed/loader.ts", "embed.js"),
  app: appEnvironment("widget/app/main.tsx", "app.js", true),
  stripe: appEnvironment("widget/stripe/main.ts", "stripe.js"),
  overlay: scriptEnvironment("widget/overlay/main.ts", "overlay.js"),
  // The script the form host writes into its message pages in embed mode (server/pages/hosted.ts).
  frame: scriptEnvironment("widget/embed/framedPage.ts", "frame.js"),
  // The donor portal's page (/manage/<organizationId>): its own module, loaded by that page only.
  portal: appEnvironment("widget/portal/main.tsx", "portal.js"),
  dashboard: dashboardEnvironment(),
};

export default defineConfig({
  root,
  publicDir: false,
  plugins: [checkoutChunks()],
  environments: widgetEnvironments,
  builder: {
    async buildApp(builder) {
      for (const dir of [WIDGET_OUT_DIR, DASHBOARD_OUT_DIR])
        await rm(new URL(`${dir}/`, import.meta.url), { recursive: true, force: true });
      for (const name of Object.keys(widgetEnvironments)) await builder.build(builder.environments[name]);
    },
  },
});

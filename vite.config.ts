import { rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { defineConfig, type EnvironmentOptions } from "vite";

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
 * are also the iframe and overlay pages, plus its stylesheet (app.css). One file each, no chunks. The
 * module that drives Stripe's fields (stripe.js) is built the same way, on its own: the app imports it
 * by URL only for forms of organizations on Stripe.
 */
function appEnvironment(entry: string, fileName = "app.js"): EnvironmentOptions {
  return {
    consumer: "client",
    build: {
      outDir: WIDGET_OUT_DIR,
      emptyOutDir: false,
      copyPublicDir: false,
      minify: "esbuild",
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
          inlineDynamicImports: true,
        },
      },
    },
  };
}

const widgetEnvironments: Record<string, EnvironmentOptions> = {
  embed: scriptEnvironment("widget/embed/loader.ts", "embed.js"),
  app: appEnvironment("widget/app/main.tsx"),
  stripe: appEnvironment("widget/stripe/main.ts", "stripe.js"),
  overlay: scriptEnvironment("widget/overlay/main.ts", "overlay.js"),
  // The donor portal's page (/manage/<organizationId>): its own module, loaded by that page only.
  portal: appEnvironment("widget/portal/main.tsx", "portal.js"),
};

export default defineConfig({
  root,
  publicDir: false,
  environments: widgetEnvironments,
  builder: {
    async buildApp(builder) {
      await rm(new URL(`${WIDGET_OUT_DIR}/`, import.meta.url), { recursive: true, force: true });
      for (const name of Object.keys(widgetEnvironments)) await builder.build(builder.environments[name]);
    },
  },
});

/**
 * The layering of the code, checked by `npm test` (`npm run deps`): HTTP (server/api, server/pages,
 * server/app.ts: the only code that imports Hono) → the giving domain (checkout, payments, processors,
 * billing, webhooks, mail) → the wire shapes (server/wire: rows as the API and webhook payloads show
 * them) → the store (server/store) → shared/. No cycles; shared/ and widget/ never reach into server/.
 */
/** Every layer above the store: the domain, HTTP and the composition root. */
const ABOVE_THE_STORE =
  "^server/(api|pages|checkout|payments|processors|billing|webhooks|mail|portal|staff|documents|tickets)/|^server/(app|workers|compose|index)\\.ts$";

module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      comment: "Modules depend one way: a cycle means a concept is split across both sides.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "shared-and-widget-stay-out-of-server",
      comment: "shared/ runs in the browser too, and the widget is built from it.",
      severity: "error",
      from: { path: "^(shared|widget)/" },
      to: { path: "^server/" },
    },
    {
      name: "store-imports-no-layer-above",
      comment: "The store holds rows; the domain, the wire shapes and HTTP call it, never the other way.",
      severity: "error",
      from: { path: "^server/store/" },
      to: { path: `${ABOVE_THE_STORE}|^server/wire/` },
    },
    {
      name: "wire-imports-only-store-and-shared",
      comment: "HTTP answers and webhook events both carry the wire shapes, so the shapes import neither.",
      severity: "error",
      from: { path: "^server/wire/" },
      to: { path: ABOVE_THE_STORE },
    },
    {
      name: "domain-imports-no-http",
      comment: "Checkout, payments, billing, webhooks and mail know nothing of HTTP requests.",
      severity: "error",
      from: {
        path: "^server/(checkout|payments|processors|billing|webhooks|mail|portal|staff|documents|tickets)/|^server/workers\\.ts$",
      },
      to: { path: "^server/(api|pages)/|^server/app\\.ts$" },
    },
    {
      name: "only-http-imports-hono",
      comment: "Hono is the HTTP layer's own library.",
      severity: "error",
      from: { pathNot: "^server/(api|pages)/|^server/(app|index)\\.ts$|^test/" },
      to: { path: "node_modules/(hono|@hono)/" },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^dist/" },
  },
};

import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import { analyticsRoutes } from "./api/analytics.js";
import { analyticsFormRoutes } from "./api/analyticsForms.js";
import { analyticsSummaryRoutes } from "./api/analyticsSummary.js";
import { auditLogRoutes } from "./api/auditLog.js";
import { checkoutRoutes } from "./api/checkout.js";
import { contactRoutes } from "./api/contacts.js";
import { renderDocsPage } from "./api/docs.js";
import { donationRoutes, donationsGate } from "./api/donations.js";
import type { AppDeps, AppEnv } from "./api/env.js";
import { formRoutes } from "./api/forms/routes.js";
import { keyRoutes } from "./api/keys.js";
import { linkRoutes } from "./api/links.js";
import { COOKIE as DONOR_COOKIE, manageRoutes } from "./api/manage.js";
import { apiGate, requestFrame } from "./api/middleware.js";
import { organizationRoutes } from "./api/organization.js";
import { organizationPaymentRoutes } from "./api/organizationPayments.js";
import { paymentReceiptRoutes } from "./api/paymentReceipts.js";
import { paymentRoutes } from "./api/payments.js";
import { mountProcessorWebhooks } from "./api/processorWebhooks.js";
import { defineRoute, type MountedPattern, mountRoutes, renderApiError } from "./api/route.js";
import { staffRoutes } from "./api/staff.js";
import { staffSecurityRoutes } from "./api/staffSecurity.js";
import { staffCookieName } from "./api/staffSession.js";
import { staffTeamRoutes } from "./api/staffTeam.js";
import { subscriptionRoutes } from "./api/subscriptions.js";
import { testReceiptRoutes } from "./api/testReceipt.js";
import { ticketRoutes } from "./api/tickets.js";
import { webhookRoutes } from "./api/webhooks.js";
import { ApiError } from "./errors.js";
import { isVersionOf, serveWidgetAsset } from "./pages/assets.js";
import { mountDashboard } from "./pages/dashboard.js";
import { hostedFormPage } from "./pages/hosted.js";
import { portalPage } from "./pages/portal.js";
import { mountUpdatePaymentMethodPages } from "./pages/updatePaymentMethod.js";
import { PORTAL_PAGE_PATH } from "./payments/portalUrl.js";
import { ProcessorError } from "./processors/port.js";
import { isLockConflict } from "./store/dialect.js";
import { webhookOperations } from "./webhooks/eventSchemas.js";

export type { AppDeps } from "./api/env.js";

const VERSION = "0.1.0";

/** Builds the whole HTTP app. Production and tests share it; tests call app.request() on it. */
export function createApp(deps: AppDeps) {
  const app = new OpenAPIHono<AppEnv>();
  const patterns: MountedPattern[] = [];

  app.use("*", requestFrame(deps));
  app.onError((err, c) => renderError(err, c));
  app.notFound((c) => {
    const path = c.req.path;
    const methods = patterns.find((p) => p.regex.test(path))?.methods;
    if (methods && !methods.has(c.req.method))
      throw new ApiError(405, "Method not allowed", undefined, {
        // HEAD is answered wherever GET is (the same answer without its body).
        Allow: [...methods, ...(methods.has("GET") && !methods.has("HEAD") ? ["HEAD"] : [])].join(", "),
      });
    // The API's paths answer in the API's shape; only the pages' paths get the HTML page.
    if (/^\/(v1|api)(\/|$)/.test(path)) throw new ApiError(404, "Not found");
    // A page like the others: no scripts, never framed.
    return c.html(notFoundHtml, 404, PLAIN_PAGE_HEADERS);
  });

  app.get("/health", (c) => c.json({ status: "ok" }));
  // No icon: said without an error, so that a browser asking for one (on a page that names none, JSON
  // included) logs no 404, and asks again only a day later.
  app.get("/favicon.ico", (c) => c.body(null, 204, { "Cache-Control": "public, max-age=86400" }));

  // The document itself: public, so mounted before the API key gate of /v1.
  mountRoutes(
    app,
    deps,
    [
      defineRoute({
        method: "get",
        path: "/v1/openapi.json",
        operationId: "getOpenApiDocument",
        auth: false,
        tags: ["Documentation"],
        summary: "This OpenAPI 3.1 document",
        description: "Needs no API key. The same document, as a page, is at `/docs`.",
        responses: {
          200: {
            description: "The OpenAPI 3.1 document",
            schema: z.looseObject({
              openapi: z.string().meta({ example: "3.1.0" }),
              info: z.looseObject({ title: z.string(), version: z.string() }),
              paths: z.record(z.string(), z.unknown()),
            }),
          },
        },
        handler: (c) => c.json(openApiDocument()),
      }),
    ],
    patterns,
  );
  // The reference page: its own inline styles only, no scripts, never framed.
  app.get("/docs", (c) =>
    c.html(renderDocsPage(openApiDocument() as unknown as Record<string, unknown>), 200, {
      "Content-Security-Policy":
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      "X-Frame-Options": "DENY",
    }),
  );

  const tooLarge = () => {
    throw new ApiError(413, `Request body too large: the limit is ${deps.config.maxBodyBytes} bytes`);
  };
  const limitStream = bodyLimit({ maxSize: deps.config.maxBodyBytes, onError: tooLarge });
  // Under /v1 this runs after the key and the rate limit, so a 413 is counted and carries X-RateLimit-*
  // like any answer. A body of declared length is judged by its Content-Length and then read in one go;
  // only one sent in chunks is counted as it streams (Hono's bodyLimit wraps the body in a web stream,
  // which is slow: docs/benchmarks.md).
  const limitBodies: MiddlewareHandler<AppEnv> = (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    const length = c.req.header("Content-Length");
    if (length === undefined || c.req.header("Transfer-Encoding") !== undefined) return limitStream(c, next);
    if (Number(length) > deps.config.maxBodyBytes) tooLarge();
    return next();
  };
  app.use("/api/*", limitBodies);
  app.use("/v1/*", apiGate(deps, limitBodies));
  app.use("/v1/donations", donationsGate(deps));
  app.use("/v1/donations/*", donationsGate(deps));

  mountRoutes(
    app,
    deps,
    [
      ...formRoutes(deps),
      ...linkRoutes(deps),
      ...organizationRoutes(deps),
      ...organizationPaymentRoutes(deps),
      ...testReceiptRoutes(deps),
      ...webhookRoutes(deps),
      ...keyRoutes(deps),
      ...analyticsRoutes(deps),
      ...analyticsSummaryRoutes(deps),
      ...analyticsFormRoutes(deps),
      ...checkoutRoutes(deps),
      ...contactRoutes(deps),
      ...paymentRoutes(deps),
      ...paymentReceiptRoutes(deps),
      ...donationRoutes(deps),
      ...subscriptionRoutes(deps),
      ...ticketRoutes(deps),
      ...auditLogRoutes(deps),
      ...manageRoutes(deps),
      ...staffRoutes(deps),
      ...staffSecurityRoutes(deps),
      ...staffTeamRoutes(deps),
    ],
    patterns,
  );

  // The page scripts organizations include: the embed loader and the overlay.
  for (const name of ["embed.js", "overlay.js"] as const) {
    app.get(`/${name}`, (c) => {
      const asset = serveWidgetAsset(name);
      if (!asset) return c.text(`/* ${name} is not built: run npm run build */`, 404);
      const headers = {
        "Content-Type": "application/javascript; charset=utf-8",
        "Cache-Control": "public, max-age=300, stale-while-revalidate=86400",
        "X-Content-Type-Options": "nosniff",
        ETag: asset.etag,
      };
      if (c.req.header("If-None-Match") === asset.etag) return c.body(null, 304, headers);
      return c.body(asset.body, 200, headers);
    });
  }

  // The checkout app (hosted pages, iframe and overlay); pages name it with ?v=<content hash>, and app.js
  // names its chunks (app-<name>-<hash>.js, loaded once the page is up) by names that change with them.
  const checkoutAsset = (c: Context<AppEnv>, name: string, chunk: boolean) => {
    const asset = serveWidgetAsset(name);
    if (!asset) return c.text(`/* ${name} is not built: run npm run build */`, 404);
    const forGood = chunk || isVersionOf(asset, c.req.query("v"));
    const headers = {
      "Content-Type": `${name.endsWith(".css") ? "text/css" : "application/javascript"}; charset=utf-8`,
      "Cache-Control": forGood ? "public, max-age=31536000, immutable" : "public, max-age=300",
      "X-Content-Type-Options": "nosniff",
      ETag: asset.etag,
    };
    if (c.req.header("If-None-Match") === asset.etag) return c.body(null, 304, headers);
    return c.body(asset.body, 200, headers);
  };
  for (const name of ["app.js", "app.css", "stripe.js", "portal.js"] as const)
    app.get(`/checkout/${name}`, (c) => checkoutAsset(c, name, false));
  app.get("/checkout/:chunk{app-[\\w-]+\\.js}", (c) => checkoutAsset(c, c.req.param("chunk"), true));

  app.get("/donate/:formID", (c) => hostedFormPage(c, deps, c.req.param("formID")));
  app.get("/attend/:formID", (c) => hostedFormPage(c, deps, c.req.param("formID")));
  mountUpdatePaymentMethodPages(app, deps);
  app.get(`${PORTAL_PAGE_PATH}/:organizationId`, (c) => portalPage(c, deps, c.req.param("organizationId")));
  mountProcessorWebhooks(app, deps);
  mountDashboard(app);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "An API key: `cs_live_...` (or `cs_test_...` for a sandbox organization).",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "staffSession", {
    type: "apiKey",
    in: "cookie",
    name: staffCookieName(deps.config.publicUrl),
    description:
      "The staff dashboard's session, set by `POST /api/staff/login`; a request that changes something must also come from this instance's own pages (`Origin`).",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "donorSession", {
    type: "apiKey",
    in: "cookie",
    name: DONOR_COOKIE,
    description:
      "The donor portal's session, set by `POST /api/manage/{organizationId}/session` for that organization's paths.",
  });

  // The events the server POSTs to registered webhooks, one operation each under `webhooks`.
  for (const operation of webhookOperations({ retryScheduleMs: deps.config.webhookRetryScheduleMs }))
    app.openAPIRegistry.registerWebhook(operation);

  let document: ReturnType<typeof app.getOpenAPI31Document> | undefined;
  function openApiDocument() {
    document ??= app.getOpenAPI31Document({
      openapi: "3.1.0",
      info: {
        title: "Almoner API",
        version: VERSION,
        description:
          'Donation and event forms, checkout links, contacts, payments, subscriptions, webhooks, organization settings and usage analytics. Every request carries `Authorization: Bearer <API_KEY>`. Errors are `{"error": "..."}`; validation failures add `details`, one line per problem.',
      },
      servers: [{ url: deps.config.publicUrl }],
    });
    return document;
  }

  return app;
}

function renderError(err: Error, c: Context<AppEnv>): Response {
  if (err instanceof ApiError) return renderApiError(c, err);
  // An amount below the processor's minimum for its currency (or above its maximum): the payer's to change,
  // a 400 naming the minimum ("amount must be at least ¥50 for this payment method"); nothing was charged
  // or recorded.
  if (err instanceof ProcessorError && (err.code === "amount_too_small" || err.code === "amount_too_large"))
    return renderApiError(c, ApiError.validation([err.message]));
  // A processor that cannot be used now (unreachable, or its keys refused): the answer names no detail.
  if (err instanceof ProcessorError) {
    console.error(
      `[${c.get("requestId")}] ${c.req.method} ${loggedPath(c.req.path)}: payment processor ${err.code}: ${err.message}`,
    );
    return renderApiError(
      c,
      new ApiError(
        503,
        "The payment processor cannot be used right now; please try again later.",
        undefined,
        {
          "Retry-After": "60",
        },
      ),
    );
  }
  if (err instanceof HTTPException) {
    const status = err.status;
    return c.json({ error: status === 400 ? "Invalid JSON body" : err.message || "Request failed" }, status);
  }
  if (isLockConflict(err)) {
    console.warn(
      `[${c.get("requestId")}] ${c.req.method} ${loggedPath(c.req.path)}: lost a race for a database lock (${(err as Error & { code?: string }).code}); answered 503`,
    );
    return renderApiError(
      c,
      new ApiError(503, "The database was busy and nothing was changed; please try again.", undefined, {
        "Retry-After": "1",
      }),
    );
  }
  if (clientWentAway(err)) {
    // The client stopped sending (it closed the connection, or REQUEST_TIMEOUT_SECONDS cut it off with a
    // 408): its doing, not a fault of the server's. One line, and 499 ("client closed request") in the
    // metrics instead of a 500 with a stack trace that a slow sender could repeat at will.
    console.warn(
      `[${c.get("requestId")}] ${c.req.method} ${loggedPath(c.req.path)}: the client stopped sending its request`,
    );
    return c.body(null, CLIENT_CLOSED_REQUEST);
  }
  console.error(`[${c.get("requestId")}] ${c.req.method} ${loggedPath(c.req.path)} failed:`, err);
  return c.json({ error: "Internal server error", requestId: c.get("requestId") }, 500);
}

/** The status nginx and others record for a request whose client went away before it was read. */
const CLIENT_CLOSED_REQUEST = 499 as ContentfulStatusCode;

/** Whether reading the request failed because its connection was closed or cut off while it was sent. */
function clientWentAway(err: unknown): boolean {
  // Only the reading's own error: another failure of a request whose client has gone is still logged in full.
  return (
    err instanceof Error && (err as { code?: unknown }).code === "ECONNRESET" && err.message === "aborted"
  );
}

/**
 * A request's path as logs may keep it: a segment as long as a secret token (43 characters of base64url,
 * as in a payment-method update link) is left out; ids (uuids, `pay_…`) are shorter and stay.
 */
export function loggedPath(path: string): string {
  // Characters outside printable ASCII as \u escapes: a path (decoded from %0a, %00, …) cannot start a
  // line of its own in the log or carry terminal controls.
  return path
    .replace(/[A-Za-z0-9_-]{40,}/g, "[token]")
    .replace(/[^\x20-\x7e]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** The headers of a page with no scripts of its own that no site may frame. */
const PLAIN_PAGE_HEADERS = {
  "Content-Security-Policy":
    "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Frame-Options": "DENY",
};

const notFoundHtml =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found</title></head><body><h1>Page not found</h1></body></html>';

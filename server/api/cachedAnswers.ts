import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { isUuid } from "../ids.js";
import { peekForm } from "../store/forms.js";
import { peekKeyBySecret } from "../store/keys.js";
import { leasedRateLimit } from "../store/rateLimits.js";
import type { AppDeps } from "./env.js";
import { formAnswerBytes } from "./forms/present.js";
import { answerNeedsSales } from "./forms/routes.js";
import { bearerKey, metricOf, permissionsOf, rateLimitHeaders, requestIdFor } from "./middleware.js";

const FORM_PATH = /^\/v1\/forms\/([0-9A-Fa-f-]{36})$/;

export interface CachedAnswers {
  listener: RequestListener;
  /** Requests answered from memory so far (for tests and the benchmark's report). */
  answered(): number;
}

/**
 * GET /v1/forms/{id}, the API's hottest read, answered from this process's memory when everything the
 * answer needs is already there: the key (read cache), a rate-limit place (a lease), the form (read
 * cache) and its JSON. The answer is the Hono route's own (the same bytes from formAnswerBytes, status
 * and headers), counted against the rate limit and recorded for api-metrics the same way, without the
 * Request object, context and middleware chain that cost more than half of such a request's CPU.
 * Anything else (another route, a query string, a miss of any of those, any error) goes to the app
 * untouched: the app stays the one place that decides errors.
 */
export function withCachedAnswers(deps: AppDeps, app: RequestListener): CachedAnswers {
  let answered = 0;
  const fromMemory = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.method !== "GET" || !req.url) return false;
    const path = FORM_PATH.exec(req.url);
    const authorization = req.headers.authorization;
    if (!path || !isUuid(path[1]) || !authorization) return false;
    const started = performance.now();
    const secret = bearerKey(authorization);
    const key = secret === null ? undefined : peekKeyBySecret(deps.store, secret);
    if (!key || !permissionsOf(key).has("forms:read")) return false;
    const form = peekForm(deps.store, path[1].toLowerCase());
    if (!form || form.organizationId !== key.organizationId || form.deletedAt || answerNeedsSales(form))
      return false;
    // Last: a place taken from the lease is counted, so from here on this request is answered here.
    const place = leasedRateLimit(deps.store.db, key.keyId, deps.config.rateLimitPerHour, deps.now());
    if (!place?.allowed) return false;
    const body = formAnswerBytes(deps.config.publicUrl, form);
    const given = req.headers["x-request-id"];
    const limits = rateLimitHeaders(place);
    // A flat [name, value, ...] list: Node writes it without building a headers object first.
    res.writeHead(200, [
      "X-Request-Id",
      requestIdFor(typeof given === "string" ? given : undefined),
      "X-RateLimit-Limit",
      limits["X-RateLimit-Limit"],
      "X-RateLimit-Remaining",
      limits["X-RateLimit-Remaining"],
      "X-RateLimit-Reset",
      limits["X-RateLimit-Reset"],
      "Content-Type",
      "application/json",
      "Content-Length",
      String(body.byteLength),
    ]);
    res.end(body);
    deps.metrics.record(metricOf(deps, key, { path: req.url, method: "GET", status: 200, started }));
    answered++;
    return true;
  };
  return {
    listener: (req, res) => {
      if (!fromMemory(req, res)) app(req, res);
    },
    answered: () => answered,
  };
}

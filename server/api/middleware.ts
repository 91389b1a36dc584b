import type { Context, MiddlewareHandler, Next } from "hono";
import { PERMISSIONS, type Permission } from "../../shared/enums.js";
import { isoAt } from "../../shared/time.js";
import { ApiError } from "../errors.js";
import { prefixedId } from "../ids.js";
import { type ApiKeyRecord, findKeyBySecretCached, peekKeyBySecret } from "../store/keys.js";
import type { RateLimitResult } from "../store/rateLimits.js";
import type { ApiMetricsTable } from "../store/schema.js";
import type { AppDeps, AppEnv, AuthContext } from "./env.js";
import { checkOwnOrigin } from "./requestSource.js";
import { staffSessionOf } from "./staffSession.js";

const KNOWN_PERMISSIONS: ReadonlySet<string> = new Set(PERMISSIONS);

/** A key's auth context: the organization, the key and its permissions as a set. */
function authOf(key: ApiKeyRecord): AuthContext {
  const permissions = new Set(key.permissions.filter((p): p is Permission => KNOWN_PERMISSIONS.has(p)));
  return Object.freeze({
    organizationId: key.organizationId,
    keyId: key.keyId,
    permissions,
    actor: { type: "key", id: key.keyId } as const,
  });
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A request's id: the caller's own X-Request-Id when it is a sane one, else a new one. */
export function requestIdFor(given: string | undefined): string {
  return given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The key of an `Authorization: Bearer <key>` header, or null when the header is not of that form. */
export function bearerKey(header: string): string | null {
  return BEARER.exec(header)?.[1] ?? null;
}

/** The X-RateLimit-* headers of every authenticated answer, added to `headers`. */
function addRateLimitHeaders(headers: Record<string, string>, result: RateLimitResult): void {
  headers["X-RateLimit-Limit"] = String(result.limit);
  headers["X-RateLimit-Remaining"] = String(result.remaining);
  headers["X-RateLimit-Reset"] = String(result.reset);
}

/**
 * The api-metrics record of an authenticated request, `started` being its performance.now() on arrival;
 * `isoTime` writes its time (isoAt, or a memo of it: isoMemo).
 */
export function metricOf(
  deps: AppDeps,
  auth: { organizationId: string; keyId: string },
  request: { path: string; method: string; status: number; started: number },
  isoTime: (ms: number) => string = isoAt,
): ApiMetricsTable {
  const now = deps.now();
  return {
    id: prefixedId("met", now),
    organization_id: auth.organizationId,
    key_id: auth.keyId,
    // As the database can keep it: a NUL (a path sent with `%00`) written back as `%00`.
    endpoint: request.path.slice(0, 500).replaceAll("\u0000", "%00"),
    method: request.method,
    status_code: request.status,
    response_time_us: Math.round((performance.now() - request.started) * 1000),
    created_at: isoTime(now),
  };
}

/** isoAt, remembering its last answer: requests of the same millisecond share one string. */
function isoMemo(): (ms: number) => string {
  let isoMs = Number.NaN;
  let iso = "";
  return (ms) => {
    if (ms !== isoMs) {
      isoMs = ms;
      iso = isoAt(ms);
    }
    return iso;
  };
}

declare module "hono" {
  interface ContextVariableMap {
    /**
     * The headers the pipeline gives this request's answer, as a plain record: `responseHeaders` makes it,
     * later middleware adds to it, and it is applied once, when the answer is known. Kept out of Hono's
     * c.header(), which builds a Headers object per request that the Node adapter then copies out again.
     */
    answerHeaders: Record<string, string>;
    /** The answer made by `answer`, which carries those headers from the start. */
    answered: Response;
  }
}

function headersOf(c: Context): Record<string, string> {
  const headers = c.get("answerHeaders");
  if (!headers) throw new Error("responseHeaders must run before the rest of the pipeline");
  return headers;
}

/**
 * An answer with the pipeline's headers in it from the start, given as one plain record (which the Node
 * adapter writes as it is): for answers on hot paths. Headers set with c.header() are not in it, so a
 * route under middleware that sets headers that way answers with c.json() or c.body() instead.
 */
export function answer(c: Context, status: number, body: string, headers: Record<string, string>): Response {
  // A record of its own: the answer's headers stay out of any other answer this request may end with.
  const all: Record<string, string> = {};
  const pipeline = headersOf(c);
  for (const name in pipeline) all[name] = pipeline[name];
  for (const name in headers) all[name] = headers[name];
  const res = new Response(body, { status, headers: all });
  c.set("answered", res);
  return res;
}

const HSTS = "max-age=31536000; includeSubDomains";

/**
 * The frame of every answer, mounted first on every path. Before: the request's id (the caller's own
 * X-Request-Id when it sent a sane one, else a new one). After, once the answer is known (errors included,
 * rendered by the app's one handler): its headers, being `X-Request-Id`, `X-Content-Type-Options: nosniff`
 * (no answer is ever read as another type than it says), HSTS when the instance is served over https
 * (PUBLIC_URL) and what the pipeline added (X-RateLimit-*), an answer's own headers winning; and, for an
 * authenticated /v1 request, its record for the api-metrics endpoint.
 */
export function requestFrame(deps: AppDeps): MiddlewareHandler<AppEnv> {
  const hsts = deps.config.publicUrl.startsWith("https:");
  const isoTime = isoMemo();
  return async (c, next) => {
    const started = performance.now();
    const id = requestIdFor(c.req.header("X-Request-Id"));
    c.set("requestId", id);
    const headers: Record<string, string> = { "X-Request-Id": id, "X-Content-Type-Options": "nosniff" };
    if (hsts) headers["Strict-Transport-Security"] = HSTS;
    c.set("answerHeaders", headers);
    await next();
    const auth = c.get("auth");
    if (auth)
      deps.metrics.record(
        metricOf(
          deps,
          auth,
          { path: c.req.path, method: c.req.method, status: c.res.status, started },
          isoTime,
        ),
      );
    if (c.get("answered") === c.res) return;
    for (const name in headers) {
      if (c.res.headers.has(name)) continue;
      try {
        c.res.headers.set(name, headers[name]);
      } catch {
        // An answer with immutable headers: c.header() copies it into one that takes them.
        c.header(name, headers[name]);
      }
    }
  };
}

/**
 * The gate of /v1: the API key (401 without a valid one), then the key's rate limit (429 past it, and
 * X-RateLimit-* on every answer), then `guardBody` (the body size limit). One middleware calling the next
 * step itself, without a pipeline level (an async step of Hono's) per step: nothing here waits unless the
 * key or the rate limit is not at hand in memory.
 */
export function apiGate(deps: AppDeps, guardBody: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  const limited = rateLimit(deps, guardBody);
  return authenticate(deps, limited);
}

/**
 * Bearer API key → the organization and its permissions; 401 otherwise. A key in the read cache is taken
 * without waiting (this middleware and the rate limit have nothing to do after the route, so they hand
 * on next()'s promise instead of awaiting it).
 */
function authenticate(deps: AppDeps, then: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  // One auth context per key record, kept by this app: records from the read cache are shared, so a
  // cached key costs no new context.
  const auths = new WeakMap<ApiKeyRecord, AuthContext>();
  const bySession = sessionAuth(deps, then);
  const admit = (c: Context<AppEnv>, next: Next, key: ApiKeyRecord | undefined) => {
    if (!key) throw new ApiError(401, "Invalid API key");
    let auth = auths.get(key);
    if (!auth) {
      auth = authOf(key);
      auths.set(key, auth);
    }
    c.set("auth", auth);
    return then(c, next);
  };
  return (c, next) => {
    const header = c.req.header("Authorization");
    if (!header) return bySession(c, next);
    const secret = bearerKey(header);
    if (secret === null) {
      const malformed = new ApiError(401, "Malformed Authorization header: expected Bearer <API_KEY>");
      // Another scheme than Bearer is not this API's: a proxy's HTTP Basic sign-in in front of the
      // dashboard, passed on with the request. A request with a staff session is judged by it.
      if (/^bearer(\s|$)/i.test(header.trim())) throw malformed;
      return staffSessionOf(c, deps).then((session) => {
        if (!session) throw malformed;
        return bySession(c, next);
      });
    }
    const key = peekKeyBySecret(deps.store, secret);
    if (key) return admit(c, next, key);
    return findKeyBySecretCached(deps.store, secret).then((found) => admit(c, next, found));
  };
}

/**
 * Without an API key, the staff session of the dashboard's cookie: the organization and its role's
 * permissions, as a key with them would have. A change made with a session must come from this instance's
 * own pages (Origin); no cookie, or an ended session, is the 401 of a missing key.
 */
function sessionAuth(deps: AppDeps, then: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const session = await staffSessionOf(c, deps);
    if (!session) throw new ApiError(401, "Missing API key: send Authorization: Bearer <API_KEY>");
    if (!SAFE_METHODS.has(c.req.method)) checkOwnOrigin(c, deps.config);
    // The organization requires two-factor sign-in of this role: nothing but enrolment until it is set up.
    if (session.twoFactorEnrolmentRequired)
      throw new ApiError(
        403,
        "Your organization requires two-factor sign-in: set it up first (POST /api/staff/two-factor/enrolment)",
      );
    c.set("auth", {
      organizationId: session.organizationId,
      keyId: session.userId,
      permissions: session.permissions,
      actor: { type: "staff", userId: session.userId, email: session.email },
      role: session.role,
    });
    return then(c, next);
  };
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The per-key rolling-hour budget, with X-RateLimit-* (and Cache-Control: no-store) on every authenticated response. */
function rateLimit(deps: AppDeps, then: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  const admit = (c: Context<AppEnv>, next: Next, result: RateLimitResult) => {
    const headers = headersOf(c);
    addRateLimitHeaders(headers, result);
    // An organization's data (donors, gifts) is never kept by a browser's or a proxy's cache; an answer
    // that says otherwise of itself wins.
    headers["Cache-Control"] = "no-store";
    if (!result.allowed) throw ApiError.tooMany("Rate limit exceeded", result.retryAfterSeconds);
    return then(c, next);
  };
  return (c, next) => {
    const hit = deps.store.rateLimits.hit(c.get("auth").keyId, deps.config.rateLimitPerHour, deps.now());
    // A place from this process's lease is at hand without waiting.
    if (hit instanceof Promise) return hit.then((result) => admit(c, next, result));
    return admit(c, next, hit);
  };
}

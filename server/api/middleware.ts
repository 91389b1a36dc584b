import type { MiddlewareHandler } from "hono";
import { PERMISSIONS, type Permission } from "../../shared/enums.js";
import { ApiError } from "../errors.js";
import { prefixedId } from "../ids.js";
import { type ApiKeyRecord, findKeyBySecretCached } from "../store/keys.js";
import { hitRateLimit, type RateLimitResult } from "../store/rateLimits.js";
import type { ApiMetricsTable } from "../store/schema.js";
import type { AppDeps, AppEnv } from "./env.js";

const KNOWN_PERMISSIONS: ReadonlySet<string> = new Set(PERMISSIONS);
const permissionSets = new WeakMap<ApiKeyRecord, ReadonlySet<Permission>>();

/** A key's permissions as a set (made once per key record: cached records are shared). */
export function permissionsOf(key: ApiKeyRecord): ReadonlySet<Permission> {
  let set = permissionSets.get(key);
  if (!set) {
    set = new Set(key.permissions.filter((p): p is Permission => KNOWN_PERMISSIONS.has(p)));
    permissionSets.set(key, set);
  }
  return set;
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

/** The X-RateLimit-* headers of every authenticated answer. */
export function rateLimitHeaders(result: RateLimitResult): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(result.limit),
    "X-RateLimit-Remaining": String(result.remaining),
    "X-RateLimit-Reset": String(result.reset),
  };
}

/** The api-metrics record of an authenticated request, `started` being its performance.now() on arrival. */
export function metricOf(
  deps: AppDeps,
  auth: { organizationId: string; keyId: string },
  request: { path: string; method: string; status: number; started: number },
): ApiMetricsTable {
  return {
    id: prefixedId("met"),
    organization_id: auth.organizationId,
    key_id: auth.keyId,
    endpoint: request.path.slice(0, 500),
    method: request.method,
    status_code: request.status,
    response_time_us: Math.round((performance.now() - request.started) * 1000),
    created_at: isoTime(deps.now()),
  };
}

let isoMs = Number.NaN;
let iso = "";
/** new Date(ms).toISOString(), made once per millisecond (every API request needs one). */
function isoTime(ms: number): string {
  if (ms !== isoMs) {
    isoMs = ms;
    iso = new Date(ms).toISOString();
  }
  return iso;
}

/** Every response carries X-Request-Id: the caller's own when it sent a sane one, else a new one. */
/**
 * Headers of every answer: its request id, `X-Content-Type-Options: nosniff` (no answer is ever read as
 * another type than it says), and HSTS when the instance is served over https (PUBLIC_URL).
 */
export function responseHeaders(config: { publicUrl: string }): MiddlewareHandler<AppEnv> {
  const hsts = config.publicUrl.startsWith("https:");
  return async (c, next) => {
    const id = requestIdFor(c.req.header("X-Request-Id"));
    c.set("requestId", id);
    // Set before the response exists, so Hono adds them as the response is built instead of copying after.
    c.header("X-Request-Id", id);
    c.header("X-Content-Type-Options", "nosniff");
    if (hsts) c.header("Strict-Transport-Security", "max-age=31536000; includeSubDomains");
    await next();
    if (!c.res.headers.has("X-Request-Id")) c.header("X-Request-Id", id);
    if (!c.res.headers.has("X-Content-Type-Options")) c.header("X-Content-Type-Options", "nosniff");
    if (hsts && !c.res.headers.has("Strict-Transport-Security"))
      c.header("Strict-Transport-Security", "max-age=31536000; includeSubDomains");
  };
}

/** Bearer API key → the organization and its permissions; 401 otherwise. */
export function authenticate(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header("Authorization");
    if (!header) throw new ApiError(401, "Missing API key: send Authorization: Bearer <API_KEY>");
    const secret = bearerKey(header);
    if (secret === null) throw new ApiError(401, "Malformed Authorization header: expected Bearer <API_KEY>");
    const key = await findKeyBySecretCached(deps.store, secret);
    if (!key) throw new ApiError(401, "Invalid API key");
    c.set("auth", { organizationId: key.organizationId, keyId: key.keyId, permissions: permissionsOf(key) });
    await next();
  };
}

/** The per-key rolling-hour budget, with X-RateLimit-* on every authenticated response. */
export function rateLimit(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { keyId } = c.get("auth");
    const result = await hitRateLimit(deps.store.db, keyId, deps.config.rateLimitPerHour, deps.now());
    const headers = rateLimitHeaders(result);
    if (!result.allowed)
      throw new ApiError(429, "Rate limit exceeded", undefined, {
        ...headers,
        "Retry-After": String(result.retryAfterSeconds),
      });
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
    await next();
    if (!c.res.headers.has("X-RateLimit-Limit"))
      for (const [name, value] of Object.entries(headers)) c.header(name, value);
  };
}

/** Records each authenticated /v1 request for the api-metrics endpoint, after the response is built. */
export function recordMetrics(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const auth = c.get("auth");
    if (!auth) return;
    deps.metrics.record(
      metricOf(deps, auth, { path: c.req.path, method: c.req.method, status: c.res.status, started }),
    );
  };
}

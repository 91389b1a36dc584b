import type { MiddlewareHandler } from "hono";
import { PERMISSIONS, type Permission } from "../../shared/enums.js";
import { ApiError } from "../errors.js";
import { prefixedId } from "../ids.js";
import { findKeyBySecretCached } from "../store/keys.js";
import { hitRateLimit } from "../store/rateLimits.js";
import type { AppDeps, AppEnv } from "./env.js";

const KNOWN_PERMISSIONS: ReadonlySet<string> = new Set(PERMISSIONS);
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Every response carries X-Request-Id: the caller's own when it sent a sane one, else a new one. */
export const requestId: MiddlewareHandler<AppEnv> = async (c, next) => {
  const given = c.req.header("X-Request-Id");
  const id = given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
  c.set("requestId", id);
  // Set before the response exists, so Hono adds it as the response is built instead of copying it after.
  c.header("X-Request-Id", id);
  await next();
  if (!c.res.headers.has("X-Request-Id")) c.header("X-Request-Id", id);
};

/** Bearer API key → the organization and its permissions; 401 otherwise. */
export function authenticate(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header("Authorization");
    if (!header) throw new ApiError(401, "Missing API key: send Authorization: Bearer <API_KEY>");
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new ApiError(401, "Malformed Authorization header: expected Bearer <API_KEY>");
    const key = await findKeyBySecretCached(deps.store, match[1]);
    if (!key) throw new ApiError(401, "Invalid API key");
    c.set("auth", {
      organizationId: key.organizationId,
      keyId: key.keyId,
      permissions: new Set(key.permissions.filter((p): p is Permission => KNOWN_PERMISSIONS.has(p))),
    });
    await next();
  };
}

/** The per-key rolling-hour budget, with X-RateLimit-* on every authenticated response. */
export function rateLimit(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { keyId } = c.get("auth");
    const result = await hitRateLimit(deps.store.db, keyId, deps.config.rateLimitPerHour, deps.now());
    const headers = {
      "X-RateLimit-Limit": String(result.limit),
      "X-RateLimit-Remaining": String(result.remaining),
      "X-RateLimit-Reset": String(result.reset),
    };
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
    deps.metrics.record({
      id: prefixedId("met"),
      organization_id: auth.organizationId,
      key_id: auth.keyId,
      endpoint: c.req.path.slice(0, 500),
      method: c.req.method,
      status_code: c.res.status,
      response_time_us: Math.round((performance.now() - started) * 1000),
      created_at: new Date(deps.now()).toISOString(),
    });
  };
}

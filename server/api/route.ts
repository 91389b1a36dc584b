import crypto from "node:crypto";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { z } from "zod";
import type { Permission } from "../../shared/enums.js";
import { ApiError } from "../errors.js";
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from "../store/idempotency.js";
import type { AppDeps, AppEnv } from "./env.js";
import { parseJsonObject, parseWith } from "./validate.js";

/**
 * A route is data: method, path, permission, the zod schemas of its inputs and outputs, and a handler.
 * `mountRoutes` turns each into a Hono handler (permission, validation, idempotency) and an entry of
 * the OpenAPI document, so the schemas that validate a request are the ones that document it.
 */

type Method = "get" | "post" | "put" | "patch" | "delete";
type AnyObject = z.ZodType<Record<string, unknown>>;

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

export interface RouteSpec<
  P extends AnyObject = AnyObject,
  Q extends AnyObject = AnyObject,
  B extends z.ZodType = z.ZodType,
> {
  method: Method;
  /** OpenAPI style: /v1/forms/{id} */
  path: string;
  permission?: Permission;
  /** false for the few public routes (the OpenAPI document itself). */
  auth?: boolean;
  tags: string[];
  summary: string;
  description?: string;
  params?: P;
  query?: Q;
  body?: B;
  /** Documented body schema when it differs from the parsing one (parsing schemas may transform). */
  bodyDoc?: z.ZodType;
  responses: Record<number, { description: string; schema?: z.ZodType; headers?: Record<string, string> }>;
  /** An empty request body stands for `{}` (every field of the body is optional). */
  bodyOptional?: boolean;
  /** Whose Idempotency-Keys these are; default the caller's organization. Public routes name their own scope. */
  idempotencyScope?: (c: Context<AppEnv>) => string;
  /** Checks that come before anything else, a replayed answer included (who may send this at all). */
  before?: (c: Context<AppEnv>) => void;
  handler: (
    c: Context<AppEnv>,
    input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>,
  ) => Response | Promise<Response>;
}

export function defineRoute<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec {
  return spec as unknown as RouteSpec;
}

const BODY_METHODS = new Set<Method>(["post", "put", "patch"]);
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export interface MountedPattern {
  regex: RegExp;
  methods: Set<string>;
}

export function mountRoutes(
  app: OpenAPIHono<AppEnv>,
  deps: AppDeps,
  routes: RouteSpec[],
  patterns: MountedPattern[],
): void {
  for (const route of routes) {
    const honoPath = route.path.replace(/\{(\w+)\}/g, ":$1");
    app.on(route.method.toUpperCase(), honoPath, (c) => run(c, route, deps));
    registerDoc(app, route);
    const regex = new RegExp(`^${route.path.replace(/\{\w+\}/g, "[^/]+")}/?$`);
    const existing = patterns.find((p) => p.regex.source === regex.source);
    if (existing) existing.methods.add(route.method.toUpperCase());
    else patterns.push({ regex, methods: new Set([route.method.toUpperCase()]) });
  }
}

async function run(c: Context<AppEnv>, route: RouteSpec, deps: AppDeps): Promise<Response> {
  route.before?.(c);
  if (route.permission) {
    const auth = c.get("auth");
    if (!auth.permissions.has(route.permission))
      throw new ApiError(403, `Missing permission: ${route.permission}`);
  }
  // The body is read here, but a body that is not a JSON object is refused only with the other input
  // problems, after any Idempotency-Key is claimed, so that this answer too is stored and replayed.
  let bodyText: string | undefined;
  let rawBody: Record<string, unknown> | undefined;
  let bodyError: ApiError | undefined;
  if (BODY_METHODS.has(route.method) && route.body) {
    bodyText = await c.req.text();
    try {
      rawBody = parseJsonObject(bodyText, { emptyIsObject: route.bodyOptional === true });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      bodyError = err;
    }
  }
  const inputs = () => {
    if (bodyError) throw bodyError;
    return {
      params: route.params ? parseWith(route.params, c.req.param()) : {},
      query: route.query ? parseWith(route.query, c.req.query()) : {},
      body: rawBody !== undefined && route.body ? parseWith(route.body, rawBody) : undefined,
    };
  };

  const idemKey = route.method === "post" ? c.req.header("Idempotency-Key") : undefined;
  if (idemKey === undefined) return route.handler(c, inputs());
  if (!IDEMPOTENCY_KEY.test(idemKey))
    throw ApiError.validation(["Idempotency-Key must be 1 to 255 visible ASCII characters"]);

  // The key is claimed before the request is validated, so that its first response, whatever it is,
  // is the one replayed, and a key reused for another request is a 422 even when that request is invalid.
  const orgId = route.idempotencyScope ? route.idempotencyScope(c) : c.get("auth").organizationId;
  const hash = crypto
    .createHash("sha256")
    // The parsed body when it is one (so spacing and key order do not matter), else its very text; the
    // path in lower case, as ids are (the same form under another spelling is the same request).
    .update(
      `${route.method} ${c.req.path.toLowerCase()}\n${bodyError ? `text:${bodyText}` : JSON.stringify(rawBody ?? null)}`,
    )
    .digest("hex");
  const claim = await claimIdempotencyKey(deps.store.db, orgId, idemKey, hash, deps.now());
  if (claim.kind === "mismatch") throw new ApiError(422, "Idempotency-Key reused with a different request");
  if (claim.kind === "in_progress")
    throw new ApiError(409, "A request with this Idempotency-Key is still in progress; retry shortly");
  if (claim.kind === "replay") {
    return new Response(claim.body, {
      status: claim.status,
      headers: { "Content-Type": "application/json; charset=UTF-8", "Idempotent-Replayed": "true" },
    });
  }
  let response: Response;
  try {
    response = await route.handler(c, inputs());
  } catch (err) {
    if (!(err instanceof ApiError) || !isFinal(err.status)) {
      await releaseIdempotencyKey(deps.store.db, orgId, idemKey);
      throw err;
    }
    response = renderApiError(c, err);
  }
  if (!isFinal(response.status)) {
    await releaseIdempotencyKey(deps.store.db, orgId, idemKey);
    return response;
  }
  const text = await response.clone().text();
  await completeIdempotencyKey(deps.store.db, orgId, idemKey, response.status, text);
  return response;
}

/**
 * Answers that are the request's own outcome and are replayed to a retry: successes and client errors.
 * A 429 (try later) and server errors are not: the retry runs afresh.
 */
function isFinal(status: number): boolean {
  return status < 500 && status !== 429;
}

/** The contract's error body for an ApiError: `{"error"}`, plus `details` and any extra fields. */
export function renderApiError(c: Context<AppEnv>, err: ApiError): Response {
  const body: { error: string; details?: string[] } = { error: err.message };
  if (err.details) body.details = err.details;
  if (err.extra) Object.assign(body, err.extra);
  return c.json(body, err.status, err.headers);
}

function registerDoc(app: OpenAPIHono<AppEnv>, route: RouteSpec): void {
  const responses: Record<string, { description: string; content?: Record<string, { schema: z.ZodType }> }> =
    {};
  for (const [status, res] of Object.entries(route.responses)) {
    responses[status] = res.schema
      ? { description: res.description, content: { "application/json": { schema: res.schema } } }
      : { description: res.description };
  }
  const bodySchema = route.bodyDoc ?? route.body;
  app.openAPIRegistry.registerPath({
    method: route.method,
    path: route.path,
    tags: route.tags,
    summary: route.summary,
    description: route.description,
    security: route.auth === false ? [] : [{ bearerAuth: [] }],
    request: {
      params: route.params as z.ZodObject | undefined,
      query: route.query as z.ZodObject | undefined,
      body: bodySchema
        ? { required: route.bodyOptional !== true, content: { "application/json": { schema: bodySchema } } }
        : undefined,
    },
    responses,
  } as Parameters<typeof app.openAPIRegistry.registerPath>[0]);
}

export const errorSchema = z.object({
  error: z.string().meta({ example: "Form not found" }),
  details: z.array(z.string()).optional().meta({ description: "Every validation problem, one per line" }),
});

export const standardErrors = {
  400: { description: "Validation failed or invalid JSON body", schema: errorSchema },
  401: { description: "Missing, malformed, unknown or revoked API key", schema: errorSchema },
  403: { description: "Missing permission, or a record of another merchant", schema: errorSchema },
  429: { description: "Rate limit exceeded (see Retry-After)", schema: errorSchema },
};

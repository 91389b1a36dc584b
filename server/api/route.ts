import crypto from "node:crypto";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { z } from "zod";
import type { Permission } from "../../shared/enums.js";
import { ApiError } from "../errors.js";
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  findIdempotencyKey,
  type IdempotencyPrior,
  releaseIdempotencyKey,
} from "../store/idempotency.js";
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
  // The body is read here; a body that is not a JSON object is refused with the other input problems,
  // after a key already used has had its say (a reused key is a 422 even when this request is invalid).
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

  // As Stripe does: a key already used answers first (its answer replayed, 422 for another request, 409
  // while it runs); a request refused by validation then keeps nothing, so a corrected retry with the
  // same key runs normally; only the answers of requests that ran are kept.
  const orgId = route.idempotencyScope ? route.idempotencyScope(c) : c.get("auth").organizationId;
  const hash = crypto
    .createHash("sha256")
    // The parsed body when it is one (so spacing and key order do not matter), else its very text; the
    // path in lower case, as ids are (the same form under another spelling is the same request).
    .update(
      `${route.method} ${c.req.path.toLowerCase()}\n${bodyError ? `text:${bodyText}` : JSON.stringify(rawBody ?? null)}`,
    )
    .digest("hex");
  const prior = await findIdempotencyKey(deps.store.db, orgId, idemKey, hash, deps.now());
  if (prior) return answerPrior(prior);
  const input = inputs();
  const claim = await claimIdempotencyKey(deps.store.db, orgId, idemKey, hash, deps.now());
  if (claim.kind !== "new") return answerPrior(claim);

  let response: Response;
  try {
    response = await route.handler(c, input);
  } catch (err) {
    if (!(err instanceof ApiError) || !isKept(err.status) || err.isValidation) {
      await releaseIdempotencyKey(deps.store.db, orgId, idemKey);
      throw err;
    }
    response = renderApiError(c, err);
  }
  const text = isKept(response.status) ? await response.clone().text() : undefined;
  if (text === undefined || Buffer.byteLength(text) > MAX_KEPT_ANSWER_BYTES) {
    await releaseIdempotencyKey(deps.store.db, orgId, idemKey);
    return response;
  }
  await completeIdempotencyKey(deps.store.db, orgId, idemKey, response.status, text);
  return response;
}

/**
 * The most an Idempotency-Key keeps of one answer. The request body limit keeps every real answer far
 * below it; one larger is not kept (the key is freed, and a retry runs afresh).
 */
export const MAX_KEPT_ANSWER_BYTES = 1_048_576;

function answerPrior(prior: IdempotencyPrior): Response {
  if (prior.kind === "mismatch") throw new ApiError(422, "Idempotency-Key reused with a different request");
  if (prior.kind === "in_progress")
    throw new ApiError(409, "A request with this Idempotency-Key is still in progress; retry shortly");
  return new Response(prior.body, {
    status: prior.status,
    headers: { "Content-Type": "application/json; charset=UTF-8", "Idempotent-Replayed": "true" },
  });
}

/**
 * Answers that are the outcome of a request that ran, replayed to a retry: successes and client errors
 * (a decline, a conflict). A 429 (try later) and server errors are not: the retry runs afresh.
 */
function isKept(status: number): boolean {
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

import crypto from "node:crypto";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { z } from "zod";
import type { Permission } from "../../shared/enums.js";
import { ApiError } from "../errors.js";
import { SecretsError } from "../secrets.js";
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  findIdempotencyKey,
  type IdempotencyPrior,
  releaseIdempotencyKey,
} from "../store/idempotency.js";
import type { AppDeps, AppEnv } from "./env.js";
import { parseBodyWith, parseJsonObject, parseWith, utf8Text } from "./validate.js";

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
  /**
   * The operation's name in the OpenAPI document, unique among all routes: what a generated client calls
   * the method (`listForms`, `getForm`). A stable name: renaming it breaks those clients.
   */
  operationId: string;
  /** The permission the caller must hold; of a list, any one of them. */
  permission?: Permission | readonly Permission[];
  /** false for the few public routes (the OpenAPI document itself). */
  auth?: boolean;
  /**
   * The cookie session a route without an API key needs (401 without it): the dashboard's staff session,
   * or the donor portal's. Documented as the operation's security.
   */
  session?: "staff" | "donor";
  tags: string[];
  summary: string;
  description?: string;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * Rules of the request that a JSON Schema cannot state (between fields, between the items of a list, or
   * against stored records such as the form's own funds): listed in the document as `x-rules` and in
   * the description, so that a client knows every reason a 400 may give.
   */
  rules?: BodyRule[];
  /** Marked deprecated in the OpenAPI document. */
  deprecated?: boolean;
  /** Documented body schema when it differs from the parsing one (parsing schemas may transform). */
  bodyDoc?: z.ZodType;
  responses: Record<
    number,
    {
      description: string;
      schema?: z.ZodType;
      headers?: Record<string, string>;
      /** The answer also comes as `text/csv` (a list's export, csvExport.ts): what the CSV holds. */
      csv?: string;
      /** The answer is a file of this media type (`application/pdf`), not JSON. */
      file?: string;
    }
  >;
  /** An empty request body stands for `{}` (every field of the body is optional). */
  bodyOptional?: boolean;
  /**
   * false: an Idempotency-Key is not taken (an answer that is more than its body, such as a session's
   * cookie, cannot be replayed).
   */
  idempotent?: false;
  /**
   * The answer holds a secret (a new API key, a signing secret): kept for an Idempotency-Key replay sealed
   * with the instance's secrets key (SECRETS_KEY), so the idempotency records never hold it in the clear.
   * Where there is no such key (production without SECRETS_KEY) it is not kept, and a retry runs afresh.
   */
  answerHoldsSecret?: true;
  /** Whose Idempotency-Keys these are; default the caller's organization. Public routes name their own scope. */
  idempotencyScope?: (c: Context<AppEnv>) => string;
  /** Checks that come before anything else, a replayed answer included (who may send this at all). */
  before?: (c: Context<AppEnv>) => void;
  handler: (
    c: Context<AppEnv>,
    input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>,
  ) => Response | Promise<Response>;
}

export interface BodyRule {
  /** The fields a 400 for this rule names first in its detail line. */
  fields: string[];
  /** How the error of a 400 for this rule begins, when it is one without details. */
  error?: string;
  rule: string;
}

export function defineRoute<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec {
  return spec as unknown as RouteSpec;
}

const BODY_METHODS = new Set<Method>(["post", "put", "patch"]);
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** A POST takes an Idempotency-Key unless its spec says `idempotent: false`; no other method does. */
function takesIdempotencyKey(route: RouteSpec): boolean {
  return route.method === "post" && route.idempotent !== false;
}

export interface MountedPattern {
  regex: RegExp;
  methods: Set<string>;
}

/** The operationIds an app's routes took so far: each names one operation only. */
const operationIdsOf = new WeakMap<OpenAPIHono<AppEnv>, Set<string>>();

export function mountRoutes(
  app: OpenAPIHono<AppEnv>,
  deps: AppDeps,
  routes: RouteSpec[],
  patterns: MountedPattern[],
): void {
  const operationIds = operationIdsOf.get(app) ?? new Set<string>();
  operationIdsOf.set(app, operationIds);
  for (const route of routes) {
    if (operationIds.has(route.operationId))
      throw new Error(`Two routes have the operationId ${route.operationId}`);
    operationIds.add(route.operationId);
    const honoPath = route.path.replace(/\{(\w+)\}/g, ":$1");
    app.on(route.method.toUpperCase(), honoPath, (c) => run(c, route, deps));
    registerDoc(app, route);
    const regex = new RegExp(`^${route.path.replace(/\{\w+\}/g, "[^/]+")}/?$`);
    const existing = patterns.find((p) => p.regex.source === regex.source);
    if (existing) existing.methods.add(route.method.toUpperCase());
    else patterns.push({ regex, methods: new Set([route.method.toUpperCase()]) });
  }
}

const NUL_IN_URL = "The URL must not contain the NUL character (%00)";

/**
 * One route's request: permission, body, inputs, idempotency, handler. A request without a body or an
 * Idempotency-Key (every GET) goes straight to the handler, without waiting on anything in between.
 */
function run(c: Context<AppEnv>, route: RouteSpec, deps: AppDeps): Response | Promise<Response> {
  // A path or query value holding NUL (`%00`): no id, filter or key has one, and the database refuses it.
  if (c.req.url.includes("%00")) throw ApiError.validation([NUL_IN_URL]);
  route.before?.(c);
  if (route.permission) {
    const auth = c.get("auth");
    const anyOf: readonly Permission[] =
      typeof route.permission === "string" ? [route.permission] : route.permission;
    if (!anyOf.some((p) => auth.permissions.has(p)))
      throw new ApiError(403, `Missing permission: ${anyOf.join(" or ")}`);
  }
  if (route.method === "post" || (BODY_METHODS.has(route.method) && route.body))
    return runWithBody(c, route, deps);
  return route.handler(c, inputsOf(c, route, undefined, undefined));
}

/** The route's inputs, validated (a body that was not a JSON object is refused here, with the others). */
function inputsOf(
  c: Context<AppEnv>,
  route: RouteSpec,
  rawBody: Record<string, unknown> | undefined,
  bodyError: ApiError | undefined,
  nulPaths: string[] = [],
): RouteInput<Record<string, unknown>, Record<string, unknown>, unknown> {
  if (bodyError) throw bodyError;
  return {
    params: route.params ? parseWith(route.params, c.req.param()) : {},
    query: route.query ? parseWith(route.query, queryOnce(c, route.query)) : {},
    body: rawBody !== undefined && route.body ? parseBodyWith(route.body, rawBody, nulPaths) : undefined,
  };
}

/**
 * The query's parameters, each the route takes given once: a parameter given twice (`limit=1&limit=abc`,
 * `status=A&status=B`) is a 400, not its first value taken without a word. Parameters the route does not
 * take are ignored, repeated or not, as everywhere in the API.
 */
function queryOnce(c: Context<AppEnv>, schema: z.ZodType): Record<string, string> {
  const url = c.req.url;
  const start = url.indexOf("?");
  if (start < 0) return {};
  const taken = schema instanceof z.ZodObject ? schema.shape : null;
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const name of new URLSearchParams(url.slice(start)).keys()) {
    if (taken && !(name in taken)) continue;
    if (seen.has(name)) twice.add(name);
    seen.add(name);
  }
  if (twice.size > 0)
    throw ApiError.validation([...twice].map((name) => `${name} is given more than once: send it once`));
  return c.req.query();
}

/** JSON text of a parsed body with every object's keys in sorted order: one text for one request. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

async function runWithBody(c: Context<AppEnv>, route: RouteSpec, deps: AppDeps): Promise<Response> {
  // The body is read here; a body that is not a JSON object is refused with the other input problems,
  // after a key already used has had its say (a reused key is a 422 even when this request is invalid).
  let bodyText: string | undefined;
  let rawBody: Record<string, unknown> | undefined;
  let bodyError: ApiError | undefined;
  let nulPaths: string[] = [];
  if (BODY_METHODS.has(route.method) && route.body) {
    if (!isJsonMediaType(c.req.header("Content-Type")))
      throw new ApiError(415, "The request body must be JSON: send Content-Type: application/json");
    const charset = charsetOf(c.req.header("Content-Type"));
    if (charset !== undefined && !UTF8_CHARSETS.has(charset))
      throw new ApiError(
        415,
        `The request body must be UTF-8: Content-Type charset=${charset} is not taken (send charset=utf-8, or no charset)`,
      );
    const encoding = c.req.header("Content-Encoding")?.trim().toLowerCase();
    if (encoding && encoding !== "identity")
      throw new ApiError(
        415,
        `The request body must be sent as it is: Content-Encoding ${encoding} is not taken (send no Content-Encoding)`,
      );
    bodyText = utf8Text(await c.req.arrayBuffer());
    try {
      ({ body: rawBody, nulPaths } = parseJsonObject(bodyText, {
        emptyIsObject: route.bodyOptional === true,
      }));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      bodyError = err;
    }
  }

  const sentKey = takesIdempotencyKey(route) ? c.req.header("Idempotency-Key") : undefined;
  if (sentKey === undefined) return route.handler(c, inputsOf(c, route, rawBody, bodyError, nulPaths));
  if (!IDEMPOTENCY_KEY.test(sentKey))
    throw ApiError.validation(["Idempotency-Key must be 1 to 255 visible ASCII characters"]);
  // An answer that holds a secret (a new API key, a signing secret) is replayed to the caller that made it
  // only: another key of the organization sending the same request with the same Idempotency-Key (one
  // that may not make such a key itself) runs it afresh, and meets the handler's own checks.
  const idemKey = route.answerHoldsSecret ? `${c.get("auth").keyId}/${sentKey}` : sentKey;

  // As Stripe does: a key already used answers first (its answer replayed, 422 for another request, 409
  // while it runs); a request refused by validation then keeps nothing, so a corrected retry with the
  // same key runs normally; only the answers of requests that ran are kept.
  const orgId = route.idempotencyScope ? route.idempotencyScope(c) : c.get("auth").organizationId;
  // The request's fingerprint: the parsed body when it is one, its keys sorted (so spacing and key order
  // do not matter), else its very text; the path in lower case, as ids are (the same form under another
  // spelling is the same request).
  const fingerprint = (body: string) =>
    crypto.createHash("sha256").update(`${route.method} ${c.req.path.toLowerCase()}\n${body}`).digest("hex");
  const sorted = bodyError ? null : canonicalJson(rawBody ?? null);
  const hashes = [fingerprint(sorted ?? `text:${bodyText}`)];
  // Keys stored before the body's keys were sorted hold the body as sent: a retry of one that spans an
  // upgrade is still the same request (a 422 there could have the donor pay again under a new key).
  const asSent = sorted === null ? null : JSON.stringify(rawBody ?? null);
  if (asSent !== null && asSent !== sorted) hashes.push(fingerprint(asSent));
  const sealedAs = `idempotency:${orgId}:${idemKey}`;
  const prior = await findIdempotencyKey(deps.store.db, orgId, idemKey, hashes, deps.now());
  if (prior) return answerPrior(prior, deps, sealedAs, route);
  const input = inputsOf(c, route, rawBody, bodyError, nulPaths);
  const claim = await claimIdempotencyKey(deps.store.db, orgId, idemKey, hashes, deps.now());
  if (claim.kind !== "new") return answerPrior(claim, deps, sealedAs, route);

  let response: Response;
  let kept: boolean;
  try {
    response = await route.handler(c, input);
    kept = isKept(response.status);
  } catch (err) {
    if (!(err instanceof ApiError) || !(err.ran || (isKept(err.status) && !err.isValidation))) {
      await releaseIdempotencyKey(deps.store.db, orgId, idemKey);
      throw err;
    }
    response = renderApiError(c, err);
    kept = true;
  }
  const text = kept ? await response.clone().text() : undefined;
  const stored = text !== undefined && route.answerHoldsSecret ? sealed(deps, text, sealedAs) : text;
  if (text !== undefined && stored === undefined && response.status < 300) {
    // The answer holds a secret and this instance cannot seal it (production without SECRETS_KEY): it is
    // not kept, but the key still is, so that a retry never makes a second key, webhook or link.
    await completeIdempotencyKey(
      deps.store.db,
      orgId,
      idemKey,
      409,
      JSON.stringify({ error: UNSEALED_REPLAY }),
    );
    return response;
  }
  if (stored === undefined || Buffer.byteLength(stored) > MAX_KEPT_ANSWER_BYTES) {
    await releaseIdempotencyKey(deps.store.db, orgId, idemKey);
    return response;
  }
  await completeIdempotencyKey(deps.store.db, orgId, idemKey, response.status, stored);
  return response;
}

/** The replay of an answer that held a secret this instance could not keep sealed. */
const UNSEALED_REPLAY =
  "A request with this Idempotency-Key already ran; its answer held a secret, which this instance keeps for a replay only with SECRETS_KEY set. Look the result up (GET the list it was made in) instead of sending it again";

function opened(deps: AppDeps, body: string, context: string): string {
  try {
    return deps.secrets.open(body, context);
  } catch (err) {
    if (!(err instanceof SecretsError)) throw err;
    throw new ApiError(
      409,
      "A request with this Idempotency-Key already ran, and its answer cannot be opened with this instance's SECRETS_KEY: send the request again with a new key",
    );
  }
}

/** A kept answer that holds a secret, sealed (`v1.…`, which no JSON text begins with); undefined without a secrets key. */
function sealed(deps: AppDeps, text: string, context: string): string | undefined {
  try {
    return deps.secrets.seal(text, context);
  } catch (err) {
    if (err instanceof SecretsError) return undefined;
    throw err;
  }
}

/**
 * Media types a JSON body may be declared as: JSON itself (`application/json`, `…+json`), none, and the
 * two that HTTP tools send by default for a body typed on the command line (`curl -d` sends
 * `application/x-www-form-urlencoded`; `text/plain` is what a browser sends without a preflight). The
 * body is read as JSON whichever of them is declared; any other type (a multipart upload, XML) is a 415.
 */
function isJsonMediaType(header: string | undefined): boolean {
  if (header === undefined) return true;
  const type = header.split(";")[0]?.trim().toLowerCase() ?? "";
  return (
    type === "" ||
    type === "application/json" ||
    /^application\/[\w.+-]+\+json$/.test(type) ||
    type === "application/x-www-form-urlencoded" ||
    type === "text/plain"
  );
}

/** Charsets a JSON body may be declared in: UTF-8, and ASCII, which is a part of it. */
const UTF8_CHARSETS = new Set(["utf-8", "utf8", "us-ascii", "ascii"]);

/** The `charset` parameter of a Content-Type, lower case and unquoted; undefined where there is none. */
function charsetOf(header: string | undefined): string | undefined {
  const match = header?.match(/;\s*charset\s*=\s*("?)([^";\s]*)\1/i);
  return match ? match[2].toLowerCase() : undefined;
}

/**
 * The most an Idempotency-Key keeps of one answer. The request body limit keeps every real answer far
 * below it; one larger is not kept (the key is freed, and a retry runs afresh).
 */
export const MAX_KEPT_ANSWER_BYTES = 1_048_576;

function answerPrior(prior: IdempotencyPrior, deps: AppDeps, sealedAs: string, route: RouteSpec): Response {
  if (prior.kind === "mismatch") throw new ApiError(422, "Idempotency-Key reused with a different request");
  if (prior.kind === "in_progress")
    throw new ApiError(409, "A request with this Idempotency-Key is still in progress; retry shortly");
  const body = prior.body.startsWith("v1.") ? opened(deps, prior.body, sealedAs) : prior.body;
  const headers: Record<string, string> = {
    "Content-Type": "application/json; charset=UTF-8",
    "Idempotent-Replayed": "true",
  };
  // A secret is never kept by a cache on the way, replayed or not.
  if (route.answerHoldsSecret) headers["Cache-Control"] = "no-store";
  return new Response(body, { status: prior.status, headers });
}

/**
 * Answers that are the outcome of a request that ran, replayed to a retry: successes and client errors
 * (a decline, a conflict). A 429 (try later) and server errors are not: the retry runs afresh, unless the
 * error says the request ran (ApiError's `ran`: a payment was made).
 */
function isKept(status: number): boolean {
  return status < 500 && status !== 429;
}

/** The API's error body for an ApiError: `{"error"}`, plus `details` and any extra fields. */
export function renderApiError(c: Context<AppEnv>, err: ApiError): Response {
  const body: { error: string; details?: string[] } = { error: err.message };
  if (err.details) body.details = err.details;
  if (err.extra) Object.assign(body, err.extra);
  return c.json(body, err.status, err.headers);
}

type HeaderDoc = { description: string; required?: boolean; schema: { type: "string" | "integer" } };

const REQUEST_ID: HeaderDoc = {
  description: "The request's id: the caller's own `X-Request-Id` when it sent a sane one, else a new one",
  required: true,
  schema: { type: "string" },
};
const RATE_LIMIT_HEADERS: Record<string, HeaderDoc> = {
  "X-RateLimit-Limit": {
    description: "Requests this key may make per rolling hour",
    required: true,
    schema: { type: "integer" },
  },
  "X-RateLimit-Remaining": {
    description: "Requests left in the current window",
    required: true,
    schema: { type: "integer" },
  },
  "X-RateLimit-Reset": {
    description: "When the window frees a request again (Unix seconds)",
    required: true,
    schema: { type: "integer" },
  },
};
const RETRY_AFTER: HeaderDoc = {
  description: "Seconds to wait before retrying",
  required: true,
  schema: { type: "integer" },
};
const IDEMPOTENCY_KEY_PARAM = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Makes a retry safe: the first answer of a request that ran (status and body) is kept for 24 hours and replayed, with `Idempotent-Replayed: true`, to a request with the same key and body. The same key with another body is a 422; while the first still runs, 409. A request refused by validation keeps nothing, so a corrected retry with the same key runs. Keys are scoped to the organization (public routes: to the form).",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" },
};

/** Answers every operation can give besides its own, as the server's pipeline sends them. */
function pipelineResponses(route: RouteSpec): RouteSpec["responses"] {
  const extra: RouteSpec["responses"] = {
    // Any path or query may hold `%00`, which every route refuses before anything else.
    400: { description: `Validation failed: ${NUL_IN_URL}`, schema: errorSchema },
    405: {
      description:
        "The path exists, but not with this method: `Allow` lists its methods (HEAD wherever GET is)",
      schema: errorSchema,
      headers: { Allow: "GET, POST, HEAD" },
    },
  };
  // The body limit applies to every request but a GET's, whether or not the route reads a body.
  if (route.method !== "get")
    extra[413] = { description: "The request body is larger than the server's limit", schema: errorSchema };
  if (BODY_METHODS.has(route.method) && route.body) {
    extra[415] = {
      description:
        "The request body is declared as another media type than JSON, in another charset than UTF-8, or with a Content-Encoding",
      schema: errorSchema,
    };
  }
  if (takesIdempotencyKey(route)) {
    extra[409] = route.responses[409] ?? {
      description: "A request with this Idempotency-Key is still in progress; retry shortly",
      schema: errorSchema,
    };
    extra[422] = {
      description: "The Idempotency-Key was used with a different request",
      schema: errorSchema,
    };
  }
  return extra;
}

/**
 * Who may call an operation, as the document's security schemes name them: an API key or the staff
 * session's cookie for /v1 (the dashboard calls the API with its session); a route's own session; none.
 */
function securityOf(route: RouteSpec): Record<string, string[]>[] {
  if (route.session === "staff") return [{ staffSession: [] }];
  if (route.session === "donor") return [{ donorSession: [] }];
  if (route.auth === false || !route.path.startsWith("/v1/")) return [];
  return [{ bearerAuth: [] }, { staffSession: [] }];
}

function registerDoc(app: OpenAPIHono<AppEnv>, route: RouteSpec): void {
  const authenticated = route.auth !== false && route.path.startsWith("/v1/");
  const all = { ...pipelineResponses(route), ...route.responses };
  const responses: Record<
    string,
    {
      description: string;
      headers: Record<string, HeaderDoc>;
      content?: Record<string, { schema: z.ZodType }>;
    }
  > = {};
  for (const [status, res] of Object.entries(all)) {
    const code = Number(status);
    const headers: Record<string, HeaderDoc> = { "X-Request-Id": REQUEST_ID };
    // Every authenticated answer carries the key's budget (a 401 has no key; a 405 comes before the route).
    if (authenticated && code !== 401 && code !== 405) Object.assign(headers, RATE_LIMIT_HEADERS);
    if (code === 429 || code === 503) headers["Retry-After"] = RETRY_AFTER;
    for (const [name, example] of Object.entries(res.headers ?? {}))
      headers[name] = {
        description: `For example \`${example}\``,
        required: code !== 405 || name === "Allow",
        schema: { type: "string" },
      };
    responses[status] = {
      description: res.description,
      headers,
      ...(res.file ? { content: { [res.file]: { schema: z.string().meta({ format: "binary" }) } } } : {}),
      ...(res.schema
        ? {
            content: {
              "application/json": { schema: res.schema },
              ...(res.csv ? { "text/csv": { schema: z.string().meta({ description: res.csv }) } } : {}),
            },
          }
        : {}),
    };
  }
  const bodySchema = route.bodyDoc ?? route.body;
  app.openAPIRegistry.registerPath({
    method: route.method,
    path: route.path,
    operationId: route.operationId,
    tags: route.tags,
    summary: route.summary,
    description: route.rules?.length
      ? `${route.description ?? ""}\n\nAlso refused with a 400 (rules beyond the schema):\n${route.rules.map((r) => `- ${r.rule}`).join("\n")}`.trim()
      : route.description,
    deprecated: route.deprecated,
    ...(route.rules?.length ? { "x-rules": route.rules } : {}),
    security: securityOf(route),
    parameters: takesIdempotencyKey(route) ? [IDEMPOTENCY_KEY_PARAM] : undefined,
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

/** A record's id in a path: any text the router passes (an unknown id is a 404, not a 400). */
export function pathId(description: string) {
  return z.string().min(1).meta({ description });
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

/**
 * The HTTP side: CORS, API-key authentication, routing, idempotent replays, injected faults, the served
 * stand-in Stripe.js, the `/_emulator` control endpoints and the hosted 3-D Secure / microdeposit pages.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import {
  apiError,
  idempotencyInFlight,
  idempotencyMismatch,
  invalidApiKey,
  invalidRequest,
  noApiKey,
  publishableKeyNotAllowed,
  StripeApiError,
} from "./errors.js";
import type { Faults } from "./faults.js";
import { type FormParams, type FormValue, parseForm } from "./form.js";
import { newId } from "./ids.js";
import { expand } from "./objects.js";
import { Params } from "./params.js";
import { matchRoute } from "./routes.js";
import { type Env, type KeyInfo, Op, snapshot } from "./state.js";
import type { RequestLogEntry } from "./types.js";

/** The control surface reachable over HTTP under `/_emulator/<name>` (JSON in, JSON out). */
export type ControlHandler = (
  name: string,
  method: string,
  body: Record<string, unknown>,
) => unknown | Promise<unknown>;

export interface ServerDeps {
  env: Env;
  faults: Faults;
  control: ControlHandler;
  stripeJs: () => string;
  /** Runs after each answer (or lost answer) with the operation's events. */
  dispatch: (op: Op) => void;
}

const CORS_HEADERS: Record<string, string> = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
  "Access-Control-Allow-Headers":
    "Authorization, Content-Type, Idempotency-Key, Stripe-Version, Stripe-Account, Stripe-Context, X-Stripe-Client-User-Agent, User-Agent",
  "Access-Control-Expose-Headers": "Request-Id, Idempotent-Replayed, Original-Request, Stripe-Version",
  "Access-Control-Max-Age": "600",
};

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > 2_000_000) {
        reject(new Error("request body too large"));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** JSON bodies (lenient: Stripe's v1 API only takes forms) become the same string-valued tree as a form. */
function jsonToForm(value: unknown): FormValue {
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) return value.map(jsonToForm);
  if (typeof value === "object") {
    const out: { [key: string]: FormValue } = {};
    for (const [k, v] of Object.entries(value)) out[k] = jsonToForm(v);
    return out;
  }
  return String(value);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}

function header(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name.toLowerCase()];
  if (Array.isArray(v)) return v[0] ?? null;
  return v ?? null;
}

function keyFrom(req: IncomingMessage, params: FormParams): string | null {
  const auth = header(req, "authorization");
  if (auth) {
    const [scheme, value] = auth.split(/\s+/, 2);
    if (/^bearer$/i.test(scheme) && value) return value.trim();
    if (/^basic$/i.test(scheme) && value) return Buffer.from(value, "base64").toString("utf8").split(":")[0];
  }
  const key = params.key;
  return typeof key === "string" && key ? key : null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 32rem; margin: 3rem auto; padding: 0 1rem">
<main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}

export function createRequestHandler(deps: ServerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { env, faults } = deps;

  const sendJson = (
    res: ServerResponse,
    status: number,
    body: string,
    headers: Record<string, string> = {},
  ) => {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(status, {
      ...CORS_HEADERS,
      "Content-Type": "application/json",
      "Content-Length": String(Buffer.byteLength(body)),
      "Cache-Control": "no-cache, no-store",
      ...headers,
    });
    res.end(body);
  };

  const errorJson = (e: StripeApiError) => JSON.stringify({ error: e.body }, null, 2);

  async function handleControl(req: IncomingMessage, res: ServerResponse, path: string, query: string) {
    const name = path.slice("/_emulator/".length);
    const raw = await readBody(req);
    const pageMatch = /^(3ds|microdeposits)\/([A-Za-z0-9_]+)$/.exec(name);
    if (pageMatch) {
      await handleHostedPage(req, res, pageMatch[1], pageMatch[2], raw, query);
      return;
    }
    let body: Record<string, unknown> = {};
    if (raw) {
      try {
        body = (header(req, "content-type") ?? "").includes("application/x-www-form-urlencoded")
          ? parseForm(raw)
          : (JSON.parse(raw) as Record<string, unknown>);
      } catch {
        sendJson(
          res,
          400,
          JSON.stringify({ error: { type: "invalid_request_error", message: "Invalid JSON body" } }),
        );
        return;
      }
    }
    if (req.method === "GET" && query) Object.assign(body, parseForm(query));
    try {
      const result = await deps.control(name, req.method ?? "GET", body);
      sendJson(res, 200, JSON.stringify(result ?? { ok: true }, null, 2));
    } catch (e) {
      if (e instanceof StripeApiError) sendJson(res, e.status, errorJson(e));
      else
        sendJson(
          res,
          e instanceof ControlNotFound ? 404 : 400,
          JSON.stringify({ error: { type: "invalid_request_error", message: (e as Error).message } }),
        );
    }
  }

  /** Hosted pages for redirect flows: 3-D Secure (`redirect_to_url`) and microdeposit verification. */
  async function handleHostedPage(
    req: IncomingMessage,
    res: ServerResponse,
    kind: string,
    intentId: string,
    raw: string,
    query: string,
  ) {
    const q = parseForm(query);
    const form = parseForm(raw);
    const returnUrl = typeof q.return_url === "string" ? q.return_url : null;
    const sendHtml = (status: number, html: string) => {
      res.writeHead(status, { ...CORS_HEADERS, "Content-Type": "text/html; charset=utf-8" });
      res.end(html);
    };
    if (req.method === "POST") {
      try {
        if (kind === "3ds") {
          const result = form.result === "fail" ? "fail" : "succeed";
          await deps.control("completeAuthentication", "POST", { intent: intentId, result });
          if (returnUrl) {
            const target = new URL(returnUrl);
            const prefix = intentId.startsWith("seti_") ? "setup_intent" : "payment_intent";
            target.searchParams.set(prefix, intentId);
            if (typeof q.client_secret === "string")
              target.searchParams.set(`${prefix}_client_secret`, q.client_secret);
            target.searchParams.set("redirect_status", result === "succeed" ? "succeeded" : "failed");
            res.writeHead(303, { Location: target.toString() });
            res.end();
            return;
          }
          sendHtml(
            200,
            page(
              "Authentication finished",
              `<p>3-D Secure ${result === "succeed" ? "completed" : "failed"}.</p>`,
            ),
          );
        } else {
          await deps.control("verifyMicrodeposits", "POST", { intent: intentId });
          sendHtml(200, page("Bank account verified", "<p>The microdeposits were verified.</p>"));
        }
      } catch (e) {
        sendHtml(400, page("Error", `<p>${escapeHtml((e as Error).message)}</p>`));
      }
      return;
    }
    const action = escapeHtml(`/_emulator/${kind}/${intentId}${query ? `?${query}` : ""}`);
    if (kind === "3ds") {
      sendHtml(
        200,
        page(
          "Test 3D Secure authentication",
          `<p>Stripe emulator: authenticate ${escapeHtml(intentId)}.</p>
<form method="post" action="${action}"><button type="submit" name="result" value="succeed">Complete authentication</button>
<button type="submit" name="result" value="fail">Fail authentication</button></form>`,
        ),
      );
    } else {
      sendHtml(
        200,
        page(
          "Verify your bank account",
          `<p>Stripe emulator: the microdeposits for ${escapeHtml(intentId)} have arrived (descriptor code SM11AA).</p>
<form method="post" action="${action}"><button type="submit">Verify bank account</button></form>`,
        ),
      );
    }
  }

  async function handleApi(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    path: string,
    query: string,
  ) {
    const requestId = newId("req", 14);
    const idempotencyKey = method === "POST" ? header(req, "idempotency-key") : null;
    const stripeVersion = header(req, "stripe-version") ?? env.apiVersion;
    const baseHeaders: Record<string, string> = { "Request-Id": requestId, "Stripe-Version": stripeVersion };
    if (idempotencyKey) baseHeaders["Idempotency-Key"] = idempotencyKey;
    const log: RequestLogEntry = {
      method,
      path,
      idempotencyKey,
      replayed: false,
      account: null,
      keyKind: null,
      status: 0,
      requestId,
      at: env.clock(),
    };
    env.store.requests.push(log);
    const answer = (status: number, body: string, headers: Record<string, string> = {}) => {
      log.status = status;
      sendJson(res, status, body, { ...baseHeaders, ...headers });
    };

    const raw = await readBody(req);
    let form: FormParams;
    try {
      const contentType = header(req, "content-type") ?? "";
      const bodyParams =
        contentType.includes("application/json") && raw
          ? (jsonToForm(JSON.parse(raw)) as FormParams)
          : parseForm(raw);
      form = { ...parseForm(query), ...bodyParams };
    } catch {
      answer(400, errorJson(invalidRequest("Invalid request body.")));
      return;
    }

    let keyInfo: KeyInfo;
    try {
      const key = keyFrom(req, form);
      if (!key) throw noApiKey();
      const info = env.store.keys.get(key);
      if (!info) throw invalidApiKey(key);
      keyInfo = info;
    } catch (e) {
      answer((e as StripeApiError).status, errorJson(e as StripeApiError));
      return;
    }
    delete form.key;
    const account = env.store.accounts.get(keyInfo.accountId);
    if (!account) {
      answer(401, errorJson(invalidApiKey("unknown")));
      return;
    }
    log.account = account.id;
    log.keyKind = keyInfo.kind;

    const matched = matchRoute(method, path);
    if (!matched || matched === "method") {
      answer(
        404,
        errorJson(
          invalidRequest(
            `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
            { status: 404 },
          ),
        ),
      );
      return;
    }
    if (keyInfo.kind === "publishable" && !matched.route.browser) {
      const e = publishableKeyNotAllowed();
      answer(e.status, errorJson(e));
      return;
    }

    const fault = faults.take(method, path);
    if (fault?.kind === "500") {
      answer(500, errorJson(apiError()));
      return;
    }
    if (fault?.kind === "refuse" && fault.refusal) {
      const { message, ...opts } = fault.refusal;
      answer(400, errorJson(invalidRequest(message, opts)));
      return;
    }
    if (fault?.kind === "delay" && !fault.after && !fault.inFlight) await sleep(fault.ms ?? 0);

    const scope = `${account.id}:${keyInfo.livemode}:${idempotencyKey}`;
    const fingerprint = `${method} ${path} ${canonical(form)}`;
    const existing = idempotencyKey ? env.store.idempotency.get(scope) : undefined;
    if (idempotencyKey && existing) {
      let status: number;
      let body: string;
      let extra: Record<string, string> = {};
      if (existing.inFlight) {
        const e = idempotencyInFlight(idempotencyKey);
        status = e.status;
        body = errorJson(e);
      } else if (existing.fingerprint !== fingerprint) {
        const e = idempotencyMismatch(idempotencyKey);
        status = e.status;
        body = errorJson(e);
      } else {
        status = existing.status;
        body = existing.body;
        extra = { "Idempotent-Replayed": "true", "Original-Request": existing.requestId };
        log.replayed = true;
      }
      if (fault?.kind === "delay" && fault.after) await sleep(fault.ms ?? 0);
      if (fault?.kind === "drop") {
        log.status = 0;
        req.socket.destroy();
        return;
      }
      answer(status, body, extra);
      return;
    }
    if (idempotencyKey)
      env.store.idempotency.set(scope, { fingerprint, inFlight: true, status: 0, body: "", requestId });
    // Stripe still working on it: a request with the same key meanwhile is answered 409.
    if (fault?.kind === "delay" && fault.inFlight) await sleep(fault.ms ?? 0);

    const op = new Op(env, account, keyInfo.livemode, { id: requestId, idempotency_key: idempotencyKey });
    const params = new Params(form);
    let status = 200;
    let body: string;
    let saved = true;
    try {
      const result = snapshot(
        matched.route.handle({
          op,
          params,
          path: matched.params,
          keyKind: keyInfo.kind,
          userAgent: header(req, "user-agent"),
        }),
      );
      body = JSON.stringify(expand(op, result, params.expand()), null, 2);
    } catch (e) {
      if (e instanceof StripeApiError) {
        status = e.status;
        if (status !== 402) {
          // Validation failures (and anything but a decline) leave no trace, and are not saved for replay.
          op.rollback();
          saved = false;
        }
        body = errorJson(e);
      } else {
        console.error("[stripe-emulator] internal error", e);
        op.rollback();
        saved = false;
        status = 500;
        body = errorJson(apiError(`Stripe emulator internal error: ${(e as Error).message}`));
      }
    }
    if (idempotencyKey) {
      if (saved) env.store.idempotency.set(scope, { fingerprint, inFlight: false, status, body, requestId });
      else env.store.idempotency.delete(scope);
    }
    if (fault?.kind === "delay" && fault.after) await sleep(fault.ms ?? 0);
    if (fault?.kind === "drop") {
      log.status = 0;
      req.socket.destroy();
      deps.dispatch(op);
      return;
    }
    answer(status, body);
    deps.dispatch(op);
  }

  return (req, res) => {
    const method = (req.method ?? "GET").toUpperCase();
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    const query = q === -1 ? "" : url.slice(q + 1);
    const run = async () => {
      if (method === "OPTIONS") {
        res.writeHead(204, CORS_HEADERS);
        res.end();
        return;
      }
      if (method === "GET" && ["/v3", "/v3/", "/v3/stripe.js", "/endive/stripe.js"].includes(path)) {
        const js = deps.stripeJs();
        res.writeHead(200, {
          ...CORS_HEADERS,
          "Content-Type": "application/javascript; charset=utf-8",
          "Content-Length": String(Buffer.byteLength(js)),
          "Cache-Control": "no-cache",
        });
        res.end(js);
        return;
      }
      if (path.startsWith("/_emulator/")) {
        await handleControl(req, res, path, query);
        return;
      }
      if (path.startsWith("/v1/")) {
        await handleApi(req, res, method, path, query);
        return;
      }
      sendJson(
        res,
        404,
        JSON.stringify({
          error: {
            type: "invalid_request_error",
            message: `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
          },
        }),
      );
    };
    run().catch((e) => {
      console.error("[stripe-emulator] request failed", e);
      if (!res.headersSent && !res.destroyed) sendJson(res, 500, errorJson(apiError()));
    });
  };
}

/** Thrown by the control handler for an unknown `/_emulator/<name>`. */
export class ControlNotFound extends Error {}

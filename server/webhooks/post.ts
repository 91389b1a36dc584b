import http from "node:http";
import https from "node:https";
import { BlockedTargetError, guardedLookup, refuseUrl, type TargetPolicy } from "./guard.js";

/**
 * One delivery attempt over HTTP(S): POST the body, succeed on any 2xx within the time limit. Redirects
 * are not followed. Connections are kept alive and shared (`deliveryAgents`), so steady traffic to a
 * receiver reuses sockets.
 */

export interface AttemptResult {
  ok: boolean;
  httpStatus: number | null;
  responseTimeMs: number;
  error: string | null;
  /** The attempt was cut short by the dispatcher stopping, not by the receiver. */
  interrupted: boolean;
  /** The start of the receiver's answer (RESPONSE_EXCERPT_CHARS at most); null without one. */
  responseBody: string | null;
}

/** The longest wait for a receiver's answer. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

export const WEBHOOK_USER_AGENT = "Almoner-Webhooks/1";

/** How long a kept-alive connection stays open unused: receivers that never close one do not keep it for good. */
export const IDLE_SOCKET_MS = 15_000;
/** Idle connections kept open per receiver host, and in all (per pair of agents). */
const MAX_IDLE_PER_HOST = 32;
const MAX_IDLE = 256;

/** The connections of delivery attempts, by URL protocol. */
export interface DeliveryAgents {
  "http:": http.Agent;
  "https:": https.Agent;
}

/** The idle connections an agent keeps, all hosts together. */
function idleCount(agent: http.Agent): number {
  let n = 0;
  for (const sockets of Object.values(agent.freeSockets)) n += sockets?.length ?? 0;
  return n;
}

/** Makes `agent` keep a connection that has become idle only while fewer than `maxIdle` of its are (any host). */
function capIdle<A extends http.Agent>(agent: A, maxIdle: number): A {
  const keep = agent.keepSocketAlive.bind(agent);
  // Node's Agent returns whether the connection may be kept (its typings say void).
  agent.keepSocketAlive = (socket) => idleCount(agent) < maxIdle && (keep(socket) as unknown as boolean);
  return agent;
}

/**
 * The agents of one dispatcher. Connections are kept alive and shared, so steady traffic to a receiver
 * reuses them; one unused for `idleMs` is closed, and only `maxIdle` idle ones are kept (32 per host). No
 * limit of connections per host: the dispatcher bounds the attempts in flight (`maxInFlight`), and a limit
 * here would queue a receiver's attempts behind other webhooks' unanswered ones on the same host (a shared
 * integration service). In all, at most `maxInFlight` plus the idle ones: so many file descriptors at most,
 * and idle connections never hold up a new attempt.
 */
export function deliveryAgents(opts: {
  maxInFlight: number;
  idleMs?: number;
  maxIdle?: number;
}): DeliveryAgents {
  const maxIdle = opts.maxIdle ?? MAX_IDLE;
  const options = {
    keepAlive: true,
    timeout: opts.idleMs ?? IDLE_SOCKET_MS,
    maxFreeSockets: Math.min(MAX_IDLE_PER_HOST, maxIdle),
    maxTotalSockets: opts.maxInFlight + maxIdle,
  };
  return {
    "http:": capIdle(new http.Agent(options), maxIdle),
    "https:": capIdle(new https.Agent(options), maxIdle),
  };
}

/** For attempts made without a dispatcher's agents: sized to the dispatcher's default cap (DEFAULT_CAPS). */
let shared: DeliveryAgents | undefined;
function sharedAgents(): DeliveryAgents {
  shared ??= deliveryAgents({ maxInFlight: 1024 });
  return shared;
}

const ERROR_BODY_BYTES = 200;
/** How much of a receiver's answer is kept for the delivery log. */
export const RESPONSE_EXCERPT_CHARS = 500;

/** The kept start of an answer: NUL characters dropped (PostgreSQL text cannot hold them); null if empty. */
function excerpt(text: string): string | null {
  const kept = text.slice(0, RESPONSE_EXCERPT_CHARS).replaceAll("\0", "");
  return kept === "" ? null : kept;
}

export function postWebhook(
  target: string,
  headers: Record<string, string>,
  body: string,
  opts: { timeoutMs: number; policy: TargetPolicy; signal: AbortSignal; agents?: DeliveryAgents },
): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const failed = (error: string, httpStatus: number | null = null, interrupted = false): AttemptResult => ({
    ok: false,
    httpStatus,
    responseTimeMs: elapsed(),
    error,
    interrupted,
    responseBody: null,
  });

  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return Promise.resolve(failed("the webhook URL is not a valid URL"));
  }
  const refused = refuseUrl(url, opts.policy);
  if (refused) return Promise.resolve(failed(`refused by the delivery guard: ${refused}`));
  if (opts.signal.aborted) return Promise.resolve(failed("interrupted: the server was stopping", null, true));

  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal.removeEventListener("abort", onAbort);
      resolve(result);
    };
    const transport = url.protocol === "https:" ? https : http;
    const agents = opts.agents ?? sharedAgents();
    const req = transport.request(url, {
      method: "POST",
      agent: agents[url.protocol as "http:" | "https:"],
      headers: {
        ...headers,
        "Content-Length": String(Buffer.byteLength(body)),
        "User-Agent": WEBHOOK_USER_AGENT,
      },
      lookup: opts.policy.guard ? guardedLookup : undefined,
    });
    // Set once the answer's status has come: at the time limit, an answer whose body is still arriving is
    // what its status says (a success, or a failure with the receiver's status), not a time-out.
    let answered: (() => void) | undefined;
    const timer = setTimeout(() => {
      if (answered) answered();
      else finish(failed(`timed out after ${opts.timeoutMs / 1000} s`));
      req.destroy();
    }, opts.timeoutMs);
    const onAbort = () => {
      finish(failed("interrupted: the server was stopping", null, true));
      req.destroy();
    };
    opts.signal.addEventListener("abort", onAbort, { once: true });

    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        if (text.length < RESPONSE_EXCERPT_CHARS) text += chunk;
      });
      if (status >= 200 && status < 300) {
        // The time is the answer's arrival; its body (only its start is kept) is read to its end.
        const responseTimeMs = elapsed();
        const succeed = () =>
          finish({
            ok: true,
            httpStatus: status,
            responseTimeMs,
            error: null,
            interrupted: false,
            responseBody: excerpt(text),
          });
        answered = succeed;
        res.on("end", succeed);
        res.on("error", succeed);
        res.on("close", succeed);
        return;
      }
      const done = () => {
        const snippet = text.replace(/\s+/g, " ").trim().slice(0, ERROR_BODY_BYTES);
        const why =
          status >= 300 && status < 400
            ? `HTTP ${status}: redirect${location ? ` to ${location}` : ""} not followed`
            : `HTTP ${status}${snippet ? `: ${snippet}` : ""}`;
        finish({ ...failed(why, status), responseBody: excerpt(text) });
      };
      answered = done;
      res.on("end", done);
      res.on("error", done);
      res.on("close", done);
    });
    req.on("error", (err: NodeJS.ErrnoException) => {
      if (err instanceof BlockedTargetError) finish(failed(`refused by the delivery guard: ${err.message}`));
      else finish(failed(err.code ? `${err.code}: ${err.message}` : err.message));
    });
    req.end(body);
  });
}

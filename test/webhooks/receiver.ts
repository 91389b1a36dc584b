import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * A real webhook receiver on 127.0.0.1 (OS-picked port) for the tests. Every delivery is checked with the
 * `verify` function of docs/webhooks.md's receiver recipe, compiled from that document, so the documented
 * recipe is what the tests run.
 */

export interface Envelope {
  id: string;
  event: string;
  createdAt: number;
  data: Record<string, unknown>;
}

export interface Received {
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: Envelope;
  /** The documented recipe's verdict with the receiver's secret. */
  verified: boolean;
  /** performance.now() when the request arrived. */
  at: number;
  /** The status this receiver answers (or will, after its delay). */
  answered: number;
  /** The answer was written (false while delayed, or when the sender gave up first). */
  acked: boolean;
}

type Verify = (secret: string, rawBody: string, headers: http.IncomingHttpHeaders) => boolean;

const RECIPE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../docs/webhooks.md");

/** The `verify` function of docs/webhooks.md's receiver recipe, compiled from the document itself. */
export function documentedVerify(): Verify {
  const text = fs.readFileSync(RECIPE, "utf8");
  const block = [...text.matchAll(/```js\n([\s\S]*?)```/g)]
    .map((m) => m[1])
    .find((code) => code.includes("function verify("));
  // The function alone: the rest of the recipe starts a server.
  const code = block && /function verify\([\s\S]*?\n}\n/.exec(block)?.[0];
  if (!code) throw new Error("docs/webhooks.md has no ```js block with function verify(");
  return new Function("crypto", `${code}\nreturn verify;`)(crypto) as Verify;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Sets the secret deliveries are verified with (known only after registration). */
  setSecret(secret: string): void;
  /** Resolves once `predicate` holds for the received list; rejects after `timeoutMs`. */
  waitFor(predicate: (received: Received[]) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** Status to answer the n-th request (0-based) with; default 200. */
  status?: (n: number, body: Envelope) => number;
  /** Milliseconds to wait before answering the n-th request (0-based); default 0. */
  delayMs?: (n: number, body: Envelope) => number;
  /** Extra headers of the answer (e.g. Location). */
  headers?: Record<string, string>;
  /** The answer's body for the n-th request; default "ok", or "nope" for a status of 400 or more. */
  answer?: (n: number) => string;
}

export async function startReceiver(opts: ReceiverOptions = {}): Promise<Receiver> {
  const verify = documentedVerify();
  const received: Received[] = [];
  let secret = "";
  let n = 0;
  // A path of its own: a webhook of an earlier test whose receiver had this port gets a 404, not a delivery.
  const own = `/hooks/${crypto.randomUUID()}`;
  const server = http.createServer((req, res) => {
    if (req.url !== own) {
      req.resume();
      res.writeHead(404).end();
      return;
    }
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      raw += chunk;
    });
    req.on("end", () => {
      const index = n++;
      const at = performance.now();
      let body: Envelope;
      try {
        body = JSON.parse(raw);
      } catch {
        body = { id: "", event: "", createdAt: 0, data: {} };
      }
      const answered = opts.status ? opts.status(index, body) : 200;
      const entry: Received = {
        headers: req.headers,
        raw,
        body,
        verified: verify(secret, raw, req.headers),
        at,
        answered,
        acked: false,
      };
      received.push(entry);
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(answered, opts.headers).end(opts.answer?.(index) ?? (answered >= 400 ? "nope" : "ok"));
        entry.acked = true;
      };
      const delay = opts.delayMs ? opts.delayMs(index, body) : 0;
      if (delay > 0) setTimeout(answer, delay);
      else answer();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${own}`,
    received,
    setSecret: (s) => {
      secret = s;
    },
    async waitFor(predicate, timeoutMs = 10_000, what = "deliveries") {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline)
          throw new Error(
            `timed out waiting for ${what}; received ${received.length}: ${received
              .slice(-5)
              .map((r) => r.body.event)
              .join(", ")}`,
          );
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

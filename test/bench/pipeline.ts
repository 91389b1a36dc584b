import fs from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import os from "node:os";
import path from "node:path";
import { getRequestListener } from "@hono/node-server";
import { Hono } from "hono";
import { createApp } from "../../server/app.js";
import { composeDeps } from "../../server/compose.js";
import { loadConfig } from "../../server/config.js";
import { openStore } from "../../server/store/database.js";
import { envNumber } from "./common.js";
import { seedDatabase } from "./seed.js";

/**
 * `npx tsx test/bench/pipeline.ts`: the serving thread's CPU time per request of `GET /v1/forms/{id}` through
 * the whole app (middleware, route, the Node adapter's answer), against a bare Hono route answering a
 * constant, both called in this process through @hono/node-server's request listener with stand-in request
 * and response objects: no sockets, no HTTP parsing, no load generator. What it leaves out is the same for
 * both, so the difference is the app's own work; it moves far less with the machine's load than the rates
 * of run.ts. Requests run one after another on a SQLite file (the metrics' background thread included).
 *
 * Settings (environment): BENCH_PIPELINE_REQUESTS (per round, default 20000), BENCH_PIPELINE_ROUNDS
 * (default 12). Prints each round, then the minimum and the median over the rounds.
 */

const REQUESTS = Math.round(envNumber("BENCH_PIPELINE_REQUESTS", 20_000, 100));
const ROUNDS = Math.round(envNumber("BENCH_PIPELINE_ROUNDS", 12, 1));

/** CPU seconds of this process's main thread (Linux /proc); the whole process's where that is missing. */
function mainThreadCpuSeconds(): number {
  try {
    const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    const used = process.cpuUsage();
    return (used.user + used.system) / 1e6;
  }
}

type Listener = ReturnType<typeof getRequestListener>;

/** What the listener reads of a request: method, URL, headers (parsed and raw) and the socket. */
function standInRequest(url: string, headers: Record<string, string>): IncomingMessage {
  const rawHeaders = Object.entries(headers).flat();
  const noop = () => {};
  return { method: "GET", url, headers, rawHeaders, socket: {}, on: noop, once: noop, off: noop } as never;
}

/** What the listener writes an answer with; `ended` is told the status once the body is written. */
function standInResponse(ended: (status: number) => void): ServerResponse {
  let status = 0;
  const noop = () => {};
  const res = {
    writable: true,
    writeHead(code: number) {
      status = code;
      return res;
    },
    end() {
      ended(status);
    },
    on: noop,
    once: noop,
    off: noop,
    hasHeader: () => false,
    setHeader: noop,
  };
  return res as never;
}

async function serveAll(listener: Listener, urls: string[], headers: Record<string, string>, n: number) {
  for (let i = 0; i < n; i++) {
    const status = await new Promise<number>((resolve) => {
      void listener(standInRequest(urls[i % urls.length], headers), standInResponse(resolve));
    });
    if (status !== 200) throw new Error(`${urls[i % urls.length]} answered ${status}`);
  }
}

async function cpuPerRequestUs(run: () => Promise<void>): Promise<number> {
  const before = mainThreadCpuSeconds();
  await run();
  return ((mainThreadCpuSeconds() - before) / REQUESTS) * 1e6;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-pipeline-"));
  const databaseUrl = path.join(dir, "almoner.db");
  const seeded = await seedDatabase(databaseUrl, 200);
  const config = loadConfig({
    ...process.env,
    NODE_ENV: "production",
    DATA_DIR: dir,
    DATABASE_URL: databaseUrl,
    RATE_LIMIT_PER_HOUR: "10000000",
  });
  const store = await openStore(config.databaseUrl);
  const deps = await composeDeps(store, config);
  const app = getRequestListener(createApp(deps).fetch, { hostname: "127.0.0.1" });
  const bareApp = new Hono();
  bareApp.get("/json", (c) => c.json({ status: "ok", service: "almoner-bench-baseline" }));
  const bare = getRequestListener(bareApp.fetch, { hostname: "127.0.0.1" });

  const host = { host: "127.0.0.1:3000", "user-agent": "almoner-bench" };
  const formUrls = seeded.formIds.slice(0, 10).map((id) => `/v1/forms/${id}`);
  const auth = { ...host, authorization: `Bearer ${seeded.apiKey}` };
  const runApp = () => serveAll(app, formUrls, auth, REQUESTS);
  const runBare = () => serveAll(bare, ["/json"], host, REQUESTS);
  // Warm-up: compiled code, read caches and a rate-limit lease.
  await serveAll(app, formUrls, auth, 20_000);
  await serveAll(bare, ["/json"], host, 20_000);

  console.log(
    `Serving thread's CPU per request, ${ROUNDS} rounds of ${REQUESTS} requests, in process (no sockets)`,
  );
  const bareUs: number[] = [];
  const appUs: number[] = [];
  try {
    for (let r = 1; r <= ROUNDS; r++) {
      bareUs.push(await cpuPerRequestUs(runBare));
      appUs.push(await cpuPerRequestUs(runApp));
      console.log(
        `  round ${r}: bare Hono route ${bareUs[r - 1].toFixed(2)} µs, GET /v1/forms/{id} ${appUs[r - 1].toFixed(2)} µs`,
      );
    }
    console.log(
      `minimum: bare ${Math.min(...bareUs).toFixed(2)} µs, GET /v1/forms/{id} ${Math.min(...appUs).toFixed(2)} µs; ` +
        `median: bare ${median(bareUs).toFixed(2)} µs, GET /v1/forms/{id} ${median(appUs).toFixed(2)} µs`,
    );
  } finally {
    await deps.metrics.close();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`Benchmark failed: ${(err as Error).stack ?? err}`);
  process.exit(1);
});

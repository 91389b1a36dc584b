import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { openStore } from "../../server/store/database.js";
import { createApiKey } from "../../server/store/keys.js";
import { createOrganization } from "../../server/store/organizations.js";
import { emitEvent } from "../../server/webhooks/events.js";
import { adminQuery, PG_URL } from "./common.js";
import { killAllServersNow, startServer, stopAllServers } from "./processes.js";

/**
 * Webhook delivery figures (part of `npm run bench`), on SQLite and PostgreSQL, one server process each:
 *
 * - throughput: BENCH_WEBHOOK_EVENTS (default 5,000) events are written straight into the outbox (one
 *   transaction, as any emitting process would) and the server delivers them to a receiver on 127.0.0.1
 *   that answers 200 at once; deliveries per second from the first receipt to the last;
 * - delay: BENCH_WEBHOOK_CALLS (default 300) `POST /v1/forms` one after another, 10 ms apart; the time from
 *   sending each call to the receipt of its `form.created`, median and 99th percentile.
 *
 * Targets: ≥ 500 deliveries/s and a median delay under 100 ms. It prints figures; a miss does not fail.
 */

const EVENTS = envInt("BENCH_WEBHOOK_EVENTS", 5000);
const CALLS = envInt("BENCH_WEBHOOK_CALLS", 300);

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw ? Number(raw) : fallback;
  if (!Number.isInteger(n) || n < 10) throw new Error(`${name} must be a whole number ≥ 10`);
  return n;
}

interface Receipt {
  formId: string;
  at: number;
}

async function startReceiver(): Promise<{ url: string; receipts: Receipt[]; close(): Promise<void> }> {
  const receipts: Receipt[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data: { formID: string } };
      receipts.push({ formId: body.data.formID, at });
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    receipts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

interface Figures {
  database: string;
  deliveriesPerSecond: number;
  medianMs: number;
  p99Ms: number;
}

async function bench(
  database: "sqlite" | "postgres",
  databaseUrl: string,
  dataDir: string,
): Promise<Figures> {
  const store = await openStore(databaseUrl);
  const org = await createOrganization(store.db, { name: "Webhook bench" }, Date.now());
  const { key } = await createApiKey(store.db, { organizationId: org.id, sandbox: false }, Date.now());
  const receiver = await startReceiver();
  const server = await startServer(`Almoner (${database})`, "server/index.ts", {
    // The receiver is http on 127.0.0.1, which the delivery guard refuses: off, as for local development.
    NODE_ENV: "development",
    WEBHOOK_TARGET_GUARD: "off",
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    RATE_LIMIT_PER_HOUR: "10000000",
  });
  const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
  try {
    const reg = await fetch(`${server.url}/v1/webhooks`, {
      method: "POST",
      headers,
      body: JSON.stringify({ url: receiver.url, events: ["form.created"] }),
    });
    if (reg.status !== 201) throw new Error(`registering the webhook: ${reg.status} ${await reg.text()}`);

    // Throughput: a backlog written by another process, found by the server's poll.
    const nowMs = Date.now();
    await store.db.transaction().execute(async (trx) => {
      for (let i = 0; i < EVENTS; i++)
        await emitEvent(trx, org.id, "form.created", `bench-${i}`, { formID: `bench-${i}` }, nowMs);
    });
    await until(() => receiver.receipts.length >= EVENTS, 300_000, `${EVENTS} deliveries`);
    const first = receiver.receipts[0].at;
    const last = receiver.receipts[EVENTS - 1].at;
    const deliveriesPerSecond = (EVENTS - 1) / ((last - first) / 1000);
    const distinct = new Set(receiver.receipts.map((r) => r.formId)).size;
    receiver.receipts.length = 0;

    // Delay from the causing API call to receipt.
    const sentAt = new Map<string, number>();
    for (let i = 0; i < CALLS; i++) {
      const t0 = performance.now();
      const res = await fetch(`${server.url}/v1/forms`, {
        method: "POST",
        headers,
        body: JSON.stringify({ title: `Delay ${i} ${Math.random()}`, funds: ["General"] }),
      });
      const body = (await res.json()) as { formID: string };
      if (res.status !== 201) throw new Error(`POST /v1/forms: ${res.status}`);
      sentAt.set(body.formID, t0);
      await new Promise((r) => setTimeout(r, 10));
    }
    await until(() => receiver.receipts.length >= CALLS, 60_000, `${CALLS} deliveries`);
    const delays = receiver.receipts
      .map((r) => r.at - (sentAt.get(r.formId) ?? Number.NaN))
      .filter(Number.isFinite)
      .sort((a, b) => a - b);
    const figures = {
      database,
      deliveriesPerSecond,
      medianMs: percentile(delays, 50),
      p99Ms: percentile(delays, 99),
    };
    console.log(
      `  ${database.padEnd(10)} ${deliveriesPerSecond.toFixed(0).padStart(6)} deliveries/s (${EVENTS} events, ${distinct} distinct received)` +
        `   delay after the API call: median ${figures.medianMs.toFixed(1)} ms, p99 ${figures.p99Ms.toFixed(1)} ms (${delays.length} calls)`,
    );
    return figures;
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${server.output().trim()}`);
  } finally {
    await server.stop();
    await receiver.close();
    await store.close();
  }
}

async function main(): Promise<void> {
  console.log(
    `\nWebhooks: delivery throughput and delay (targets: ≥ 500 deliveries/s, median delay < 100 ms)`,
  );
  const results: Figures[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-bench-webhooks-"));
  try {
    results.push(await bench("sqlite", path.join(dir, "almoner.db"), dir));
    const schema = `almoner_bench_wh_${Math.random().toString(36).slice(2, 10)}`;
    try {
      await adminQuery(`create schema ${schema}`);
    } catch (err) {
      console.log(`  postgres   SKIPPED: cannot reach ${PG_URL} (${(err as Error).message})`);
      return;
    }
    try {
      const url = new URL(PG_URL);
      url.searchParams.set("schema", schema);
      results.push(await bench("postgres", url.toString(), dir));
    } finally {
      await stopAllServers();
      await adminQuery(`drop schema if exists ${schema} cascade`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    for (const r of results)
      console.log(
        `  ${r.database}: ${r.deliveriesPerSecond >= 500 ? "meets" : "MISSES"} ≥ 500/s; ${r.medianMs < 100 ? "meets" : "MISSES"} median < 100 ms`,
      );
  }
}

process.on("exit", killAllServersNow);
main().catch(async (err) => {
  console.error(`webhook bench failed: ${(err as Error).message}`);
  await stopAllServers();
  process.exitCode = 1;
});

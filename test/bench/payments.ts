import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { prefixedId, ulid } from "../../server/ids.js";
import { openStore } from "../../server/store/database.js";
import { insertForm } from "../../server/store/forms.js";
import { createApiKey } from "../../server/store/keys.js";
import { createOrganization } from "../../server/store/organizations.js";
import { listPayments } from "../../server/store/payments.js";
import type { PaymentsTable } from "../../server/store/schema.js";
import { formSchema } from "../../shared/schemas/form.js";
import { adminQuery, analyzeSchema, envNumber, getJson, loadSettings, PG_URL } from "./common.js";
import { type LoadFigures, type LoadSettings, measure } from "./load.js";
import { killAllServersNow, ROOT, type ServerProcess, startServer, stopAllServers } from "./processes.js";

/**
 * `GET /v1/payments?limit=100` with 100,000 payments stored, on SQLite and PostgreSQL: requests per
 * second beside a bare Hono route, and the last page (page 1,000, reached through the keyset cursor)
 * against the first (target: last page's p50 latency ≤ 1.5× the first's). Prints figures and writes
 * .bench/payments.json; a missed target does not fail the run.
 *
 * Settings (environment), as test/bench/run.ts: BENCH_SECONDS (default 8 per page, split into rounds),
 * BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS (10), BENCH_PG_URL (postgres://postgres@127.0.0.1:5432/test);
 * and BENCH_ROUNDS (3): page 1 and the last page alternate, so a change in the machine's load hits both.
 * It also times the store's keyset query alone in process, which the machine's load barely skews.
 */

const settings: LoadSettings = loadSettings();
/** First and last page are measured in alternating rounds, so a change in the machine's load hits both. */
const ROUNDS = Math.round(envNumber("BENCH_ROUNDS", 3, 1));
/** Queries per page in the in-process timing of the store's keyset query alone (no HTTP). */
const QUERY_SAMPLES = 300;
const PAYMENT_COUNT = 100_000;
const PAGE_SIZE = 100;
const LAST_PAGE = PAYMENT_COUNT / PAGE_SIZE;
/** Rows per INSERT: under SQLite's 32,766 bound variables at 31 columns. */
const INSERT_BATCH = 500;
const RATE_LIMIT = "10000000";

interface Scenario {
  id: string;
  label: string;
  figures: LoadFigures;
  /** Each round's figures, when measured in rounds; `figures` then holds their medians. */
  rounds?: LoadFigures[];
}

const scenarios: Scenario[] = [];
const notes: string[] = [];
const cleanups: (() => Promise<void>)[] = [];
const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : "-");

async function record(id: string, label: string, url: string, paths: string[], headers = {}): Promise<void> {
  process.stdout.write(`  ${label.padEnd(58)} `);
  const figures = await measure([{ url, paths, headers }], settings);
  const problems = figures.non2xx + figures.errors;
  console.log(
    `${fmt(figures.rps, 0).padStart(7)} req/s  p50 ${fmt(figures.p50)} ms  p99 ${fmt(figures.p99)} ms` +
      (problems ? `  (!) ${figures.non2xx} non-2xx, ${figures.errors} errors` : ""),
  );
  scenarios.push({ id, label, figures });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * Measures several paths in alternating rounds (A B A B …), each round `seconds / ROUNDS` long, the warm-up
 * once before the first; records each path's median req/s and latencies over the rounds.
 */
async function recordInRounds(
  url: string,
  items: { id: string; label: string; path: string }[],
  headers: Record<string, string>,
): Promise<void> {
  const perRound = Math.max(1, Math.round(settings.seconds / ROUNDS));
  const runs = new Map<string, LoadFigures[]>(items.map((i) => [i.id, []]));
  for (let round = 0; round < ROUNDS; round++)
    for (const item of items) {
      const figures = await measure([{ url, paths: [item.path], headers }], {
        ...settings,
        seconds: perRound,
        warmupSeconds: round === 0 ? settings.warmupSeconds : 0,
      });
      runs.get(item.id)?.push(figures);
    }
  for (const item of items) {
    const rounds = runs.get(item.id) ?? [];
    const pick = (f: (r: LoadFigures) => number) => median(rounds.map(f));
    const figures: LoadFigures = {
      ...rounds[0],
      rps: pick((r) => r.rps),
      p50: pick((r) => r.p50),
      p99: pick((r) => r.p99),
      mean: pick((r) => r.mean),
      requests: rounds.reduce((n, r) => n + r.requests, 0),
      non2xx: rounds.reduce((n, r) => n + r.non2xx, 0),
      errors: rounds.reduce((n, r) => n + r.errors, 0),
      seconds: perRound * rounds.length,
    };
    const problems = figures.non2xx + figures.errors;
    console.log(
      `  ${item.label.padEnd(58)} ${fmt(figures.rps, 0).padStart(7)} req/s  p50 ${fmt(figures.p50)} ms  p99 ${fmt(figures.p99)} ms` +
        `  (median of ${rounds.length} rounds: ${rounds.map((r) => fmt(r.rps, 0)).join(", ")} req/s)` +
        (problems ? `  (!) ${figures.non2xx} non-2xx, ${figures.errors} errors` : ""),
    );
    scenarios.push({ id: item.id, label: item.label, figures, rounds });
  }
}

/**
 * The store's keyset query alone, in this process (no HTTP, no JSON): page 1 and the last page queried in
 * turn, QUERY_SAMPLES times each; median milliseconds. The query's own cost, which the machine's load
 * barely skews.
 */
async function timeQueries(
  databaseUrl: string,
  organizationId: string,
  lastPosition: { sort: string; id: string },
): Promise<{ first: number; last: number }> {
  const store = await openStore(databaseUrl);
  try {
    const first: number[] = [];
    const last: number[] = [];
    for (let i = 0; i < QUERY_SAMPLES; i++) {
      let t0 = performance.now();
      const a = await listPayments(store.db, organizationId, {}, PAGE_SIZE + 1);
      first.push(performance.now() - t0);
      t0 = performance.now();
      const b = await listPayments(store.db, organizationId, {}, PAGE_SIZE + 1, lastPosition);
      last.push(performance.now() - t0);
      if (a.length !== PAGE_SIZE + 1 || b.length !== PAGE_SIZE) throw new Error("unexpected page sizes");
    }
    return { first: median(first), last: median(last) };
  } finally {
    await store.close();
  }
}

const queryTimes = new Map<string, { first: number; last: number }>();

interface Seeded {
  apiKey: string;
  organizationId: string;
  seconds: number;
}

/** An organization, a key, a form and 100,000 completed payments one second apart, oldest first. */
async function seed(databaseUrl: string): Promise<Seeded> {
  const started = performance.now();
  const store = await openStore(databaseUrl);
  try {
    const org = await createOrganization(store.db, { name: "Bench payments" }, Date.now());
    const { key } = await createApiKey(
      store.db,
      { organizationId: org.id, sandbox: org.sandbox },
      Date.now(),
    );
    const base = Date.now() - (PAYMENT_COUNT + 600) * 1000;
    const form = await insertForm(
      store.db,
      org.id,
      formSchema({ allowHttpImages: true }).parse({ title: "Bench appeal", funds: ["General"] }),
      new Date(base).toISOString(),
    );
    const details = JSON.stringify({
      lines: [{ kind: "donation", label: "Donation", unitCents: 2500, quantity: 1, amountCents: 2500 }],
      subtotalCents: 2500,
      discountCents: 0,
      promoCode: null,
      attendees: 0,
      customInputs: [],
      utm: {},
      donor: {},
      hold: [],
    });
    for (let start = 0; start < PAYMENT_COUNT; start += INSERT_BATCH) {
      const rows: PaymentsTable[] = [];
      for (let i = start; i < Math.min(PAYMENT_COUNT, start + INSERT_BATCH); i++) {
        const at = base + i * 1000;
        const iso = new Date(at).toISOString();
        rows.push({
          id: `pay_${ulid(at)}`,
          organization_id: org.id,
          form_id: form.id,
          contact_id: null,
          subscription_id: null,
          status: i % 50 === 0 ? "FAILED" : "COMPLETED",
          amount_cents: 2500,
          fee_cents: 0,
          refunded_cents: 0,
          currency: "USD",
          fund: "General",
          form_title: "Bench appeal",
          frequency: "ONE_TIME",
          cover_fees: 0,
          anonymous: 0,
          email: `donor${i}@example.org`,
          email_key: `donor${i}@example.org`,
          first_name: "Bench",
          last_name: `Donor ${i}`,
          payment_method_type: "card",
          card_brand: "visa",
          last4: "4242",
          fingerprint: null,
          processor_payment_id: `pi_bench_${i}`,
          charge_key: `bench:${prefixedId("pay", at)}`,
          failure_code: null,
          failure_message: null,
          details,
          processor: "sandbox",
          dispute: null,
          created_at: iso,
          updated_at: iso,
        });
      }
      await store.db.insertInto("payments").values(rows).execute();
    }
    return { apiKey: key, organizationId: org.id, seconds: (performance.now() - started) / 1000 };
  } finally {
    await store.close();
  }
}

/** Walks every page once (checking nothing repeats); returns the cursor that fetches the last page. */
async function cursorOfLastPage(server: ServerProcess, headers: Record<string, string>): Promise<string> {
  let cursor: string | undefined;
  const seen = new Set<string>();
  let lastCursor: string | undefined;
  for (let pageNo = 1; ; pageNo++) {
    const query = `limit=${PAGE_SIZE}${cursor ? `&lastEvaluatedKey=${encodeURIComponent(cursor)}` : ""}`;
    const body = await getJson(`${server.url}/v1/payments?${query}`, headers);
    for (const p of body.payments as { paymentID: string }[]) seen.add(p.paymentID);
    if (body.hasMore !== true) {
      if (pageNo !== LAST_PAGE) throw new Error(`the walk ended at page ${pageNo}, expected ${LAST_PAGE}`);
      if (seen.size !== PAYMENT_COUNT)
        throw new Error(`the walk saw ${seen.size} payments, expected ${PAYMENT_COUNT}`);
      if (!lastCursor) throw new Error("no cursor for the last page");
      return lastCursor;
    }
    cursor = body.lastEvaluatedKey as string;
    lastCursor = cursor;
  }
}

async function benchDatabase(db: "sqlite" | "postgres", url: string, dataDir: string): Promise<void> {
  const name = db === "sqlite" ? "SQLite" : "PostgreSQL";
  const seeded = await seed(url);
  console.log(`  seeded ${PAYMENT_COUNT.toLocaleString("en-US")} payments in ${fmt(seeded.seconds, 1)} s`);
  if (db === "postgres") {
    await analyzeSchema(new URL(url).searchParams.get("schema") ?? "public");
    console.log("  ran ANALYZE on the schema's tables");
  }
  const server = await startServer(`Almoner (${name})`, "server/index.ts", {
    NODE_ENV: "production",
    DATA_DIR: dataDir,
    DATABASE_URL: url,
    RATE_LIMIT_PER_HOUR: RATE_LIMIT,
  });
  try {
    const headers = { Authorization: `Bearer ${seeded.apiKey}` };
    const walkStarted = performance.now();
    const last = await cursorOfLastPage(server, headers);
    console.log(
      `  walked all ${LAST_PAGE} pages in ${fmt((performance.now() - walkStarted) / 1000, 1)} s, none repeated`,
    );
    await recordInRounds(
      server.url,
      [
        {
          id: `${db}-first`,
          label: `${name}: GET /v1/payments?limit=${PAGE_SIZE} (page 1)`,
          path: `/v1/payments?limit=${PAGE_SIZE}`,
        },
        {
          id: `${db}-last`,
          label: `${name}: GET /v1/payments … (page ${LAST_PAGE}, the last)`,
          path: `/v1/payments?limit=${PAGE_SIZE}&lastEvaluatedKey=${encodeURIComponent(last)}`,
        },
      ],
      headers,
    );
    // The cursor is opaque to clients; the benchmark reads it only to time the same position in process.
    const position = JSON.parse(Buffer.from(last, "base64url").toString("utf8")) as { k: string; i: string };
    const times = await timeQueries(url, seeded.organizationId, { sort: position.k, id: position.i });
    queryTimes.set(db, times);
    console.log(
      `  ${name}: the keyset query alone (in process, median of ${QUERY_SAMPLES}): page 1 ${fmt(times.first, 3)} ms, last page ${fmt(times.last, 3)} ms`,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}\nServer output:\n${server.output().trim()}`);
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const startedAt = new Date();
  console.log(
    `Payments benchmark: autocannon, ${settings.connections} connections, ${settings.warmupSeconds} s warm-up + ${settings.seconds} s per scenario, ${PAYMENT_COUNT.toLocaleString("en-US")} payments`,
  );
  console.log(
    `Node ${process.version}, ${os.cpus().length} CPUs (load generator, servers and PostgreSQL share them)`,
  );

  console.log("\nBaseline: bare Hono route on @hono/node-server");
  const bare = await startServer("bare Hono server", "test/bench/bare-server.ts", {});
  await getJson(`${bare.url}/json`, {});
  await record("bare", "bare Hono: GET /json (fixed JSON)", bare.url, ["/json"]);
  await bare.stop();

  console.log("\nSQLite");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-bench-payments-"));
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  await benchDatabase("sqlite", path.join(dir, "almoner.db"), dir);

  console.log("\nPostgreSQL");
  let reachable = true;
  try {
    await adminQuery("select 1");
  } catch (err) {
    reachable = false;
    const line = `PostgreSQL scenarios SKIPPED: cannot reach ${PG_URL} (${(err as Error).message})`;
    console.log(`  ${line}`);
    notes.push(line);
  }
  if (reachable) {
    const schema = `almoner_bench_pay_${Math.random().toString(36).slice(2, 10)}`;
    await adminQuery(`create schema ${schema}`);
    cleanups.push(async () => {
      await stopAllServers();
      await adminQuery(`drop schema if exists ${schema} cascade`);
    });
    const url = new URL(PG_URL);
    url.searchParams.set("schema", schema);
    await benchDatabase("postgres", url.toString(), dir);
  }

  const find = (id: string) => scenarios.find((s) => s.id === id)?.figures;
  const bareFigures = find("bare");
  console.log("\nRatios");
  for (const db of ["sqlite", "postgres"] as const) {
    const first = find(`${db}-first`);
    const last = find(`${db}-last`);
    if (!first || !last) continue;
    const name = db === "sqlite" ? "SQLite" : "PostgreSQL";
    const ratio = last.p50 / first.p50;
    console.log(
      `  ${name.padEnd(10)} page 1: ${fmt(first.rps, 0)} req/s (${bareFigures ? fmt((first.rps / bareFigures.rps) * 100, 1) : "-"}% of bare ${bareFigures ? fmt(bareFigures.rps, 0) : "-"}); ` +
        `last page p50 ${fmt(ratio)}× page 1 (mean ${fmt(last.mean / first.mean)}×): target ≤ 1.5× ${ratio <= 1.5 ? "MET" : "NOT MET"}`,
    );
    const q = queryTimes.get(db);
    if (q)
      console.log(`  ${"".padEnd(10)} the keyset query alone: last page ${fmt(q.last / q.first)}× page 1`);
  }
  for (const line of notes) console.log(`\n${line}`);

  const out = path.join(ROOT, ".bench");
  fs.mkdirSync(out, { recursive: true });
  const file = path.join(out, "payments.json");
  fs.writeFileSync(
    file,
    `${JSON.stringify({ startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), settings, rounds: ROUNDS, payments: PAYMENT_COUNT, pageSize: PAGE_SIZE, scenarios, queryTimes: Object.fromEntries(queryTimes), notes }, null, 2)}\n`,
  );
  console.log(`\nResults written to ${path.relative(process.cwd(), file) || file}`);
}

let interrupted = false;
async function runCleanups(): Promise<void> {
  await stopAllServers();
  while (cleanups.length) {
    const step = cleanups.pop();
    try {
      await step?.();
    } catch (err) {
      console.error(`cleanup failed: ${(err as Error).message}`);
    }
  }
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: stopping servers and cleaning up…`);
    void runCleanups().finally(() => process.exit(130));
  });
}
process.on("exit", killAllServersNow);

main()
  .then(runCleanups)
  .catch(async (err) => {
    console.error(`\nBenchmark failed: ${(err as Error).stack ?? err}`);
    await runCleanups();
    process.exit(1);
  });

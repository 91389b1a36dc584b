import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { BARE_BESIDE_LINE } from "./bareApp.js";
import { adminQuery, analyzeSchema, envNumber, getJson, loadSettings, PG_URL } from "./common.js";
import { type LoadFigures, type LoadSettings, type LoadTarget, measure } from "./load.js";
import {
  cpuSeconds,
  killAllServersNow,
  ROOT,
  type ServerProcess,
  startServer,
  stopAllServers,
} from "./processes.js";
import { checkoutRoundTrips } from "./roundTrips.js";
import { type Seeded, seedDatabase } from "./seed.js";

/**
 * `npm run bench`: throughput and latency of the forms API on SQLite and PostgreSQL against a bare
 * Hono baseline, printed as a table with the ratios the project aims for, and written to
 * .bench/results.json. It prints figures only; a missed target does not fail the run.
 *
 * Settings (environment): BENCH_SECONDS (measured seconds per scenario, default 8),
 * BENCH_WARMUP_SECONDS (default 2), BENCH_CONNECTIONS (default 10), BENCH_PG_URL (default
 * postgres://postgres@127.0.0.1:5432/test), BENCH_ONLY (a comma-separated subset of bare, sqlite, postgres),
 * BENCH_PAIRED_ROUNDS (rounds of the paired single-form vs bare comparison, default 3),
 * BENCH_CHECKOUT_WARMUP_SECONDS (unmeasured checkouts before the checkout scenario, default 8),
 * BENCH_CPU_PROFILE (a folder: every server writes a V8 CPU profile there when it stops; see processes.ts).
 */

const settings: LoadSettings = loadSettings();
/** Almoner with the bare routes beside it in the same process (the paired rounds' baseline). */
const ALMONER_AND_BARE = "test/bench/almoner-and-bare.ts";

/** BENCH_ONLY=bare,sqlite runs only those parts (bare, sqlite, postgres); default all. */
const only = process.env.BENCH_ONLY?.split(",").map((s) => s.trim());
const wanted = (part: "bare" | "sqlite" | "postgres") => !only || only.includes(part);
const FORM_COUNT = 10_000;
const PAGE_SIZE = 100;
const DEEP_PAGE = 100;
/** Ids the single-form scenario rotates over. */
const ROTATION = 10;
/** Rounds in which the bare route and the single-form GET are measured one right after the other. */
const PAIRED_ROUNDS = envNumber("BENCH_PAIRED_ROUNDS", 3, 1);
/** The highest value server/config.ts accepts; the bench must never be rate limited. */
const RATE_LIMIT = "10000000";

type DbName = "sqlite" | "postgres";

interface ScenarioResult {
  id: string;
  label: string;
  database: DbName | null;
  serverProcesses: number;
  figures: LoadFigures;
  /** Share of one core used during the measured seconds: per server process, and by the load generator. */
  cpu: { servers: number[] | null; loadGenerator: number };
}

interface Ratio {
  id: string;
  label: string;
  basis: string;
  value: number | null;
  display: string;
  target: string | null;
  met: boolean | null;
  note?: string;
}

interface PairedRound {
  bare: number;
  form: number;
  ratio: number;
  /** The plain one-row route's rate and its share of the bare route's (SQLite only; else null). */
  row: number | null;
  rowRatio: number | null;
  /** Each server's CPU time per request in the round, in microseconds (null where /proc is missing). */
  bareCpuUs: number | null;
  formCpuUs: number | null;
  problems: number;
}

/**
 * The single-form GET's share of the bare route's rate that each database aims for: on SQLite, the
 * embedded default, every request through the whole app at 60% or more; on PostgreSQL, 50%.
 */
const FORM_VS_BARE_TARGET: Record<DbName, number> = { sqlite: 0.6, postgres: 0.5 };

const scenarios: ScenarioResult[] = [];
const pairs = new Map<DbName, PairedRound[]>();
let interrupted = false;
const skipped: string[] = [];
/** Counted in process after the PostgreSQL checkout scenario (roundTrips.ts). */
let pgCheckoutRoundTrips: number | null = null;
const cleanups: (() => Promise<void>)[] = [];

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

const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : "-");

async function record(
  id: string,
  label: string,
  database: DbName | null,
  servers: ServerProcess[],
  targets: LoadTarget[],
): Promise<ScenarioResult> {
  process.stdout.write(`  ${label.padEnd(56)} `);
  let serverCpu0: (number | null)[] = [];
  let loadgenCpu0 = process.cpuUsage();
  let wall0 = 0;
  let cpu: ScenarioResult["cpu"] = { servers: null, loadGenerator: 0 };
  const figures = await measure(targets, settings, {
    measuring: () => {
      serverCpu0 = servers.map((s) => cpuSeconds(s.child.pid));
      loadgenCpu0 = process.cpuUsage();
      wall0 = performance.now();
    },
    measured: () => {
      const wall = (performance.now() - wall0) / 1000;
      const used = servers.map((s, i) => {
        const now = cpuSeconds(s.child.pid);
        const before = serverCpu0[i];
        return now === null || before === null ? null : now - before;
      });
      const lg = process.cpuUsage(loadgenCpu0);
      cpu = {
        servers: used.every((u) => u !== null) ? used.map((u) => (u as number) / wall) : null,
        loadGenerator: (lg.user + lg.system) / 1e6 / wall,
      };
    },
  });
  // Interrupted: the cleanup is under way and ends the process; print nothing more.
  if (interrupted) await new Promise<never>(() => {});
  const problems = figures.non2xx + figures.errors;
  console.log(
    `${fmt(figures.rps, 0).padStart(7)} req/s  p50 ${fmt(figures.p50)} ms  p99 ${fmt(figures.p99)} ms` +
      (problems ? `  (!) ${figures.non2xx} non-2xx, ${figures.errors} errors` : ""),
  );
  const result = { id, label, database, serverProcesses: servers.length, figures, cpu };
  scenarios.push(result);
  return result;
}

/** Walks the list once; returns the cursor that fetches page `DEEP_PAGE` (the one page `DEEP_PAGE - 1` returned). */
async function cursorOfDeepPage(server: ServerProcess, headers: Record<string, string>): Promise<string> {
  let cursor: string | undefined;
  let seen = 0;
  for (let pageNo = 1; pageNo <= DEEP_PAGE; pageNo++) {
    const query = `limit=${PAGE_SIZE}${cursor ? `&lastEvaluatedKey=${encodeURIComponent(cursor)}` : ""}`;
    const body = await getJson(`${server.url}/v1/forms?${query}`, headers);
    seen += (body.forms as unknown[]).length;
    if (pageNo === DEEP_PAGE) {
      if ((body.forms as unknown[]).length !== PAGE_SIZE)
        throw new Error(
          `page ${DEEP_PAGE} has ${(body.forms as unknown[]).length} forms, expected ${PAGE_SIZE}`,
        );
      if (!cursor) throw new Error("no cursor for the deep page");
      if (seen !== FORM_COUNT) console.log(`  note: the walk saw ${seen} forms, expected ${FORM_COUNT}`);
      return cursor;
    }
    if (typeof body.lastEvaluatedKey !== "string")
      throw new Error(`page ${pageNo} has no lastEvaluatedKey (only ${seen} forms listed)`);
    cursor = body.lastEvaluatedKey;
  }
  throw new Error("unreachable");
}

/** The three API scenarios against one running server. */
async function apiScenarios(database: DbName, server: ServerProcess, seeded: Seeded): Promise<void> {
  const headers = { Authorization: `Bearer ${seeded.apiKey}` };
  const ids = Array.from(
    { length: ROTATION },
    (_, i) => seeded.formIds[Math.floor((i * seeded.formIds.length) / ROTATION)],
  );
  for (const id of ids) {
    const form = await getJson(`${server.url}/v1/forms/${id}`, headers);
    if (form.formID !== id) throw new Error(`GET /v1/forms/${id} returned formID ${String(form.formID)}`);
  }
  const deepCursor = await cursorOfDeepPage(server, headers);
  const name = database === "sqlite" ? "SQLite" : "PostgreSQL";

  await record(
    `${database}-form`,
    `${name}: GET /v1/forms/{id}`,
    database,
    [server],
    [{ url: server.url, paths: ids.map((id) => `/v1/forms/${id}`), headers }],
  );
  await pairedRounds(
    database,
    server,
    ids.map((id) => `/v1/forms/${id}`),
    headers,
  );
  await record(
    `${database}-page1`,
    `${name}: GET /v1/forms?limit=${PAGE_SIZE} (page 1)`,
    database,
    [server],
    [{ url: server.url, paths: [`/v1/forms?limit=${PAGE_SIZE}`], headers }],
  );
  await record(
    `${database}-page${DEEP_PAGE}`,
    `${name}: GET /v1/forms … (page ${DEEP_PAGE})`,
    database,
    [server],
    [
      {
        url: server.url,
        paths: [`/v1/forms?limit=${PAGE_SIZE}&lastEvaluatedKey=${encodeURIComponent(deepCursor)}`],
        headers,
      },
    ],
  );
}

/**
 * The target (FORM_VS_BARE_TARGET) compares two rates that this shared machine's own swings move by a
 * third from one minute to the next (the bare route alone has measured anywhere from 20,000 to 38,000
 * req/s). So the target's ratio is taken from rounds in which the bare route and the single-form GET run
 * one right after the other, with the same connections, each for half a scenario's time
 * after a second of warm-up: the median of the rounds' ratios. The run's single figures above stay as
 * measured, for information. Each round also reports each server's CPU time per request, which the
 * machine's swings move less than its rates. The bare route is served by the same process as the app
 * (almoner-and-bare.ts), on a port of its own: one heap, one event loop, one set of background timers, so
 * the two differ only by the app's pipeline. On SQLite each round also measures, right after, the yardstick
 * issue 20 names: a plain Hono route reading one row of the same database (bareApp.ts `/row/:id`, same
 * process, same form ids), then the bare route again, that pair's ratio reported beside the target so a
 * reader sees what this machine gives the simplest route that reads a row.
 */
async function pairedRounds(
  database: DbName,
  server: ServerProcess,
  paths: string[],
  headers: Record<string, string>,
): Promise<void> {
  const bareUrl = await bareBeside(server);
  const round: LoadSettings = {
    ...settings,
    seconds: Math.max(2, Math.round(settings.seconds / 2)),
    warmupSeconds: 1,
  };
  const rounds: PairedRound[] = [];
  await getJson(`${bareUrl}/json`, {});
  const rowPaths = database === "sqlite" ? paths.map((p) => p.replace(/^\/v1\/forms\//, "/row/")) : null;
  if (rowPaths) {
    const first = await getJson(`${bareUrl}${rowPaths[0]}`, {});
    if (typeof first.id !== "string")
      throw new Error(`the plain one-row route answered no row for ${rowPaths[0]}`);
  }
  for (let r = 1; r <= PAIRED_ROUNDS; r++) {
    const bareCpu = cpuPerRequest(server);
    const b = await measure([{ url: bareUrl, paths: ["/json"] }], round, bareCpu.hooks);
    const formCpu = cpuPerRequest(server);
    const f = await measure([{ url: server.url, paths, headers }], round, formCpu.hooks);
    // The yardstick's own pair, right after: the one-row route, then the bare route again.
    const row = rowPaths ? await measure([{ url: bareUrl, paths: rowPaths }], round) : null;
    const bareAgain = row ? await measure([{ url: bareUrl, paths: ["/json"] }], round) : null;
    if (interrupted) await new Promise<never>(() => {});
    const problems = [b, f, row, bareAgain].reduce((n, m) => n + (m ? m.non2xx + m.errors : 0), 0);
    const bareCpuUs = bareCpu.perRequestUs(b.requests);
    const formCpuUs = formCpu.perRequestUs(f.requests);
    rounds.push({
      bare: b.rps,
      form: f.rps,
      ratio: f.rps / b.rps,
      row: row ? row.rps : null,
      rowRatio: row && bareAgain ? row.rps / bareAgain.rps : null,
      bareCpuUs,
      formCpuUs,
      problems,
    });
    const cpu =
      bareCpuUs !== null && formCpuUs !== null
        ? ` (server CPU per request: bare ${fmt(bareCpuUs, 0)} µs, GET ${fmt(formCpuUs, 0)} µs)`
        : "";
    console.log(
      `  paired round ${r}/${PAIRED_ROUNDS}: bare ${fmt(b.rps, 0)} req/s, GET /v1/forms/{id} ${fmt(f.rps, 0)} req/s: ${fmt((f.rps / b.rps) * 100, 1)}%${cpu}` +
        (row && bareAgain
          ? `; plain one-row route ${fmt(row.rps, 0)} req/s against bare ${fmt(bareAgain.rps, 0)}: ${fmt((row.rps / bareAgain.rps) * 100, 1)}%`
          : "") +
        (problems ? `  (!) ${problems} non-2xx or errors` : ""),
    );
  }
  pairs.set(database, rounds);
}

/** The bare routes' address in an Almoner process started from almoner-and-bare.ts. */
async function bareBeside(server: ServerProcess): Promise<string> {
  for (let tries = 0; tries < 50; tries++) {
    const output = server.output();
    const at = output.indexOf(BARE_BESIDE_LINE);
    if (at >= 0)
      return output
        .slice(at + BARE_BESIDE_LINE.length)
        .trim()
        .split(/\s/)[0] as string;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${server.name} printed no "${BARE_BESIDE_LINE}" line (started from ${ALMONER_AND_BARE}?)`);
}

/** A server's CPU time over a measurement (its measured seconds only), per request. */
function cpuPerRequest(server: ServerProcess) {
  let before: number | null = null;
  let after: number | null = null;
  return {
    hooks: {
      measuring: () => {
        before = cpuSeconds(server.child.pid);
      },
      measured: () => {
        after = cpuSeconds(server.child.pid);
      },
    },
    perRequestUs: (requests: number): number | null =>
      before === null || after === null || requests === 0 ? null : ((after - before) / requests) * 1e6,
  };
}

/** The plain one-row route's share of the bare route over the rounds that measured it, for the notes. */
function rowRatios(rounds: PairedRound[] | undefined): string | null {
  const measured = (rounds ?? []).flatMap((r) => (r.rowRatio === null ? [] : [r.rowRatio]));
  if (!measured.length) return null;
  return `issue 20's yardstick on this machine, a plain Hono route reading one SQLite row: median ${fmt(median(measured) * 100, 1)}% of bare (${measured.map((v) => `${fmt(v * 100, 1)}%`).join(", ")})`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function almonerEnv(databaseUrl: string, dataDir: string): Record<string, string> {
  return {
    NODE_ENV: "production",
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    RATE_LIMIT_PER_HOUR: RATE_LIMIT,
    // The checkout scenario sends thousands of attempts from one address to one form.
    CHECKOUT_LIMIT_PER_IP: "0",
    CHECKOUT_LIMIT_PER_FORM: "0",
  };
}

/** Distinct donors the checkout scenario rotates over: each is created once, then matched by email. */
const DONORS = 200;
/** Unmeasured seconds of checkouts before the checkout scenario's own warm-up and measurement. */
const CHECKOUT_WARMUP_SECONDS = envNumber("BENCH_CHECKOUT_WARMUP_SECONDS", 8, 0);
/** The one-time gift of the checkout scenario, in dollars. */
const GIFT = 25;

/**
 * Completed one-time checkouts through the public API on the sandbox processor: pricing, a card charge,
 * the payment, contact matching (create or match by email), the webhook and receipt outbox writes.
 */
async function checkoutScenario(database: DbName, server: ServerProcess, seeded: Seeded): Promise<void> {
  const name = database === "sqlite" ? "SQLite" : "PostgreSQL";
  const formId = seeded.formIds[seeded.formIds.length - 1];
  const headers = { "Content-Type": "application/json", Origin: server.url };
  const requests = Array.from({ length: DONORS }, (_, i) => ({
    method: "POST" as const,
    path: `/api/forms/${formId}/checkout`,
    headers,
    body: JSON.stringify({
      amount: GIFT,
      frequency: "ONE_TIME",
      donor: { firstName: "Bench", lastName: `Donor ${i}`, email: `donor${i}@bench.example.org` },
      paymentMethod: { type: "card", number: "4242424242424242", expMonth: 12, expYear: 2034, cvc: "123" },
    }),
  }));
  const first = requests[0];
  const res = await fetch(`${server.url}${first.path}`, { method: "POST", headers, body: first.body });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`a checkout answered ${res.status}: ${text.slice(0, 300)}`);
  const targets = [{ url: server.url, paths: [], requests }];
  // The checkout's code is still being compiled past the usual warm-up (docs/benchmarks.md): both databases
  // get the same extra seconds of checkouts first, so that the figure is the steady one.
  if (CHECKOUT_WARMUP_SECONDS > 0)
    await measure(targets, { ...settings, seconds: CHECKOUT_WARMUP_SECONDS, warmupSeconds: 0 });
  await record(
    `${database}-checkout`,
    `${name}: POST /api/forms/{id}/checkout ($${GIFT} card)`,
    database,
    [server],
    targets,
  );
}

async function benchBare(): Promise<void> {
  console.log("\nBaseline: bare Hono route on @hono/node-server");
  const server = await startServer("bare Hono server", "test/bench/bare-server.ts", {});
  await getJson(`${server.url}/json`, {});
  await record(
    "bare",
    "bare Hono: GET /json (fixed JSON)",
    null,
    [server],
    [{ url: server.url, paths: ["/json"] }],
  );
  await record(
    "bare-form",
    "bare Hono: GET /form (fixed full-form JSON, 1.7 KB)",
    null,
    [server],
    [{ url: server.url, paths: ["/form"] }],
  );
  await server.stop();
}

async function benchSqlite(): Promise<void> {
  console.log("\nSQLite");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-bench-"));
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  const url = path.join(dir, "almoner.db");
  const seeded = await seedDatabase(url, FORM_COUNT);
  console.log(`  seeded ${seeded.formIds.length} forms in ${fmt(seeded.seedSeconds, 1)} s (${url})`);
  const server = await startServer("Almoner (SQLite)", ALMONER_AND_BARE, almonerEnv(url, dir));
  try {
    await apiScenarios("sqlite", server, seeded);
    await checkoutScenario("sqlite", server, seeded);
  } catch (err) {
    throw new Error(`${(err as Error).message}\nServer output:\n${server.output().trim()}`);
  }
  await server.stop();
}

async function postgresReachable(): Promise<string | null> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("select 1");
    return null;
  } catch (err) {
    const e = err as { code?: string; message?: string };
    return e.code ? `${e.code}: ${e.message}` : String(e.message ?? err);
  } finally {
    await client.end().catch(() => {});
  }
}

/** ANALYZE the schema's tables; returns the server's autovacuum setting for the report. */
async function analyzeForBench(schema: string): Promise<string> {
  await analyzeSchema(schema);
  const [row] = await adminQuery("show autovacuum");
  return String(row?.autovacuum ?? "unknown");
}

async function benchPostgres(): Promise<void> {
  console.log("\nPostgreSQL");
  const unreachable = await postgresReachable();
  if (unreachable) {
    const line = `PostgreSQL scenarios SKIPPED: cannot reach ${PG_URL} (${unreachable})`;
    console.log(`  ${line}`);
    skipped.push(line);
    return;
  }
  const schema = `almoner_bench_${Math.random().toString(36).slice(2, 10)}`;
  await adminQuery(`create schema ${schema}`);
  cleanups.push(async () => {
    await stopAllServers(); // no server may hold the schema while it is dropped
    await adminQuery(`drop schema if exists ${schema} cascade`);
    console.log(`  dropped schema ${schema}`);
  });
  const base = new URL(PG_URL);
  base.searchParams.set("schema", schema);
  const url = base.toString();
  const seeded = await seedDatabase(url, FORM_COUNT);
  console.log(
    `  seeded ${seeded.formIds.length} forms in ${fmt(seeded.seedSeconds, 1)} s (schema ${schema})`,
  );
  const autovacuum = await analyzeForBench(schema);
  console.log(`  ran ANALYZE on the schema's tables (autovacuum is ${autovacuum} on this server)`);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-bench-pg-"));
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  const env = almonerEnv(url, dir);
  const first = await startServer("Almoner (PostgreSQL) #1", ALMONER_AND_BARE, env);
  let second: ServerProcess | undefined;
  try {
    await apiScenarios("postgres", first, seeded);
    await checkoutScenario("postgres", first, seeded);
    const counted = await checkoutRoundTrips(url, seeded.formIds[seeded.formIds.length - 1]);
    pgCheckoutRoundTrips = counted.perCheckout;
    console.log(`  round trips to PostgreSQL per completed checkout: ${fmt(counted.perCheckout, 1)}`);
    console.log("  its statements (+: written with the one before it, in the same round trip):");
    for (const statement of counted.statements) console.log(`    ${statement.slice(0, 110)}`);

    console.log("\nPostgreSQL, two server processes on the same schema (single-form GET)");
    second = await startServer("Almoner (PostgreSQL) #2", "server/index.ts", env);
    const headers = { Authorization: `Bearer ${seeded.apiKey}` };
    const ids = Array.from(
      { length: ROTATION },
      (_, i) => seeded.formIds[Math.floor((i * seeded.formIds.length) / ROTATION)],
    );
    const paths = ids.map((id) => `/v1/forms/${id}`);
    await getJson(`${second.url}${paths[0]}`, headers);
    const half = Math.floor(settings.connections / 2);
    await record(
      "postgres-form-1proc-split",
      `PostgreSQL: GET /v1/forms/{id}, 1 process (2×${half} conns)`,
      "postgres",
      [first],
      [
        { url: first.url, paths, headers },
        { url: first.url, paths, headers },
      ],
    );
    await record(
      "postgres-form-2proc",
      `PostgreSQL: GET /v1/forms/{id}, 2 processes (2×${half} conns)`,
      "postgres",
      [first, second],
      [
        { url: first.url, paths, headers },
        { url: second.url, paths, headers },
      ],
    );
  } catch (err) {
    const outputs = [first, second].filter((s): s is ServerProcess => s !== undefined);
    throw new Error(
      `${(err as Error).message}\n${outputs.map((s) => `${s.name} output:\n${s.output().trim()}`).join("\n")}`,
    );
  }
  await stopAllServers();
}

function find(id: string): ScenarioResult | undefined {
  return scenarios.find((s) => s.id === id);
}

function computeRatios(): Ratio[] {
  const ratios: Ratio[] = [];
  const bare = find("bare");
  for (const db of ["sqlite", "postgres"] as const) {
    const name = db === "sqlite" ? "SQLite" : "PostgreSQL";
    const form = find(`${db}-form`);
    const unpaired = bare && form ? form.figures.rps / bare.figures.rps : null;
    const rounds = pairs.get(db);
    const value = rounds?.length ? median(rounds.map((r) => r.ratio)) : unpaired;
    const cpu = rounds?.filter((r) => r.bareCpuUs !== null && r.formCpuUs !== null) ?? [];
    const target = FORM_VS_BARE_TARGET[db];
    const notes = [
      rounds?.length
        ? `median of ${rounds.length} paired rounds: ${rounds.map((r) => `${fmt(r.ratio * 100, 1)}%`).join(", ")}`
        : null,
      cpu.length
        ? `server CPU per request, medians: bare ${fmt(median(cpu.map((r) => r.bareCpuUs as number)), 0)} µs, GET ${fmt(median(cpu.map((r) => r.formCpuUs as number)), 0)} µs`
        : null,
      unpaired !== null ? `the run's single figures: ${fmt(unpaired * 100, 1)}%` : null,
      rowRatios(rounds),
    ].filter((n): n is string => n !== null);
    ratios.push({
      id: `${db}-form-vs-bare`,
      label: `single-form GET vs bare (${name})`,
      basis: rounds?.length ? "req/s, paired" : "req/s",
      value,
      display: value === null ? "skipped" : `${fmt(value * 100, 1)}%`,
      target: `≥ ${fmt(target * 100, 0)}%`,
      met: value === null ? null : value >= target,
      note: notes.length ? notes.join("; ") : undefined,
    });
  }
  const bareForm = find("bare-form");
  for (const db of ["sqlite", "postgres"] as const) {
    const name = db === "sqlite" ? "SQLite" : "PostgreSQL";
    const form = find(`${db}-form`);
    const value = bareForm && form ? form.figures.rps / bareForm.figures.rps : null;
    ratios.push({
      id: `${db}-form-vs-bare-form`,
      label: `single-form GET vs bare full-form JSON (${name})`,
      basis: "req/s",
      value,
      display: value === null ? "skipped" : `${fmt(value * 100, 1)}%`,
      target: null,
      met: null,
      note: "context: the same response body without key, rate limit, database or metrics",
    });
  }
  for (const db of ["sqlite", "postgres"] as const) {
    const name = db === "sqlite" ? "SQLite" : "PostgreSQL";
    const p1 = find(`${db}-page1`);
    const deep = find(`${db}-page${DEEP_PAGE}`);
    const value = p1 && deep ? deep.figures.p50 / p1.figures.p50 : null;
    ratios.push({
      id: `${db}-page${DEEP_PAGE}-vs-page1`,
      label: `page ${DEEP_PAGE} vs page 1 (${name})`,
      basis: "p50 latency",
      value,
      display: value === null ? "skipped" : `${fmt(value)}×`,
      target: "≤ 1.5×",
      met: value === null ? null : value <= 1.5,
      note: p1 && deep ? `mean latency ratio ${fmt(deep.figures.mean / p1.figures.mean)}×` : undefined,
    });
  }
  for (const [suffix, what] of [
    ["form", "single form"],
    ["page1", "page 1"],
    [`page${DEEP_PAGE}`, `page ${DEEP_PAGE}`],
  ] as const) {
    const s = find(`sqlite-${suffix}`);
    const p = find(`postgres-${suffix}`);
    const value = s && p ? s.figures.rps / p.figures.rps : null;
    ratios.push({
      id: `sqlite-vs-postgres-${suffix}`,
      label: `SQLite vs PostgreSQL: ${what}`,
      basis: "req/s",
      value,
      display: value === null ? "skipped" : `${fmt(value)}×`,
      target: null,
      met: null,
    });
  }
  for (const db of ["sqlite", "postgres"] as const) {
    const s = find(`${db}-checkout`);
    const value = s ? s.figures.rps : null;
    ratios.push({
      id: `${db}-checkouts-per-second`,
      label: `completed checkouts (${db === "sqlite" ? "SQLite" : "PostgreSQL"})`,
      basis: "per second",
      value,
      display: value === null ? "skipped" : fmt(value, 0),
      target: db === "sqlite" ? "≥ 1,000/s" : null,
      met: value === null || db !== "sqlite" ? null : value >= 1000,
      note:
        s && find(`${db}-form`)
          ? `forms GET ${fmt(find(`${db}-form`)?.figures.rps ?? 0, 0)} req/s`
          : undefined,
    });
  }
  const sqliteCheckouts = find("sqlite-checkout");
  const pgCheckouts = find("postgres-checkout");
  const checkoutRatio =
    sqliteCheckouts && pgCheckouts ? pgCheckouts.figures.rps / sqliteCheckouts.figures.rps : null;
  ratios.push({
    id: "postgres-vs-sqlite-checkouts",
    label: "PostgreSQL vs SQLite: completed checkouts",
    basis: "per second",
    value: checkoutRatio,
    display: checkoutRatio === null ? "skipped" : `${fmt(checkoutRatio)}×`,
    target: "≥ 0.5×",
    met: checkoutRatio === null ? null : checkoutRatio >= 0.5,
    note:
      pgCheckoutRoundTrips === null
        ? undefined
        : `${fmt(pgCheckoutRoundTrips, 1)} round trips to PostgreSQL per checkout`,
  });
  const one = find("postgres-form-1proc-split");
  const two = find("postgres-form-2proc");
  const value = one && two ? two.figures.rps / one.figures.rps : null;
  const single = find("postgres-form");
  ratios.push({
    id: "postgres-2proc-vs-1proc",
    label: "two processes vs one (PostgreSQL, single form)",
    basis: "req/s",
    value,
    display: value === null ? "skipped" : `${fmt(value)}×`,
    target: null,
    met: null,
    note:
      two && single
        ? `vs the 1-process run with one ${settings.connections}-connection client: ${fmt(two.figures.rps / single.figures.rps)}×`
        : undefined,
  });
  return ratios;
}

function printReport(ratios: Ratio[]): void {
  const header = [
    "Scenario",
    "req/s",
    "p50 ms",
    "p99 ms",
    "mean ms",
    "non-2xx/err",
    "server CPU",
    "loadgen CPU",
  ];
  const pct = (share: number) => `${fmt(share * 100, 0)}%`;
  const rows = scenarios.map((s) => [
    s.label,
    fmt(s.figures.rps, 0),
    fmt(s.figures.p50),
    fmt(s.figures.p99),
    fmt(s.figures.mean),
    `${s.figures.non2xx}/${s.figures.errors}`,
    s.cpu.servers ? s.cpu.servers.map(pct).join("+") : "-",
    pct(s.cpu.loadGenerator),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  console.log(`\n${line(header)}`);
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));

  console.log("\nRatios");
  const labelWidth = Math.max(...ratios.map((r) => r.label.length));
  for (const r of ratios) {
    const verdict =
      r.target === null
        ? "(no target; for information)"
        : r.met === null
          ? `target ${r.target}: skipped`
          : `target ${r.target}: ${r.met ? "MET" : "NOT MET"}`;
    console.log(
      `  ${r.label.padEnd(labelWidth)}  ${r.basis.padEnd(11)} ${r.display.padStart(8)}   ${verdict}${r.note ? `  [${r.note}]` : ""}`,
    );
  }
  console.log(
    "(CPU: process CPU time / measured wall time; 100% = one core busy; above 100% = GC and helper threads too)",
  );
  for (const line of skipped) console.log(`\n${line}`);
  const bad = scenarios.filter((s) => s.figures.non2xx + s.figures.errors > 0);
  if (bad.length)
    console.log(
      `\nWARNING: non-2xx responses or errors in ${bad.map((s) => s.id).join(", ")}; those figures are not comparable.`,
    );
}

function writeJson(ratios: Ratio[], startedAt: Date, loadAtStart: number[]): string {
  const dir = path.join(ROOT, ".bench");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "results.json");
  const cpus = os.cpus();
  const out = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: {
      node: process.version,
      loadAverageAtStart: loadAtStart,
      platform: `${os.platform()} ${os.arch()}`,
      cpus: cpus.length,
      cpuModel: cpus[0]?.model ?? null,
    },
    settings: {
      ...settings,
      forms: FORM_COUNT,
      pageSize: PAGE_SIZE,
      deepPage: DEEP_PAGE,
      rotation: ROTATION,
    },
    scenarios,
    pairedRounds: Object.fromEntries(pairs),
    ratios,
    skipped,
  };
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  return file;
}

async function main(): Promise<void> {
  const startedAt = new Date();
  console.log(
    `Almoner benchmark: autocannon, ${settings.connections} connections, ${settings.warmupSeconds} s warm-up + ${settings.seconds} s per scenario, ${FORM_COUNT} forms`,
  );
  console.log(
    `Node ${process.version}, ${os.cpus().length} CPUs (load generator, servers and PostgreSQL share them)`,
  );
  const loadAtStart = os.loadavg();
  const load = loadAtStart[0];
  if (load > os.cpus().length * 0.5)
    console.log(
      `WARNING: load average ${fmt(load)} before starting: other work on this machine will skew the figures`,
    );
  if (wanted("bare")) await benchBare();
  if (wanted("sqlite")) await benchSqlite();
  if (wanted("postgres")) await benchPostgres();
  await runCleanups();
  const ratios = computeRatios();
  printReport(ratios);
  const file = writeJson(ratios, startedAt, loadAtStart);
  console.log(`\nResults written to ${path.relative(process.cwd(), file) || file}`);
  console.log(`Total time ${fmt((Date.now() - startedAt.getTime()) / 1000, 0)} s`);
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

main().catch(async (err) => {
  console.error(`\nBenchmark failed: ${(err as Error).stack ?? err}`);
  await runCleanups();
  process.exit(1);
});

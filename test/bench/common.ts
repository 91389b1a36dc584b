import pg from "pg";
import type { LoadSettings } from "./load.js";

/** What every benchmark script shares: its settings from the environment, PostgreSQL admin queries, JSON GETs. */

export const PG_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export function envNumber(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number ≥ ${min}, got "${raw}"`);
  return n;
}

/** BENCH_SECONDS (default 8), BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS (10). */
export function loadSettings(): LoadSettings {
  return {
    seconds: envNumber("BENCH_SECONDS", 8, 1),
    warmupSeconds: envNumber("BENCH_WARMUP_SECONDS", 2, 0),
    connections: Math.round(envNumber("BENCH_CONNECTIONS", 10, 2)),
  };
}

/** One statement on its own connection to BENCH_PG_URL. */
export async function adminQuery(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Gives the planner statistics for freshly bulk-loaded tables, as autovacuum would soon do on a
 * production server.
 */
export async function analyzeSchema(schema: string): Promise<void> {
  const tables = await adminQuery("select tablename from pg_tables where schemaname = $1", [schema]);
  for (const t of tables) await adminQuery(`analyze "${schema}"."${String(t.tablename)}"`);
}

export async function getJson(
  url: string,
  headers: Record<string, string>,
): Promise<Record<string, unknown>> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

import pg from "pg";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";

/**
 * The whole suite runs twice: once on SQLite and once on PostgreSQL (ALMONER_TEST_PG_URL, default the
 * local server). Without a reachable PostgreSQL the postgres project is skipped with a clear line,
 * except under CI, where it runs and fails loudly.
 */

const pgUrl = process.env.ALMONER_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export default defineConfig(async () => {
  const only = process.env.ALMONER_TEST_DB;
  const wantPg = only !== "sqlite";
  const pgOk = wantPg ? await postgresReachable() : false;
  if (wantPg && !pgOk && !process.env.CI) {
    console.warn(
      `\n[almoner] PostgreSQL at ${pgUrl} is not reachable: SKIPPING the postgres test project.\n`,
    );
  }
  const projects: TestProjectInlineConfiguration[] = [];
  const shared = {
    include: ["test/**/*.test.ts", "test/**/*.test.tsx"],
    exclude: ["test/e2e/**", "node_modules/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  };
  if (only !== "postgres")
    projects.push({ extends: true, test: { ...shared, name: "sqlite", env: { ALMONER_TEST_DB: "sqlite" } } });
  if (wantPg && (pgOk || process.env.CI))
    projects.push({
      extends: true,
      test: { ...shared, name: "postgres", env: { ALMONER_TEST_DB: "postgres", ALMONER_TEST_PG_URL: pgUrl } },
    });
  // Under CI a JSON report lets .ci/run print one plain "N passed, N failed" line for both runs.
  const reporters = process.env.CI
    ? ["default", ["json", { outputFile: ".ci-results/tests.json" }] as [string, { outputFile: string }]]
    : ["default"];
  return { test: { projects, pool: "forks" as const, reporters } };
});

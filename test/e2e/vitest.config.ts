import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/**
 * End-to-end tests only: the app served over real HTTP on 127.0.0.1 and driven by Debian's Chromium
 * (see test/e2e/support/browser.ts). SQLite only; one file at a time in a single forked worker, since
 * each file starts its own browser.
 */
export default defineConfig({
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    name: "e2e",
    include: ["test/e2e/**/*.e2e.test.ts"],
    env: { ALMONER_TEST_DB: "sqlite" },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: 1,
    fileParallelism: false,
    reporters: process.env.CI ? ["default", ["json", { outputFile: ".ci-results/e2e.json" }]] : ["default"],
  },
});

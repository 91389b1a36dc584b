import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/**
 * End-to-end tests only: the app served over real HTTP on 127.0.0.1 and driven by Debian's Chromium
 * (see test/e2e/support/browser.ts). Every file on SQLite; the staff dashboard's files on PostgreSQL too
 * (their issues ask for both). One file at a time in a single forked worker, since each file starts its
 * own browser.
 */
const shared = {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: "forks" as const,
  maxWorkers: 1,
  fileParallelism: false,
};

export default defineConfig({
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    ...shared,
    // The projects one after the other: never two browsers at once.
    sequence: { groupOrder: 0 },
    projects: [
      {
        extends: true,
        test: { name: "e2e", include: ["test/e2e/**/*.e2e.test.ts"], env: { ALMONER_TEST_DB: "sqlite" } },
      },
      {
        extends: true,
        test: {
          name: "e2e-postgres",
          include: ["test/e2e/dashboard*.e2e.test.ts"],
          env: {
            ALMONER_TEST_DB: "postgres",
            ALMONER_TEST_PG_URL: process.env.ALMONER_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test",
          },
          sequence: { groupOrder: 1 },
        },
      },
    ],
    reporters: process.env.CI ? ["default", ["json", { outputFile: ".ci-results/e2e.json" }]] : ["default"],
  },
});

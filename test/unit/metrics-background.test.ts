import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CompiledQuery } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../server/store/database.js";
import type { Statements } from "../../server/store/dialect.js";
import { MetricsRecorder } from "../../server/store/metrics.js";
import type { ApiMetricsTable } from "../../server/store/schema.js";
import { dialect } from "../support/testApp.js";

/**
 * On a SQLite file the API metrics are written by the store's background thread (its own connection).
 * Whatever happens there, every recorded row must end up stored exactly once.
 */

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-metrics-bg-"));
  store = await openStore(path.join(dir, "m.db"));
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const metric = (i: number): ApiMetricsTable => ({
  id: `met_${String(i).padStart(6, "0")}`,
  organization_id: "org",
  key_id: "key",
  endpoint: "/v1/forms",
  method: "GET",
  status_code: 200,
  response_time_us: i,
  created_at: new Date(1_800_000_000_000 + i).toISOString(),
});

const storedIds = async () =>
  (await store.db.selectFrom("api_metrics").select("id").orderBy("id").execute()).map((r) => r.id);

describe.skipIf(dialect !== "sqlite")("API metrics written off the serving thread (SQLite)", () => {
  it("stores every row through the background thread, visible once flush resolves", async () => {
    expect(store.background).not.toBeNull();
    const recorder = new MetricsRecorder(store);
    for (let i = 0; i < 250; i++) recorder.record(metric(i));
    await recorder.flush();
    expect(await storedIds()).toEqual(Array.from({ length: 250 }, (_, i) => metric(i).id));
    await recorder.close();
  });

  it("writes the rest itself, each row once, when the background write fails part-way", async () => {
    const errors: unknown[] = [];
    const recorder = new MetricsRecorder(
      {
        ...store,
        // The first statement is stored, then the thread "fails".
        background: {
          run: async (statements: Statements) => {
            const [text, params] = statements[0];
            await store.db.executeQuery(CompiledQuery.raw(text, params));
            throw new Error("background thread gone");
          },
        },
      },
      (err) => errors.push(err),
    );
    for (let i = 0; i < 250; i++) recorder.record(metric(i));
    await recorder.flush();
    expect(errors).toEqual([]);
    expect(await storedIds()).toEqual(Array.from({ length: 250 }, (_, i) => metric(i).id));
    await recorder.close();
  });
});

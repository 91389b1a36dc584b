import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import SQLite from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openStore } from "../../server/store/database.js";
import { checkpoint } from "../../server/store/dialect.js";
import { createOrganization } from "../../server/store/organizations.js";
import { dialect } from "../support/testApp.js";

/**
 * The SQLite store checkpoints its WAL on a timer instead of SQLite's every-1,000-pages default. A
 * checkpoint cannot run inside the connection's own open transaction (SQLITE_LOCKED): it must then wait
 * for the transaction to end instead of failing or being lost.
 */

let dir: string;
let db: SQLite.Database;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-ckpt-"));
  db = new SQLite(path.join(dir, "t.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("wal_autocheckpoint = 0");
  db.exec("create table t (x integer)");
});
afterEach(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(dialect !== "sqlite")("SQLite WAL checkpoints", () => {
  it("copies committed pages into the database file", () => {
    db.exec("insert into t values (1), (2), (3)");
    const [before] = db.pragma("wal_checkpoint(NOOP)") as { log: number; checkpointed: number }[];
    expect(before.log).toBeGreaterThan(before.checkpointed);
    checkpoint(db);
    const [after] = db.pragma("wal_checkpoint(NOOP)") as { log: number; checkpointed: number }[];
    expect(after.checkpointed).toBe(after.log);
  });

  it("waits for the connection's open transaction to end, then checkpoints", async () => {
    db.exec("begin");
    db.exec("insert into t values (1)");
    expect(() => checkpoint(db)).not.toThrow();
    db.exec("commit");
    const before = db.pragma("wal_checkpoint(NOOP)") as { log: number; checkpointed: number }[];
    expect(before[0].log).toBeGreaterThan(before[0].checkpointed);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const after = db.pragma("wal_checkpoint(NOOP)") as { log: number; checkpointed: number }[];
    expect(after[0].checkpointed).toBe(after[0].log);
  });

  it("checkpoints a store's WAL from its background thread while the store is in use", async () => {
    const file = path.join(dir, "store.db");
    const store = await openStore(file);
    try {
      for (let i = 0; i < 50; i++) await createOrganization(store.db, { name: `Org ${i}` }, Date.now());
      const probe = new SQLite(file);
      try {
        const state = () =>
          (probe.pragma("wal_checkpoint(NOOP)") as { log: number; checkpointed: number }[])[0];
        expect(state().log).toBeGreaterThan(state().checkpointed);
        let after = state();
        for (let i = 0; i < 40 && after.checkpointed < after.log; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          after = state();
        }
        expect(after.checkpointed).toBe(after.log);
      } finally {
        probe.close();
      }
    } finally {
      await store.close();
    }
  });
});

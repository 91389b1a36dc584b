import { afterEach, describe, expect, it } from "vitest";
import { runBillingAt } from "../../server/billing/run.js";
import { setupTestApp, type TestApp } from "../support/testApp.js";

describe("a billing run on the command line and process liveness", () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("keeps a heartbeat row while it runs, so its claims name a live process, and removes it when done", async () => {
    t = await setupTestApp();
    const beats: string[] = [];
    const off = t.store.writes.on((write) => {
      if (write.table === "processes") beats.push(write.kind);
    });
    const run = await runBillingAt(t.store, t.config, Date.now());
    off();
    expect(run.errors).toEqual([]);
    expect(beats[0]).toBe("insert");
    expect(beats).toContain("delete");
    const left = await t.store.db.selectFrom("processes").select("id").execute();
    expect(left).toEqual([]);
  });
});

import net from "node:net";
import path from "node:path";
import SQLite from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { killAll, startServer, tempDir } from "../support/processes.js";
import { dialect } from "../support/testApp.js";

/** SIGTERM: the server stops within seconds and lets go of what it held, whatever its clients do. */

describe.skipIf(dialect !== "sqlite")("stopping the server", () => {
  const temp = tempDir();
  afterAll(async () => {
    await killAll();
    temp.remove();
  });

  it("a client that never finishes its request does not keep it from letting go of its work", async () => {
    const server = await startServer({ DATA_DIR: temp.dir });
    const db = path.join(temp.dir, "almoner.db");
    const processes = () => {
      const sqlite = new SQLite(db, { readonly: true });
      try {
        return (sqlite.prepare("select count(*) as n from processes").get() as { n: number }).n;
      } finally {
        sqlite.close();
      }
    };
    expect(processes()).toBe(1);

    // Headers begun, never ended: a connection that is not idle.
    const stuck = net.connect(server.port, "127.0.0.1");
    await new Promise<void>((resolve) => stuck.once("connect", () => resolve()));
    stuck.on("error", () => {});
    stuck.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    await new Promise((resolve) => setTimeout(resolve, 200));

    const started = Date.now();
    const stopped = await server.stop(20_000);
    const took = Date.now() - started;
    stuck.destroy();
    expect(stopped).toEqual({ code: 0, signal: null });
    expect(took).toBeLessThan(12_000);
    // Its heartbeat row is gone: the other processes take over its work at once, not after it goes stale.
    expect(processes()).toBe(0);
  });
});

import type { AnyTrx, Migration } from "./shared.js";

/**
 * Each server process keeps a heartbeat row, and every claim names the process that holds it, so that a
 * dead process's work is taken over as soon as its heartbeat lapses rather than when a lease ends.
 */
export const processLiveness: Migration = {
  version: 13,
  name: "a heartbeat row per server process; claims name the process holding them",
  async up(trx: AnyTrx) {
    // One row per running server process (processes.ts): alive until `alive_until`, which it moves on
    // while it runs. `machine` tells processes that can see each other's pids (one host, one pid namespace).
    await trx.schema
      .createTable("processes")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("host", "text", (c) => c.notNull())
      .addColumn("pid", "integer", (c) => c.notNull())
      .addColumn("machine", "text")
      .addColumn("started_at", "text", (c) => c.notNull())
      .addColumn("heartbeat_at", "text", (c) => c.notNull())
      .addColumn("alive_until", "text", (c) => c.notNull())
      .execute();
    await trx.schema.createIndex("processes_alive_until").on("processes").column("alive_until").execute();
    // The process holding a claim (or, on a PROCESSING checkout payment, charging it); null: a process
    // without a heartbeat (the command line), whose claims end with their lease.
    for (const table of ["email_outbox", "subscriptions", "webhook_deliveries", "payments"])
      await trx.schema.alterTable(table).addColumn("claimed_by", "text").execute();
  },
};

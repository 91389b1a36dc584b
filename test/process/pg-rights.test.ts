import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killAll, lines, runServerToExit } from "../support/processes.js";
import { dialect, pgUrl } from "../support/testApp.js";

/** PostgreSQL users without the rights the migrations need get one clear line and an untouched schema. */
describe.skipIf(dialect !== "postgres")("PostgreSQL without migration rights", () => {
  const suffix = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const role = `almoner_ro_${suffix}`;
  const usable = `almoner_usable_${suffix}`;
  const hidden = `almoner_hidden_${suffix}`;

  async function admin(sql: string): Promise<pg.QueryResult> {
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    try {
      return await client.query(sql);
    } finally {
      await client.end();
    }
  }

  function urlAs(user: string, schema: string): string {
    const url = new URL(pgUrl);
    url.username = user;
    url.password = "";
    url.searchParams.set("schema", schema);
    return url.toString();
  }

  beforeAll(async () => {
    await admin(
      `create role ${role} login; create schema ${usable}; create schema ${hidden}; grant usage on schema ${usable} to ${role}`,
    );
  });
  afterAll(async () => {
    await killAll();
    await admin(
      `drop schema if exists ${usable} cascade; drop schema if exists ${hidden} cascade; drop role if exists ${role}`,
    );
  });

  it("exits with one line naming the missing CREATE right, and creates no table", async () => {
    const result = await runServerToExit({ DATABASE_URL: urlAs(role, usable) });
    expect(result.code).not.toBe(0);
    const errLines = lines(result.stderr);
    expect(errLines, result.stderr).toHaveLength(1);
    expect(errLines[0]).toMatch(/permission denied/i);
    expect(errLines[0]).toMatch(/CREATE/);
    const tables = await admin(`select count(*)::int as n from pg_tables where schemaname = '${usable}'`);
    expect(tables.rows[0].n).toBe(0);
  });

  it("exits with one line when the schema cannot be used at all", async () => {
    const result = await runServerToExit({ DATABASE_URL: urlAs(role, hidden) });
    expect(result.code).not.toBe(0);
    const errLines = lines(result.stderr);
    expect(errLines, result.stderr).toHaveLength(1);
    expect(errLines[0]).toMatch(/schema/i);
  });
});

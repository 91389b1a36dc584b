import { describe, expect, it } from "vitest";
import { StatementNames } from "../../server/store/pgStatements.js";

describe("names of PostgreSQL prepared statements", () => {
  it("gives each distinct data statement one name, the same every time", () => {
    const names = new StatementNames();
    const select = names.of('select * from "forms" where "id" = $1');
    const insert = names.of('insert into "payments" ("id") values ($1)');
    const cte = names.of('with "e" as (insert into "events" ("id") values ($1) returning "id") select 1');
    expect(select).toMatch(/^almoner_\d+$/);
    expect(new Set([select, insert, cte]).size).toBe(3);
    expect(names.of('select * from "forms" where "id" = $1')).toBe(select);
    expect(names.of('  UPDATE "payments" set "status" = $1')).toMatch(/^almoner_\d+$/);
  });

  it("never names transaction control or schema changes", () => {
    const names = new StatementNames();
    for (const text of [
      "begin",
      "commit",
      "rollback",
      'savepoint "sp"',
      "start transaction isolation level serializable",
      "create table t (id int)",
      'alter table "forms" add column "x" text',
    ])
      expect(names.of(text), text).toBeUndefined();
  });

  it("names at most its limit of texts; the rest run unnamed", () => {
    const names = new StatementNames(2);
    const a = names.of("select 1");
    const b = names.of("select 2");
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    expect(names.of("select 3")).toBeUndefined();
    expect(names.of("select 1")).toBe(a);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHECK_EVERY_MS, writtenTable } from "../../server/store/changes.js";
import type { Store } from "../../server/store/database.js";
import { revokeApiKey } from "../../server/store/keys.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * Single-form GETs and API keys are served from an in-process cache on SQLite (server/store/readCache.ts).
 * These tests hold it to its promise: this process's writes are seen by the next request, another
 * process's (here another connection to the same database) by every request that starts CHECK_EVERY_MS
 * after the commit, and nothing stale is kept.
 */

const pause = () => new Promise((r) => setTimeout(r, CHECK_EVERY_MS + 1));

describe("writtenTable", () => {
  it("names the table a write statement changes, null for reads, * for anything else", () => {
    expect(writtenTable('insert into "forms" ("id") values (?)')).toBe("forms");
    expect(writtenTable('update "api_keys" set "revoked_at" = ? where "id" = ?')).toBe("api_keys");
    expect(writtenTable('delete from "forms" where "id" = ?')).toBe("forms");
    expect(writtenTable("INSERT OR REPLACE INTO forms (id) VALUES (1)")).toBe("forms");
    expect(writtenTable('select * from "forms" where "id" = ?')).toBeNull();
    expect(writtenTable("with x as (select 1) select * from x")).toBeNull();
    expect(writtenTable("begin")).toBeNull();
    expect(writtenTable('create index "x" on "forms" ("id")')).toBe("*");
  });
});

describe(`read cache (${dialect})`, () => {
  let t: TestApp;
  let other: Store;
  beforeAll(async () => {
    t = await setupTestApp();
    other = await t.database.open();
  });
  afterAll(async () => {
    await other.close();
    await t.close();
  });

  async function newForm(): Promise<string> {
    const res = await t.request<{ formID: string }>("POST", "/v1/forms", { body: validForms.standard() });
    expect(res.status, res.text).toBe(201);
    return res.body.formID;
  }
  const title = async (id: string) =>
    (await t.request<{ title?: string; error?: string }>("GET", `/v1/forms/${id}`)).body;

  it("shows this process's update and delete at once", async () => {
    const id = await newForm();
    await title(id);
    const put = await t.request("PUT", `/v1/forms/${id}`, { body: { title: "Renamed here" } });
    expect(put.status, put.text).toBe(200);
    expect((await title(id)).title).toBe("Renamed here");
    expect((await t.request("DELETE", `/v1/forms/${id}`)).status).toBe(200);
    const gone = await t.request("GET", `/v1/forms/${id}`);
    expect(gone.status).toBe(410);
  });

  it("shows another process's change to a form to a request made a moment later", async () => {
    const id = await newForm();
    expect((await title(id)).title).not.toBe("Renamed elsewhere");
    const row = await other.db
      .selectFrom("forms")
      .select("config")
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    const config = { ...JSON.parse(row.config), title: "Renamed elsewhere" };
    await other.db
      .updateTable("forms")
      .set({ config: JSON.stringify(config), title: "Renamed elsewhere" })
      .where("id", "=", id)
      .execute();
    await pause();
    expect((await title(id)).title).toBe("Renamed elsewhere");
  });

  it("refuses a key revoked by another process a moment later, and one revoked here at once", async () => {
    const elsewhere = await t.newOrg();
    const ok = await t.request("GET", "/v1/forms", { key: elsewhere.key });
    expect(ok.status).toBe(200);
    expect(await revokeApiKey(other.db, elsewhere.keyId)).toBe(true);
    await pause();
    expect((await t.request("GET", "/v1/forms", { key: elsewhere.key })).status).toBe(401);

    const here = await t.newOrg();
    expect((await t.request("GET", "/v1/forms", { key: here.key })).status).toBe(200);
    expect(await revokeApiKey(t.store.db, here.keyId)).toBe(true);
    expect((await t.request("GET", "/v1/forms", { key: here.key })).status).toBe(401);
  });
});

import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgChangeFeed } from "../../server/store/changes.js";
import type { Db, Store } from "../../server/store/database.js";
import { peekForm } from "../../server/store/forms.js";
import { revokeApiKey } from "../../server/store/keys.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * Single-form GETs, organizations and API keys are served from an in-process cache
 * (server/store/readCache.ts). These tests hold it to its promise: this process's writes are seen by the
 * next request, another process's (here another connection to the same database) by every request that
 * starts once the change feed has heard of the commit (SQLite: CHECK_EVERY_MS after it; PostgreSQL: when
 * its notification arrives, which `settled()` waits for), and nothing stale is kept.
 */

// One app and a second connection to its database ("another process") for every test below.
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
const getForm = async (id: string) =>
  (await t.request<{ title?: string; error?: string }>("GET", `/v1/forms/${id}`)).body;

/** Sets a form's title straight in its row (through `db`: a connection or a transaction), bypassing the API. */
async function rename(db: Db, id: string, newTitle: string): Promise<void> {
  const row = await db.selectFrom("forms").select("config").where("id", "=", id).executeTakeFirstOrThrow();
  await db
    .updateTable("forms")
    .set({ config: JSON.stringify({ ...JSON.parse(row.config), title: newTitle }), title: newTitle })
    .where("id", "=", id)
    .execute();
}

describe(`read cache (${dialect})`, () => {
  const pause = () => t.store.changes.settled();
  const title = getForm;

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
    await rename(other.db, id, "Renamed elsewhere");
    await pause();
    expect((await title(id)).title).toBe("Renamed elsewhere");
  });

  it("refuses a key revoked by another process a moment later, and one revoked here at once", async () => {
    const elsewhere = await t.newOrg();
    const ok = await t.request("GET", "/v1/forms", { key: elsewhere.key });
    expect(ok.status).toBe(200);
    expect(await revokeApiKey(other.db, elsewhere.keyId, Date.now())).toBe(true);
    await pause();
    expect((await t.request("GET", "/v1/forms", { key: elsewhere.key })).status).toBe(401);

    const here = await t.newOrg();
    expect((await t.request("GET", "/v1/forms", { key: here.key })).status).toBe(200);
    expect(await revokeApiKey(t.store.db, here.keyId, Date.now())).toBe(true);
    expect((await t.request("GET", "/v1/forms", { key: here.key })).status).toBe(401);
  });
});

describe.runIf(dialect === "sqlite")("read cache on SQLite: the change counter", () => {
  it("keeps forms through another connection's commits to other tables, and drops them at one to forms", async () => {
    const id = await newForm();
    expect((await t.request("GET", `/v1/forms/${id}`)).status).toBe(200);
    expect(peekForm(t.store, id)?.id).toBe(id);
    // Metrics, contacts, payments: not a cached table.
    await other.db
      .insertInto("api_metrics")
      .values({
        id: "met_elsewhere",
        organization_id: t.org.id,
        key_id: t.org.keyId,
        endpoint: "/v1/forms",
        method: "GET",
        status_code: 200,
        response_time_us: 1,
        created_at: new Date().toISOString(),
      })
      .execute();
    await t.store.changes.settled();
    expect(peekForm(t.store, id)?.id).toBe(id);
    // A change to forms moves the counter.
    await other.db
      .updateTable("forms")
      .set({ updated_at: new Date().toISOString() })
      .where("id", "=", id)
      .execute();
    await t.store.changes.settled();
    expect(peekForm(t.store, id)).toBeUndefined();
  });
});

describe.runIf(dialect === "postgres")("read cache on PostgreSQL: change notifications", () => {
  let feed: PgChangeFeed;
  beforeAll(() => {
    if (!(t.store.changes instanceof PgChangeFeed)) throw new Error("expected the PostgreSQL change feed");
    feed = t.store.changes;
  });
  const title = async (id: string) => (await getForm(id)).title;
  /** Renames a form from the other connection, with its table's notification trigger off or on. */
  async function renameElsewhere(id: string, newTitle: string, notify: boolean): Promise<void> {
    await other.db.transaction().execute(async (trx) => {
      if (!notify) await sql`alter table forms disable trigger forms_notify_change`.execute(trx);
      await rename(trx, id, newTitle);
      if (!notify) await sql`alter table forms enable trigger forms_notify_change`.execute(trx);
    });
  }

  it("keeps a form in memory while it listens, and drops it when the notification of a change arrives", async () => {
    const id = await newForm();
    await feed.settled(); // the notification of the insert itself, which would drop what is read next
    expect(feed.listening).toBe(true);
    const first = await title(id);
    // A change the triggers do not announce is not seen: the form is served from memory.
    await renameElsewhere(id, "Unannounced", false);
    await feed.settled();
    expect(await title(id)).toBe(first);
    // The same change announced (on commit, by the table's trigger) is seen at the next request.
    await renameElsewhere(id, "Announced", true);
    await feed.settled();
    expect(await title(id)).toBe("Announced");
  });

  it("shows this process's own update at once, without waiting for (or needing) its notification", async () => {
    const id = await newForm();
    await feed.settled();
    await title(id);
    await sql`alter table forms disable trigger forms_notify_change`.execute(other.db);
    try {
      const put = await t.request("PUT", `/v1/forms/${id}`, { body: { title: "Renamed here, unannounced" } });
      expect(put.status, put.text).toBe(200);
      expect(await title(id)).toBe("Renamed here, unannounced");
      // Written in a transaction of this process: seen once it commits.
      await t.store.db.transaction().execute((trx) => rename(trx, id, "In a transaction"));
      expect(await title(id)).toBe("In a transaction");
    } finally {
      await sql`alter table forms enable trigger forms_notify_change`.execute(other.db);
    }
  });

  it("reads the database while its listening connection is down, and listens again after a second", async () => {
    const id = await newForm();
    await feed.settled();
    await title(id);
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${feed.applicationName}`.execute(
      other.db,
    );
    const until = Date.now() + 5000;
    while (feed.listening && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(feed.listening).toBe(false);
    // Nothing heard, nothing kept: even an unannounced change shows at once.
    await renameElsewhere(id, "While deaf", false);
    expect(await title(id)).toBe("While deaf");
    while (!feed.listening && Date.now() < until + 5000) {
      await feed.settled();
      if (!feed.listening) await new Promise((r) => setTimeout(r, 100));
    }
    expect(feed.listening).toBe(true);
    await title(id);
    await renameElsewhere(id, "Unannounced again", false);
    expect(await title(id)).toBe("While deaf");
  });
});

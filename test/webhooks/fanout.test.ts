import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../server/store/database.js";
import { createOrganization } from "../../server/store/organizations.js";
import { emitEvent } from "../../server/webhooks/events.js";
import { dialect, freshDatabase, type TestDatabase } from "../support/testApp.js";
import { ulidTime } from "../support/ulid.js";

/**
 * An event is queued, in the transaction that emits it, for exactly the organization's ACTIVE webhooks
 * subscribed to its kind (server/webhooks/fanout.ts; on PostgreSQL one statement run at the commit). Its
 * deliveries are dated by the caller's injected clock, never the process's own.
 */
describe(`an event's deliveries (${dialect})`, () => {
  let database: TestDatabase;
  let store: Store;
  let orgId: string;
  let otherOrgId: string;
  const at = Date.parse("2026-01-02T10:00:00.000Z");

  beforeAll(async () => {
    database = await freshDatabase();
    store = await database.open();
    orgId = (await createOrganization(store.db, { name: "Fan-out", sandbox: true }, at)).id;
    otherOrgId = (await createOrganization(store.db, { name: "Other", sandbox: true }, at)).id;
    const hook = (id: string, organizationId: string, events: string[], status: string) => ({
      id,
      organization_id: organizationId,
      url: "https://hooks.example.org/in",
      events: JSON.stringify(events),
      status,
      description: "",
      secret: "whsec_test",
      success_count: 0,
      failure_count: 0,
      last_delivery_at: null,
      created_at: "2026-11-27T09:00:00.000Z",
      updated_at: "2026-11-27T09:00:00.000Z",
      deleted_at: null,
    });
    await store.db
      .insertInto("webhooks")
      .values([
        hook("wh_a", orgId, ["form.created", "donation.created"], "ACTIVE"),
        hook("wh_b", orgId, ["donation.created"], "ACTIVE"),
        hook("wh_c", orgId, ["form.created"], "DISABLED"),
        hook("wh_d", orgId, ["form.created"], "DELETED"),
        // A kind whose name holds another's: only the exact kind counts.
        hook("wh_e", orgId, ["form.created.later"], "ACTIVE"),
        hook("wh_f", otherOrgId, ["form.created"], "ACTIVE"),
      ])
      .execute();
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  it("is queued once for each ACTIVE webhook of the organization subscribed to its kind, due at once", async () => {
    const eventId = await store.db
      .transaction()
      .execute((trx) => emitEvent(trx, orgId, "form.created", "frm_1", { formID: "frm_1" }, at));
    const rows = await store.db
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("event_id", "=", eventId)
      .execute();
    expect(rows.map((r) => r.webhook_id)).toEqual(["wh_a"]);
    const [row] = rows;
    expect(row).toMatchObject({
      organization_id: orgId,
      event_type: "form.created",
      status: "PENDING",
      attempts: 0,
      claimed_until: null,
      claim_token: null,
    });
    expect(row.id).toMatch(/^dlv_[0-9a-hjkmnp-tv-z]{26}$/);
    // Dated by the injected clock the event was emitted at, and due then.
    expect(row.next_attempt_at).toBe("2026-01-02T10:00:00.000Z");
    expect(row.created_at).toBe("2026-01-02T10:00:00.000Z");
    expect(row.updated_at).toBe(row.created_at);
    const event = await store.db
      .selectFrom("outbox_events")
      .selectAll()
      .where("id", "=", eventId)
      .executeTakeFirstOrThrow();
    expect(event).toMatchObject({ organization_id: orgId, type: "form.created", subject_id: "frm_1" });
    expect(JSON.parse(event.data)).toEqual({ formID: "frm_1" });
  });

  const deliveriesOf = (eventId: string) =>
    store.db
      .selectFrom("webhook_deliveries")
      .select(["id", "created_at", "updated_at", "next_attempt_at"])
      .where("event_id", "=", eventId)
      .orderBy("webhook_id")
      .execute();

  it("dates the deliveries by the injected clock, a later moment than the real time as well", async () => {
    const later = Date.parse("2031-05-06T07:08:09.010Z");
    const eventId = await store.db
      .transaction()
      .execute((trx) => emitEvent(trx, orgId, "donation.created", "pay_later", {}, later));
    const rows = await deliveriesOf(eventId);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row).toMatchObject({
        created_at: "2031-05-06T07:08:09.010Z",
        updated_at: "2031-05-06T07:08:09.010Z",
        next_attempt_at: "2031-05-06T07:08:09.010Z",
      });
      expect(ulidTime(row.id)).toBe(later);
    }
  });

  it("dates them by the real time the caller gives when the event is dated later (billing run --as-of)", async () => {
    const asOf = Date.parse("2031-05-06T07:08:09.010Z");
    const wall = Date.parse("2026-03-04T05:06:07.080Z");
    const eventId = await store.db
      .transaction()
      .execute((trx) =>
        emitEvent(trx, orgId, "donation.created", "pay_as_of", {}, { nowMs: asOf, wallMs: wall }),
      );
    const event = await store.db
      .selectFrom("outbox_events")
      .select("created_at")
      .where("id", "=", eventId)
      .executeTakeFirstOrThrow();
    expect(event.created_at).toBe("2031-05-06T07:08:09.010Z");
    expect(ulidTime(eventId)).toBe(asOf);
    const rows = await deliveriesOf(eventId);
    expect(rows).toHaveLength(2);
    // Due at once for a dispatcher on the real time, not a month (or years) on.
    for (const row of rows) {
      expect(row).toMatchObject({
        created_at: "2026-03-04T05:06:07.080Z",
        updated_at: "2026-03-04T05:06:07.080Z",
        next_attempt_at: "2026-03-04T05:06:07.080Z",
      });
      expect(ulidTime(row.id)).toBe(wall);
    }
  });

  it("gives each webhook a delivery of its own id; none when no webhook is subscribed", async () => {
    const donation = await store.db
      .transaction()
      .execute((trx) => emitEvent(trx, orgId, "donation.created", "pay_1", {}, at));
    const rows = await store.db
      .selectFrom("webhook_deliveries")
      .select(["id", "webhook_id"])
      .where("event_id", "=", donation)
      .orderBy("webhook_id")
      .execute();
    expect(rows.map((r) => r.webhook_id)).toEqual(["wh_a", "wh_b"]);
    expect(new Set(rows.map((r) => r.id)).size).toBe(2);
    const contact = await store.db
      .transaction()
      .execute((trx) => emitEvent(trx, orgId, "contact.created", "con_1", {}, at));
    const none = await store.db
      .selectFrom("webhook_deliveries")
      .select("id")
      .where("event_id", "=", contact)
      .execute();
    expect(none).toEqual([]);
  });

  it("tells the store's listeners of a delivery written, and of none when no webhook is subscribed", async () => {
    const written = async (type: "form.created" | "contact.created") => {
      const tables: string[] = [];
      const stop = store.writes.on((write) => tables.push(write.table));
      try {
        await store.db.transaction().execute((trx) => emitEvent(trx, orgId, type, "sub_1", {}, at));
      } finally {
        stop();
      }
      return [...new Set(tables)].sort();
    };
    // The webhook dispatcher wakes on deliveries written: an event nobody subscribed to must not wake it.
    expect(await written("contact.created")).toEqual(["outbox_events"]);
    expect(await written("form.created")).toEqual(["outbox_events", "webhook_deliveries"]);
  });

  it("keeps nothing, event or deliveries, of a transaction that fails after emitting it", async () => {
    let eventId = "";
    const failing = store.db.transaction().execute(async (trx) => {
      eventId = await emitEvent(trx, orgId, "form.created", "frm_2", {}, at);
      throw new Error("the change failed after its event");
    });
    await expect(failing).rejects.toThrow("the change failed after its event");
    const events = await store.db
      .selectFrom("outbox_events")
      .select("id")
      .where("id", "=", eventId)
      .execute();
    const deliveries = await store.db
      .selectFrom("webhook_deliveries")
      .select("id")
      .where("event_id", "=", eventId)
      .execute();
    expect([events, deliveries]).toEqual([[], []]);
  });
});

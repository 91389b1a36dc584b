import type { Expression, ExpressionBuilder, SqlBool } from "kysely";
import type { EventType } from "../../shared/schemas/webhook.js";
import { isoAt } from "../../shared/time.js";
import { RELEASED, unclaimed } from "../store/claim.js";
import type { Db } from "../store/database.js";
import { isPostgres } from "../store/dialect.js";
import { afterPosition } from "../store/keyset.js";
import { inSavepoint, retryingLockConflicts } from "../store/lockRetry.js";
import type { Database, WebhookDeliveriesTable, WebhookLogsTable, WebhooksTable } from "../store/schema.js";

/**
 * Webhook records, and the delivery log as the analytics API reads it.
 *
 * Lock order (PostgreSQL). Every transaction that writes to several of the webhook tables takes its row
 * locks in one order: delivery rows first, in id order; then log rows; then webhooks rows, in id order. The
 * dispatcher's claim (delivery rows, then the interrupted attempts' logs and their webhooks' counts) and
 * its outcome writes (dispatcher.ts) do, and so do the API's changes here, which lock the deliveries they
 * cancel before they touch the webhook: two of them can then never each hold a row the other waits for.
 * The API's changes also retry on a lock conflict (`changeRetryingLockConflicts`), so a writer that took its
 * locks in another order still costs a wait, never an error.
 */

export interface WebhookRecord {
  id: string;
  organizationId: string;
  url: string;
  events: EventType[];
  status: "ACTIVE" | "DISABLED" | "DELETED";
  description: string;
  secret: string;
  successCount: number;
  failureCount: number;
  lastDeliveryAt: string | null;
  createdAt: string;
  updatedAt: string;
  /** Until when the secret a rotation replaced still signs deliveries (ISO); null when none does. */
  previousSecretExpiresAt: string | null;
}

export function fromRow(row: WebhooksTable): WebhookRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    url: row.url,
    events: JSON.parse(row.events),
    status: row.status as WebhookRecord["status"],
    description: row.description,
    secret: row.secret,
    successCount: Number(row.success_count),
    failureCount: Number(row.failure_count),
    lastDeliveryAt: row.last_delivery_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    previousSecretExpiresAt: row.previous_secret ? (row.previous_secret_expires_at ?? null) : null,
  };
}

export async function insertWebhook(db: Db, row: WebhooksTable): Promise<void> {
  await db.insertInto("webhooks").values(row).execute();
}

export async function findWebhook(db: Db, id: string): Promise<WebhookRecord | undefined> {
  const row = await db.selectFrom("webhooks").selectAll().where("id", "=", id).executeTakeFirst();
  return row && fromRow(row);
}

/** The organization's webhooks except deleted ones, newest first. */
export async function listWebhooks(db: Db, organizationId: string): Promise<WebhookRecord[]> {
  const rows = await db
    .selectFrom("webhooks")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("status", "!=", "DELETED")
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
  return rows.map(fromRow);
}

export interface WebhookChanges {
  url?: string;
  events?: EventType[];
  status?: "ACTIVE" | "DISABLED";
  description?: string;
}

/**
 * Applies a partial update to a live webhook; undefined when it was deleted meanwhile. Queued deliveries
 * of kinds no longer subscribed are cancelled with it: `trx` is the caller's transaction (a webhook
 * receives only its kinds).
 */
export async function updateWebhook(
  trx: Db,
  id: string,
  changes: WebhookChanges,
  nowIso: string,
): Promise<WebhookRecord | undefined> {
  const events = changes.events;
  return changeRetryingLockConflicts(trx, async () => {
    // The deliveries to cancel are locked before the webhook (the lock order above).
    if (events !== undefined) await lockQueued(trx, queuedOf(id, events));
    const row = await trx
      .updateTable("webhooks")
      .set({
        ...(changes.url !== undefined && { url: changes.url }),
        ...(events !== undefined && { events: JSON.stringify(events) }),
        ...(changes.status !== undefined && { status: changes.status }),
        ...(changes.description !== undefined && { description: changes.description }),
        updated_at: nowIso,
      })
      .where("id", "=", id)
      .where("status", "!=", "DELETED")
      .returningAll()
      .executeTakeFirst();
    if (!row) return undefined;
    if (events !== undefined) await cancelDeliveries(trx, queuedOf(id, events), nowIso);
    return fromRow(row);
  });
}

/** How many times a change of the API's is tried again after losing a race for a lock, and the wait before. */
const LOCK_RETRIES = 5;
const LOCK_RETRY_WAIT_MS = 20;

/**
 * Runs `work` (statements of `trx`, the caller's transaction) and, on PostgreSQL, runs it again in a fresh
 * savepoint when it loses a race for a lock: nothing is written twice, nothing half. SQLite's writers take
 * turns, so there it simply runs.
 */
function changeRetryingLockConflicts<T>(trx: Db, work: () => Promise<T>): Promise<T> {
  if (!isPostgres(trx)) return work();
  return retryingLockConflicts(
    () => inSavepoint(trx, "almoner_webhook_change", work),
    LOCK_RETRIES,
    LOCK_RETRY_WAIT_MS,
  );
}

type DeliveryFilter = (eb: ExpressionBuilder<Database, "webhook_deliveries">) => Expression<SqlBool>;

/** A webhook's queued deliveries (with `keptEvents`, those of other event types only). */
function queuedOf(webhookId: string, keptEvents?: string[]): DeliveryFilter {
  return (eb) =>
    eb.and([
      eb("webhook_id", "=", webhookId),
      eb("status", "=", "PENDING"),
      ...(keptEvents ? [eb("event_type", "not in", keptEvents)] : []),
    ]);
}

/**
 * PostgreSQL: locks the deliveries `queued` selects, in id order (waiting for a dispatcher recording
 * their outcomes), before anything else of the webhook is locked. SQLite's writers take turns: nothing to do.
 */
async function lockQueued(trx: Db, queued: DeliveryFilter): Promise<void> {
  if (!isPostgres(trx)) return;
  // Counted rather than returned: a backlog's ids need not come over the wire.
  await trx
    .selectFrom((eb) =>
      eb.selectFrom("webhook_deliveries").select("id").where(queued).orderBy("id").forUpdate().as("locked"),
    )
    .select((eb) => eb.fn.countAll().as("n"))
    .execute();
}

/**
 * Cancels the queued deliveries `queued` selects (locked first: `lockQueued`). An attempt of one whose
 * process stopped before recording its answer, which no live process holds, is closed as an interrupted
 * failure now: cancelled, it is never claimed again, where that would happen. One a live claim still holds
 * is left to its process; if that process stops too, `closeAbandonedAttempts` closes it once the claim lapses.
 */
async function cancelDeliveries(trx: Db, queued: DeliveryFilter, nowIso: string) {
  const interrupted = await trx
    .selectFrom("webhook_deliveries")
    .select("id")
    .where(queued)
    .where("attempts", ">", 0)
    .where((eb) => unclaimed(eb, nowIso))
    .execute();
  await trx
    .updateTable("webhook_deliveries")
    .set({ status: "CANCELLED", updated_at: nowIso })
    .where(queued)
    .execute();
  await closeInterruptedAttempts(
    trx,
    interrupted.map((r) => r.id),
    nowIso,
  );
}

/**
 * Attempts of these deliveries whose process stopped before an answer was recorded (their log rows still
 * PENDING): FAILED in the log, with the reason, and counted in their webhooks' failures.
 */
export async function closeInterruptedAttempts(
  trx: Db,
  deliveryIds: string[],
  nowIso: string,
): Promise<void> {
  if (deliveryIds.length === 0) return;
  const stale = await trx
    .updateTable("webhook_logs")
    .set({
      status: "FAILED",
      error: "interrupted: the delivering process stopped before an answer was recorded",
    })
    .where("delivery_id", "in", deliveryIds)
    .where("status", "=", "PENDING")
    .returning("webhook_id")
    .execute();
  const counts = new Map<string, number>();
  for (const s of stale) counts.set(s.webhook_id, (counts.get(s.webhook_id) ?? 0) + 1);
  // In id order, as every writer of webhooks rows (the lock order above).
  for (const [webhookId, n] of [...counts].sort(([a], [b]) => a.localeCompare(b)))
    await trx
      .updateTable("webhooks")
      .set((eb) => ({ failure_count: eb("failure_count", "+", n), updated_at: nowIso }))
      .where("id", "=", webhookId)
      .execute();
}

/**
 * Deletes (permanently deactivates) a live webhook and cancels its queued deliveries, in the caller's
 * transaction `trx`; false if already deleted.
 */
export async function deleteWebhook(trx: Db, id: string, nowIso: string): Promise<boolean> {
  return changeRetryingLockConflicts(trx, async () => {
    // The deliveries to cancel are locked before the webhook (the lock order above).
    await lockQueued(trx, queuedOf(id));
    const result = await trx
      .updateTable("webhooks")
      .set({ status: "DELETED", deleted_at: nowIso, updated_at: nowIso })
      .where("id", "=", id)
      .where("status", "!=", "DELETED")
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return false;
    await cancelDeliveries(trx, queuedOf(id), nowIso);
    return true;
  });
}

/** How long a rotated-out secret keeps signing deliveries beside the new one. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

/**
 * Gives a live webhook a new signing secret; the one it replaces signs deliveries too until `expiresIso`
 * (a secret rotated out earlier and still in its overlap stops at once: two secrets at most). In the
 * caller's transaction; undefined when the webhook was deleted meanwhile.
 */
export async function rotateWebhookSecret(
  trx: Db,
  id: string,
  secret: string,
  nowIso: string,
  expiresIso: string,
): Promise<WebhookRecord | undefined> {
  const row = await trx
    .updateTable("webhooks")
    .set((eb) => ({
      previous_secret: eb.ref("secret"),
      previous_secret_expires_at: expiresIso,
      secret,
      updated_at: nowIso,
    }))
    .where("id", "=", id)
    .where("status", "!=", "DELETED")
    .returningAll()
    .executeTakeFirst();
  return row && fromRow(row);
}

/** A delivery of the webhook `webhookId`, or undefined. */
export async function findDelivery(
  db: Db,
  webhookId: string,
  deliveryId: string,
): Promise<WebhookDeliveriesTable | undefined> {
  return db
    .selectFrom("webhook_deliveries")
    .selectAll()
    .where("id", "=", deliveryId)
    .where("webhook_id", "=", webhookId)
    .executeTakeFirst();
}

/** The delivery a delivery-log record (`logId`, one attempt of it) belongs to, of the webhook's. */
export async function findDeliveryOfLog(
  db: Db,
  webhookId: string,
  logId: string,
): Promise<WebhookDeliveriesTable | undefined> {
  return db
    .selectFrom("webhook_logs")
    .innerJoin("webhook_deliveries", "webhook_deliveries.id", "webhook_logs.delivery_id")
    .selectAll("webhook_deliveries")
    .where("webhook_logs.id", "=", logId)
    .where("webhook_logs.webhook_id", "=", webhookId)
    .where("webhook_deliveries.webhook_id", "=", webhookId)
    .executeTakeFirst();
}

/**
 * Queues `original`'s event to its webhook again, due now, as a new delivery (its own attempts, from 1,
 * in the log under the new id); the dispatcher sends it like any other, signed with the webhook's secrets
 * as they are when it is sent. Returns the new delivery.
 */
export async function queueResend(
  db: Db,
  original: WebhookDeliveriesTable,
  id: string,
  nowIso: string,
): Promise<WebhookDeliveriesTable> {
  const row: WebhookDeliveriesTable = {
    id,
    organization_id: original.organization_id,
    webhook_id: original.webhook_id,
    event_id: original.event_id,
    event_type: original.event_type,
    status: "PENDING",
    attempts: 0,
    next_attempt_at: nowIso,
    claimed_until: null,
    claim_token: null,
    created_at: nowIso,
    updated_at: nowIso,
  };
  await db.insertInto("webhook_deliveries").values(row).execute();
  return row;
}

/** One page of the organization's delivery log, newest first, optionally for one webhook and one status. */
export async function listWebhookLogs(
  db: Db,
  organizationId: string,
  filter: { webhookId?: string; status?: string },
  limit: number,
  after?: { sort: string; id: string },
): Promise<WebhookLogsTable[]> {
  let query = db.selectFrom("webhook_logs").selectAll();
  query = filter.webhookId
    ? query.where("webhook_id", "=", filter.webhookId)
    : query.where("organization_id", "=", organizationId);
  if (filter.status) query = query.where("status", "=", filter.status);
  if (after) query = query.where((eb) => afterPosition(eb, "created_at", after));
  return query.orderBy("created_at", "desc").orderBy("id", "desc").limit(limit).execute();
}

/** How long delivery attempts stay in the log (and finished deliveries in the queue), as API metrics do. */
export const WEBHOOK_HISTORY_RETENTION_MS = 90 * 86_400_000;

/** Deliveries looked at per transaction by `closeAbandonedAttempts`. */
const ABANDONED_BATCH = 500;

/**
 * Attempts cut off by a stopped process whose delivery was cancelled while that process still held it
 * (its webhook deleted, or no longer listing its kind, within the claim): nobody claims the delivery
 * again, so nobody else would close them. Once the claim has lapsed (`unclaimed`), their log records still
 * PENDING are closed FAILED as interrupted and counted, as a later claim does for a delivery still queued,
 * and the claim is released (the delivery is not looked at again). Part of the hourly prune.
 */
export async function closeAbandonedAttempts(db: Db, nowMs: number): Promise<void> {
  const nowIso = isoAt(nowMs);
  const postgres = isPostgres(db);
  for (;;) {
    const done = await db.transaction().execute(async (trx) => {
      // Finished deliveries are released when settled: one still claimed was cancelled under its claim.
      let query = trx
        .selectFrom("webhook_deliveries")
        .select("id")
        .where("status", "!=", "PENDING")
        .where("claim_token", "is not", null)
        .where((eb) => unclaimed(eb, nowIso))
        .orderBy("id")
        .limit(ABANDONED_BATCH);
      // Delivery rows first, in id order (the lock order above); those a late outcome write holds are
      // left for the next prune.
      if (postgres) query = query.forUpdate().skipLocked();
      const ids = (await query.execute()).map((r) => r.id);
      if (ids.length === 0) return true;
      await closeInterruptedAttempts(trx, ids, nowIso);
      await trx
        .updateTable("webhook_deliveries")
        .set(RELEASED)
        .where("id", "in", ids)
        .where("status", "!=", "PENDING")
        .execute();
      return ids.length < ABANDONED_BATCH;
    });
    if (done) return;
  }
}

/**
 * Cancels deliveries queued for a deleted webhook: an event fanned out in a transaction that read the
 * webhook before its DELETE committed, and inserted after the DELETE cancelled the queue, is never claimed
 * (claims take only active webhooks' deliveries), so it would stay PENDING, and its event kept, for ever.
 * Nobody has attempted such a delivery, so there is no attempt to close.
 */
async function cancelOrphanedDeliveries(db: Db, nowMs: number): Promise<void> {
  await db
    .updateTable("webhook_deliveries")
    .set({ status: "CANCELLED", updated_at: isoAt(nowMs) })
    .where("status", "=", "PENDING")
    .where("attempts", "=", 0)
    .where("webhook_id", "in", (eb) => eb.selectFrom("webhooks").select("id").where("status", "=", "DELETED"))
    .execute();
}

/**
 * Closes the attempts abandoned under a cancelled delivery (`closeAbandonedAttempts`) and cancels the
 * deliveries left queued for a deleted webhook (`cancelOrphanedDeliveries`), then drops log records and
 * finished deliveries older than the retention, then the events older than it that no delivery needs any
 * more (an event still queued for a receiver stays, however old).
 */
export async function pruneWebhookHistory(db: Db, nowMs: number): Promise<void> {
  await closeAbandonedAttempts(db, nowMs);
  await cancelOrphanedDeliveries(db, nowMs);
  const before = isoAt(nowMs - WEBHOOK_HISTORY_RETENTION_MS);
  await db.deleteFrom("webhook_logs").where("created_at", "<", before).execute();
  await db
    .deleteFrom("webhook_deliveries")
    .where("status", "!=", "PENDING")
    .where("updated_at", "<", before)
    .execute();
  await db
    .deleteFrom("outbox_events")
    .where("created_at", "<", before)
    .where("id", "not in", (eb) => eb.selectFrom("webhook_deliveries").select("event_id"))
    .execute();
}

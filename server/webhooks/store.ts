import type { ExpressionBuilder } from "kysely";
import type { EventType } from "../../shared/schemas/webhook.js";
import { isoAt } from "../../shared/time.js";
import { unclaimed } from "../store/claim.js";
import type { Db } from "../store/database.js";
import { afterPosition } from "../store/keyset.js";
import type { Database, WebhookDeliveriesTable, WebhookLogsTable, WebhooksTable } from "../store/schema.js";

/** Webhook records, and the delivery log as the analytics API reads it. */

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
  const row = await trx
    .updateTable("webhooks")
    .set({
      ...(changes.url !== undefined && { url: changes.url }),
      ...(changes.events !== undefined && { events: JSON.stringify(changes.events) }),
      ...(changes.status !== undefined && { status: changes.status }),
      ...(changes.description !== undefined && { description: changes.description }),
      updated_at: nowIso,
    })
    .where("id", "=", id)
    .where("status", "!=", "DELETED")
    .returningAll()
    .executeTakeFirst();
  if (!row) return undefined;
  const events = changes.events;
  if (events !== undefined) await cancelDeliveries(trx, id, nowIso, events);
  return fromRow(row);
}

/**
 * Cancels a webhook's queued deliveries (with `keptEvents`, those of other event types only). An attempt
 * of one whose process stopped before recording its answer, which no live process holds, is closed as an
 * interrupted failure now: cancelled, it is never claimed again, where that would happen.
 */
async function cancelDeliveries(trx: Db, webhookId: string, nowIso: string, keptEvents?: string[]) {
  const queued = (eb: ExpressionBuilder<Database, "webhook_deliveries">) =>
    eb.and([
      eb("webhook_id", "=", webhookId),
      eb("status", "=", "PENDING"),
      ...(keptEvents ? [eb("event_type", "not in", keptEvents)] : []),
    ]);
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
  for (const [webhookId, n] of counts)
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
  const result = await trx
    .updateTable("webhooks")
    .set({ status: "DELETED", deleted_at: nowIso, updated_at: nowIso })
    .where("id", "=", id)
    .where("status", "!=", "DELETED")
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  await cancelDeliveries(trx, id, nowIso);
  return true;
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

/**
 * Drops log records and finished deliveries older than the retention, then the events older than it that
 * no delivery needs any more (an event still queued for a receiver stays, however old).
 */
export async function pruneWebhookHistory(db: Db, nowMs: number): Promise<void> {
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

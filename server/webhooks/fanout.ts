import type { EventType } from "../../shared/schemas/webhook.js";
import { isoAt } from "../../shared/time.js";
import { ulid } from "../ids.js";
import type { Db } from "../store/database.js";
import { fixedQuery } from "../store/fixedQuery.js";
import { deliveriesQueued } from "./wake.js";

const activeWebhooks = fixedQuery((db: Db, organizationId: string) =>
  db
    .selectFrom("webhooks")
    .select(["id", "events"])
    .where("organization_id", "=", organizationId)
    .where("status", "=", "ACTIVE"),
);

/**
 * Queues an event for every ACTIVE webhook of the organization subscribed to its kind, inside the
 * transaction that writes the event: a webhook gets exactly the events emitted while it was active and
 * subscribed, never older ones, and a queued delivery cannot be lost apart from its event.
 */
export async function fanOut(
  trx: Db,
  organizationId: string,
  type: EventType,
  eventId: string,
  nowMs: number,
): Promise<void> {
  const { rows: hooks } = await activeWebhooks(trx, organizationId);
  const targets = hooks.filter((h) => (JSON.parse(h.events) as string[]).includes(type));
  if (targets.length === 0) return;
  const wallMs = Date.now();
  const createdIso = isoAt(wallMs);
  // Due at once, on the wall clock, even when the cause is dated otherwise (billing "as of" a later day).
  const dueIso = new Date(Math.min(nowMs, wallMs)).toISOString();
  await trx
    .insertInto("webhook_deliveries")
    .values(
      targets.map((hook) => ({
        id: `dlv_${ulid(wallMs)}`,
        organization_id: organizationId,
        webhook_id: hook.id,
        event_id: eventId,
        event_type: type,
        status: "PENDING",
        attempts: 0,
        next_attempt_at: dueIso,
        claimed_until: null,
        claim_token: null,
        created_at: createdIso,
        updated_at: createdIso,
      })),
    )
    .execute();
  deliveriesQueued();
}

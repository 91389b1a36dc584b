import { ulid } from "../ids.js";
import type { Db } from "./database.js";

/**
 * The webhook outbox (contract 8): each event is written in the same transaction as the change that
 * causes it, with the resource as the API returns it, so nothing is lost if the process dies.
 */

export const EVENT_TYPES = [
  "donation.created",
  "donation.updated",
  "subscription.created",
  "subscription.updated",
  "subscription.cancelled",
  "subscription.payment_method_updated",
  "contact.created",
  "contact.updated",
  "form.created",
  "form.updated",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export async function emitEvent(
  trx: Db,
  organizationId: string,
  type: EventType,
  subjectId: string,
  data: unknown,
  nowMs: number,
): Promise<string> {
  const id = `evt_${ulid(nowMs)}`;
  await trx
    .insertInto("outbox_events")
    .values({
      id,
      organization_id: organizationId,
      type,
      subject_id: subjectId,
      data: JSON.stringify(data),
      created_at: new Date(nowMs).toISOString(),
    })
    .execute();
  return id;
}

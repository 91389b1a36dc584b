import type { EventType } from "../../shared/schemas/webhook.js";
import { isoAt } from "../../shared/time.js";
import { ulid } from "../ids.js";
import type { Db } from "../store/database.js";
import type { EmailOutboxTable } from "../store/schema.js";
import { type EventClock, insertEvent } from "./fanout.js";

/**
 * The webhook outbox: each event is written in the same transaction as the change that
 * causes it, with the resource as the API returns it, so nothing is lost if the process dies. In the same
 * write it is queued for each of the organization's ACTIVE webhooks subscribed to its kind (so a webhook
 * never receives events from before it was registered or from while it was disabled).
 */

export { EVENT_TYPES, type EventType } from "../../shared/schemas/webhook.js";
export type { EventClock } from "./fanout.js";

export async function emitEvent(
  trx: Db,
  organizationId: string,
  type: EventType,
  subjectId: string,
  data: unknown,
  /** The injected clock's now (AppDeps.now), or it with the real time when it is another moment. */
  at: number | EventClock,
  /** A message for the e-mail outbox caused by the same change (a receipt), written with the event. */
  mail?: EmailOutboxTable,
): Promise<string> {
  const clock = typeof at === "number" ? { nowMs: at } : at;
  const nowMs = clock.nowMs;
  const id = `evt_${ulid(nowMs)}`;
  const event = {
    id,
    organization_id: organizationId,
    type,
    subject_id: subjectId,
    data: JSON.stringify(data),
    created_at: isoAt(nowMs),
  };
  await insertEvent(trx, event, clock, mail);
  return id;
}

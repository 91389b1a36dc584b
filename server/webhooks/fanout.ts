import type { EventType } from "../../shared/schemas/webhook.js";
import { isoAt } from "../../shared/time.js";
import { ulid } from "../ids.js";
import type { Db } from "../store/database.js";
import { isPostgres } from "../store/dialect.js";
import { fixedQuery, insertRow } from "../store/fixedQuery.js";
import type { EmailOutboxTable, OutboxEventsTable } from "../store/schema.js";

const activeWebhooks = fixedQuery((db: Db, organizationId: string) =>
  db
    .selectFrom("webhooks")
    .select(["id", "events"])
    .where("organization_id", "=", organizationId)
    .where("status", "=", "ACTIVE"),
);

/** PostgreSQL: the event's insert rides along in the read of the webhooks (a data-modifying WITH). */
const insertThenActiveWebhooks = fixedQuery(
  (db: Db, id: string, organizationId: string, type: string, subjectId: string, data: string, at: string) =>
    db
      .with("event", (qc) =>
        qc.insertInto("outbox_events").values({
          id,
          organization_id: organizationId,
          type,
          subject_id: subjectId,
          data,
          created_at: at,
        }),
      )
      .selectFrom("webhooks")
      .select(["id", "events"])
      .where("organization_id", "=", organizationId)
      .where("status", "=", "ACTIVE"),
);

/** The e-mail outbox's columns a message written with an event sets (all but the claim's process). */
const MAIL_COLUMNS = [
  "id",
  "organization_id",
  "payment_id",
  "to_address",
  "from_name",
  "reply_to",
  "subject",
  "text_body",
  "html_body",
  "status",
  "attempts",
  "next_attempt_at",
  "claimed_until",
  "claim_token",
  "last_error",
  "created_at",
  "sent_at",
] as const satisfies readonly (keyof EmailOutboxTable)[];
/** Columns of the e-mail outbox missing from MAIL_COLUMNS (`claimed_by` is set by claims only): none. */
type MissingMailColumns = Exclude<keyof EmailOutboxTable, "claimed_by" | (typeof MAIL_COLUMNS)[number]>;
// Does not compile, naming the column, once the outbox gains a column the list lacks.
const noMissingMailColumn: [MissingMailColumns] extends [never] ? true : MissingMailColumns = true;
void noMissingMailColumn;

/** PostgreSQL: the event's insert and a message's (a receipt) both ride along in the read of the webhooks. */
const insertWithMailThenActiveWebhooks = fixedQuery(
  (
    db: Db,
    id: string,
    organizationId: string,
    type: string,
    subjectId: string,
    data: string,
    at: string,
    ...mail: unknown[]
  ) =>
    db
      .with("event", (qc) =>
        qc.insertInto("outbox_events").values({
          id,
          organization_id: organizationId,
          type,
          subject_id: subjectId,
          data,
          created_at: at,
        }),
      )
      .with("mail", (qc) =>
        qc
          .insertInto("email_outbox")
          .values(Object.fromEntries(MAIL_COLUMNS.map((column, i) => [column, mail[i]])) as never),
      )
      .selectFrom("webhooks")
      .select(["id", "events"])
      .where("organization_id", "=", organizationId)
      .where("status", "=", "ACTIVE"),
);

type Hook = { id: string; events: string };

/**
 * Writes the event to the outbox, and `mail` (a message caused by the same change) to the e-mail outbox,
 * and answers the organization's ACTIVE webhooks, as seen by the same transaction. On PostgreSQL that is
 * one statement: a round trip fewer on every write that emits an event, two when it also sends a receipt.
 */
export async function insertEvent(
  trx: Db,
  event: OutboxEventsTable,
  mail?: EmailOutboxTable,
): Promise<Hook[]> {
  if (isPostgres(trx)) {
    const args = [
      event.id,
      event.organization_id,
      event.type,
      event.subject_id,
      event.data,
      event.created_at,
    ] as const;
    const { rows } = mail
      ? await insertWithMailThenActiveWebhooks(trx, ...args, ...MAIL_COLUMNS.map((column) => mail[column]))
      : await insertThenActiveWebhooks(trx, ...args);
    return rows;
  }
  await insertRow(trx, "outbox_events", event);
  if (mail) await insertRow(trx, "email_outbox", mail);
  return (await activeWebhooks(trx, event.organization_id)).rows;
}

/**
 * Queues an event for every ACTIVE webhook of the organization subscribed to its kind (`hooks`, read by
 * insertEvent), inside the transaction that writes the event: a webhook gets exactly the events emitted
 * while it was active and subscribed, never older ones, and a queued delivery cannot be lost apart from
 * its event.
 */
export async function fanOut(
  trx: Db,
  hooks: Hook[],
  organizationId: string,
  type: EventType,
  eventId: string,
  nowMs: number,
): Promise<void> {
  const targets = hooks.filter((h) => (JSON.parse(h.events) as string[]).includes(type));
  if (targets.length === 0) return;
  // Deliveries are the dispatcher's records, kept on its wall clock (WebhookDispatcher's `wallClock`, the real
  // time), not on the injected clock that dated the event (a `billing run --as-of` dates it later). Due at
  // once, even when the cause is dated otherwise.
  const wallMs = Date.now();
  const createdIso = isoAt(wallMs);
  const dueIso = isoAt(Math.min(nowMs, wallMs));
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
}

import { sql } from "kysely";
import type { EventType } from "../../shared/schemas/webhook.js";
import { isoAt } from "../../shared/time.js";
import { ulid } from "../ids.js";
import { runAtCommit } from "../store/atCommit.js";
import type { Db } from "../store/database.js";
import { isPostgres } from "../store/dialect.js";
import { fixedQuery, insertRow } from "../store/fixedQuery.js";
import type { EmailOutboxTable, OutboxEventsTable, WebhookDeliveriesTable } from "../store/schema.js";

const activeWebhooks = fixedQuery((db: Db, organizationId: string) =>
  db
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

/** The delivery's columns, in the order the PostgreSQL fan-out below selects them. */
const DELIVERY_COLUMNS = [
  "id",
  "organization_id",
  "webhook_id",
  "event_id",
  "event_type",
  "status",
  "attempts",
  "next_attempt_at",
  "claimed_until",
  "claim_token",
  "created_at",
  "updated_at",
] as const satisfies readonly (keyof WebhookDeliveriesTable)[];

/**
 * PostgreSQL: the event, a message caused by it (a receipt, when `withMail`) and its deliveries, in one
 * statement. The deliveries are selected from the organization's ACTIVE webhooks subscribed to the event's
 * kind (`events` holds a JSON array of kinds), as the same transaction sees them. A delivery's id is a ulid:
 * the time part made here, the random part (16 characters of the ulid alphabet) by the database.
 */
function eventStatement(withMail: boolean) {
  return fixedQuery(
    (
      db: Db,
      id: string,
      organizationId: string,
      type: string,
      subjectId: string,
      data: string,
      at: string,
      deliveryIdPrefix: string,
      deliveryDue: string,
      deliveryCreated: string,
      ...mail: unknown[]
    ) => {
      const event = db.with("event", (qc) =>
        qc.insertInto("outbox_events").values({
          id,
          organization_id: organizationId,
          type,
          subject_id: subjectId,
          data,
          created_at: at,
        }),
      );
      // The message's CTE adds nothing the rest of the statement reads.
      const withMessage = withMail
        ? (event.with("mail", (qc) =>
            qc
              .insertInto("email_outbox")
              .values(Object.fromEntries(MAIL_COLUMNS.map((column, i) => [column, mail[i]])) as never),
          ) as unknown as typeof event)
        : event;
      return withMessage
        .insertInto("webhook_deliveries")
        .columns(DELIVERY_COLUMNS)
        .expression((eb) =>
          eb
            .selectFrom("webhooks")
            .select([
              sql<string>`${deliveryIdPrefix}::text || substr(md5(random()::text || webhooks.id), 1, 16)`.as(
                "id",
              ),
              "organization_id",
              "id as webhook_id",
              sql<string>`${id}::text`.as("event_id"),
              sql<string>`${type}::text`.as("event_type"),
              sql<string>`'PENDING'`.as("status"),
              sql<number>`0`.as("attempts"),
              sql<string>`${deliveryDue}::text`.as("next_attempt_at"),
              sql<null>`null`.as("claimed_until"),
              sql<null>`null`.as("claim_token"),
              sql<string>`${deliveryCreated}::text`.as("created_at"),
              sql<string>`${deliveryCreated}::text`.as("updated_at"),
            ])
            .where("organization_id", "=", organizationId)
            .where("status", "=", "ACTIVE")
            .where(sql<boolean>`webhooks.events::jsonb ? ${type}::text`),
        );
    },
  );
}
const eventOnly = eventStatement(false);
const eventWithMail = eventStatement(true);

type Hook = { id: string; events: string };

/** When an event is emitted, as the caller's injected clocks have it. */
export interface EventClock {
  /** The injected clock (AppDeps.now): the event is dated by it. */
  nowMs: number;
  /**
   * The real time, as the caller's own injected wall clock has it (a worker's `wallClock`), when `nowMs` is
   * another moment (a billing pass run `--as-of` it); left out, `nowMs` is the real time. The webhook
   * dispatcher claims on the real time, so the deliveries are dated by this and due at once.
   */
  wallMs?: number;
}

/**
 * Writes the event to the outbox, `mail` (a message caused by the same change) to the e-mail outbox, and
 * a delivery for every ACTIVE webhook of the organization subscribed to the event's kind, inside the
 * transaction that makes the change: a webhook gets exactly the events emitted while it was active and
 * subscribed, never older ones, and a queued delivery cannot be lost apart from its event.
 *
 * On PostgreSQL that is one statement, run at the transaction's commit (runAtCommit): nothing in it is
 * read back, so it costs no round trip of its own, and at most one for a transaction that ends with it.
 */
export async function insertEvent(
  trx: Db,
  event: OutboxEventsTable,
  clock: EventClock,
  mail?: EmailOutboxTable,
): Promise<void> {
  // Deliveries are the dispatcher's records, dated by the real time (`wallMs`, or the injected clock when it
  // is the real time) and due at once, even when the cause is dated later (`billing run --as-of`).
  const { nowMs, wallMs = nowMs } = clock;
  const createdIso = isoAt(wallMs);
  const dueIso = isoAt(Math.min(nowMs, wallMs));
  if (isPostgres(trx)) {
    const args = [
      event.id,
      event.organization_id,
      event.type,
      event.subject_id,
      event.data,
      event.created_at,
      `dlv_${ulid(wallMs).slice(0, 10)}`,
      dueIso,
      createdIso,
    ] as const;
    const compiled = mail
      ? eventWithMail.compiled(trx, ...args, ...MAIL_COLUMNS.map((column) => mail[column]))
      : eventOnly.compiled(trx, ...args);
    await runAtCommit(trx, compiled);
    return;
  }
  await insertRow(trx, "outbox_events", event);
  if (mail) await insertRow(trx, "email_outbox", mail);
  const hooks = (await activeWebhooks(trx, event.organization_id)).rows;
  await fanOut(
    trx,
    hooks,
    event.organization_id,
    event.type as EventType,
    event.id,
    createdIso,
    dueIso,
    wallMs,
  );
}

/** Queues the event for each of `hooks` subscribed to its kind (SQLite; see insertEvent). */
async function fanOut(
  trx: Db,
  hooks: Hook[],
  organizationId: string,
  type: EventType,
  eventId: string,
  createdIso: string,
  dueIso: string,
  wallMs: number,
): Promise<void> {
  const targets = hooks.filter((h) => (JSON.parse(h.events) as string[]).includes(type));
  if (targets.length === 0) return;
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

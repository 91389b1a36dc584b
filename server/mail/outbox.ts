import type { Kysely, Transaction } from "kysely";
import { isoAt } from "../../shared/time.js";
import { ulid } from "../ids.js";
import { insertRow } from "../store/fixedQuery.js";
import type { Database, EmailOutboxTable } from "../store/schema.js";

/**
 * The e-mail outbox: a receipt is written in the same transaction as the payment it describes, so it is
 * sent if and only if the payment is recorded; the MailWorker drains it.
 */

export interface OutgoingMail {
  organizationId: string;
  paymentId?: string;
  to: string;
  /** Shown as the sender's name; the address is the instance's own (see transport.ts). */
  fromName: string;
  replyTo?: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * When a message caused by a change dated `nowMs` is queued: at once. A change dated later than the real
 * time `wallMs` (a billing pass run `--as-of` a later moment) still mails now, not at that moment.
 */
export const mailDueMs = (nowMs: number, wallMs = nowMs): number => Math.min(nowMs, wallMs);

/** The outbox row of one message, due at once (`nowMs`). */
export function outboxRow(mail: OutgoingMail, nowMs: number): EmailOutboxTable {
  const now = isoAt(nowMs);
  return {
    id: `eml_${ulid(nowMs)}`,
    organization_id: mail.organizationId,
    payment_id: mail.paymentId ?? null,
    to_address: mail.to,
    from_name: mail.fromName,
    reply_to: mail.replyTo ?? null,
    subject: mail.subject,
    text_body: mail.text,
    html_body: mail.html,
    status: "PENDING",
    attempts: 0,
    next_attempt_at: now,
    claimed_until: null,
    claim_token: null,
    last_error: null,
    created_at: now,
    sent_at: null,
  };
}

/** Queues one message, due at once; returns its id (`eml_…`). */
export async function queueEmail(
  db: Kysely<Database> | Transaction<Database>,
  mail: OutgoingMail,
  nowMs: number,
): Promise<string> {
  const row = outboxRow(mail, nowMs);
  await insertRow(db, "email_outbox", row);
  return row.id;
}

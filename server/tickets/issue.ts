import crypto from "node:crypto";
import { groupTicketCode, TICKET_CODE_ALPHABET, TICKET_CODE_LENGTH } from "../../shared/ticketCode.js";
import { isoAt } from "../../shared/time.js";
import { ulid } from "../ids.js";
import type { Db } from "../store/database.js";
import { paymentDetails } from "../store/payments.js";
import type { PaymentsTable, TicketsTable } from "../store/schema.js";
import { insertTickets, voidTicketsOfPayment } from "../store/tickets.js";

/**
 * Tickets are issued and voided with their order's payment, in the transaction that records its outcome
 * (payments/transition.ts): a completed event order has one ticket per ticket bought (2 × "Adult" is
 * two tickets; a GROUP ticket is one that admits its group), a refund in full voids them.
 */

/** A fresh code: 10 characters, 5 random bits each (a byte's low 5 bits: every character equally likely). */
export function newTicketCode(): string {
  const bytes = crypto.randomBytes(TICKET_CODE_LENGTH);
  let chars = "";
  for (const byte of bytes) chars += TICKET_CODE_ALPHABET[byte & 31];
  return groupTicketCode(chars);
}

/** The ticket rows of a completed payment: none unless it bought tickets. */
export function ticketRows(row: PaymentsTable, nowMs: number): TicketsTable[] {
  const rows: TicketsTable[] = [];
  const createdAt = isoAt(nowMs);
  const buyerName = `${row.first_name} ${row.last_name}`.trim();
  for (const line of paymentDetails(row).lines) {
    if (line.kind !== "ticket" || line.quantity <= 0) continue;
    // `admits` is the line's people in all (quantity × group size).
    const admits = Math.max(1, Math.round((line.admits ?? line.quantity) / line.quantity));
    for (let i = 0; i < line.quantity; i++)
      rows.push({
        id: `tkt_${ulid(nowMs)}`,
        code: newTicketCode(),
        organization_id: row.organization_id,
        form_id: row.form_id,
        payment_id: row.id,
        position: rows.length,
        contact_id: row.contact_id,
        buyer_name: buyerName,
        buyer_email: row.email,
        ticket_type: line.label,
        admits,
        checked_in_at: null,
        checked_in_by: null,
        voided_at: null,
        created_at: createdAt,
      });
  }
  return rows;
}

/**
 * Issues the tickets of a payment that has just completed (called once: the status move that completes
 * a payment is conditional, so a repeated or retried outcome never gets here twice).
 */
export async function issueTickets(trx: Db, row: PaymentsTable, nowMs: number): Promise<TicketsTable[]> {
  const rows = ticketRows(row, nowMs);
  await insertTickets(trx, rows);
  return rows;
}

/** Voids the tickets of a payment refunded in full. */
export async function voidTickets(trx: Db, paymentId: string, nowMs: number): Promise<number> {
  return voidTicketsOfPayment(trx, paymentId, isoAt(nowMs));
}

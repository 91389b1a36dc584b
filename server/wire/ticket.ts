import type { TicketOut, TicketStatus } from "../../shared/schemas/tickets.js";
import { wireTime } from "../../shared/time.js";
import type { TicketsTable } from "../store/schema.js";

/** The ticket as the API and the `ticket.checked_in` webhook event show it. */
export function presentTicket(row: TicketsTable): TicketOut {
  const status: TicketStatus =
    row.voided_at !== null ? "VOID" : row.checked_in_at !== null ? "CHECKED_IN" : "VALID";
  return {
    id: row.id,
    code: row.code,
    formID: row.form_id,
    paymentID: row.payment_id,
    contactId: row.contact_id,
    ticketType: row.ticket_type,
    admits: Number(row.admits),
    buyer: { name: row.buyer_name, email: row.buyer_email },
    status,
    checkedInAt: wireTime(row.checked_in_at),
    checkedInBy: row.checked_in_by,
    voidedAt: wireTime(row.voided_at),
    createdAt: wireTime(row.created_at),
  };
}

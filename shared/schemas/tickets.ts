import { z } from "zod";
import { TICKET_CODE } from "../ticketCode.js";
import { time, ulidId, uuid } from "./wire.js";

/** Event tickets: a ticket as the API shows it (`GET /v1/forms/{formID}/tickets`, check-in, webhooks). */

export const TICKET_STATUSES = ["VALID", "CHECKED_IN", "VOID"] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];

export const ticketFields = {
  id: ulidId("tkt").meta({ description: "The ticket's id (`tkt_…`)" }),
  code: z.string().regex(TICKET_CODE).meta({
    description:
      "The ticket's own code, `ABCD-EFGH-JK` (Crockford base 32: no I, L, O or U), printed and as a QR code on the receipt; what the door types or scans",
    example: "7QK3-M9XD-4R",
  }),
  formID: uuid("The event's form"),
  paymentID: ulidId("pay").meta({ description: "The order (payment) the ticket was bought with" }),
  contactId: uuid("The buyer's contact").nullable(),
  ticketType: z.string().meta({ description: "The ticket's name on the form (`tickets[].name`)" }),
  admits: z.int().min(1).meta({
    description: "How many people it lets in: 1, or a GROUP ticket's `groupSize`",
  }),
  buyer: z
    .object({
      name: z.string().meta({ description: "First and last name, as given at checkout" }),
      email: z.string(),
    })
    .meta({ description: "Who bought it" }),
  status: z.enum(TICKET_STATUSES).meta({
    description:
      "VALID: not yet used; CHECKED_IN: admitted (see checkedInAt, checkedInBy); VOID: its order was refunded in full, it admits nobody",
  }),
  checkedInAt: time("When it was checked in").nullable(),
  checkedInBy: z.string().nullable().meta({
    description:
      "Who checked it in: a staff member's e-mail address, or `key:<id>` for an API key; null when not checked in",
  }),
  voidedAt: time("When its order was refunded in full").nullable(),
  createdAt: time("When it was issued (its order's payment completed)"),
};

export const ticketSchema = z.strictObject(ticketFields);
export type TicketOut = z.output<typeof ticketSchema>;

/** A ticket checked in already (409): when, and by whom, it was first admitted. */
export const ticketConflictSchema = z.object({
  error: z.string().meta({ example: "Ticket already checked in" }),
  code: z.enum(["already_checked_in", "voided", "not_checked_in"]).meta({
    description:
      "already_checked_in: see checkedInAt and checkedInBy; voided: its order was refunded in full; not_checked_in: nothing to undo",
  }),
  ticket: ticketSchema,
  checkedInAt: time("When it was first checked in").nullable(),
  checkedInBy: z.string().nullable().meta({ description: "Who first checked it in" }),
});

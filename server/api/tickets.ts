import { z } from "zod";
import type { CsvColumn } from "../../shared/csv.js";
import { cleanText } from "../../shared/schemas/common.js";
import { type TicketOut, ticketConflictSchema, ticketSchema } from "../../shared/schemas/tickets.js";
import { normalizeTicketCode } from "../../shared/ticketCode.js";
import { ApiError } from "../errors.js";
import type { TicketsTable } from "../store/schema.js";
import { findTicket, type TicketFilters, ticketCounts, ticketsQuery } from "../store/tickets.js";
import { checkInTicket, undoCheckIn } from "../tickets/checkIn.js";
import { presentTicket } from "../wire/ticket.js";
import { csvDoc, csvTime, exportList, timeHeader, wantsCsv } from "./csvExport.js";
import type { AppDeps } from "./env.js";
import { loadOwnedForm } from "./forms/routes.js";
import { decodeCursor, encodeCursor, page, pageSchema, paginationQuery } from "./pagination.js";
import { defineRoute, errorSchema, pathId, type RouteSpec, standardErrors } from "./route.js";

/**
 * An event's tickets: the list the door searches, and the check-in. Tickets are issued with
 * their order's payment (tickets/issue.ts); checking one in is one conditional update (tickets/checkIn.ts).
 */

const formParams = z.object({ formID: pathId("The event form's formID (UUID)") });
const ticketParams = z.object({
  formID: pathId("The event form's formID (UUID)"),
  code: pathId(
    "The ticket's code, `ABCD-EFGH-JK`: any case, dashes optional, O read as 0 and I or L as 1 (as typed at the door)",
  ),
});

const SEARCH_MAX = 200;

export const ticketListQuery = paginationQuery().extend({
  checkedIn: z.enum(["true", "false"]).optional().meta({
    description:
      "true: only tickets checked in (`status: CHECKED_IN`, those `totals.checkedIn` counts); false: all the others, `VALID` and `VOID` (a void ticket is not checked in, even one admitted before its order was refunded)",
  }),
  ticketType: z
    .string()
    .max(200)
    .optional()
    .meta({ description: "Only tickets of this name on the form (`tickets[].name`), exactly" }),
  search: z
    .string()
    .max(SEARCH_MAX)
    .optional()
    .meta({
      description:
        "Part of the buyer's name or e-mail address, or of the code (dashes optional, O read as 0 and I or L as 1, as check-in reads it), any case",
    })
    .transform((raw) => {
      const text = raw === undefined ? "" : cleanText(raw).trim().toLowerCase();
      return text === "" ? undefined : text;
    }),
});
type TicketListQuery = z.output<typeof ticketListQuery>;

function filtersOf(q: TicketListQuery): TicketFilters {
  const filters: TicketFilters = {};
  if (q.checkedIn !== undefined) filters.checkedIn = q.checkedIn === "true";
  if (q.ticketType !== undefined) filters.ticketType = q.ticketType;
  if (q.search !== undefined) filters.search = q.search;
  return filters;
}

const totalsSchema = z
  .object({
    tickets: z.int().min(0).meta({ description: "Tickets sold (void ones left out)" }),
    checkedIn: z.int().min(0).meta({ description: "Of those, tickets checked in" }),
    people: z
      .int()
      .min(0)
      .meta({ description: "People the tickets sold let in (a GROUP ticket counts its group)" }),
    peopleAdmitted: z.int().min(0).meta({ description: "People let in by the tickets checked in" }),
  })
  .meta({ description: "The whole event's counts, whatever the filters: for the door's admitted / sold" });

function ticketColumns(timeZone: string): CsvColumn<TicketOut>[] {
  return [
    { header: "Code", value: (t) => t.code },
    { header: "Ticket type", value: (t) => t.ticketType },
    { header: "Admits", value: (t) => t.admits },
    { header: "Buyer name", value: (t) => t.buyer.name },
    { header: "Buyer email", value: (t) => t.buyer.email },
    { header: "Status", value: (t) => t.status },
    { header: timeHeader("Checked in", timeZone), value: (t) => csvTime(t.checkedInAt, timeZone) },
    { header: "Checked in by", value: (t) => t.checkedInBy },
    { header: timeHeader("Voided", timeZone), value: (t) => csvTime(t.voidedAt, timeZone) },
    { header: "Payment ID", value: (t) => t.paymentID },
    { header: timeHeader("Issued", timeZone), value: (t) => csvTime(t.createdAt, timeZone) },
  ];
}

/**
 * Deleting an event's form stops its sales, not the event: the tickets sold stay valid, readable and
 * checked in at the door until their orders are refunded.
 */
const EVEN_DELETED = { deleted: "allowed" } as const;

export function ticketRoutes(deps: AppDeps): RouteSpec[] {
  const db = deps.store.db;
  const tags = ["Tickets"];
  const formErrors = {
    ...standardErrors,
    404: { description: "No such form (or ticket)", schema: errorSchema },
  };
  return [
    defineRoute({
      method: "get",
      path: "/v1/forms/{formID}/tickets",
      operationId: "listTickets",
      permission: "tickets:read",
      tags,
      summary: "List an event's tickets",
      description:
        "One record per ticket bought (2 × a ticket are two records; a GROUP ticket is one record that `admits` its group), issued when the order's payment completes and voided when it is refunded in full or a dispute over it is lost (a partial refund voids none). Newest first; filters `checkedIn=true|false`, `ticketType=`, `search=` (buyer's name or e-mail, or code), all combined. `totals` counts the whole event, whatever the filters. A `lastEvaluatedKey` pages only the list of the filters it came from.",
      params: formParams,
      query: ticketListQuery,
      responses: {
        200: {
          description: "A page of tickets",
          schema: pageSchema("tickets", ticketSchema).extend({ totals: totalsSchema }),
          csv: csvDoc("ticket"),
        },
        ...formErrors,
      },
      handler: async (c, { params, query }) => {
        const orgId = c.get("auth").organizationId;
        const form = await loadOwnedForm(deps, orgId, params.formID, EVEN_DELETED);
        const filters = filtersOf(query);
        if (wantsCsv(c))
          return exportList(c, deps, orgId, {
            name: "tickets",
            fetch: (after, limit) => ticketsQuery(db, form.id, filters, after).limit(limit).execute(),
            present: (rows: TicketsTable[]) => rows.map(presentTicket),
            columns: (org) => ticketColumns(org.timeZone),
          });
        const list = `tickets:${form.id}?${JSON.stringify(Object.entries(filters).sort())}`;
        const after = query.lastEvaluatedKey ? decodeCursor(list, orgId, query.lastEvaluatedKey) : undefined;
        const [rows, totals] = await Promise.all([
          ticketsQuery(db, form.id, filters, after)
            .limit(query.limit + 1)
            .execute(),
          ticketCounts(db, form.id),
        ]);
        return c.json({
          ...page(
            "tickets",
            rows,
            query.limit,
            presentTicket,
            (r) => ({ sort: r.created_at, id: r.id }),
            (p) => encodeCursor(list, orgId, p),
          ),
          totals,
        });
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/forms/{formID}/tickets/{code}",
      operationId: "getTicket",
      permission: "tickets:read",
      tags,
      summary: "Get a ticket by its code",
      description: "The ticket as typed or scanned at the door, before or after it is checked in.",
      params: ticketParams,
      responses: { 200: { description: "The ticket", schema: ticketSchema }, ...formErrors },
      handler: async (c, { params }) => {
        const form = await loadOwnedForm(deps, c.get("auth").organizationId, params.formID, EVEN_DELETED);
        const code = normalizeTicketCode(params.code);
        const row = code ? await findTicket(db, form.id, code) : undefined;
        if (!row) throw new ApiError(404, "Ticket not found");
        return c.json(presentTicket(row));
      },
    }),
    defineRoute({
      method: "post",
      path: "/v1/forms/{formID}/tickets/{code}/check-in",
      operationId: "checkInTicket",
      permission: "tickets:write",
      tags,
      summary: "Check a ticket in",
      description:
        "Admits the ticket once: one conditional update, so of two doors (phones, instances) checking in the same ticket at the same moment exactly one succeeds. A ticket checked in already is a 409 whose body says when and by whom (`checkedInAt`, `checkedInBy`, and the `ticket`); a void ticket (its order refunded in full) is a 409 with `code: voided`. Recorded in the audit log (`ticket.checked_in`) and sent as the `ticket.checked_in` webhook event.",
      params: ticketParams,
      // Nothing to send; a body that is sent must still be a JSON object (an empty one).
      body: z.strictObject({}).meta({ description: "Nothing: the body may be left out, or be {}" }),
      bodyOptional: true,
      responses: {
        200: { description: "Checked in: the ticket", schema: ticketSchema },
        ...formErrors,
        409: { description: "Checked in already, or void", schema: ticketConflictSchema },
      },
      handler: async (c, { params }) => {
        const auth = c.get("auth");
        const form = await loadOwnedForm(deps, auth.organizationId, params.formID, EVEN_DELETED);
        const row = await checkInTicket(deps, {
          organizationId: auth.organizationId,
          formId: form.id,
          code: params.code,
          actor: auth.actor,
        });
        return c.json(presentTicket(row));
      },
    }),
    defineRoute({
      method: "delete",
      path: "/v1/forms/{formID}/tickets/{code}/check-in",
      operationId: "undoTicketCheckIn",
      permission: "tickets:write",
      tags,
      summary: "Undo a ticket's check-in",
      description:
        "The ticket is VALID again (a check-in made by mistake). 409 (`code: not_checked_in`) when it is not checked in, or (`code: voided`) when it is void. Recorded in the audit log (`ticket.check_in_undone`); no webhook event.",
      params: ticketParams,
      responses: {
        200: { description: "Undone: the ticket", schema: ticketSchema },
        ...formErrors,
        409: { description: "Not checked in, or void", schema: ticketConflictSchema },
      },
      handler: async (c, { params }) => {
        const auth = c.get("auth");
        const form = await loadOwnedForm(deps, auth.organizationId, params.formID, EVEN_DELETED);
        const row = await undoCheckIn(deps, {
          organizationId: auth.organizationId,
          formId: form.id,
          code: params.code,
          actor: auth.actor,
        });
        return c.json(presentTicket(row));
      },
    }),
  ];
}

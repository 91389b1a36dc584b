import { normalizeTicketCode } from "../../shared/ticketCode.js";
import { isoAt } from "../../shared/time.js";
import type { AppDeps } from "../deps.js";
import { ApiError } from "../errors.js";
import { type AuditActor, recordAudit } from "../store/auditLog.js";
import type { Db } from "../store/database.js";
import type { TicketsTable } from "../store/schema.js";
import { clearCheckIn, findTicket, markCheckedIn } from "../store/tickets.js";
import { emitEvent } from "../webhooks/events.js";
import { presentTicket } from "../wire/ticket.js";

/**
 * Checking a ticket in at the door, and undoing it. Each is one conditional update (store/tickets.ts) in a
 * transaction with its audit-log entry (and, for a check-in, its `ticket.checked_in` event): of two
 * doors checking in the same ticket at the same moment, on one database or through two instances on
 * PostgreSQL, one admits it and the other is told when and by whom it was.
 */

/** How the ticket names who checked it in: a staff member's address, `key:<id>`, or `system`. */
export function actorLabel(actor: AuditActor): string {
  switch (actor.type) {
    case "staff":
      return actor.email;
    case "key":
      return `key:${actor.id}`;
    case "donor":
      return actor.email;
    case "system":
      return "system";
  }
}

/** A 409 that shows the ticket as it stands: checked in already (when, by whom), voided, or not checked in. */
function conflict(row: TicketsTable, kind: "already_checked_in" | "voided" | "not_checked_in"): ApiError {
  const message =
    kind === "voided"
      ? "This ticket is void: its order was refunded"
      : kind === "already_checked_in"
        ? `Ticket already checked in at ${presentTicket(row).checkedInAt} by ${row.checked_in_by}`
        : "This ticket is not checked in";
  return new ApiError(409, message, undefined, undefined, {
    code: kind,
    ticket: presentTicket(row),
    checkedInAt: presentTicket(row).checkedInAt,
    checkedInBy: row.checked_in_by,
  });
}

const notFound = () => new ApiError(404, "Ticket not found");

/** The code as typed (any case, dashes optional, O for 0): the 404 for one that cannot be a code. */
function codeOf(typed: string): string {
  const code = normalizeTicketCode(typed);
  if (!code) throw notFound();
  return code;
}

export interface TicketAt {
  organizationId: string;
  formId: string;
  code: string;
  actor: AuditActor;
}

/** Checks in the ticket `code` of the form: the ticket checked in, or the 404 / 409 that says why not. */
export async function checkInTicket(deps: AppDeps, at: TicketAt): Promise<TicketsTable> {
  const code = codeOf(at.code);
  const nowMs = deps.now();
  const by = actorLabel(at.actor);
  return deps.store.transact(async (trx: Db) => {
    const row = await markCheckedIn(trx, at.formId, code, isoAt(nowMs), by);
    if (!row) {
      const current = await findTicket(trx, at.formId, code);
      if (!current) throw notFound();
      throw conflict(current, current.voided_at !== null ? "voided" : "already_checked_in");
    }
    await recordAudit(
      trx,
      {
        organizationId: at.organizationId,
        actor: at.actor,
        action: "ticket.checked_in",
        subjectType: "ticket",
        subjectId: row.id,
        before: { status: "VALID" },
        after: { status: "CHECKED_IN", code: row.code, checkedInAt: presentTicket(row).checkedInAt },
      },
      nowMs,
    );
    await emitEvent(trx, at.organizationId, "ticket.checked_in", row.id, presentTicket(row), nowMs);
    return row;
  });
}

/** Undoes the check-in of the ticket `code`: the ticket as it is now, or the 404 / 409 that says why not. */
export async function undoCheckIn(deps: AppDeps, at: TicketAt): Promise<TicketsTable> {
  const code = codeOf(at.code);
  const nowMs = deps.now();
  return deps.store.transact(async (trx: Db) => {
    const before = await findTicket(trx, at.formId, code);
    if (!before) throw notFound();
    const row = await clearCheckIn(trx, at.formId, code);
    if (!row) {
      // As it is now: another undo at the same moment may have made it VALID since it was read.
      const current = (await findTicket(trx, at.formId, code)) ?? before;
      throw conflict(current, current.voided_at !== null ? "voided" : "not_checked_in");
    }
    await recordAudit(
      trx,
      {
        organizationId: at.organizationId,
        actor: at.actor,
        action: "ticket.check_in_undone",
        subjectType: "ticket",
        subjectId: row.id,
        before: {
          status: "CHECKED_IN",
          checkedInAt: presentTicket(before).checkedInAt,
          checkedInBy: before.checked_in_by,
        },
        after: { status: "VALID", code: row.code },
      },
      nowMs,
    );
    return row;
  });
}

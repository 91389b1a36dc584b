import { type Expression, type SqlBool, sql } from "kysely";
import { ticketCodeChars } from "../../shared/ticketCode.js";
import type { Db } from "./database.js";
import { afterPosition } from "./keyset.js";
import { foldFor, likeContains } from "./listFilters.js";
import type { TicketsTable } from "./schema.js";

/** Event tickets: written with their order's payment, listed per form, checked in at the door. */

export interface TicketFilters {
  /** true: checked in (`CHECKED_IN`); false: the others, `VALID` and `VOID` (voided after a check-in too). */
  checkedIn?: boolean;
  /** The ticket's name on the form, exactly. */
  ticketType?: string;
  /** Lower-cased: part of the buyer's name or e-mail, or of the code (dashes optional). */
  search?: string;
}

/**
 * Rows one INSERT writes: 15 values a row keeps a statement far inside SQLite's 32,766 bound values and
 * PostgreSQL's 65,535, which an order of a few thousand tickets would pass in one statement (its charge
 * then made and never recorded).
 */
const TICKETS_PER_INSERT = 500;

export async function insertTickets(trx: Db, rows: TicketsTable[]): Promise<void> {
  for (let i = 0; i < rows.length; i += TICKETS_PER_INSERT)
    await trx
      .insertInto("tickets")
      .values(rows.slice(i, i + TICKETS_PER_INSERT))
      .execute();
}

/** A payment's tickets, in the order they were bought. */
export async function ticketsOfPayment(db: Db, paymentId: string): Promise<TicketsTable[]> {
  return db
    .selectFrom("tickets")
    .selectAll()
    .where("payment_id", "=", paymentId)
    .orderBy("position")
    .execute();
}

/** Voids a payment's tickets not voided yet (its order was refunded in full). */
export async function voidTicketsOfPayment(trx: Db, paymentId: string, nowIso: string): Promise<number> {
  const result = await trx
    .updateTable("tickets")
    .set({ voided_at: nowIso })
    .where("payment_id", "=", paymentId)
    .where("voided_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Makes a payment's void tickets valid again (its full refund failed after the fact); how many. */
export async function restoreTicketsOfPayment(trx: Db, paymentId: string): Promise<number> {
  const result = await trx
    .updateTable("tickets")
    .set({ voided_at: null })
    .where("payment_id", "=", paymentId)
    .where("voided_at", "is not", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function findTicket(db: Db, formId: string, code: string): Promise<TicketsTable | undefined> {
  return db
    .selectFrom("tickets")
    .selectAll()
    .where("code", "=", code)
    .where("form_id", "=", formId)
    .executeTakeFirst();
}

/**
 * Checks a ticket in: one conditional update, so of two doors checking in the same ticket at once exactly
 * one succeeds. Undefined when it was not there to check in (unknown, checked in already, or voided).
 */
export async function markCheckedIn(
  db: Db,
  formId: string,
  code: string,
  nowIso: string,
  by: string,
): Promise<TicketsTable | undefined> {
  return db
    .updateTable("tickets")
    .set({ checked_in_at: nowIso, checked_in_by: by })
    .where("code", "=", code)
    .where("form_id", "=", formId)
    .where("checked_in_at", "is", null)
    .where("voided_at", "is", null)
    .returningAll()
    .executeTakeFirst();
}

/** Undoes a check-in: one conditional update as well. Undefined when the ticket was not checked in. */
export async function clearCheckIn(db: Db, formId: string, code: string): Promise<TicketsTable | undefined> {
  return db
    .updateTable("tickets")
    .set({ checked_in_at: null, checked_in_by: null })
    .where("code", "=", code)
    .where("form_id", "=", formId)
    .where("checked_in_at", "is not", null)
    .where("voided_at", "is", null)
    .returningAll()
    .executeTakeFirst();
}

/** A form's tickets that match `filters`, newest first, after a keyset position: a page or an export. */
export function ticketsQuery(
  db: Db,
  formId: string,
  filters: TicketFilters,
  after?: { sort: string; id: string },
) {
  const fold = foldFor(db);
  let query = db.selectFrom("tickets").selectAll().where("form_id", "=", formId);
  // A void ticket is not checked in, whenever it was admitted (`status: VOID`; totals leave it out).
  if (filters.checkedIn === true)
    query = query.where("checked_in_at", "is not", null).where("voided_at", "is", null);
  else if (filters.checkedIn === false)
    query = query.where((eb) => eb.or([eb("checked_in_at", "is", null), eb("voided_at", "is not", null)]));
  if (filters.ticketType !== undefined) query = query.where("ticket_type", "=", filters.ticketType);
  const search = filters.search;
  if (search !== undefined)
    query = query.where((eb) => {
      const any: Expression<SqlBool>[] = [
        likeContains(fold(eb.ref("buyer_name")), search),
        likeContains(fold(eb.ref("buyer_email")), search),
      ];
      // Codes are kept upper-case with dashes; part of one is read as check-in reads a code (O for 0, I
      // or L for 1): `7qk3m9` and `7qk3-m9xd-4r` find `7QK3-M9XD-4R`, `1o5` finds `…105…`.
      const code = ticketCodeChars(search);
      if (code !== "") any.push(likeContains(sql<string>`replace(${eb.ref("code")}, '-', '')`, code));
      return eb.or(any);
    });
  if (after) query = query.where((eb) => afterPosition(eb, "created_at", after));
  return query.orderBy("created_at", "desc").orderBy("id", "desc");
}

/** How many tickets a form has sold and admitted (voided ones left out), and the people they let in. */
export async function ticketCounts(db: Db, formId: string) {
  const row = await db
    .selectFrom("tickets")
    .select((eb) => [
      eb.fn.countAll<number | string>().as("sold"),
      eb.fn.count<number | string>("checked_in_at").as("checkedIn"),
      eb.fn.sum<number | string | null>("admits").as("admits"),
      eb.fn
        .sum<number | string | null>(sql<number>`case when checked_in_at is null then 0 else admits end`)
        .as("admitted"),
    ])
    .where("form_id", "=", formId)
    .where("voided_at", "is", null)
    .executeTakeFirstOrThrow();
  return {
    tickets: Number(row.sold),
    checkedIn: Number(row.checkedIn),
    people: Number(row.admits ?? 0),
    peopleAdmitted: Number(row.admitted ?? 0),
  };
}

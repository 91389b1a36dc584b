import { sql } from "kysely";
import type { Db } from "../../server/store/database.js";

/**
 * What the race and fuzz tests read back from the database after many checkouts: payments by status,
 * what the stock counters say, and how many charges the sandbox processor remembers. All by plain
 * queries, so they work the same on the in-process store and on a store opened beside server processes.
 */

/** Status code → how many responses had it. */
export function tally(statuses: number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1;
  return out;
}

/** A form's payments counted by status (COMPLETED, FAILED, PROCESSING, PENDING…). */
export async function paymentsByStatus(db: Db, formId: string): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom("payments")
    .select(["status", (eb) => eb.fn.countAll<number>().as("n")])
    .where("form_id", "=", formId)
    .groupBy("status")
    .execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

/** The stock counter of one item of a form (0 when never taken). */
export async function inventorySold(
  db: Db,
  formId: string,
  kind: "ticket" | "product" | "promo",
  key: string,
): Promise<number> {
  const row = await db
    .selectFrom("inventory")
    .select("sold")
    .where("form_id", "=", formId)
    .where("item_kind", "=", kind)
    .where("item_key", "=", key)
    .executeTakeFirst();
  return Number(row?.sold ?? 0);
}

/** Charges the sandbox processor has recorded (one ledger entry per charge idempotency key). */
export async function ledgerCharges(db: Db): Promise<number> {
  const row = await db
    .selectFrom("processor_ledger")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("key", "like", "charge:%")
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Payments that went to the processor (anything but a free order), over the whole database. */
export async function chargedPayments(db: Db): Promise<number> {
  const row = await db
    .selectFrom("payments")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("payment_method_type", "!=", "none")
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export interface RowCounts {
  payments: number;
  processing: number;
  contacts: number;
  subscriptions: number;
  events: number;
  emails: number;
  stockTaken: number;
  charges: number;
}

/** Every count a refused checkout must leave as it was, in one round trip. */
export async function rowCounts(db: Db): Promise<RowCounts> {
  const count = (table: string, where = "") =>
    sql<number>`(select count(*) from ${sql.table(table)} ${sql.raw(where)})`;
  const row = await db
    .selectNoFrom([
      count("payments").as("payments"),
      count("payments", "where status = 'PROCESSING'").as("processing"),
      count("contacts").as("contacts"),
      count("subscriptions").as("subscriptions"),
      count("outbox_events").as("events"),
      count("email_outbox").as("emails"),
      sql<number>`(select coalesce(sum(sold), 0) from inventory)`.as("stockTaken"),
      count("processor_ledger", "where key like 'charge:%'").as("charges"),
    ])
    .executeTakeFirstOrThrow();
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)])) as unknown as RowCounts;
}

import type { Expression, ExpressionBuilder, Kysely, SqlBool } from "kysely";
import type { Store } from "./database.js";
import type { Database } from "./schema.js";

/**
 * Claims a batch of rows for one worker, safely when several processes run the same worker: the rows
 * matching `where`, first by `orderBy` then id, at most `limit`, are updated with `set` and returned.
 *
 * SQLite runs the claim as one statement (one write; nothing interleaves; the subquery runs once).
 * PostgreSQL first locks the candidates `FOR UPDATE SKIP LOCKED` (skipping rows other workers hold), then
 * updates exactly those ids, `where` checked again. Not one `UPDATE … WHERE id IN (SELECT … LIMIT n FOR
 * UPDATE SKIP LOCKED)`: PostgreSQL may rescan that subquery per row, each rescan skipping the rows it just
 * updated, so the LIMIT would not hold.
 */

export type ClaimableTable = "payments" | "subscriptions" | "email_outbox";

export interface ClaimQuery<T extends ClaimableTable> {
  table: T;
  where: (eb: ExpressionBuilder<Database, T>) => Expression<SqlBool>;
  orderBy: keyof Database[T] & string;
  limit: number;
  set: Partial<Database[T]>;
}

/** The tables above share an `id` primary key; this view lets one implementation serve them all. */
interface AnyRow {
  id: string;
  [column: string]: unknown;
}
type AnyDb = { claimable: AnyRow };

export async function claimRows<T extends ClaimableTable>(
  store: Store,
  q: ClaimQuery<T>,
): Promise<Database[T][]> {
  const db = store.db as unknown as Kysely<AnyDb>;
  const table = q.table as unknown as "claimable";
  const where = q.where as unknown as (eb: ExpressionBuilder<AnyDb, "claimable">) => Expression<SqlBool>;
  const orderBy = q.orderBy as "id";
  const set = q.set as Partial<AnyRow>;
  let rows: Record<string, unknown>[];
  if (store.dialect === "postgres") {
    rows = await db.transaction().execute(async (trx) => {
      const picked = await trx
        .selectFrom(table)
        .select("id")
        .where(where)
        .orderBy(orderBy)
        .orderBy("id")
        .limit(q.limit)
        .forUpdate()
        .skipLocked()
        .execute();
      if (picked.length === 0) return [];
      return trx
        .updateTable(table)
        .set(set)
        .where(
          "id",
          "in",
          picked.map((r) => String(r.id)),
        )
        .where(where)
        .returningAll()
        .execute();
    });
  } else {
    // No second `where` outside the subquery: nothing can change the rows between the two (one statement),
    // and with it SQLite walks every due row to test `id IN (…)` instead of looking the ids up (70 ms with
    // 20,000 queued receipts, against 2 ms).
    rows = await db
      .updateTable(table)
      .set(set)
      .where("id", "in", (eb) =>
        eb.selectFrom(table).select("id").where(where).orderBy(orderBy).orderBy("id").limit(q.limit),
      )
      .returningAll()
      .execute();
  }
  // RETURNING gives no order: hand the batch over in claim order.
  const key = q.orderBy;
  rows.sort(
    (a, b) => String(a[key]).localeCompare(String(b[key])) || String(a.id).localeCompare(String(b.id)),
  );
  return rows as unknown as Database[T][];
}

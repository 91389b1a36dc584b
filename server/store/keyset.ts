import type { ExpressionBuilder } from "kysely";
import type { Database } from "./schema.js";

/**
 * Rows strictly after a keyset position in (sort desc, id desc) order: the shared newest-first paging.
 * A row-value comparison, which both SQLite and PostgreSQL turn into one index range, so the hundredth
 * page reads no more rows than the first. `idColumn` names the id where a join makes `id` ambiguous.
 */
export function afterPosition<T extends keyof Database>(
  eb: ExpressionBuilder<Database, T>,
  sortColumn: string,
  position: { sort: string; id: string },
  idColumn = "id",
) {
  // biome-ignore lint/suspicious/noExplicitAny: the column names are checked by the callers' table types.
  const e = eb as ExpressionBuilder<any, any>;
  return e(e.refTuple(sortColumn, idColumn), "<", e.tuple(position.sort, position.id));
}

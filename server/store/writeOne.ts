import type { Db, Store } from "./database.js";

/**
 * A write of exactly one statement, as a transaction of its own. On SQLite it joins the writes ready at
 * the same time (Store.transact); on PostgreSQL it is sent alone, since one statement outside a
 * transaction is atomic already and `begin` and `commit` would be two more round trips to the server.
 * `statement` must send one statement and nothing else.
 */
export function writeOne<T>(
  store: Pick<Store, "db" | "dialect" | "transact">,
  statement: (db: Db) => Promise<T>,
): Promise<T> {
  return store.dialect === "postgres" ? statement(store.db) : store.transact(statement);
}

import { installSqliteChangeCounter } from "../changes.js";
import { isPostgres } from "../dialect.js";
import type { AnyTrx, Migration } from "./shared.js";

/** SQLite: writes to the tables processes cache move a change counter. */
export const sqliteChangeCounter: Migration = {
  version: 10,
  name: "SQLite counts changes to the tables processes cache",
  async up(trx: AnyTrx) {
    // Until now any commit by another connection emptied the caches (PRAGMA data_version); a counter
    // moved by the cached tables' triggers tells those changes from all others (changes.ts).
    if (!isPostgres(trx)) await installSqliteChangeCounter(trx);
  },
};

import { installChangeNotifications } from "../changes.js";
import { isPostgres } from "../dialect.js";
import type { AnyTrx, Migration } from "./shared.js";

/** PostgreSQL: writes to the tables processes cache send a notification. */
export const postgresChangeNotifications: Migration = {
  version: 8,
  name: "PostgreSQL notifies changes to the tables processes cache",
  async up(trx: AnyTrx) {
    // SQLite has no notifications: its change counter comes in 010-sqlite-change-counter.ts.
    if (isPostgres(trx)) await installChangeNotifications(trx);
  },
};

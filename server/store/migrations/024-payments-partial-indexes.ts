import { sql } from "kysely";
import type { AnyTrx, Migration } from "./shared.js";

/**
 * Two indexes of payments hold only the rows their queries read, so a checkout's insert and the update of
 * its outcome maintain two fewer indexes each:
 * - a card's declines (the card-testing guard counts FAILED payments of a fingerprint): FAILED rows only,
 *   where before every payment with a card had an entry, and a new one at each change of status;
 * - a recurring gift's payments: rows with a recurring gift only (one-time gifts have none).
 * A query uses a partial index when its conditions imply the index's: `status = 'FAILED'` written as a
 * literal, and `subscription_id = <value>`, which no null satisfies.
 */
export const paymentsPartialIndexes: Migration = {
  version: 24,
  name: "payments indexed by card declines and by recurring gift only where those are",
  async up(trx: AnyTrx) {
    await trx.schema.dropIndex("payments_fingerprint_status").execute();
    await trx.schema
      .createIndex("payments_card_declines")
      .on("payments")
      .columns(["fingerprint", "created_at"])
      .where(sql.ref("status"), "=", sql.lit("FAILED"))
      .execute();
    await trx.schema.dropIndex("payments_subscription_created").execute();
    await trx.schema
      .createIndex("payments_subscription_created")
      .on("payments")
      .columns(["subscription_id", "created_at", "id"])
      .where(sql.ref("subscription_id"), "is not", null)
      .execute();
  },
};

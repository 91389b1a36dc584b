import type { AnyTrx, Migration } from "./shared.js";

/**
 * Payments indexed by card fingerprint and status, so counting a card's declined payments reads only those.
 */
export const paymentsFingerprintStatusIndex: Migration = {
  version: 6,
  name: "declined-payment count per card fingerprint reads only declined payments",
  async up(trx: AnyTrx) {
    // The card-testing guard counts a fingerprint's FAILED payments of the last day; with status in the
    // index it no longer walks every completed payment of a card that gives often.
    await trx.schema.dropIndex("payments_fingerprint").execute();
    await trx.schema
      .createIndex("payments_fingerprint_status")
      .on("payments")
      .columns(["fingerprint", "status", "created_at"])
      .execute();
  },
};

import type { AppDeps } from "../api/env.js";
import { CHECKOUT_CHARGE_PREFIX } from "./engine.js";
import { finalizeCheckout, outcomeOf } from "./finalize.js";

/**
 * Finishes checkouts that a process left half-done (it died between taking the stock and recording the
 * charge). The processor is asked, by the checkout's idempotency key, whether a charge was made: if so the
 * checkout is recorded as it would have been; if not, it fails without charging and its stock is returned.
 * Never charges. Safe in several processes: recording claims the PROCESSING row first.
 */

/** A checkout older than this is no longer running anywhere (requests time out long before). */
export const INTERRUPTED_AFTER_MS = 5 * 60 * 1000;

export async function recoverInterruptedCheckouts(deps: AppDeps, limit = 100): Promise<number> {
  const cutoff = new Date(deps.now() - INTERRUPTED_AFTER_MS).toISOString();
  const stale = await deps.store.db
    .selectFrom("payments")
    .select(["id", "charge_key"])
    .where("status", "=", "PROCESSING")
    .where("updated_at", "<", cutoff)
    .where("charge_key", "like", `${CHECKOUT_CHARGE_PREFIX}%`)
    .orderBy("updated_at")
    .limit(limit)
    .execute();
  for (const row of stale) {
    const charge = await deps.processor.findCharge(row.charge_key);
    await finalizeCheckout(
      deps,
      row.id,
      charge
        ? outcomeOf(charge)
        : {
            kind: "failed",
            processorPaymentId: null,
            code: "processing_error",
            message: "The checkout was interrupted before the payment was made. Nothing was charged.",
          },
    );
  }
  return stale.length;
}

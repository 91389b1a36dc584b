import { isoAt } from "../../shared/time.js";
import type { AppDeps } from "../deps.js";
import { chargeStanding, confirmableOnSession, INTERRUPTED_AFTER_MS } from "../payments/interruptedCharge.js";
import { interruptedOutcome, outcomeOfCharge } from "../payments/outcome.js";
import { settlePayment } from "../payments/transition.js";
import { getOrganization } from "../store/organizations.js";

/**
 * Recurring charges left PROCESSING by a pass that was interrupted (the processor may have made them)
 * whose gift was cancelled or ended meanwhile: no pass claims that gift again, so nothing else would ever
 * record them. Each is settled as the processor reports it, never charged again: COMPLETED when it was
 * made (the cancel still stands for the cycles after), FAILED when it was not. One the bank still holds
 * for the donor's confirmation is cancelled first (nobody will confirm a gift that has ended); one that
 * cannot be cancelled went through, and is recorded so. Returns how many were settled; an organization
 * whose processor cannot be asked now (an outage, its Stripe account disconnected) keeps its rows for a
 * later pass, and the first such error is thrown after the others are done.
 */
export async function settleOrphanedCharges(
  deps: AppDeps,
  nowMs: number,
  wallMs: number,
  limit = 25,
): Promise<number> {
  const db = deps.store.db;
  const rows = await db
    .selectFrom("payments")
    .innerJoin("subscriptions", "subscriptions.id", "payments.subscription_id")
    .select([
      "payments.id",
      "payments.organization_id",
      "payments.processor",
      "payments.charge_key",
      "payments.processor_payment_id",
    ])
    .where("payments.status", "=", "PROCESSING")
    .where("payments.charge_key", "like", "sub:%")
    .where("subscriptions.status", "!=", "ACTIVE")
    .where("payments.updated_at", "<", isoAt(nowMs - INTERRUPTED_AFTER_MS))
    .orderBy("payments.updated_at")
    .limit(limit)
    .execute();
  let failure: unknown;
  let settled = 0;
  for (const row of rows) {
    try {
      const org = await getOrganization(db, row.organization_id);
      if (!org) continue;
      const processor = deps.processors.named(row.processor, org);
      const ref = { idempotencyKey: row.charge_key, processorPaymentId: row.processor_payment_id };
      // Nobody will confirm a charge of a gift that has ended: one held for the donor is cancelled.
      const { charge } = await chargeStanding(
        processor,
        ref,
        (held) => held.status === "requires_action" || confirmableOnSession(held),
      );
      const outcome =
        (charge && charge.status !== "requires_action" && outcomeOfCharge(charge, null)) ||
        interruptedOutcome(row.processor_payment_id);
      const done = await deps.store.transact((trx) =>
        settlePayment(
          trx,
          { nowMs: deps.now(), publicUrl: deps.config.publicUrl, wallMs },
          { id: row.id },
          outcome,
        ),
      );
      if (done.changed) settled++;
    } catch (err) {
      failure ??= err;
    }
  }
  if (failure !== undefined) throw failure;
  return settled;
}

import { isoAt } from "../../shared/time.js";
import type { AppDeps } from "../deps.js";
import { CHECKOUT_CHARGE_PREFIX } from "../payments/chargeKey.js";
import { chargeStanding, INTERRUPTED_AFTER_MS } from "../payments/interruptedCharge.js";
import { interruptedOutcome, outcomeOfCharge } from "../payments/outcome.js";
import type { PaymentOutcome } from "../payments/transition.js";
import { liveProcesses } from "../store/claim.js";
import { getOrganizationCached } from "../store/organizations.js";
import { paymentDetails } from "../store/payments.js";
import { finalizeCheckout } from "./finalize.js";

/**
 * Finishes checkouts that a process left half-done (it died between taking the stock and recording the
 * charge), and gives up on payments a donor never confirmed with their bank. The processor is asked how
 * the charge stands, by the id stored before it could move money (or the sandbox, by its key): one that
 * went through is recorded as it would have been; one that never did fails without charging and its stock
 * is returned. Never charges. Safe in several processes: recording claims the PROCESSING row first.
 *
 * A PROCESSING payment names the server process charging it (`claimed_by`): once that process is dead
 * (its heartbeat row lapsed or gone, store/processes.ts) the payment is taken over on the next pass, so a
 * crash holds the stock for well under a minute. One whose process lives on, or that names none (the
 * process keeps no heartbeat), is taken after INTERRUPTED_AFTER_MS: its request has ended by then.
 */

/** A payment waiting this long for the donor's bank confirmation (3-D Secure) is given up. */
export const ACTION_ABANDONED_AFTER_MS = 60 * 60 * 1000;

const ABANDONED: PaymentOutcome = {
  to: "FAILED",
  processorPaymentId: null,
  code: "authentication_required",
  message: "The payment was not confirmed with the bank in time. Nothing was charged.",
};

export async function recoverInterruptedCheckouts(deps: AppDeps, limit = 100): Promise<number> {
  const nowMs = deps.now();
  const nowIso = isoAt(nowMs);
  const cutoff = isoAt(nowMs - INTERRUPTED_AFTER_MS);
  const stale = await deps.store.db
    .selectFrom("payments")
    .select([
      "id",
      "organization_id",
      "charge_key",
      "processor",
      "processor_payment_id",
      "details",
      "created_at",
    ])
    .where("status", "=", "PROCESSING")
    .where((eb) =>
      eb.or([
        eb("updated_at", "<", cutoff),
        eb.and([eb("claimed_by", "is not", null), eb("claimed_by", "not in", liveProcesses(eb, nowIso))]),
      ]),
    )
    .where("charge_key", "like", `${CHECKOUT_CHARGE_PREFIX}%`)
    .orderBy("updated_at")
    .limit(limit)
    .execute();
  let failure: unknown;
  for (const row of stale) {
    try {
      await recover(deps, row, nowMs);
    } catch (err) {
      // One payment the processor cannot answer for does not hold up the others; reported after them.
      failure ??= err;
    }
  }
  if (failure !== undefined) throw failure;
  return stale.length;
}

interface Interrupted {
  id: string;
  organization_id: string;
  charge_key: string;
  processor: string;
  processor_payment_id: string | null;
  details: string;
  created_at: string;
}

async function recover(deps: AppDeps, row: Interrupted, nowMs: number): Promise<void> {
  const org = await getOrganizationCached(deps.store, row.organization_id);
  if (!org) return;
  const processor = deps.processors.named(row.processor, org);
  const ref = { idempotencyKey: row.charge_key, processorPaymentId: row.processor_payment_id };
  const waited = nowMs - Date.parse(row.created_at);
  // A payment waiting for the donor's bank confirmation is given up once the donor has had their time.
  const standing = await chargeStanding(
    processor,
    ref,
    (charge) => charge.status === "requires_action" && waited >= ACTION_ABANDONED_AFTER_MS,
  );
  if (standing.cancelled === "held") {
    await finalizeCheckout(deps, row.id, { ...ABANDONED, processorPaymentId: standing.processorPaymentId });
    return;
  }
  const { charge } = standing;
  if (charge?.status === "requires_action") {
    // Still within the time a donor may take (or not to be cancelled): looked at again after another
    // interval (no process is charging it any more, whichever made it: it waits for the donor).
    await deps.store.db
      .updateTable("payments")
      .set({ updated_at: isoAt(nowMs), claimed_by: null })
      .where("id", "=", row.id)
      .where("status", "=", "PROCESSING")
      .execute();
    return;
  }
  const customer = paymentDetails(row).processorCustomer ?? null;
  const outcome = charge && outcomeOfCharge(charge, customer);
  await finalizeCheckout(deps, row.id, outcome ?? interruptedOutcome(row.processor_payment_id));
}

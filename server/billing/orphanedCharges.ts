import { isoAt } from "../../shared/time.js";
import type { AppDeps } from "../deps.js";
import { chargeStanding, confirmableOnSession, INTERRUPTED_AFTER_MS } from "../payments/interruptedCharge.js";
import { interruptedOutcome, outcomeOfCharge } from "../payments/outcome.js";
import { settlePayment } from "../payments/transition.js";
import { ProcessorError } from "../processors/port.js";
import { getOrganization } from "../store/organizations.js";

/** How long an organization whose processor could not be asked is left out of the sweep. */
export const ORPHAN_REST_MS = 10 * 60_000;
/** Queries per sweep: each after the last one's failed organizations are set aside. */
const MAX_ROUNDS = 4;

/**
 * Recurring charges left PROCESSING by a pass that was interrupted (the processor may have made them)
 * whose gift was cancelled or ended meanwhile: no pass claims that gift again, so nothing else would ever
 * record them. Each is settled as the processor reports it, never charged again: COMPLETED when it was
 * made (the cancel still stands for the cycles after), FAILED when it was not. One the bank still holds
 * for the donor's confirmation is cancelled first (nobody will confirm a gift that has ended); one that
 * cannot be cancelled went through, and is recorded so. Returns how many were settled.
 *
 * The oldest rows go first, `limit` at a time. An organization whose processor cannot be asked now (an
 * outage, its Stripe account disconnected) keeps its rows for later and rests in `resting` (organization
 * id → until when) for ORPHAN_REST_MS; a row that fails for a reason of its own is left for a later sweep.
 * After a page with a failure the sweep queries again without them (at most MAX_ROUNDS pages), so failing
 * rows, however many and however old, never keep the others waiting. The first error is thrown after the
 * others are done.
 */
export async function settleOrphanedCharges(
  deps: AppDeps,
  nowMs: number,
  wallMs: number,
  opts: { limit?: number; resting?: Map<string, number> } = {},
): Promise<number> {
  const db = deps.store.db;
  const limit = opts.limit ?? 25;
  const resting = opts.resting ?? new Map<string, number>();
  for (const [orgId, until] of resting) if (until <= nowMs) resting.delete(orgId);
  // Untouched for INTERRUPTED_AFTER_MS by the clock of both: a run as of a later date (`billing run
  // --as-of`) must not take a charge another process is making right now for abandoned.
  const staleBefore = Math.min(nowMs, wallMs) - INTERRUPTED_AFTER_MS;
  // Rows that failed for a reason of their own, left out of this sweep's later queries.
  const failedRows = new Set<string>();
  let failure: unknown;
  let settled = 0;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const skip = [...resting.keys()];
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
      .where("payments.updated_at", "<", isoAt(staleBefore))
      .$if(skip.length > 0, (q) => q.where("payments.organization_id", "not in", skip))
      .$if(failedRows.size > 0, (q) => q.where("payments.id", "not in", [...failedRows]))
      .orderBy("payments.updated_at")
      .limit(limit)
      .execute();
    let failedHere = false;
    for (const row of rows) {
      if (resting.has(row.organization_id)) continue;
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
        failedHere = true;
        // The processor cannot be asked at all: the organization waits. Anything else is this row's own,
        // and only this row is left for a later sweep.
        if (err instanceof ProcessorError && (err.code === "unavailable" || err.code === "misconfigured"))
          resting.set(row.organization_id, nowMs + ORPHAN_REST_MS);
        else failedRows.add(row.id);
      }
    }
    // A full page with an organization set aside: what it hid may be another organization's.
    if (!failedHere || rows.length < limit) break;
  }
  if (failure !== undefined) throw failure;
  return settled;
}

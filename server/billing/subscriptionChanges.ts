import { isoAt } from "../../shared/time.js";
import { type AuditActor, recordAudit } from "../store/auditLog.js";
import type { Db, Store } from "../store/database.js";
import { organizationTimeZone } from "../store/organizations.js";
import type { SubscriptionsTable } from "../store/schema.js";
import { findSubscription } from "../store/subscriptions.js";
import { emitEvent } from "../webhooks/events.js";
import { presentSubscription } from "../wire/subscription.js";
import { billingDate, type RecurringFrequency } from "./schedule.js";

/**
 * Changes to a recurring gift asked for by the organization (the API) or by the donor (the portal): the
 * amount, the frequency, skipping the next charge, cancelling. Each is one conditional update of the ACTIVE
 * subscription, with its `subscription.*` event and an audit-log entry naming who asked, in one
 * transaction.
 *
 * The amount applies from the next charge that starts (a charge already begun keeps its amount). A
 * frequency change keeps the next billing date and bills at the new period from there; skipping moves the
 * next billing date one period on (the skipped cycle, or the due charge a retry was waiting to repeat, is
 * counted, never charged). Both move the schedule, so they are refused (409) while a billing pass holds the
 * gift or one of its charges is still in flight, and a pass that starts after them finds the schedule
 * moved and charges nothing early.
 */

export interface SubscriptionChange {
  amountCents?: number;
  frequency?: RecurringFrequency;
  skipNext?: boolean;
  cancel?: boolean;
}

export class SubscriptionChangeRefused extends Error {
  constructor(
    readonly reason: "cancelled" | "charging",
    message: string,
  ) {
    super(message);
  }
}

const cancelledRefusal = () => new SubscriptionChangeRefused("cancelled", "Subscription is cancelled");
const chargingRefusal = () =>
  new SubscriptionChangeRefused(
    "charging",
    "This recurring gift is being charged right now; try again in a minute",
  );

/** Whether a charge of the subscription is still PROCESSING (its outcome not yet recorded). */
async function chargeInFlight(trx: Db, subscriptionId: string): Promise<boolean> {
  const row = await trx
    .selectFrom("payments")
    .select("id")
    .where("subscription_id", "=", subscriptionId)
    .where("status", "=", "PROCESSING")
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The fields a change may touch, as the API shows them (for the audit log). */
function shown(row: SubscriptionsTable) {
  const view = presentSubscription(row);
  return {
    status: view.status,
    amount: view.amount,
    frequency: view.frequency,
    nextBillingDate: view.nextBillingDate,
  };
}

function changedFields(before: Record<string, unknown>, after: Record<string, unknown>) {
  const old: Record<string, unknown> = {};
  const now: Record<string, unknown> = {};
  for (const key of Object.keys(after))
    if (before[key] !== after[key]) {
      old[key] = before[key];
      now[key] = after[key];
    }
  return { old, now };
}

/**
 * Applies `change` to the ACTIVE subscription `sub` (as read by the caller); returns the subscription
 * after it. Throws SubscriptionChangeRefused when it is cancelled, or for a schedule change while it is
 * being charged.
 */
export async function changeSubscription(
  store: Store,
  sub: SubscriptionsTable,
  change: SubscriptionChange,
  actor: AuditActor,
  nowMs: number,
): Promise<SubscriptionsTable> {
  if (sub.status !== "ACTIVE") throw cancelledRefusal();
  const nowIso = isoAt(nowMs);
  const movesSchedule =
    !change.cancel &&
    (change.skipNext === true || (change.frequency !== undefined && change.frequency !== sub.frequency));

  const set: Partial<SubscriptionsTable> = { updated_at: nowIso };
  if (change.amountCents !== undefined) set.amount_cents = change.amountCents;
  if (change.cancel) Object.assign(set, { status: "CANCELLED", cancelled_at: nowIso, retry_at: null });
  else if (movesSchedule) {
    const frequency = change.frequency ?? (sub.frequency as RecurringFrequency);
    let cycle = sub.cycle;
    let anchorAt = sub.anchor_at;
    let anchorCycle = sub.anchor_cycle ?? 0;
    if (frequency !== sub.frequency) {
      // The next charge keeps its date and becomes the anchor of the new period.
      anchorAt = sub.next_billing_at;
      anchorCycle = cycle + 1;
    }
    Object.assign(set, { frequency, anchor_at: anchorAt, anchor_cycle: anchorCycle });
    if (change.skipNext) {
      // The cycle due (and any retry of it) is skipped: counted, never charged.
      cycle += 1;
      Object.assign(set, { cycle, failed_attempts: 0, retry_at: null });
    }
    // A frequency change alone keeps a pending retry of the due charge: its date and attempts stay.
    const timeZone = await organizationTimeZone(store.db, sub.organization_id);
    set.next_billing_at = billingDate(anchorAt, frequency, cycle + 1 - anchorCycle, timeZone);
  }

  return store.db.transaction().execute(async (trx) => {
    // A charge of this gift still in flight (its process may have died with it): the schedule waits for
    // its outcome, which moves it on.
    if (movesSchedule && (await chargeInFlight(trx, sub.id))) throw chargingRefusal();
    let update = trx
      .updateTable("subscriptions")
      .set(set)
      .where("id", "=", sub.id)
      .where("status", "=", "ACTIVE");
    if (movesSchedule)
      // Computed from the schedule read: only while it is still that schedule, and no pass is charging it.
      update = update
        .where("cycle", "=", sub.cycle)
        .where("failed_attempts", "=", sub.failed_attempts)
        .where("frequency", "=", sub.frequency)
        .where("anchor_at", "=", sub.anchor_at)
        .where((eb) => eb.or([eb("claim_token", "is", null), eb("claimed_until", "<", nowIso)]));
    const row = await update.returningAll().executeTakeFirst();
    if (!row) {
      const now = await findSubscription(trx, sub.id);
      if (now?.status !== "ACTIVE") throw cancelledRefusal();
      throw chargingRefusal();
    }
    const { old, now } = changedFields(shown(sub), shown(row));
    // A cancel's own effects (the status, no next billing date) are its event; anything else is an update.
    const updated = Object.keys(now).some(
      (field) => field !== "status" && !(change.cancel && field === "nextBillingDate"),
    );
    const view = presentSubscription(row);
    if (updated) await emitEvent(trx, row.organization_id, "subscription.updated", row.id, view, nowMs);
    if (change.cancel)
      await emitEvent(trx, row.organization_id, "subscription.cancelled", row.id, view, nowMs);
    if (Object.keys(now).length > 0)
      await recordAudit(
        trx,
        {
          organizationId: row.organization_id,
          actor,
          action: change.cancel ? "subscription.cancelled" : "subscription.updated",
          subjectType: "subscription",
          subjectId: row.id,
          before: old,
          after: now,
        },
        nowMs,
      );
    return row;
  });
}

import { isoAt } from "../../shared/time.js";
import type { AppDeps } from "../deps.js";
import type { IncomingEvent, PaymentProcessor, ProcessorEvent } from "../processors/port.js";
import type { Db } from "../store/database.js";
import type { Organization } from "../store/organizations.js";
import { findPaymentByProcessorId, paymentDetails } from "../store/payments.js";
import { outcomeOfLookup } from "./outcome.js";
import { recordDispute, recordRefund, type SettleAt, settlePayment } from "./transition.js";

/**
 * What a processor tells us on its own (Stripe's webhooks): a payment that cleared or bounced days later,
 * a refund made in its dashboard, a dispute. Each event is applied once, by its id and by what it says
 * (`effect_key`); what it means is fetched fresh from the processor, so events may come in any order and
 * the newest state wins. Events about payments that are not this organization's are acknowledged and
 * ignored. Everything goes through the same transitions as the checkout and billing.
 */

export type EventResult = "applied" | "duplicate" | "ignored";

async function seen(db: Db, organizationId: string, event: IncomingEvent): Promise<boolean> {
  const row = await db
    .selectFrom("processor_events")
    .select("event_id")
    .where("organization_id", "=", organizationId)
    .where((eb) => eb.or([eb("event_id", "=", event.id), eb("effect_key", "=", event.effectKey)]))
    .executeTakeFirst();
  return row !== undefined;
}

/** Marks the event applied; false when another delivery of it got there first. */
async function remember(
  trx: Db,
  organizationId: string,
  event: IncomingEvent,
  nowIso: string,
): Promise<boolean> {
  const inserted = await trx
    .insertInto("processor_events")
    .values({
      organization_id: organizationId,
      event_id: event.id,
      effect_key: event.effectKey,
      type: event.type,
      received_at: nowIso,
    })
    .onConflict((oc) => oc.doNothing())
    .returning("event_id")
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function applyProcessorEvent(
  deps: AppDeps,
  org: Organization,
  processor: PaymentProcessor,
  event: IncomingEvent,
): Promise<EventResult> {
  const db = deps.store.db;
  if (await seen(db, org.id, event)) return "duplicate";
  if (event.processorPaymentId && !(await findPaymentByProcessorId(db, org.id, event.processorPaymentId)))
    return "ignored";
  const meaning: ProcessorEvent = processor.resolveEvent
    ? await processor.resolveEvent(event)
    : { kind: "ignored" };
  const nowMs = deps.now();
  return deps.store.transact(async (trx) => {
    if (!(await remember(trx, org.id, event, isoAt(nowMs)))) return "duplicate";
    const at = { nowMs, publicUrl: deps.config.publicUrl };
    return (await apply(trx, at, org, meaning)) ? "applied" : "ignored";
  });
}

async function apply(trx: Db, at: SettleAt, org: Organization, meaning: ProcessorEvent): Promise<boolean> {
  const nowMs = at.nowMs;
  switch (meaning.kind) {
    case "payment": {
      const { lookup } = meaning;
      const row = await findPaymentByProcessorId(trx, org.id, lookup.processorPaymentId);
      if (!row) return false;
      let changed = false;
      if (row.status === "PROCESSING" || row.status === "PENDING") {
        const outcome = outcomeOfLookup(lookup, paymentDetails(row).processorCustomer ?? null);
        if (outcome) changed = (await settlePayment(trx, at, { id: row.id }, outcome)).changed;
      }
      if (lookup.status === "succeeded" && lookup.refundedCents !== Number(row.refunded_cents))
        changed =
          (await recordRefund(trx, nowMs, row.id, lookup.refundedCents, { exact: true })).changed || changed;
      return changed;
    }
    case "dispute": {
      const row = await findPaymentByProcessorId(trx, org.id, meaning.processorPaymentId);
      if (!row) return false;
      return (await recordDispute(trx, nowMs, row.id, meaning.dispute)).changed;
    }
    default:
      return false;
  }
}

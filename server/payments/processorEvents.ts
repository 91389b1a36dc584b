import { isoAt } from "../../shared/time.js";
import type { AppDeps } from "../deps.js";
import { ApiError } from "../errors.js";
import type { IncomingEvent, PaymentProcessor, ProcessorEvent } from "../processors/port.js";
import type { Db } from "../store/database.js";
import type { Organization } from "../store/organizations.js";
import { findPaymentByProcessorId, paymentDetails } from "../store/payments.js";
import type { PaymentsTable } from "../store/schema.js";
import { outcomeOfLookup } from "./outcome.js";
import { recordDispute, recordRefund, type SettleAt, settlePayment } from "./transition.js";

/**
 * What a processor tells us on its own (Stripe's webhooks): a payment that cleared or bounced days later,
 * a refund made in its dashboard, a dispute. Each event is applied once, by its id and by what it says
 * (`effect_key`); what it means is fetched fresh from the processor, so events may come in any order and
 * the newest state wins: a fetch that the payment's own record has overtaken meanwhile (two deliveries at
 * once, the first one's answer slow) is fetched again, never applied, so a refunded total never goes back
 * to an older one and a dispute never to an older state. Events about payments that are not this
 * organization's are acknowledged and ignored. Everything goes through the same transitions as the
 * checkout and billing.
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

/** What an event resolved to was read before the payment last changed: read it again. */
class StaleLookup extends Error {
  constructor() {
    super("the payment changed while Stripe's state was being read; read it again");
  }
}

/** Reads of the processor's state per delivery at most, before answering 503 (it is delivered again). */
const MAX_READS = 3;

/**
 * The payment as far as an event can change it: its status, refunded total and dispute (and
 * `updated_at`, so a change made and undone in between is seen too).
 */
function versionOf(row: PaymentsTable): string {
  return JSON.stringify([row.status, Number(row.refunded_cents), row.dispute, row.updated_at]);
}

/** The payment, locked for the rest of the transaction, as it stood when the processor was asked. */
interface Expected {
  version: string | null;
  lock: boolean;
}

export async function applyProcessorEvent(
  deps: AppDeps,
  org: Organization,
  processor: PaymentProcessor,
  event: IncomingEvent,
): Promise<EventResult> {
  const db = deps.store.db;
  if (await seen(db, org.id, event)) return "duplicate";
  for (let read = 1; ; read++) {
    // The payment as it is before the processor is asked: a read that another delivery (or the API, a
    // worker) overtakes before this one is recorded may be older than what that one recorded (two
    // deliveries in flight at once, the first one's answer slow), and is then read again, never applied.
    const before = event.processorPaymentId
      ? await findPaymentByProcessorId(db, org.id, event.processorPaymentId)
      : undefined;
    if (event.processorPaymentId && !before) return "ignored";
    const meaning: ProcessorEvent = processor.resolveEvent
      ? await processor.resolveEvent(event)
      : { kind: "ignored" };
    const nowMs = deps.now();
    const expected: Expected = {
      version: before ? versionOf(before) : null,
      lock: deps.store.dialect === "postgres",
    };
    try {
      return await deps.store.transact(async (trx) => {
        if (!(await remember(trx, org.id, event, isoAt(nowMs)))) return "duplicate";
        const at = { nowMs, publicUrl: deps.config.publicUrl };
        return (await apply(trx, at, org, meaning, expected)) ? "applied" : "ignored";
      });
    } catch (err) {
      if (!(err instanceof StaleLookup)) throw err;
      // Still changing under every read: the processor delivers the event again later.
      if (read >= MAX_READS)
        throw new ApiError(503, "The payment is changing; deliver the event again", undefined, {
          "Retry-After": "5",
        });
    }
  }
}

/**
 * The payment the event is about, locked (PostgreSQL; SQLite's write transaction is alone already), if
 * it has not changed since the processor's state was read; StaleLookup (rolling the event back) if it has.
 */
async function paymentAsRead(
  trx: Db,
  org: Organization,
  processorPaymentId: string,
  expected: Expected,
): Promise<PaymentsTable | undefined> {
  let query = trx
    .selectFrom("payments")
    .selectAll()
    .where("processor_payment_id", "=", processorPaymentId)
    .where("organization_id", "=", org.id);
  if (expected.lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (row && expected.version !== null && versionOf(row) !== expected.version) throw new StaleLookup();
  return row;
}

async function apply(
  trx: Db,
  at: SettleAt,
  org: Organization,
  meaning: ProcessorEvent,
  expected: Expected,
): Promise<boolean> {
  const nowMs = at.nowMs;
  switch (meaning.kind) {
    case "payment": {
      const { lookup } = meaning;
      const row = await paymentAsRead(trx, org, lookup.processorPaymentId, expected);
      if (!row) return false;
      let changed = false;
      if (row.status === "PROCESSING" || row.status === "PENDING") {
        const outcome = outcomeOfLookup(lookup, paymentDetails(row).processorCustomer ?? null);
        if (outcome) changed = (await settlePayment(trx, at, { id: row.id }, outcome)).changed;
      }
      // Stripe's total as it stands (read after the payment's last change): it may be lower than the
      // recorded one only when a refund failed since.
      if (lookup.status === "succeeded" && lookup.refundedCents !== Number(row.refunded_cents))
        changed =
          (await recordRefund(trx, nowMs, row.id, lookup.refundedCents, { exact: true })).changed || changed;
      return changed;
    }
    case "dispute": {
      const row = await paymentAsRead(trx, org, meaning.processorPaymentId, expected);
      if (!row) return false;
      return (await recordDispute(trx, nowMs, row.id, meaning.dispute)).changed;
    }
    default:
      return false;
  }
}

import type Stripe from "stripe";
import { type IncomingEvent, ProcessorEventError } from "../port.js";

/**
 * Stripe's webhooks: verified with `constructEvent` on the raw body and the organization's endpoint secret
 * (a bad signature, or a timestamp older than the tolerance, is refused), then read for what they are
 * about. Each event names the payment it concerns and an effect key (object, type and state, or the
 * event itself where a state can come back), so the same news heard twice is applied once; what it means
 * is then fetched fresh (processor.ts, `resolveEvent`), so events may arrive in any order.
 */

/** Stripe's own default: deliveries older than five minutes are refused (replays). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** The events an endpoint made by `org stripe` subscribes to. */
export const STRIPE_EVENT_TYPES = [
  "payment_intent.succeeded",
  "payment_intent.processing",
  "payment_intent.payment_failed",
  "payment_intent.requires_action",
  "payment_intent.canceled",
  "charge.refunded",
  "charge.refund.updated",
  "refund.updated",
  "refund.failed",
  "charge.dispute.created",
  "charge.dispute.updated",
  "charge.dispute.closed",
  "charge.dispute.funds_withdrawn",
  "charge.dispute.funds_reinstated",
  "setup_intent.succeeded",
] as const;

const idOf = (value: string | { id: string } | null | undefined): string | null =>
  value == null ? null : typeof value === "string" ? value : value.id;

export function verifyStripeEvent(
  client: Stripe,
  rawBody: string,
  signature: string | undefined,
  secret: string | null,
): IncomingEvent {
  if (!secret) throw new ProcessorEventError("No webhook secret is stored for this organization");
  if (!signature) throw new ProcessorEventError("Missing Stripe-Signature header");
  let event: Stripe.Event;
  try {
    event = client.webhooks.constructEvent(rawBody, signature, secret, SIGNATURE_TOLERANCE_SECONDS);
  } catch (err) {
    throw new ProcessorEventError(
      `Webhook signature verification failed: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return describe(event);
}

function describe(event: Stripe.Event): IncomingEvent {
  const object = event.data.object as { object?: string; id?: string };
  const base = { id: event.id, type: event.type, objectId: object.id ?? "" };
  switch (object.object) {
    case "payment_intent": {
      const pi = object as Stripe.PaymentIntent;
      // A PaymentIntent passes a state more than once: a charge held for authentication fails off-session
      // (`payment_failed`), then again if the donor fails the bank's challenge on the page, and that second
      // failure is news. So each event is its own effect (Stripe's retries keep the event's id), and applying
      // one twice changes nothing anyway: its state is read fresh and the transition only moves forwards.
      return { ...base, effectKey: `${event.type}:${pi.id}:${event.id}`, processorPaymentId: pi.id };
    }
    case "charge": {
      const charge = object as Stripe.Charge;
      // A charge's refunded total is no state it passes once: a refund that fails lowers it again, and the
      // next refund of the same amount brings it back to a total heard of before, which is news all the
      // same. So each of these events is its own effect (applying one twice changes nothing anyway).
      return {
        ...base,
        effectKey: `${event.type}:${charge.id}:${charge.amount_refunded}:${event.id}`,
        processorPaymentId: idOf(charge.payment_intent),
      };
    }
    case "refund": {
      const refund = object as Stripe.Refund;
      return {
        ...base,
        effectKey: `${event.type}:${refund.id}:${refund.status}`,
        processorPaymentId: idOf(refund.payment_intent),
      };
    }
    case "dispute": {
      const dispute = object as Stripe.Dispute;
      return {
        ...base,
        effectKey: `${event.type}:${dispute.id}:${dispute.status}`,
        processorPaymentId: idOf(dispute.payment_intent),
      };
    }
    case "setup_intent": {
      const si = object as Stripe.SetupIntent;
      return { ...base, effectKey: `${event.type}:${si.id}:${si.status}`, processorPaymentId: null };
    }
    default:
      return { ...base, effectKey: `${event.type}:${object.id ?? event.id}`, processorPaymentId: null };
  }
}

/** The object an event is about, by kind, for `resolveEvent`. */
export function eventSubject(event: IncomingEvent): "payment" | "refunds" | "dispute" | "setup" | null {
  if (event.type.startsWith("payment_intent.")) return "payment";
  if (
    event.type === "charge.refunded" ||
    event.type.startsWith("charge.refund.") ||
    event.type.startsWith("refund.")
  )
    return "refunds";
  if (event.type.startsWith("charge.dispute.")) return "dispute";
  if (event.type === "setup_intent.succeeded") return "setup";
  return null;
}

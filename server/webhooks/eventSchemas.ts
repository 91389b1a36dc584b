import { z } from "zod";
import { contactSchema } from "../../shared/schemas/contact.js";
import { formRecordSchema } from "../../shared/schemas/formRecord.js";
import { paymentFields, paymentSchema } from "../../shared/schemas/payment.js";
import { subscriptionFields, subscriptionSchema } from "../../shared/schemas/subscription.js";
import { ticketFields } from "../../shared/schemas/tickets.js";
import type { EventType } from "../../shared/schemas/webhook.js";
import { time } from "../../shared/schemas/wire.js";
import { ATTEMPT_TIMEOUT_MS, WEBHOOK_USER_AGENT } from "./post.js";
import { SIGNATURE_TOLERANCE_SECONDS } from "./signature.js";

/**
 * What a webhook delivery is on the wire: the JSON body of each event type (an envelope around the
 * resource as the API returns it), the headers sent with it, and what each event means. The dispatcher
 * builds bodies and headers of these types; the OpenAPI document's `webhooks` are generated from here.
 * Every object lists exactly the properties the server writes (`additionalProperties: false`); optional
 * ones are those the server leaves out when they have no value.
 */

export const EVENT_ID = /^evt_[0-9a-hjkmnp-tv-z]{26}$/;

export { CARD_BRANDS } from "../../shared/schemas/payment.js";

// ---------------------------------------------------------------------------------------------
// Payments (donation.*)

/** The payment as `GET /v1/payments/{id}` returns it. */
export const paymentEventData = paymentSchema.meta({ id: "WebhookPayment" });

/** A payment as it is first recorded: never refunded yet. */
export const newPaymentEventData = z
  .strictObject({
    ...paymentFields,
    status: z.enum(["COMPLETED", "PENDING", "FAILED"]).meta({
      description: "PENDING while a bank debit clears; FAILED when the charge was declined",
    }),
  })
  .meta({ id: "WebhookNewPayment" });

// ---------------------------------------------------------------------------------------------
// Subscriptions (subscription.*)

/** The subscription as `GET /v1/subscriptions/{id}` returns it. */
export const subscriptionEventData = subscriptionSchema.meta({ id: "WebhookSubscription" });

/** A subscription that is active: billed on schedule. */
export const activeSubscriptionEventData = z
  .strictObject({
    ...subscriptionFields,
    status: z.literal("ACTIVE"),
    nextBillingDate: time("When the next charge is due: the retry of a failed charge while one is scheduled"),
    cancelledAt: z.null(),
  })
  .meta({ id: "WebhookActiveSubscription" });

/** A subscription that has ended for good. */
export const cancelledSubscriptionEventData = z
  .strictObject({
    ...subscriptionFields,
    status: z.literal("CANCELLED"),
    nextBillingDate: z.null(),
    cancelledAt: time("When it was cancelled"),
  })
  .meta({ id: "WebhookCancelledSubscription" });

// ---------------------------------------------------------------------------------------------
// Contacts (contact.*)

/** The contact as `GET /v1/contacts/{id}` returns it. */
export const contactEventData = contactSchema.meta({ id: "WebhookContact" });

// ---------------------------------------------------------------------------------------------
// Forms (form.*)

/** The form as `GET /v1/forms/{id}` returns it. */
export const formEventData = formRecordSchema.meta({ id: "WebhookForm" });

// ---------------------------------------------------------------------------------------------
// Tickets (ticket.*)

/** A ticket just checked in, as the check-in answers it. */
export const checkedInTicketEventData = z
  .strictObject({
    ...ticketFields,
    status: z.literal("CHECKED_IN"),
    checkedInAt: time("When it was checked in"),
    checkedInBy: z.string().meta({ description: "Who checked it in" }),
    voidedAt: z.null(),
  })
  .meta({ id: "WebhookCheckedInTicket" });

// ---------------------------------------------------------------------------------------------
// The envelope and the event types

function envelope<const K extends EventType, D extends z.ZodType>(event: K, data: D) {
  return z.strictObject({
    id: z.string().regex(EVENT_ID).meta({
      description: "The event's id, also sent as X-Webhook-ID: the same on every retry of the event",
    }),
    event: z.literal(event),
    createdAt: z.int().min(0).meta({ description: "When the event was recorded (Unix seconds)" }),
    data,
  });
}

interface EventDoc {
  summary: string;
  description: string;
  body: z.ZodType;
}

/** Each event type: what causes it and the exact body delivered for it. */
export const WEBHOOK_EVENTS = {
  "donation.created": {
    summary: "A payment was recorded",
    description:
      "A checkout's payment (a charge that went through, a bank debit still clearing, a declined charge, or a free order) or a recurring gift's scheduled charge, as first recorded. `data` is the payment.",
    body: envelope("donation.created", newPaymentEventData),
  },
  "donation.updated": {
    summary: "A payment changed",
    description:
      "A pending payment cleared or bounced, a refund was recorded (through the API or at the processor; `refundedAmount` is the total so far, `REFUNDED` once it is all refunded), or a dispute opened or changed. `data` is the payment after the change.",
    body: envelope("donation.updated", paymentEventData),
  },
  "subscription.created": {
    summary: "A recurring gift began",
    description:
      "A recurring checkout's first payment went through or is clearing (the contact and the payment have their own events). `data` is the subscription.",
    body: envelope("subscription.created", activeSubscriptionEventData),
  },
  "subscription.updated": {
    summary: "A recurring gift changed",
    description:
      "Its amount was changed through the API, a charge moved its schedule on, or the donor saved a new payment method (emitted together with subscription.payment_method_updated). A change sent together with a cancel carries the cancelled subscription. `data` is the subscription after the change.",
    body: envelope("subscription.updated", subscriptionEventData),
  },
  "subscription.cancelled": {
    summary: "A recurring gift ended",
    description:
      "Cancelled through the API, after the last retry of a failed charge, or because its first payment (a bank debit) bounced. `data` is the cancelled subscription.",
    body: envelope("subscription.cancelled", cancelledSubscriptionEventData),
  },
  "subscription.payment_method_updated": {
    summary: "The donor replaced the payment method of a recurring gift",
    description:
      "Saved on the donor's payment-method update page; later charges use the new method. A subscription.updated with the same `data` is emitted with it. `data` is the subscription.",
    body: envelope("subscription.payment_method_updated", activeSubscriptionEventData),
  },
  "contact.created": {
    summary: "A contact was created",
    description: "Through the API, or by a new donor's checkout. `data` is the contact.",
    body: envelope("contact.created", contactEventData),
  },
  "contact.updated": {
    summary: "A contact changed",
    description:
      "Through the API, or a known donor opted in to email at checkout. `data` is the contact after the change.",
    body: envelope("contact.updated", contactEventData),
  },
  "form.created": {
    summary: "A form was created",
    description: "Through the API. `data` is the form.",
    body: envelope("form.created", formEventData),
  },
  "form.updated": {
    summary: "A form changed",
    description: "Through the API (`PUT` or `PATCH`). `data` is the form after the change.",
    body: envelope("form.updated", formEventData),
  },
  "ticket.checked_in": {
    summary: "An event ticket was checked in",
    description:
      "At the door, through `POST /v1/forms/{formID}/tickets/{code}/check-in` (the dashboard's door page uses it). Once per check-in: a ticket refused as already checked in sends nothing; a check-in undone and made again sends it again. `data` is the ticket.",
    body: envelope("ticket.checked_in", checkedInTicketEventData),
  },
} as const satisfies Record<EventType, EventDoc>;

type Events = typeof WEBHOOK_EVENTS;

/** The JSON body delivered for event type K. */
export type WebhookBody<K extends EventType = EventType> = {
  [T in K]: z.output<Events[T]["body"]>;
}[K];

/** The resource (`data`) delivered with event type K. */
export type WebhookEventData<K extends EventType> = WebhookBody<K>["data"];

// ---------------------------------------------------------------------------------------------
// Headers

/** The headers of every delivery attempt besides Content-Type (`application/json`) and Content-Length. */
export const webhookHeadersSchema = z.object({
  "X-Webhook-ID": z.string().regex(EVENT_ID).meta({
    description:
      "The event's id (the body's `id`): the same on every retry, so a receiver can skip duplicates",
  }),
  "X-Webhook-Timestamp": z
    .string()
    .regex(/^\d+$/)
    .meta({ description: "When this attempt was signed (Unix seconds); each attempt is signed anew" }),
  "X-Webhook-Signature": z
    .string()
    .regex(/^sha256=[0-9a-f]{64}(,sha256=[0-9a-f]{64})?$/)
    .meta({
      description:
        "`sha256=` and the lower-case hex HMAC-SHA256 of `X-Webhook-Timestamp + \".\" + raw body`, keyed with the webhook's secret; for 24 hours after a secret rotation, two of them separated by a comma (the new secret's first, then the old one's)",
    }),
  "User-Agent": z.literal(WEBHOOK_USER_AGENT).meta({ description: "The sender" }),
});
export type WebhookHeaders = z.output<typeof webhookHeadersSchema>;

// ---------------------------------------------------------------------------------------------
// The document's `webhooks`

function seconds(ms: number): string {
  const s = ms / 1000;
  if (s < 60 || s % 60 !== 0) return `${Number(s.toFixed(3))} s`;
  if (s < 3600 || s % 3600 !== 0) return `${s / 60} min`;
  if (s < 2 * 86_400 || s % 86_400 !== 0) return `${s / 3600} h`;
  return `${s / 86_400} d`;
}

/**
 * One operation per event type, as `OpenAPIRegistry.registerWebhook` takes it: the body, the headers, how
 * to verify the signature, and what the receiver's answer means under the given retry schedule.
 */
export function webhookOperations(opts: { retryScheduleMs: readonly number[] }) {
  const timeout = seconds(ATTEMPT_TIMEOUT_MS);
  const waits = opts.retryScheduleMs.map(seconds).join(", ");
  const attempts = opts.retryScheduleMs.length + 1;
  const delivery = [
    `Sent as a \`POST\` of JSON to every \`ACTIVE\` webhook subscribed to this event type, at least once: skip an \`id\` (\`X-Webhook-ID\`) you have already handled. Events of one resource may arrive out of order; use \`createdAt\` and the resource's own fields.`,
    `**Verifying the signature.** Take \`X-Webhook-Timestamp\` and the raw request body exactly as received (not re-serialised JSON); compute HMAC-SHA256 over the bytes of \`timestamp + "." + body\` with the webhook's whole secret string (\`whsec_...\`, as returned by registration, UTF-8) as the key; the header \`X-Webhook-Signature\` holds \`sha256=\` followed by the lower-case hex digest (compare in constant time). For 24 hours after the secret is rotated (\`POST /v1/webhooks/{id}/rotate-secret\`) it holds two such signatures separated by a comma, one with the new secret and one with the old: accept the delivery when any of them matches. Refuse a timestamp more than ${SIGNATURE_TOLERANCE_SECONDS} s away from your clock, which limits replays.`,
    `**Answering.** Any 2xx within ${timeout} delivers the event. Anything else (another status, a redirect, which is not followed, no answer within ${timeout}, a network error) fails the attempt; it is tried again after about ${waits} (each ±20%), ${attempts} attempts in all, then given up.`,
  ].join("\n\n");
  return (Object.keys(WEBHOOK_EVENTS) as EventType[]).map((type) => {
    const event: EventDoc = WEBHOOK_EVENTS[type];
    return {
      method: "post" as const,
      path: type,
      operationId: `webhook_${type.replace(/\./g, "_")}`,
      tags: ["Webhook events"],
      summary: event.summary,
      description: `${event.description}\n\n${delivery}`,
      request: {
        headers: webhookHeadersSchema,
        body: {
          required: true,
          description: `The \`${type}\` event`,
          content: { "application/json": { schema: event.body } },
        },
      },
      responses: {
        "2XX": { description: `Delivered (answered within ${timeout}); the response body is ignored` },
        default: {
          description: `Not delivered: retried after about ${waits} (±20%), then given up`,
        },
      },
    };
  });
}

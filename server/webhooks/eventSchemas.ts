import { z } from "zod";
import {
  CUSTOM_INPUT_TYPES,
  DISCOUNT_TYPES,
  FREQUENCIES,
  STORED_FORM_TYPES,
  TICKET_TYPES,
} from "../../shared/enums.js";
import { CONSENT_VALUES } from "../../shared/schemas/contact.js";
import { PAYMENT_STATUSES } from "../../shared/schemas/payment.js";
import { SUBSCRIPTION_STATUSES } from "../../shared/schemas/subscription.js";
import type { EventType } from "../../shared/schemas/webhook.js";
import { ATTEMPT_TIMEOUT_MS, WEBHOOK_USER_AGENT } from "./post.js";
import { SIGNATURE_TOLERANCE_SECONDS } from "./signature.js";

/**
 * What a webhook delivery is on the wire: the JSON body of each event type (an envelope around the
 * resource as the API returns it), the headers sent with it, and what each event means. The dispatcher
 * builds bodies and headers of these types; the OpenAPI document's `webhooks` are generated from here.
 * Every object lists exactly the properties the server writes (`additionalProperties: false`); optional
 * ones are those the server leaves out when they have no value.
 */

/** Ids made by `ulid()`: a prefix, then 26 characters of Crockford's lower-case base 32. */
const ulidId = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`));

/** ISO 8601 UTC to the second, as the API writes times: `2026-01-31T10:00:00Z`. */
const dateTime = z.iso.datetime({ precision: 0 });
const time = (description: string) => dateTime.meta({ description: `${description} (ISO 8601, UTC)` });
const dollars = (description: string) => z.number().meta({ description: `${description} (US dollars)` });
const count = (description: string) => z.int().min(0).meta({ description });
const currency = z.enum(["USD"]).meta({ description: "ISO 4217 code; every payment is in US dollars" });
const uuid = (description: string) => z.uuid().meta({ description });

export const EVENT_ID = /^evt_[0-9a-hjkmnp-tv-z]{26}$/;

export const CARD_BRANDS = ["visa", "mastercard", "amex", "discover", "unknown"] as const;

// ---------------------------------------------------------------------------------------------
// Payments (donation.*)

const paymentFields = {
  paymentID: ulidId("pay"),
  email: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  amount: dollars("What the donor was charged: the gift plus any covered fee"),
  currency,
  status: z.enum(PAYMENT_STATUSES),
  fund: z.string(),
  form: z.string().meta({ description: "The form's title when the payment was made" }),
  formID: uuid("The form's id"),
  frequency: z.enum(FREQUENCIES),
  date: time("When the payment was first recorded"),
  paymentMethod: z
    .enum(["card", "bank", "none"])
    .meta({ description: "`none` for an order that cost nothing (a free registration)" }),
  coverFees: z.boolean(),
  anonymous: z.boolean(),
  contactId: uuid("The donor's contact").nullable(),
  subscriptionId: ulidId("sub")
    .nullable()
    .meta({ description: "The recurring gift this payment belongs to" }),
  feeAmount: dollars("The covered processing fee inside amount (0 unless coverFees)"),
  refundedAmount: dollars("Refunded so far"),
  card: z
    .strictObject({ brand: z.enum(CARD_BRANDS), last4: z.string().nullable() })
    .nullable()
    .meta({ description: "The card's brand and last 4 digits; null for other methods" }),
  bankLast4: z.string().nullable().meta({ description: "Bank payments: the account's last 4 digits" }),
  tickets: z.array(
    z.strictObject({ name: z.string(), quantity: count("Tickets bought"), amount: dollars("Their price") }),
  ),
  promoCode: z.string().nullable(),
  discount: dollars("Taken off by the promo code"),
  customInputs: z.array(
    z.strictObject({
      id: z.string(),
      title: z.string(),
      value: z.union([z.string(), z.array(z.string())]).meta({ description: "A list for multi_select" }),
    }),
  ),
  utm: z
    .strictObject({
      source: z.string().optional(),
      medium: z.string().optional(),
      campaign: z.string().optional(),
      term: z.string().optional(),
      content: z.string().optional(),
    })
    .meta({ description: "The UTM parameters the donor arrived with; only those given" }),
  failureMessage: z.string().nullable().meta({ description: "FAILED payments: why" }),
  dispute: z
    .strictObject({
      status: z.string().meta({
        description:
          "The processor's words: warning_needs_response, needs_response, under_review, won, lost (a returned bank debit is a dispute too)",
      }),
      reason: z.string(),
      amount: dollars("Disputed"),
      fundsWithdrawn: z
        .boolean()
        .meta({ description: "The disputed amount is out of the organization's balance" }),
      createdAt: time("When the dispute was opened"),
      updatedAt: time("When it last changed"),
    })
    .nullable()
    .meta({ description: "The latest dispute (chargeback) of the payment, or null" }),
};

/** The payment as `GET /v1/payments/{id}` returns it. */
export const paymentEventData = z.strictObject(paymentFields).meta({ id: "WebhookPayment" });

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

const subscriptionFields = {
  id: ulidId("sub"),
  status: z.enum(SUBSCRIPTION_STATUSES),
  amount: dollars("The recurring gift, before any covered fee"),
  currency,
  frequency: z.enum(["DAILY", "WEEKLY", "MONTHLY", "ANNUALLY"]),
  nextBillingDate: time("When the next charge is due")
    .nullable()
    .meta({ description: "null once cancelled" }),
  lastBillingDate: time("The last successful charge").nullable(),
  endBillingDate: time("When the gift ends").nullable(),
  coveredFee: z.boolean(),
  formID: uuid("The form of the first gift"),
  contactId: uuid("The donor's contact"),
  email: z.string(),
  fund: z.string(),
  paymentMethod: z.strictObject({
    type: z.enum(["card", "bank"]),
    brand: z.enum(CARD_BRANDS).nullable().meta({ description: "Cards only" }),
    last4: z.string().nullable(),
  }),
  createdAt: time("When the gift began"),
  cancelledAt: time("When it was cancelled").nullable(),
};

/** The subscription as `GET /v1/subscriptions/{id}` returns it. */
export const subscriptionEventData = z.strictObject(subscriptionFields).meta({ id: "WebhookSubscription" });

/** A subscription that is active: billed on schedule. */
export const activeSubscriptionEventData = z
  .strictObject({
    ...subscriptionFields,
    status: z.literal("ACTIVE"),
    nextBillingDate: time("When the next charge is due"),
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

const consent = z.enum(CONSENT_VALUES);

/** The contact as `GET /v1/contacts/{id}` returns it. */
export const contactEventData = z
  .strictObject({
    id: uuid("The contact's id"),
    firstName: z.string(),
    lastName: z.string(),
    fullName: z.string().meta({ description: "firstName and lastName, the blank ones left out" }),
    organizationName: z.string().nullable(),
    emails: z.array(z.strictObject({ value: z.string(), isPrimary: z.boolean(), isVerified: z.boolean() })),
    phones: z.array(
      z.strictObject({
        value: z.string().meta({ description: "As typed" }),
        isPrimary: z.boolean(),
        e164: z.string().nullable().meta({
          description:
            "The number in E.164, read in the organization's country when typed without a country code; null when the text is not a valid phone number",
        }),
      }),
    ),
    addresses: z.array(
      z.strictObject({
        line1: z.string(),
        line2: z.string(),
        city: z.string(),
        region: z.string(),
        postal: z.string(),
        country: z.string(),
        isPrimary: z.boolean(),
      }),
    ),
    totalTransactionCount: count("Completed payments (fully refunded ones excluded)"),
    totalTransactionValue: dollars("Charged in completed payments, net of refunds"),
    emailConsent: consent,
    smsConsent: consent,
    communicationConsent: consent,
    hasActiveSubscription: z.boolean(),
    firstDonationAt: time("The first completed payment").nullable(),
    lastDonationAt: time("The latest completed payment").nullable(),
    createdAt: time("When the contact was created"),
    updatedAt: time("When it last changed"),
  })
  .meta({ id: "WebhookContact" });

// ---------------------------------------------------------------------------------------------
// Forms (form.*)

const quantity = z.int().min(1).nullable().meta({ description: "null: unlimited" });

/** The form as `GET /v1/forms/{id}` returns it. */
export const formEventData = z
  .strictObject({
    formID: uuid("The form's id"),
    formUrl: z.string().meta({ description: "The hosted page" }),
    title: z.string(),
    description: z.string(),
    formType: z.enum(STORED_FORM_TYPES),
    funds: z.array(z.string()),
    frequencies: z.array(z.enum(FREQUENCIES)),
    color: z.string().regex(/^#[0-9A-F]{6}$/),
    headerImage: z.string().nullable(),
    active: z.boolean(),
    goal: dollars("The fundraising goal").nullable(),
    eventDate: z.iso.date().nullable().meta({ description: "YYYY-MM-DD" }),
    startTime: z
      .string()
      .regex(/^([01]\d|2[0-3]):[0-5]\d$/)
      .nullable()
      .meta({ description: "HH:MM, 24-hour" }),
    endTime: z
      .string()
      .regex(/^([01]\d|2[0-3]):[0-5]\d$/)
      .nullable()
      .meta({ description: "HH:MM, 24-hour" }),
    location: z.string().nullable(),
    createdAt: time("When the form was created"),
    updatedAt: time("When it last changed"),
    embedHTML: z.string(),
    defaultFrequency: z.enum(FREQUENCIES),
    oneTimeAmounts: z.array(z.number()),
    dailyAmounts: z.array(z.number()),
    weeklyAmounts: z.array(z.number()),
    monthlyAmounts: z.array(z.number()),
    annuallyAmounts: z.array(z.number()),
    defaultAmount: dollars("The preselected amount").nullable(),
    allowCustomAmount: z.boolean(),
    givingLevels: z.array(
      z.strictObject({ title: z.string(), amount: dollars("The level's amount"), description: z.string() }),
    ),
    sponsorshipGroups: z.array(
      z.strictObject({
        groupTitle: z.string(),
        description: z.string(),
        options: z.array(
          z.strictObject({
            optionTitle: z.string(),
            amount: dollars("The option's price"),
            description: z.string(),
            quantity,
          }),
        ),
      }),
    ),
    productGroups: z
      .array(
        z.strictObject({
          productGroupName: z.string(),
          description: z.string(),
          products: z.array(
            z.strictObject({
              productName: z.string(),
              price: dollars("The product's price"),
              description: z.string(),
              quantity,
            }),
          ),
        }),
      )
      .optional()
      .meta({ description: "PRODUCT forms only: the sponsorship groups under their product names" }),
    tickets: z.array(
      z.strictObject({
        name: z.string(),
        price: dollars("The ticket's price"),
        quantity,
        ticketType: z.enum(TICKET_TYPES),
        groupSize: z.int().min(1).meta({ description: "Attendees per ticket (1 unless GROUP)" }),
        description: z.string(),
        maxPerOrder: z.int().min(1).nullable(),
        quantitySold: count("Tickets sold so far"),
      }),
    ),
    promoCodes: z.array(
      z.strictObject({
        code: z.string(),
        discountType: z.enum(DISCOUNT_TYPES),
        discountValue: z.number().meta({ description: "A percentage, or dollars for `amount`" }),
        quantity,
        applicableTickets: z.array(z.string()),
        timesRedeemed: count("Orders that used the code"),
      }),
    ),
    customInputs: z.array(
      z.strictObject({
        id: z.string(),
        title: z.string(),
        question: z.string().meta({ description: "The same as title" }),
        inputType: z.enum(CUSTOM_INPUT_TYPES),
        required: z.boolean(),
        options: z.array(z.string()),
      }),
    ),
    faqs: z.array(z.strictObject({ question: z.string(), answer: z.string() })),
    enableFundraisingBar: z.boolean(),
    enableDonorList: z.boolean(),
    enableCoverFees: z.boolean(),
    enableAnonymous: z.boolean(),
    enableOrganizationName: z.boolean(),
    enableBillingAddress: z.boolean(),
    enableCountryDropdown: z.boolean(),
    enablePhone: z.boolean(),
    enableCustomEmail: z.boolean(),
    replyToAddress: z.string().nullable(),
    emailSubject: z.string().nullable(),
    customMessage: z.string().nullable(),
    enableTimeAndLocation: z.boolean(),
    eventDetails: z.string().nullable(),
    timeZone: z.string().nullable().meta({ description: "An IANA time zone name" }),
  })
  .meta({ id: "WebhookForm" });

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
    .regex(/^sha256=[0-9a-f]{64}$/)
    .meta({
      description:
        '`sha256=` and the lower-case hex HMAC-SHA256 of `X-Webhook-Timestamp + "." + raw body`, keyed with the webhook\'s secret',
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
    `**Verifying the signature.** Take \`X-Webhook-Timestamp\` and the raw request body exactly as received (not re-serialised JSON); compute HMAC-SHA256 over the bytes of \`timestamp + "." + body\` with the webhook's whole secret string (\`whsec_...\`, as returned by registration, UTF-8) as the key; the header \`X-Webhook-Signature\` must equal \`sha256=\` followed by the lower-case hex digest (compare in constant time). Refuse a timestamp more than ${SIGNATURE_TOLERANCE_SECONDS} s away from your clock, which limits replays.`,
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

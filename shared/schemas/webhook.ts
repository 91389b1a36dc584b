import { z } from "zod";
import { EVENT_TYPES } from "../enums.js";
import {
  HTTP_OR_HTTPS_URL,
  HTTPS_URL,
  hasCredentials,
  NO_CREDENTIALS,
  readOnlyFields,
  urlTextProblem,
} from "./common.js";

/** Webhook registrations, their event types and their delivery log. */

export { EVENT_TYPES, type EventType } from "../enums.js";

export const WEBHOOK_STATUSES = ["ACTIVE", "DISABLED"] as const;
export const WEBHOOK_LOG_STATUSES = ["SUCCESS", "FAILED", "PENDING"] as const;

const URL_MAX = 2048;

/**
 * A delivery address: an absolute http(s) URL without credentials or fragment. `httpsOnly` (production)
 * also refuses plain http; where the address may point is checked again on every delivery.
 */
export function webhookUrl(opts: { httpsOnly: boolean }) {
  return (
    z
      .string()
      .trim()
      .min(1)
      .max(URL_MAX)
      // The document states what this server takes: http too in development.
      .meta(opts.httpsOnly ? HTTPS_URL : HTTP_OR_HTTPS_URL)
      .check(
        z.superRefine((value, ctx) => {
          // What this server takes, said as such: http too in development.
          const absolute = opts.httpsOnly
            ? "must be an absolute https URL"
            : "must be an absolute http or https URL";
          let url: URL;
          try {
            url = new URL(value);
          } catch {
            ctx.addIssue({ code: "custom", message: absolute });
            return;
          }
          if (url.protocol !== "https:" && url.protocol !== "http:")
            ctx.addIssue({ code: "custom", message: absolute });
          else if (opts.httpsOnly && url.protocol !== "https:")
            ctx.addIssue({
              code: "custom",
              message:
                "must be an https URL (http is taken only by a development server with WEBHOOK_TARGET_GUARD off)",
            });
          else if (hasCredentials(url)) ctx.addIssue({ code: "custom", message: NO_CREDENTIALS });
          else {
            const problem = urlTextProblem(value);
            if (problem) ctx.addIssue({ code: "custom", message: problem });
          }
        }),
      )
  );
}

const eventList = z
  .array(z.enum(EVENT_TYPES))
  .min(1)
  .max(EVENT_TYPES.length * 4)
  .meta({ description: "Event types; one listed twice counts once" })
  .transform((events) => [...new Set(events)]);

const description = z.string().trim().max(500);

export function webhookCreateSchema(opts: { httpsOnly: boolean }) {
  return z.strictObject({
    url: webhookUrl(opts),
    events: eventList,
    description: description.optional(),
  });
}

/**
 * The read-only fields of the webhook record (what a read returns, `updatedAt` included for clients that
 * track it): accepted and ignored on update, so that a webhook read can be sent back with a change.
 */
const readOnly = readOnlyFields(
  "webhookId",
  "createdAt",
  "updatedAt",
  "lastDeliveryAt",
  "successCount",
  "failureCount",
);

const UPDATABLE = ["url", "events", "status", "description"];

export function webhookUpdateSchema(opts: { httpsOnly: boolean }) {
  return z
    .strictObject({
      url: webhookUrl(opts).optional(),
      events: eventList.optional(),
      status: z.enum(WEBHOOK_STATUSES).optional(),
      description: description.optional(),
      ...readOnly,
    })
    .meta({ anyOf: UPDATABLE.map((k) => ({ required: [k] })) })
    .check(
      z.superRefine(
        (body, ctx) => {
          if (body === null || typeof body !== "object") return;
          const b = body as Record<string, unknown>;
          if (UPDATABLE.every((k) => b[k] === undefined))
            ctx.addIssue({
              code: "custom",
              message: "must contain at least one of url, events, status, description",
              path: [],
            });
        },
        { when: () => true },
      ),
    )
    .transform(({ url, events, status, description }) => ({ url, events, status, description }));
}

export type WebhookCreate = z.output<ReturnType<typeof webhookCreateSchema>>;
export type WebhookUpdate = z.output<ReturnType<typeof webhookUpdateSchema>>;

export const webhookSchema = z.object({
  webhookId: z.string().meta({ example: "wh_01jd8x7k2m3n4p5q6r7s8t9v0w" }),
  url: z.string(),
  events: z.array(z.enum(EVENT_TYPES)),
  status: z.enum(WEBHOOK_STATUSES),
  description: z.string(),
  createdAt: z.number().meta({ description: "Unix seconds" }),
  lastDeliveryAt: z.number().nullable().meta({ description: "Unix seconds of the last attempt, or null" }),
  successCount: z.number().meta({ description: "Attempts answered with a 2xx" }),
  failureCount: z.number().meta({ description: "Attempts that failed (non-2xx, timeout, network error)" }),
});
export type WebhookOut = z.output<typeof webhookSchema>;

export const webhookLogSchema = z.object({
  logId: z.string(),
  webhookId: z.string(),
  deliveryId: z.string().meta({
    description:
      "The delivery this attempt belongs to (`dlv_…`; its retries share it): what `POST /v1/webhooks/{id}/deliveries/{deliveryId}/resend` takes",
  }),
  eventId: z.string(),
  eventType: z.enum(EVENT_TYPES),
  status: z.enum(WEBHOOK_LOG_STATUSES).meta({
    description: "SUCCESS (2xx within 10 s), FAILED, or PENDING (the attempt is under way)",
  }),
  httpStatus: z
    .number()
    .nullable()
    .meta({ description: "The receiver's status code; null without a response" }),
  responseTime: z.number().nullable().meta({ description: "Milliseconds until the response (or failure)" }),
  attempt: z
    .number()
    .meta({ description: "1 for the first attempt of this event to this webhook, then 2, 3, ..." }),
  error: z.string().nullable(),
  responseBody: z.string().nullable().meta({
    description:
      "The start of the receiver's answer, as it sent it (at most 500 characters); null without an answer or for an empty one",
  }),
  timestamp: z.number().meta({ description: "Unix seconds when the attempt started" }),
});

export const webhookResendSchema = z.object({
  deliveryId: z
    .string()
    .meta({ description: "The new delivery (`dlv_…`): its attempts appear in the log under it" }),
  webhookId: z.string(),
  eventId: z
    .string()
    .meta({ description: "The same event id (`X-Webhook-ID`) and body as the delivery resent" }),
  eventType: z.enum(EVENT_TYPES),
  status: z.literal("PENDING").meta({ description: "Queued: sent at once, then retried like any delivery" }),
});

export const webhookRotatedSchema = z.object({
  webhookId: z.string(),
  secret: z.string().meta({ description: "whsec_...: the new signing secret, shown only this once" }),
  previousSecretExpiresAt: z.number().int().meta({
    description:
      "Until when (Unix seconds, as every webhook time) deliveries are signed with the replaced secret as well as the new one; after it, with the new one only",
  }),
});

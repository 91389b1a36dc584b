import { z } from "zod";
import { WEBHOOK_LOG_STATUSES, webhookLogSchema } from "../../shared/schemas/webhook.js";
import { ApiError } from "../errors.js";
import { listMetrics } from "../store/metrics.js";
import { listWebhookLogs } from "../webhooks/store.js";
import type { AppDeps } from "./env.js";
import { decodeCursor, encodeCursor, page, pageSchema, paginationQuery } from "./pagination.js";
import { defineRoute, errorSchema, type RouteSpec, standardErrors } from "./route.js";
import { loadOwnedWebhook } from "./webhooks.js";

export const metricSchema = z.object({
  metricId: z.string(),
  endpoint: z.string().meta({ description: "The request path" }),
  method: z.string(),
  statusCode: z.number(),
  responseTime: z.number().meta({ description: "Milliseconds" }),
  timestamp: z.number().meta({ description: "Unix seconds" }),
  keyId: z.string().meta({
    description: "The API key that made the request; a staff session's: the person's user id (`usr_…`)",
  }),
});

/** What a metric's `keyId` may be: an API key's id, or the user id a staff session's requests carry. */
const METRIC_KEY_ID_TEXT = /^(key|usr)_[0-9a-hjkmnp-tv-z]{26}$/;

const metricKeyIdParam = z
  .string()
  .meta({
    pattern: METRIC_KEY_ID_TEXT.source,
    description:
      "A staff session: only the requests made with this key (`key_…`), or with this staff member's session (`usr_…`); an id none of the organization's requests carry gives an empty list. An API key: only its own id is taken (the list is its own requests anyway), any other is a 403. An empty value is no filter.",
  })
  .optional()
  .check(
    z.superRefine((raw, ctx) => {
      if (raw !== undefined && raw !== "" && !METRIC_KEY_ID_TEXT.test(raw))
        ctx.addIssue({ code: "custom", message: "must be an API key id (key_…) or a user id (usr_…)" });
    }),
  );

const OTHER_KEY_METRICS =
  "An API key sees only its own requests: leave out keyId, or send the key's own id (a staff session of the dashboard sees every key's)";

export function analyticsRoutes(deps: AppDeps): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/v1/analytics/api-metrics",
      operationId: "listApiMetrics",
      permission: "analytics:read",
      tags: ["Analytics"],
      summary: "List API request metrics",
      description:
        "The log of /v1 requests, newest first. Called with an API key: the requests made with that key only. Called with a staff session (the dashboard): every request of the organization, all its keys and its staff members' sessions, each with its `keyId`; `keyId` narrows it to one of them. Requests are recorded in the background and appear within about a second. A `lastEvaluatedKey` is taken only by the list that gave it (the same `keyId`, or none).",
      query: paginationQuery().extend({ keyId: metricKeyIdParam }),
      responses: {
        200: {
          description: "A page of metrics",
          schema: pageSchema("metrics", metricSchema),
        },
        ...standardErrors,
        403: {
          description: "Missing permission, or an API key asking for another key's requests (`keyId`)",
          schema: errorSchema,
        },
      },
      handler: async (c, { query }) => {
        const auth = c.get("auth");
        const orgId = auth.organizationId;
        // `?keyId=` (as a form or a client with an unset variable sends it) is no filter, not an unknown id.
        const asked = query.keyId || undefined;
        let keyId = asked;
        if (auth.actor.type !== "staff") {
          // A key's own requests only: those of the organization's other keys are not its to read.
          if (asked !== undefined && asked !== auth.keyId) throw new ApiError(403, OTHER_KEY_METRICS);
          keyId = auth.keyId;
        }
        // Each filter its own list: a cursor of every key's requests is refused by one key's, and the reverse.
        const list = keyId === undefined ? "api-metrics" : `api-metrics:${keyId}`;
        await deps.metrics.flush();
        const after = query.lastEvaluatedKey ? decodeCursor(list, orgId, query.lastEvaluatedKey) : undefined;
        const rows = await listMetrics(deps.store.db, orgId, { keyId }, query.limit + 1, after);
        return c.json(
          page(
            "metrics",
            rows,
            query.limit,
            (row) => ({
              metricId: row.id,
              endpoint: row.endpoint,
              method: row.method,
              statusCode: Number(row.status_code),
              responseTime: Math.round(Number(row.response_time_us) / 10) / 100,
              timestamp: Math.floor(Date.parse(row.created_at) / 1000),
              keyId: row.key_id,
            }),
            (row) => ({ sort: row.created_at, id: row.id }),
            (position) => encodeCursor(list, orgId, position),
          ),
        );
      },
    }),

    defineRoute({
      method: "get",
      path: "/v1/analytics/webhook-logs",
      operationId: "listWebhookLogs",
      permission: "analytics:read",
      tags: ["Analytics"],
      summary: "List webhook delivery attempts",
      description:
        "Every delivery attempt of the organization's webhooks (deleted ones included), newest first. `webhookId` limits it to one webhook (an empty value is no filter); `status` to SUCCESS, FAILED or PENDING (an attempt under way). A retry is a new record with the next `attempt` number and the same `eventId` and `deliveryId`; a resend (`POST /v1/webhooks/{id}/deliveries/{deliveryId}/resend`) is a new `deliveryId` with the same `eventId`, from attempt 1. Each record shows the receiver's answer: `httpStatus` and the start of its body (`responseBody`).",
      query: paginationQuery().extend({
        webhookId: z.string().max(100).optional(),
        status: z.enum(WEBHOOK_LOG_STATUSES).optional(),
      }),
      responses: {
        200: { description: "A page of delivery attempts", schema: pageSchema("logs", webhookLogSchema) },
        ...standardErrors,
        404: { description: "No webhook with this webhookId", schema: errorSchema },
      },
      handler: async (c, { query }) => {
        const orgId = c.get("auth").organizationId;
        // `?webhookId=` (as a form or a client with an unset variable sends it) is no filter, not an unknown id.
        const webhookId = query.webhookId || undefined;
        if (webhookId !== undefined) await loadOwnedWebhook(deps, orgId, webhookId, { deleted: "allow" });
        const list = `webhook-logs:${webhookId ?? ""}:${query.status ?? ""}`;
        const after = query.lastEvaluatedKey ? decodeCursor(list, orgId, query.lastEvaluatedKey) : undefined;
        const rows = await listWebhookLogs(
          deps.store.db,
          orgId,
          { webhookId, status: query.status },
          query.limit + 1,
          after,
        );
        return c.json(
          page(
            "logs",
            rows,
            query.limit,
            (row) => ({
              logId: row.id,
              webhookId: row.webhook_id,
              deliveryId: row.delivery_id,
              eventId: row.event_id,
              eventType: row.event_type,
              status: row.status,
              httpStatus: row.http_status === null ? null : Number(row.http_status),
              responseTime: row.response_time_ms === null ? null : Number(row.response_time_ms),
              attempt: Number(row.attempt),
              error: row.error,
              responseBody: row.response_body ?? null,
              timestamp: Math.floor(Date.parse(row.created_at) / 1000),
            }),
            (row) => ({ sort: row.created_at, id: row.id }),
            (position) => encodeCursor(list, orgId, position),
          ),
        );
      },
    }),
  ];
}

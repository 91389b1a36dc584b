import { z } from "zod";
import { WEBHOOK_LOG_STATUSES, webhookLogSchema } from "../../shared/schemas/webhook.js";
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
  keyId: z.string().meta({ description: "The API key that made the request" }),
});

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
        "Every /v1 request made with any of the organization's keys, newest first. Requests are recorded in the background and appear within about a second.",
      query: paginationQuery(),
      responses: {
        200: {
          description: "A page of metrics",
          schema: pageSchema("metrics", metricSchema),
        },
        ...standardErrors,
      },
      handler: async (c, { query }) => {
        const orgId = c.get("auth").organizationId;
        await deps.metrics.flush();
        const after = query.lastEvaluatedKey
          ? decodeCursor("api-metrics", orgId, query.lastEvaluatedKey)
          : undefined;
        const rows = await listMetrics(deps.store.db, orgId, query.limit + 1, after);
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
            (position) => encodeCursor("api-metrics", orgId, position),
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

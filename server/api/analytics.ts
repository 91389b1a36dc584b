import { z } from "zod";
import { listMetrics } from "../store/metrics.js";
import type { AppDeps } from "./env.js";
import { decodeCursor, encodeCursor, page, pageSchema, paginationQuery } from "./pagination.js";
import { defineRoute, type RouteSpec, standardErrors } from "./route.js";

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
  ];
}

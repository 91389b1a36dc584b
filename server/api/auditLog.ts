import type { z } from "zod";
import { addDays, startOfLocalDay } from "../../shared/localDays.js";
import {
  AUDIT_ACTIONS,
  type AuditEntryOut,
  auditEntrySchema,
  auditLogFilterShape,
} from "../../shared/schemas/auditLog.js";
import { isoAt, wireTime } from "../../shared/time.js";
import { ApiError } from "../errors.js";
import { type AuditLogFilter, listAuditLog } from "../store/auditLog.js";
import { getOrganization } from "../store/organizations.js";
import type { AuditLogTable } from "../store/schema.js";
import { csvDoc, wantsCsv } from "./csvExport.js";
import type { AppDeps } from "./env.js";
import { exportAuditLog } from "./exports.js";
import { ownersOnly } from "./ownerOnly.js";
import { decodeCursor, encodeCursor, page, pageSchema, paginationQuery } from "./pagination.js";
import { defineRoute, type RouteSpec, standardErrors } from "./route.js";

/** The audit log: who did what, newest first, a page at a time. */

const parsed = (text: string): Record<string, unknown> => {
  const value: unknown = JSON.parse(text);
  return value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
};

export function presentAuditEntry(row: AuditLogTable): AuditEntryOut {
  return {
    id: row.id,
    createdAt: wireTime(row.created_at),
    actor: {
      type: row.actor_type as AuditEntryOut["actor"]["type"],
      id: row.actor,
      label: row.actor_label ?? (row.actor_type === "donor" ? row.actor : null),
    },
    action: row.action as AuditEntryOut["action"],
    subject: { type: row.subject_type as AuditEntryOut["subject"]["type"], id: row.subject_id },
    before: parsed(row.old_values),
    after: parsed(row.new_values),
  };
}

export const auditLogQuery = paginationQuery().extend(auditLogFilterShape);
type AuditLogQuery = z.output<typeof auditLogQuery>;

/** The store's filter of a query: days become instants in the organization's time zone. */
async function filterOf(deps: AppDeps, organizationId: string, q: AuditLogQuery): Promise<AuditLogFilter> {
  if (q.from !== undefined && q.to !== undefined && q.from > q.to)
    throw ApiError.validation(["from must be on or before to"]);
  const timeZone =
    q.from !== undefined || q.to !== undefined
      ? ((await getOrganization(deps.store.db, organizationId))?.timeZone ?? "UTC")
      : "UTC";
  const filter: AuditLogFilter = {};
  if (q.actorType !== undefined) filter.actorType = q.actorType;
  if (q.actor !== undefined) filter.actor = q.actor;
  if (q.action !== undefined) filter.action = q.action;
  if (q.subjectType !== undefined) filter.subjectType = q.subjectType;
  if (q.subjectId !== undefined) filter.subjectId = q.subjectId;
  if (q.from !== undefined) filter.from = isoAt(startOfLocalDay(q.from, timeZone));
  if (q.to !== undefined) filter.to = isoAt(startOfLocalDay(addDays(q.to, 1), timeZone));
  return filter;
}

export function auditLogRoutes(deps: AppDeps): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/v1/audit-log",
      operationId: "listAuditLog",
      permission: "organization:read",
      before: ownersOnly,
      tags: ["Audit log"],
      summary: "List the audit log",
      description: `Who did what, newest first: refunds, changes of recurring gifts, forms, the organization's settings, API keys, webhooks and the team, and staff sign-ins (failed ones too), each with the changed fields' values before and after, by a staff member, an API key, a donor (the donor portal) or the system. An API key needs \`organization:read\`; a staff session must be an Owner's (Finance and Staff: 403). Filters (all optional, all combined): \`actorType\`, \`actor\`, \`action\` (one of ${AUDIT_ACTIONS.join(", ")}), \`subjectType\`/\`subjectId\`, \`from\`/\`to\` (days in the organization's time zone, both included). A \`lastEvaluatedKey\` pages only the list of the filters it came from: sent with other filters it is a 400.`,
      query: auditLogQuery,
      rules: [{ fields: ["from"], rule: "from on or before to" }],
      responses: {
        200: {
          description: "A page of entries",
          schema: pageSchema("entries", auditEntrySchema),
          csv: csvDoc("entry"),
        },
        ...standardErrors,
      },
      handler: async (c, { query }) => {
        const orgId = c.get("auth").organizationId;
        const { limit, lastEvaluatedKey, ...filters } = query;
        const list = `audit-log?${JSON.stringify(
          Object.entries(filters)
            .filter(([, v]) => v !== undefined)
            .sort(),
        )}`;
        const filter = await filterOf(deps, orgId, query);
        if (wantsCsv(c)) return exportAuditLog(c, deps, orgId, filter);
        if (lastEvaluatedKey) filter.after = decodeCursor(list, orgId, lastEvaluatedKey);
        const rows = await listAuditLog(deps.store.db, orgId, limit + 1, filter);
        return c.json(
          page(
            "entries",
            rows,
            limit,
            presentAuditEntry,
            (r) => ({ sort: r.created_at, id: r.id }),
            (p) => encodeCursor(list, orgId, p),
          ),
        );
      },
    }),
  ];
}

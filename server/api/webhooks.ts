import { z } from "zod";
import type { AuditAction } from "../../shared/schemas/auditLog.js";
import {
  EVENT_TYPES,
  type EventType,
  type WebhookOut,
  webhookCreateSchema,
  webhookResendSchema,
  webhookRotatedSchema,
  webhookSchema,
  webhookUpdateSchema,
} from "../../shared/schemas/webhook.js";
import { isoAt } from "../../shared/time.js";
import { ApiError } from "../errors.js";
import { ulid } from "../ids.js";
import { type AuditActor, type AuditEntry, recordAudit, recordChange } from "../store/auditLog.js";
import { isLocalName, refuseUrl } from "../webhooks/guard.js";
import { newWebhookSecret } from "../webhooks/signature.js";
import {
  deleteWebhook,
  findDelivery,
  findDeliveryOfLog,
  findWebhook,
  insertWebhook,
  listWebhooks,
  queueResend,
  rotateWebhookSecret,
  SECRET_OVERLAP_MS,
  updateWebhook,
  type WebhookRecord,
} from "../webhooks/store.js";
import type { AppDeps } from "./env.js";
import { defineRoute, errorSchema, pathId, type RouteSpec, standardErrors } from "./route.js";

/** Webhook registrations. Delivery itself is server/webhooks/dispatcher.ts. */

const WEBHOOK_ID = /^wh_[0-9a-z]{26}$/;
const DELIVERY_ID = /^dlv_[0-9a-z]{26}$/;
const LOG_ID = /^log_[0-9A-Za-z]{26}$/;
const unixSeconds = (isoTime: string): number => Math.floor(Date.parse(isoTime) / 1000);

export function presentWebhook(hook: WebhookRecord): WebhookOut {
  return {
    webhookId: hook.id,
    url: hook.url,
    events: hook.events,
    status: hook.status === "DISABLED" ? "DISABLED" : "ACTIVE",
    description: hook.description,
    createdAt: unixSeconds(hook.createdAt),
    lastDeliveryAt: hook.lastDeliveryAt ? unixSeconds(hook.lastDeliveryAt) : null,
    successCount: hook.successCount,
    failureCount: hook.failureCount,
  };
}

/** The caller's live webhook: 404 if there is none, 403 if another organization's, 410 once deleted. */
export async function loadOwnedWebhook(
  deps: AppDeps,
  organizationId: string,
  id: string,
  opts: { deleted?: "gone" | "allow" } = {},
): Promise<WebhookRecord> {
  const hook = WEBHOOK_ID.test(id) ? await findWebhook(deps.store.db, id) : undefined;
  if (!hook) throw new ApiError(404, "Webhook not found");
  if (hook.organizationId !== organizationId)
    throw new ApiError(403, "Webhook belongs to another organization");
  if (hook.status === "DELETED" && opts.deleted !== "allow")
    throw new ApiError(410, "Webhook has been deleted");
  return hook;
}

/** A webhook as the audit log shows it: what it sends where, never its signing secret. */
function auditView(hook: { url: string; events: string | string[]; status: string; description: string }) {
  const events = typeof hook.events === "string" ? (JSON.parse(hook.events) as string[]) : hook.events;
  return { url: hook.url, events, status: hook.status, description: hook.description };
}

function webhookEntry(
  organizationId: string,
  actor: AuditActor,
  action: AuditAction,
  id: string,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): AuditEntry {
  return { organizationId, actor, action, subjectType: "webhook", subjectId: id, before, after };
}

export function webhookRoutes(deps: AppDeps): RouteSpec[] {
  const httpsOnly = deps.config.production || deps.config.webhookTargetGuard;
  const createBody = webhookCreateSchema({ httpsOnly });
  const updateBody = webhookUpdateSchema({ httpsOnly });
  const tags = ["Webhooks"];
  const idParams = z.object({ id: pathId("The webhookId (`wh_…`)") });
  const errors = {
    ...standardErrors,
    404: { description: "No webhook with this id", schema: errorSchema },
    410: { description: "The webhook was deleted", schema: errorSchema },
  };
  const eventsNote = `Event kinds: ${EVENT_TYPES.join(", ")}.`;
  /** With the delivery guard on, an address that could never be delivered to is refused at once. */
  const checkTarget = (url: string | undefined) => {
    if (url === undefined) return;
    const target = new URL(url);
    const guard = deps.config.webhookTargetGuard;
    const problem =
      refuseUrl(target, { guard }) ??
      (guard && isLocalName(target.hostname) ? `${target.hostname} is not a public address` : undefined);
    if (problem) throw ApiError.validation([`url ${problem}`]);
  };

  return [
    defineRoute({
      method: "post",
      path: "/v1/webhooks",
      operationId: "createWebhook",
      permission: "webhooks:write",
      answerHoldsSecret: true,
      tags,
      summary: "Register a webhook",
      description: `Registers an https endpoint for the listed events; it receives every later event of those kinds while ACTIVE. The response carries the signing \`secret\`, shown only this once. ${eventsNote} Deliveries are signed: \`X-Webhook-Signature: sha256=<hex HMAC-SHA256(secret, X-Webhook-Timestamp + "." + raw body)>\` (two comma-separated signatures for 24 hours after a rotation of the secret).`,
      body: createBody,
      responses: {
        201: {
          description: "Registered",
          schema: webhookSchema.extend({
            secret: z.string().meta({ description: "whsec_...: the signing secret, shown only once" }),
            message: z.string(),
          }),
        },
        ...standardErrors,
      },
      handler: async (c, { body }) => {
        checkTarget(body.url);
        const { organizationId: orgId, actor } = c.get("auth");
        const nowMs = deps.now();
        const now = isoAt(nowMs);
        const row = {
          id: `wh_${ulid(deps.now())}`,
          organization_id: orgId,
          url: body.url,
          events: JSON.stringify(body.events),
          status: "ACTIVE",
          description: body.description ?? "",
          secret: newWebhookSecret(),
          success_count: 0,
          failure_count: 0,
          last_delivery_at: null,
          created_at: now,
          updated_at: now,
          deleted_at: null,
        };
        await deps.store.db.transaction().execute(async (trx) => {
          await insertWebhook(trx, row);
          await recordAudit(
            trx,
            webhookEntry(orgId, actor, "webhook.created", row.id, {}, auditView(row)),
            nowMs,
          );
        });
        const hook = await loadOwnedWebhook(deps, orgId, row.id);
        return c.json(
          {
            ...presentWebhook(hook),
            secret: row.secret,
            message:
              "Webhook created successfully. Store the secret now: it is shown only once and signs every delivery.",
          },
          201,
        );
      },
    }),

    defineRoute({
      method: "get",
      path: "/v1/webhooks",
      operationId: "listWebhooks",
      permission: "webhooks:read",
      tags,
      summary: "List webhooks",
      description:
        "Every webhook of the organization except deleted ones, newest first, with delivery statistics. Not paginated.",
      responses: {
        200: {
          description: "The webhooks",
          schema: z.object({ webhooks: z.array(webhookSchema), count: z.number() }),
        },
        ...standardErrors,
      },
      handler: async (c) => {
        const hooks = await listWebhooks(deps.store.db, c.get("auth").organizationId);
        return c.json({ webhooks: hooks.map(presentWebhook), count: hooks.length });
      },
    }),

    defineRoute({
      method: "get",
      path: "/v1/webhooks/{id}",
      operationId: "getWebhook",
      permission: "webhooks:read",
      tags,
      summary: "Get a webhook",
      description: "Its configuration and delivery statistics; never the secret.",
      params: idParams,
      responses: { 200: { description: "The webhook", schema: webhookSchema }, ...errors },
      handler: async (c, { params }) => {
        const hook = await loadOwnedWebhook(deps, c.get("auth").organizationId, params.id);
        return c.json(presentWebhook(hook));
      },
    }),

    defineRoute({
      method: "put",
      path: "/v1/webhooks/{id}",
      operationId: "updateWebhook",
      permission: "webhooks:write",
      tags,
      summary: "Update a webhook (partial)",
      description: `Changes only the fields sent; the secret never changes. The read-only fields of the record (\`webhookId\`, \`createdAt\`, \`updatedAt\`, \`lastDeliveryAt\`, \`successCount\`, \`failureCount\`) are accepted and ignored, so a webhook read can be sent back with a change; any other unknown field is a 400. \`events\` replaces the whole list (queued deliveries of kinds no longer listed are cancelled). \`status\`: DISABLED pauses delivery (events of the pause are never delivered), ACTIVE resumes it. ${eventsNote}`,
      params: idParams,
      body: updateBody,
      responses: {
        200: {
          description: "Updated",
          schema: z.object({ message: z.string(), webhook: webhookSchema }),
        },
        ...errors,
      },
      handler: async (c, { params, body }) => {
        const { organizationId: orgId, actor } = c.get("auth");
        const hook = await loadOwnedWebhook(deps, orgId, params.id);
        checkTarget(body.url);
        const nowMs = deps.now();
        const updated = await deps.store.db.transaction().execute(async (trx) => {
          const after = await updateWebhook(trx, hook.id, body, isoAt(nowMs));
          if (!after) throw new ApiError(410, "Webhook has been deleted");
          await recordChange(
            trx,
            webhookEntry(orgId, actor, "webhook.updated", hook.id, auditView(hook), auditView(after)),
            nowMs,
          );
          return after;
        });
        return c.json({ message: "Webhook updated successfully", webhook: presentWebhook(updated) });
      },
    }),

    defineRoute({
      method: "post",
      path: "/v1/webhooks/{id}/deliveries/{deliveryId}/resend",
      operationId: "resendWebhookDelivery",
      permission: "webhooks:write",
      tags,
      summary: "Resend a delivery",
      description:
        "Sends the delivery's event to the webhook again, now: a new delivery (its own `deliveryId`, attempts from 1, retried on failure like any delivery) with the same event id (`X-Webhook-ID`) and the same body, signed with the webhook's secret as it is when sent (both secrets during a rotation's overlap). Any delivery of the webhook may be resent, whatever its outcome, and as often as wanted; the receiver should skip an event id it has already handled. Its attempts appear in `GET /v1/analytics/webhook-logs`. The `deliveryId` is the log record's; the record's `logId` (one attempt of the delivery) is taken for it too. A DISABLED webhook is a 409 (nothing is sent while it is paused), and so is a delivery of an event kind the webhook no longer lists in its `events` (a webhook receives only the kinds it lists); another organization's webhook a 403, as on the other webhook routes; a delivery unknown or of another webhook a 404.",
      params: z.object({
        id: pathId("The webhookId (`wh_…`)"),
        deliveryId: pathId(
          "The deliveryId (`dlv_…`) of a delivery-log record, or the record's logId (`log_…`): the delivery it is an attempt of",
        ),
      }),
      responses: {
        202: { description: "Queued: sent at once", schema: webhookResendSchema },
        ...errors,
        404: { description: "No webhook with this id, or no such delivery of it", schema: errorSchema },
        409: {
          description:
            "The webhook is DISABLED, or no longer lists the delivery's event kind in its `events`",
          schema: errorSchema,
        },
      },
      handler: async (c, { params }) => {
        const { organizationId: orgId } = c.get("auth");
        const hook = await loadOwnedWebhook(deps, orgId, params.id);
        // A delivery's id, or (as the webhook-logs records name their attempt first) one of its attempts' logId.
        const original = DELIVERY_ID.test(params.deliveryId)
          ? await findDelivery(deps.store.db, hook.id, params.deliveryId)
          : LOG_ID.test(params.deliveryId)
            ? await findDeliveryOfLog(deps.store.db, hook.id, params.deliveryId)
            : undefined;
        if (!original) throw new ApiError(404, "Delivery not found");
        if (hook.status !== "ACTIVE")
          throw new ApiError(409, "The webhook is DISABLED: set it ACTIVE to resend to it");
        // A webhook receives only the kinds its `events` list.
        if (!hook.events.some((kind) => kind === original.event_type))
          throw new ApiError(
            409,
            `The webhook no longer subscribes to ${original.event_type}: add it to the webhook's events to resend this delivery`,
          );
        const nowMs = deps.now();
        const resent = await queueResend(deps.store.db, original, `dlv_${ulid(nowMs)}`, isoAt(nowMs));
        const body: z.output<typeof webhookResendSchema> = {
          deliveryId: resent.id,
          webhookId: hook.id,
          eventId: resent.event_id,
          eventType: resent.event_type as EventType,
          status: "PENDING",
        };
        return c.json(body, 202);
      },
    }),

    defineRoute({
      method: "post",
      path: "/v1/webhooks/{id}/rotate-secret",
      operationId: "rotateWebhookSecret",
      permission: "webhooks:write",
      answerHoldsSecret: true,
      tags,
      summary: "Rotate the signing secret",
      description:
        "Gives the webhook a new signing secret, shown only in this answer. For the next 24 hours every delivery carries two signatures in `X-Webhook-Signature`, comma-separated, the new secret's first and the old one's second, so a receiver verifying with either secret accepts it while it changes over; after that, only the new one. Rotating again within the 24 hours ends the older secret at once (two secrets at most). Recorded in the audit log as `webhook.updated` (that the secret was rotated and until when the old one lasts; never a secret).",
      params: idParams,
      responses: {
        200: { description: "Rotated: the new secret, this once", schema: webhookRotatedSchema },
        ...errors,
      },
      handler: async (c, { params }) => {
        const { organizationId: orgId, actor } = c.get("auth");
        const hook = await loadOwnedWebhook(deps, orgId, params.id);
        const nowMs = deps.now();
        const expires = isoAt(nowMs + SECRET_OVERLAP_MS);
        const secret = newWebhookSecret();
        await deps.store.db.transaction().execute(async (trx) => {
          const rotated = await rotateWebhookSecret(trx, hook.id, secret, isoAt(nowMs), expires);
          if (!rotated) throw new ApiError(410, "Webhook has been deleted");
          const entry = webhookEntry(
            orgId,
            actor,
            "webhook.updated",
            hook.id,
            {},
            { secretRotated: true, previousSecretExpiresAt: unixSeconds(expires) },
          );
          await recordAudit(trx, entry, nowMs);
        });
        const body: z.output<typeof webhookRotatedSchema> = {
          webhookId: hook.id,
          secret,
          previousSecretExpiresAt: unixSeconds(expires),
        };
        return c.json(body, 200, { "Cache-Control": "no-store" });
      },
    }),

    defineRoute({
      method: "delete",
      path: "/v1/webhooks/{id}",
      operationId: "deleteWebhook",
      permission: "webhooks:write",
      tags,
      summary: "Delete a webhook (permanently)",
      description:
        "Deactivates the webhook for good: nothing more is delivered, queued retries included, and every later call on it answers 410. Its delivery log stays readable.",
      params: idParams,
      responses: {
        200: {
          description: "Deleted",
          schema: z.object({ message: z.string(), webhookId: z.string(), status: z.literal("DELETED") }),
        },
        ...errors,
      },
      handler: async (c, { params }) => {
        const { organizationId: orgId, actor } = c.get("auth");
        const hook = await loadOwnedWebhook(deps, orgId, params.id, { deleted: "allow" });
        const gone = () => new ApiError(410, "Webhook has already been deleted");
        if (hook.status === "DELETED") throw gone();
        const nowMs = deps.now();
        await deps.store.db.transaction().execute(async (trx) => {
          if (!(await deleteWebhook(trx, hook.id, isoAt(nowMs)))) throw gone();
          const entry = webhookEntry(orgId, actor, "webhook.deleted", hook.id, auditView(hook), {
            status: "DELETED",
          });
          await recordAudit(trx, entry, nowMs);
        });
        return c.json({
          message: "Webhook deleted successfully",
          webhookId: hook.id,
          status: "DELETED" as const,
        });
      },
    }),
  ];
}

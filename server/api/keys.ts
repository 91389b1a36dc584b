import { z } from "zod";
import type { Permission } from "../../shared/enums.js";
import {
  type ApiKeyOut,
  apiKeyCreatedSchema,
  apiKeyCreateSchema,
  apiKeyListSchema,
  apiKeySchema,
} from "../../shared/schemas/apiKey.js";
import { isoAt, wireTime } from "../../shared/time.js";
import { ApiError } from "../errors.js";
import { recordAudit } from "../store/auditLog.js";
import {
  type ApiKeyRecord,
  createApiKey,
  findOrganizationKey,
  listApiKeys,
  revokeApiKey,
} from "../store/keys.js";
import { lastUsesOf } from "../store/keyUses.js";
import { getOrganization } from "../store/organizations.js";
import type { AppDeps } from "./env.js";
import { ownersOnly } from "./ownerOnly.js";
import { defineRoute, errorSchema, pathId, type RouteSpec, standardErrors } from "./route.js";

/**
 * The organization's API keys over /v1 (the developers' page): list with each key's last use, create
 * with a name and chosen permissions (the secret in that answer only), revoke. A staff session must be an
 * Owner's; an API key needs organization:read to list and organization:write to create or revoke, and can
 * neither make nor revoke a key holding a permission it does not hold itself.
 */

function present(key: ApiKeyRecord, lastUsedAt: string | undefined): ApiKeyOut {
  return {
    keyId: key.keyId,
    name: key.name,
    prefix: key.prefix,
    permissions: key.permissions,
    createdAt: wireTime(key.createdAt),
    lastUsedAt: lastUsedAt === undefined ? null : wireTime(lastUsedAt),
    revokedAt: wireTime(key.revokedAt),
  };
}

/** The permissions of `wanted` the caller does not hold (a key cannot hand out more than it has). */
function beyond(held: ReadonlySet<Permission>, wanted: readonly Permission[]): Permission[] {
  return wanted.filter((p) => !held.has(p));
}

export function keyRoutes(deps: AppDeps): RouteSpec[] {
  const tags = ["API keys"];
  const who =
    "A staff session must be an Owner's (Finance and Staff: 403); an API key needs the permission named.";
  const noStore = { "Cache-Control": "no-store" };
  return [
    defineRoute({
      method: "get",
      path: "/v1/keys",
      operationId: "listApiKeys",
      permission: "organization:read",
      before: ownersOnly,
      tags,
      summary: "List API keys",
      description: `Every key of the organization, oldest first, revoked ones included: name, prefix, permissions, when it was made, last used (to the minute) and revoked. Never a secret. ${who}`,
      responses: { 200: { description: "The keys", schema: apiKeyListSchema }, ...standardErrors },
      handler: async (c) => {
        const orgId = c.get("auth").organizationId;
        const [keys, uses] = await Promise.all([
          listApiKeys(deps.store.db, orgId),
          lastUsesOf(deps.store.db, orgId),
        ]);
        const body: z.output<typeof apiKeyListSchema> = {
          keys: keys.map((k) => present(k, uses.get(k.keyId))),
        };
        return c.json(body, 200, noStore);
      },
    }),

    defineRoute({
      method: "post",
      path: "/v1/keys",
      operationId: "createApiKey",
      permission: "organization:write",
      before: ownersOnly,
      answerHoldsSecret: true,
      tags,
      summary: "Create an API key",
      description: `Makes a key with the name and permissions sent; the answer's \`key\` is the secret, shown only this once (it is stored as a hash and never shown again). A key made by an API key may hold only permissions that key holds itself (403 naming the others); an Owner may give any. A \`cs_test_\` key for a sandbox organization, \`cs_live_\` otherwise. Recorded in the audit log as \`key.created\` (name, prefix, permissions; never the secret). ${who}`,
      body: apiKeyCreateSchema,
      responses: {
        201: { description: "Created: the key, with its secret this once", schema: apiKeyCreatedSchema },
        ...standardErrors,
      },
      handler: async (c, { body }) => {
        const auth = c.get("auth");
        const missing = beyond(auth.permissions, body.permissions);
        if (missing.length)
          throw new ApiError(403, `A key cannot be given permissions you do not hold: ${missing.join(", ")}`);
        const org = await getOrganization(deps.store.db, auth.organizationId);
        if (!org) throw new ApiError(401, "Invalid API key");
        const nowMs = deps.now();
        const made = await deps.store.db.transaction().execute(async (trx) => {
          const created = await createApiKey(
            trx,
            {
              organizationId: org.id,
              sandbox: org.sandbox,
              permissions: body.permissions,
              name: body.name,
            },
            nowMs,
          );
          const { keyId, prefix, permissions, name } = created.record;
          await recordAudit(
            trx,
            {
              organizationId: org.id,
              actor: auth.actor,
              action: "key.created",
              subjectType: "key",
              subjectId: keyId,
              before: {},
              after: { name, prefix, permissions },
            },
            nowMs,
          );
          return created;
        });
        const out: z.output<typeof apiKeyCreatedSchema> = {
          ...present(made.record, undefined),
          key: made.key,
        };
        return c.json(out, 201, noStore);
      },
    }),

    defineRoute({
      method: "delete",
      path: "/v1/keys/{id}",
      operationId: "revokeApiKey",
      permission: "organization:write",
      before: ownersOnly,
      tags,
      summary: "Revoke an API key",
      description: `The key stops working at once (its next request is a 401; on PostgreSQL, in other processes once the change notification reaches them, within milliseconds); it stays in the list with \`revokedAt\`. An API key may revoke itself, or a key whose permissions it holds all of (403 otherwise). Recorded in the audit log as \`key.revoked\`. ${who}`,
      params: z.object({ id: pathId("The keyId (`key_…`)") }),
      responses: {
        200: { description: "Revoked", schema: apiKeySchema },
        ...standardErrors,
        404: { description: "No key with this id in the organization", schema: errorSchema },
        409: { description: "The key was already revoked", schema: errorSchema },
      },
      handler: async (c, { params }) => {
        const auth = c.get("auth");
        const orgId = auth.organizationId;
        const key = await findOrganizationKey(deps.store.db, orgId, params.id);
        if (!key) throw new ApiError(404, "API key not found");
        const missing = beyond(auth.permissions, key.permissions);
        if (missing.length)
          throw new ApiError(
            403,
            `This key holds permissions you do not hold (${missing.join(", ")}): an Owner may revoke it`,
          );
        const nowMs = deps.now();
        const revoked = await deps.store.db.transaction().execute(async (trx) => {
          if (!(await revokeApiKey(trx, key.keyId, nowMs))) return false;
          await recordAudit(
            trx,
            {
              organizationId: orgId,
              actor: auth.actor,
              action: "key.revoked",
              subjectType: "key",
              subjectId: key.keyId,
              before: { revokedAt: null },
              after: { revokedAt: wireTime(isoAt(nowMs)) },
            },
            nowMs,
          );
          return true;
        });
        if (!revoked) throw new ApiError(409, "The key was already revoked");
        const uses = await lastUsesOf(deps.store.db, orgId);
        return c.json(present({ ...key, revokedAt: isoAt(nowMs) }, uses.get(key.keyId)), 200, noStore);
      },
    }),
  ];
}

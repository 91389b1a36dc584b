import { z } from "zod";
import { PREFILL_KEYS, toWire, validatePrefill } from "../../shared/prefill.js";
import { ApiError } from "../errors.js";
import { isUuid, uuid } from "../ids.js";
import type { FormRecord } from "../store/forms.js";
import {
  DESTINATION_TYPES,
  type DestinationType,
  deleteLink,
  findLink,
  insertLink,
  type LinkRecord,
  listLinks,
  replaceLink,
  setLinkActive,
} from "../store/links.js";
import type { Organization } from "../store/organizations.js";
import type { AppDeps } from "./env.js";
import { loadOwnedForm } from "./forms/routes.js";
import { loadCallerOrganization } from "./organization.js";
import { decodeCursor, encodeCursor, limitParam } from "./pagination.js";
import { defineRoute, errorSchema, type RouteSpec, standardErrors } from "./route.js";

/** Prefilled checkout links (seed 2.8, 4.2; contract 5). */

const linkBodySchema = z.strictObject({
  name: z.string().trim().max(200).optional(),
  destinationType: z.enum(DESTINATION_TYPES).optional(),
  overlayPath: z.string().max(1000).optional(),
  prefill: z.unknown().optional(),
});

const linkBodyDoc = linkBodySchema.extend({
  prefill: z
    .record(z.string(), z.unknown())
    .optional()
    .meta({ description: `Optional keys: ${PREFILL_KEYS.join(", ")}` }),
});

export const linkSchema = z.object({
  linkID: z.string(),
  formID: z.string(),
  name: z.string(),
  prefill: z.record(z.string(), z.unknown()),
  url: z.string(),
  checkoutUrl: z.string(),
  destinationType: z.enum(DESTINATION_TYPES),
  overlayPath: z.string(),
  active: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const formParams = z.object({ formID: z.string() });
const linkParams = z.object({ formID: z.string(), linkID: z.string() });

export function linkUrl(publicUrl: string, org: Organization, link: LinkRecord): string {
  const id = encodeURIComponent(link.id);
  const formId = encodeURIComponent(link.formId);
  switch (link.destinationType) {
    case "HOSTED_PAGE_DONATE":
      return `${publicUrl}/donate/${formId}?elementid=${id}`;
    case "HOSTED_PAGE_ATTEND":
      return `${publicUrl}/attend/${formId}?elementid=${id}`;
    default: {
      const base = org.baseUrls[0] ?? "";
      const mode = link.destinationType === "OVERLAY_ATTEND" ? "attend" : "donate";
      return `${base}${link.overlayPath}?${mode}&formid=${formId}&elementid=${id}`;
    }
  }
}

function present(publicUrl: string, org: Organization, link: LinkRecord) {
  const url = linkUrl(publicUrl, org, link);
  return {
    linkID: link.id,
    formID: link.formId,
    name: link.name,
    prefill: toWire(link.prefill),
    url,
    checkoutUrl: url,
    destinationType: link.destinationType,
    overlayPath: link.overlayPath,
    active: link.active,
    createdAt: link.createdAt,
    updatedAt: link.updatedAt,
  };
}

/** Validates a create or full-replace body against the form and organization; every problem at once. */
function checkLinkBody(
  body: z.output<typeof linkBodySchema>,
  form: FormRecord,
  org: Organization,
  nowIso: string,
) {
  const isEvent = form.config.formType === "EVENT";
  const details: string[] = [];
  const destinationType: DestinationType =
    body.destinationType ?? (isEvent ? "HOSTED_PAGE_ATTEND" : "HOSTED_PAGE_DONATE");
  const forEvents = destinationType === "HOSTED_PAGE_ATTEND" || destinationType === "OVERLAY_ATTEND";
  if (forEvents !== isEvent)
    details.push(
      `destinationType ${destinationType} is for ${forEvents ? "event" : "non-event"} forms; this form is ${form.config.formType} (use ${isEvent ? "HOSTED_PAGE_ATTEND or OVERLAY_ATTEND" : "HOSTED_PAGE_DONATE or OVERLAY_DONATE"})`,
    );
  const overlay = destinationType.startsWith("OVERLAY_");
  const overlayPath = body.overlayPath?.trim() ?? "";
  if (overlay) {
    if (!overlayPath) details.push(`overlayPath is required for ${destinationType} and must begin with /`);
    else if (!overlayPath.startsWith("/")) details.push("overlayPath must begin with /");
    else if (/[?#\s]/.test(overlayPath))
      details.push("overlayPath must be a path without query, fragment or spaces");
    if (org.baseUrls.length === 0)
      details.push(
        "organizationBaseURLs must be configured (PUT /v1/organization) before creating overlay links",
      );
  } else if (overlayPath) {
    details.push(`overlayPath is only used by overlay destinations; leave it empty for ${destinationType}`);
  }
  const { prefill, details: prefillDetails } = validatePrefill(
    body.prefill,
    form.config,
    org.globalCustomInputs,
  );
  details.push(...prefillDetails);
  if (details.length) throw ApiError.validation(details);
  return {
    name: body.name || `API link - ${nowIso}`,
    destinationType,
    overlayPath: overlay ? overlayPath : "",
    prefill,
  };
}

export function linkRoutes(deps: AppDeps): RouteSpec[] {
  const nowIso = () => new Date(deps.now()).toISOString();
  const loadOrg = (id: string) => loadCallerOrganization(deps, id);
  const loadLink = async (form: FormRecord, linkId: string) => {
    const link = isUuid(linkId) ? await findLink(deps.store.db, linkId.toLowerCase()) : undefined;
    if (!link || link.formId !== form.id) throw new ApiError(404, "Link not found");
    return link;
  };
  const formErrors = {
    ...standardErrors,
    404: { description: "No such form (or link)", schema: errorSchema },
    410: { description: "The form was deleted", schema: errorSchema },
  };
  const tags = ["Checkout links"];

  return [
    defineRoute({
      method: "post",
      path: "/v1/forms/{formID}/links",
      permission: "forms:write",
      tags,
      summary: "Create a prefilled checkout link",
      description:
        "The link's URL carries only its id (`elementid`), never the prefill values. Unknown prefill keys, values the form does not accept, and overlay destinations without `overlayPath` or without organizationBaseURLs are 400s listing every problem.",
      params: formParams,
      body: linkBodySchema,
      bodyDoc: linkBodyDoc,
      responses: { 201: { description: "The link", schema: linkSchema }, ...formErrors },
      handler: async (c, { params, body }) => {
        const auth = c.get("auth");
        const form = await loadOwnedForm(deps, auth.organizationId, params.formID);
        const org = await loadOrg(auth.organizationId);
        const now = nowIso();
        const fields = checkLinkBody(body, form, org, now);
        const link: LinkRecord = {
          id: uuid(),
          organizationId: org.id,
          formId: form.id,
          ...fields,
          active: true,
          createdAt: now,
          updatedAt: now,
        };
        await insertLink(deps.store.db, link);
        return c.json(present(deps.config.publicUrl, org, link), 201);
      },
    }),

    defineRoute({
      method: "get",
      path: "/v1/forms/{formID}/links",
      permission: "forms:read",
      tags,
      summary: "List a form's checkout links",
      description:
        "Newest first. `limit` 1–200 (default 50); pass `nextCursor` back as `cursor`; `active=true|false` filters.",
      params: formParams,
      query: z.object({
        limit: limitParam(50, 200),
        cursor: z.string().max(2000).optional(),
        active: z.enum(["true", "false"]).optional(),
      }),
      responses: {
        200: {
          description: "A page of links",
          schema: z.object({ links: z.array(linkSchema), nextCursor: z.string().nullable() }),
        },
        ...formErrors,
      },
      handler: async (c, { params, query }) => {
        const auth = c.get("auth");
        const form = await loadOwnedForm(deps, auth.organizationId, params.formID);
        const org = await loadOrg(auth.organizationId);
        const list = `links:${form.id}:${query.active ?? "all"}`;
        const after = query.cursor ? decodeCursor(list, org.id, query.cursor, "cursor") : undefined;
        const active = query.active === undefined ? undefined : query.active === "true";
        const rows = await listLinks(deps.store.db, form.id, query.limit + 1, { active, after });
        const hasMore = rows.length > query.limit;
        const items = hasMore ? rows.slice(0, query.limit) : rows;
        const last = items[items.length - 1];
        return c.json({
          links: items.map((l) => present(deps.config.publicUrl, org, l)),
          nextCursor: hasMore ? encodeCursor(list, org.id, { sort: last.createdAt, id: last.id }) : null,
        });
      },
    }),

    defineRoute({
      method: "get",
      path: "/v1/forms/{formID}/links/{linkID}",
      permission: "forms:read",
      tags,
      summary: "Get a checkout link",
      params: linkParams,
      responses: { 200: { description: "The link", schema: linkSchema }, ...formErrors },
      handler: async (c, { params }) => {
        const auth = c.get("auth");
        const form = await loadOwnedForm(deps, auth.organizationId, params.formID);
        const link = await loadLink(form, params.linkID);
        return c.json(present(deps.config.publicUrl, await loadOrg(auth.organizationId), link));
      },
    }),

    defineRoute({
      method: "put",
      path: "/v1/forms/{formID}/links/{linkID}",
      permission: "forms:write",
      tags,
      summary: "Replace a checkout link",
      description:
        "Full-record semantics: name, destinationType, overlayPath and prefill are replaced; an omitted field is cleared (name back to the default label, prefill to {}, destination to the form's hosted page). `active` and `createdAt` are kept.",
      params: linkParams,
      body: linkBodySchema,
      bodyDoc: linkBodyDoc,
      responses: { 200: { description: "The link", schema: linkSchema }, ...formErrors },
      handler: async (c, { params, body }) => {
        const auth = c.get("auth");
        const form = await loadOwnedForm(deps, auth.organizationId, params.formID);
        const link = await loadLink(form, params.linkID);
        const org = await loadOrg(auth.organizationId);
        const now = nowIso();
        const fields = checkLinkBody(body, form, org, now);
        if (!(await replaceLink(deps.store.db, link.id, { ...fields, updatedAt: now })))
          throw new ApiError(404, "Link not found");
        return c.json(present(deps.config.publicUrl, org, { ...link, ...fields, updatedAt: now }));
      },
    }),

    ...(["activate", "deactivate"] as const).map((action) =>
      defineRoute({
        method: "post",
        path: `/v1/forms/{formID}/links/{linkID}/${action}`,
        permission: "forms:write",
        tags,
        summary: action === "activate" ? "Activate a checkout link" : "Deactivate a checkout link",
        description:
          "Idempotent. A deactivated link still exists; donors opening it get the form without prefill.",
        params: linkParams,
        responses: {
          200: {
            description: "The link's state",
            schema: z.object({ linkID: z.string(), formID: z.string(), active: z.boolean() }),
          },
          ...formErrors,
        },
        handler: async (c, { params }) => {
          const auth = c.get("auth");
          const form = await loadOwnedForm(deps, auth.organizationId, params.formID);
          const link = await loadLink(form, params.linkID);
          const active = action === "activate";
          if (!(await setLinkActive(deps.store.db, link.id, active, nowIso())))
            throw new ApiError(404, "Link not found");
          return c.json({ linkID: link.id, formID: form.id, active });
        },
      }),
    ),

    defineRoute({
      method: "delete",
      path: "/v1/forms/{formID}/links/{linkID}",
      permission: "forms:write",
      tags,
      summary: "Delete a checkout link (permanently)",
      params: linkParams,
      responses: { 204: { description: "Deleted" }, ...formErrors },
      handler: async (c, { params }) => {
        const auth = c.get("auth");
        const form = await loadOwnedForm(deps, auth.organizationId, params.formID);
        const link = await loadLink(form, params.linkID);
        if (!(await deleteLink(deps.store.db, link.id))) throw new ApiError(404, "Link not found");
        return c.body(null, 204);
      },
    }),
  ];
}

import { z } from "zod";
import { PREFILL_KEYS, toWire, validatePrefill } from "../../shared/prefill.js";
import { issuesToDetails, readOnlyFields } from "../../shared/schemas/common.js";
import { isoAt, wireTime } from "../../shared/time.js";
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
import { notWholeAmount, prefillAmountsWithDecimals } from "./forms/wholeAmounts.js";
import { loadCallerOrganization } from "./organization.js";
import { cursorParam, decodeCursor, encodeCursor, limitParam } from "./pagination.js";
import { type BodyRule, defineRoute, errorSchema, pathId, type RouteSpec, standardErrors } from "./route.js";

/** Prefilled checkout links: named links that open a form's checkout with some fields filled in. */

/** The writable fields of a link body. */
const LINK_FIELDS = {
  name: z.string().trim().max(200).optional(),
  destinationType: z.enum(DESTINATION_TYPES).optional(),
  overlayPath: z.string().max(1000).optional(),
  prefill: z.unknown().optional(),
};

/** Fields that reads return; accepted on input and ignored, so that a link read can be sent back as a PUT. */
const READ_ONLY_FIELDS = readOnlyFields(
  "linkID",
  "formID",
  "url",
  "checkoutUrl",
  "active",
  "createdAt",
  "updatedAt",
);

const linkBodySchema = z.strictObject({ ...LINK_FIELDS, ...READ_ONLY_FIELDS });

/**
 * What the route itself parses: any JSON object. The handler checks it, so that problems of the body's
 * own fields and problems against the form (prefill, destination) are reported together.
 */
const rawBodySchema = z.record(z.string(), z.unknown());

/** The writable fields of a body; the read-only ones are dropped. */
type LinkBody = { [K in keyof typeof LINK_FIELDS]: z.output<(typeof LINK_FIELDS)[K]> };

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
  url: z.string().meta({
    description:
      "Absolute. An overlay link whose organization has no organizationBaseURLs left gets the form's hosted page URL with the link instead.",
  }),
  checkoutUrl: z.string(),
  destinationType: z.enum(DESTINATION_TYPES),
  overlayPath: z.string(),
  active: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** A link is checked against its form and its organization. */
const LINK_RULES: BodyRule[] = [
  {
    fields: ["destinationType", "overlayPath", "organizationBaseURLs"],
    rule: "destinationType matches the form (…_ATTEND for event forms, …_DONATE otherwise); an overlay destination needs overlayPath (beginning with /) and the organization's organizationBaseURLs; overlayPath only on overlay destinations",
  },
  {
    fields: ["prefill"],
    rule: "prefill keys and values the form accepts; prefill.amount a whole amount when the organization's currency has no decimals (JPY)",
  },
];

const formParams = z.object({ formID: pathId("The form's formID (UUID)") });
const linkParams = z.object({
  formID: pathId("The form's formID (UUID)"),
  linkID: pathId("The link's linkID (UUID)"),
});

/**
 * The shareable URL, rebuilt on every read. An overlay link of an organization that has since removed all
 * its organizationBaseURLs falls back to the form's hosted page with the link, so the URL stays absolute.
 */
export function linkUrl(publicUrl: string, org: Organization, link: LinkRecord): string {
  const id = encodeURIComponent(link.id);
  const formId = encodeURIComponent(link.formId);
  const attend = link.destinationType === "HOSTED_PAGE_ATTEND" || link.destinationType === "OVERLAY_ATTEND";
  const base = org.baseUrls[0];
  if (link.destinationType.startsWith("OVERLAY_") && base)
    return `${base}${link.overlayPath}?${attend ? "attend" : "donate"}&formid=${formId}&elementid=${id}`;
  return `${publicUrl}/${attend ? "attend" : "donate"}/${formId}?elementid=${id}`;
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
    createdAt: wireTime(link.createdAt),
    updatedAt: wireTime(link.updatedAt),
  };
}

interface ParsedLinkBody {
  /** The fields that passed their own checks. */
  body: LinkBody;
  /** The problems of the body on its own. */
  details: string[];
  /** The fields that failed them. */
  bad: Set<keyof LinkBody>;
}

/**
 * A create or full-replace body, first on its own (types, lengths, unknown fields); read-only fields are
 * dropped. A field that fails is left out of `body`, so the checks against the form can still run on the
 * others: every problem of the body is listed at once, never only the first.
 */
function parseLinkBody(raw: Record<string, unknown>): ParsedLinkBody {
  const parsed = linkBodySchema.safeParse(raw);
  const bad = new Set<keyof LinkBody>();
  const field = <S extends z.ZodType>(key: keyof LinkBody, schema: S): z.output<S> | undefined => {
    const result = schema.safeParse(raw[key]);
    if (!result.success) bad.add(key);
    return result.success ? result.data : undefined;
  };
  const body: LinkBody = {
    name: field("name", LINK_FIELDS.name),
    destinationType: field("destinationType", LINK_FIELDS.destinationType),
    overlayPath: field("overlayPath", LINK_FIELDS.overlayPath),
    prefill: raw.prefill,
  };
  return { body, details: parsed.success ? [] : issuesToDetails(parsed.error.issues, raw), bad };
}

/**
 * When the form (or link) cannot be loaded, a body with problems of its own is still a 400, as on every
 * route whose body is checked before its records are read.
 */
function bodyProblemsFirst(details: string[]) {
  return (err: unknown): never => {
    if (details.length) throw ApiError.validation(details);
    throw err;
  };
}

/** Checks a parsed body against the form and organization; throws a 400 listing every problem at once. */
function checkLinkBody(parsed: ParsedLinkBody, form: FormRecord, org: Organization, nowIso: string) {
  const { body, bad } = parsed;
  const isEvent = form.config.formType === "EVENT";
  const details = [...parsed.details];
  const destinationType: DestinationType =
    body.destinationType ?? (isEvent ? "HOSTED_PAGE_ATTEND" : "HOSTED_PAGE_DONATE");
  const overlay = destinationType.startsWith("OVERLAY_");
  const overlayPath = body.overlayPath?.trim() ?? "";
  // A destinationType that failed its own check says nothing about the form or the path it needs.
  if (!bad.has("destinationType")) {
    const forEvents = destinationType === "HOSTED_PAGE_ATTEND" || destinationType === "OVERLAY_ATTEND";
    if (forEvents !== isEvent)
      details.push(
        `destinationType ${destinationType} is for ${forEvents ? "event" : "non-event"} forms; this form is ${form.config.formType} (use ${isEvent ? "HOSTED_PAGE_ATTEND or OVERLAY_ATTEND" : "HOSTED_PAGE_DONATE or OVERLAY_DONATE"})`,
      );
    if (overlay && !bad.has("overlayPath")) {
      if (!overlayPath) details.push(`overlayPath is required for ${destinationType} and must begin with /`);
      else if (!overlayPath.startsWith("/")) details.push("overlayPath must begin with /");
      else if (/[?#\s]/.test(overlayPath))
        details.push("overlayPath must be a path without query, fragment or spaces");
    }
    if (overlay && org.baseUrls.length === 0)
      details.push(
        "organizationBaseURLs must be configured (PUT /v1/organization) before creating overlay links",
      );
    if (!overlay && overlayPath)
      details.push(`overlayPath is only used by overlay destinations; leave it empty for ${destinationType}`);
  }
  const { prefill, details: prefillDetails } = validatePrefill(
    body.prefill,
    form.config,
    org.globalCustomInputs,
  );
  details.push(...prefillDetails);
  // In a currency without decimals (JPY), a prefilled amount is whole, as the form's amounts are.
  details.push(
    ...prefillAmountsWithDecimals(prefill, org.currency).map((f) => notWholeAmount(f, org.currency)),
  );
  if (details.length) throw ApiError.validation(details);
  return {
    name: body.name || `API link - ${nowIso}`,
    destinationType,
    overlayPath: overlay ? overlayPath : "",
    prefill,
  };
}

export function linkRoutes(deps: AppDeps): RouteSpec[] {
  const nowIso = () => isoAt(deps.now());
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
  const prefillConflict = {
    description:
      "Activate only: the link prefills an amount with decimals, and the organization's currency has none (JPY)",
    schema: errorSchema,
  };

  return [
    defineRoute({
      method: "post",
      path: "/v1/forms/{formID}/links",
      operationId: "createLink",
      permission: "forms:write",
      tags,
      summary: "Create a prefilled checkout link",
      description:
        "The link's URL carries only its id (`elementid`), never the prefill values. Unknown fields and prefill keys, values the form does not accept, a prefilled `amount` with decimals when the organization's currency has none (JPY), and overlay destinations without `overlayPath` or without organizationBaseURLs are 400s listing every problem. The read-only fields of a link record (`linkID`, `formID`, `url`, `checkoutUrl`, `active`, `createdAt`, `updatedAt`) are accepted and ignored.",
      params: formParams,
      body: rawBodySchema,
      rules: LINK_RULES,
      bodyDoc: linkBodyDoc,
      // Every field is optional: no body at all makes a link to the form's hosted page without prefill.
      bodyOptional: true,
      responses: { 201: { description: "The link", schema: linkSchema }, ...formErrors },
      handler: async (c, { params, body }) => {
        const auth = c.get("auth");
        const parsed = parseLinkBody(body);
        const form = await loadOwnedForm(deps, auth.organizationId, params.formID).catch(
          bodyProblemsFirst(parsed.details),
        );
        const org = await loadOrg(auth.organizationId);
        const now = nowIso();
        const fields = checkLinkBody(parsed, form, org, now);
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
      operationId: "listLinks",
      permission: "forms:read",
      tags,
      summary: "List a form's checkout links",
      description:
        "Newest first. `limit` 1–200 (default 50); pass `nextCursor` back as `cursor`; `active=true|false` filters.",
      params: formParams,
      query: z.object({
        limit: limitParam(50, 200),
        cursor: cursorParam(),
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
      operationId: "getLink",
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
      operationId: "replaceLink",
      permission: "forms:write",
      tags,
      summary: "Replace a checkout link",
      description:
        'Full-record semantics: name, destinationType, overlayPath and prefill are replaced; an omitted field is cleared (name back to the default label, prefill to {}, destination to the form\'s hosted page and overlayPath to ""). `active` and `createdAt` are kept. A body copied from a GET of the link can be sent back: the read-only fields of the record (`linkID`, `formID`, `url`, `checkoutUrl`, `active`, `createdAt`, `updatedAt`) are accepted and ignored (`active` changes only through activate and deactivate); any other unknown field is a 400. Every problem is listed at once.',
      params: linkParams,
      body: rawBodySchema,
      rules: LINK_RULES,
      bodyDoc: linkBodyDoc,
      responses: { 200: { description: "The link", schema: linkSchema }, ...formErrors },
      handler: async (c, { params, body }) => {
        const auth = c.get("auth");
        const parsed = parseLinkBody(body);
        const form = await loadOwnedForm(deps, auth.organizationId, params.formID).catch(
          bodyProblemsFirst(parsed.details),
        );
        const link = await loadLink(form, params.linkID).catch(bodyProblemsFirst(parsed.details));
        const org = await loadOrg(auth.organizationId);
        const now = nowIso();
        const fields = checkLinkBody(parsed, form, org, now);
        if (!(await replaceLink(deps.store.db, link.id, { ...fields, updatedAt: now })))
          throw new ApiError(404, "Link not found");
        return c.json(present(deps.config.publicUrl, org, { ...link, ...fields, updatedAt: now }));
      },
    }),

    ...(["activate", "deactivate"] as const).map((action) =>
      defineRoute({
        method: "post",
        path: `/v1/forms/{formID}/links/{linkID}/${action}`,
        operationId: `${action}Link`,
        permission: "forms:write",
        tags,
        summary: action === "activate" ? "Activate a checkout link" : "Deactivate a checkout link",
        description:
          "Idempotent. A deactivated link still exists; donors opening it get the form without prefill. Activating a link whose prefilled `amount` has decimals while the organization's currency has none (JPY, set since the link was deactivated) is a 409 naming `prefill.amount`: replace its prefill first.",
        params: linkParams,
        responses: {
          200: {
            description: "The link's state",
            schema: z.object({ linkID: z.string(), formID: z.string(), active: z.boolean() }),
          },
          ...formErrors,
          409: prefillConflict,
        },
        handler: async (c, { params }) => {
          const auth = c.get("auth");
          const form = await loadOwnedForm(deps, auth.organizationId, params.formID);
          const link = await loadLink(form, params.linkID);
          const active = action === "activate";
          // An inactive link is not held to a currency changed meanwhile (organization.ts): it is here.
          if (active && !link.active) {
            const { currency } = await loadOrg(auth.organizationId);
            const fields = prefillAmountsWithDecimals(link.prefill, currency);
            if (fields.length)
              throw new ApiError(
                409,
                `${currency} has no decimals, and this link prefills an amount with decimals: replace its prefill (PUT /v1/forms/{formID}/links/{linkID}) before activating it`,
                fields.map((f) => notWholeAmount(f, currency)),
              );
          }
          if (!(await setLinkActive(deps.store.db, link.id, active, nowIso())))
            throw new ApiError(404, "Link not found");
          return c.json({ linkID: link.id, formID: form.id, active });
        },
      }),
    ),

    defineRoute({
      method: "delete",
      path: "/v1/forms/{formID}/links/{linkID}",
      operationId: "deleteLink",
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

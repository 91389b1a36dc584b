import { randomUUID } from "node:crypto";
import { z } from "zod";
import { decimalsOf } from "../../../shared/currency.js";
import { formInputShape, formSchema, formUpdateShape } from "../../../shared/schemas/form.js";
import { isoAt, wireTime } from "../../../shared/time.js";
import { ApiError } from "../../errors.js";
import { isUuid } from "../../ids.js";
import { FORM_PAGE_LIMIT_BYTES, formPageBytes } from "../../pages/hosted.js";
import { recordAudit, recordChange } from "../../store/auditLog.js";
import type { Db } from "../../store/database.js";
import { isUniqueViolation } from "../../store/dialect.js";
import {
  type FormRecord,
  findForm,
  findFormCached,
  insertForm,
  listLiveForms,
  lockLiveForm,
  peekForm,
  softDeleteForm,
  updateFormConfig,
} from "../../store/forms.js";
import { formAvailability, stockTaken } from "../../store/inventory.js";
import { getOrganization } from "../../store/organizations.js";
import { emitEvent } from "../../webhooks/events.js";
import type { AppDeps } from "../env.js";
import { answer } from "../middleware.js";
import { decodeCursor, encodeCursor, page, pageSchema, paginationQuery } from "../pagination.js";
import { defineRoute, errorSchema, pathId, type RouteSpec, standardErrors } from "../route.js";
import { parseWith } from "../validate.js";
import { mergeFormUpdate } from "./merge.js";
import {
  FormAnswers,
  type FormSales,
  formFullSchema,
  formSummarySchema,
  toFull,
  toInput,
  toSummary,
} from "./present.js";
import { formPreviewRoutes } from "./preview.js";
import { FORM_RULES } from "./rules.js";
import { salesConflict, salesConflicts } from "./sales.js";
import { amountsWithDecimals } from "./wholeAmounts.js";

/**
 * Refuses a form whose hosted page would outgrow the page budget (see pages/hosted.ts), measured with the
 * organization's part of the page (its global custom inputs, name, currency, language) as it is now.
 */
async function checkPageSize(deps: AppDeps, orgId: string, formId: string, config: FormRecord["config"]) {
  const org = await getOrganization(deps.store.db, orgId);
  if (!org) return;
  // In a currency without decimals (JPY), every amount of the form is whole.
  if (decimalsOf(org.currency) === 0) {
    const fractional = amountsWithDecimals(config, org.currency);
    if (fractional.length)
      throw ApiError.validation(
        fractional.map(
          (field) => `${field} must be a whole number of ${org.currency}, which has no decimals`,
        ),
      );
  }
  const bytes = await formPageBytes(deps, org, formId, config);
  if (bytes > FORM_PAGE_LIMIT_BYTES)
    throw ApiError.validation([
      `form is too large for its hosted page (${kb(bytes)} KB, at most ${kb(FORM_PAGE_LIMIT_BYTES)} KB): shorten its descriptions, FAQs, or its lists of levels, tickets, options and inputs${org.globalCustomInputs.length ? ` (the page holds the organization's ${org.globalCustomInputs.length} global custom inputs too: PUT /v1/organization)` : ""}`,
    ]);
}

const kb = (bytes: number) => Math.ceil(bytes / 1024).toLocaleString("en-US");

const idParams = z.object({ id: pathId("The form's formID (UUID)") });

const notFound = { description: "No form with this id", schema: errorSchema };
const gone = { description: "The form was deleted", schema: errorSchema };
const conflict = {
  description: "A live form of this organization already has this title",
  schema: errorSchema,
};
const updateConflict = {
  description:
    "A live form of this organization already has this title; or the change would undo sales: it renames or removes a ticket type, sponsorship option or promo code that has sales (or seats held by checkouts in progress), or lowers a `quantity` below them. `details` lists each such problem; nothing is written.",
  schema: errorSchema,
};

/**
 * The caller's live form, or the 404, 403 or 410 that says why not. `cached` reads through the store's
 * read cache: for answers that only show the form (the record is shared and must not be modified).
 */
export async function loadOwnedForm(
  deps: AppDeps,
  organizationId: string,
  id: string,
  opts: { cached?: boolean; deleted?: "allowed" } = {},
): Promise<FormRecord> {
  const formId = id.toLowerCase();
  const form = !isUuid(id)
    ? undefined
    : opts.cached
      ? await findFormCached(deps.store, formId)
      : await findForm(deps.store.db, formId);
  return owned(form, organizationId, opts.deleted === "allowed");
}

/**
 * The form when the caller may see it, else the 404, 403 or 410 that says why not (a deleted form is a
 * 410 unless `deletedAllowed`: what was sold with it, its tickets, outlives it).
 */
function owned(form: FormRecord | undefined, organizationId: string, deletedAllowed = false): FormRecord {
  if (!form) throw new ApiError(404, "Form not found");
  if (form.organizationId !== organizationId) throw new ApiError(403, "Form belongs to another organization");
  if (form.deletedAt && !deletedAllowed) throw new ApiError(410, "Form has been deleted");
  return form;
}

const JSON_TYPE = { "Content-Type": "application/json" } as const;

/** Tickets and promo codes make a form's answer depend on sales, not on its record alone. */
const answerNeedsSales = (form: FormRecord): boolean =>
  form.config.tickets.length > 0 || form.config.promoCodes.length > 0;

function duplicateTitle(title: string): ApiError {
  return new ApiError(409, `A form titled "${title}" already exists`);
}

export function formRoutes(deps: AppDeps): RouteSpec[] {
  const { config } = deps;
  const schema = formSchema({ allowHttpImages: !config.production });
  const answers = new FormAnswers(config);

  return [
    // Before /v1/forms/{id}: "preview" is not a form's id.
    ...formPreviewRoutes(deps, (orgId, id) => loadOwnedForm(deps, orgId, id)),
    defineRoute({
      method: "post",
      path: "/v1/forms",
      operationId: "createForm",
      permission: "forms:write",
      tags: ["Forms"],
      summary: "Create a form",
      description:
        "Creates a donation (`formType: fundraising`) or event form. Only `title` and `funds` are required. Every problem in the body is reported at once in `details`. Send `Idempotency-Key` to make retries safe.",
      body: schema,
      bodyDoc: formInputShape,
      rules: FORM_RULES,
      responses: {
        201: {
          description: "Created",
          schema: z.object({
            formID: z.string(),
            formUrl: z.string(),
            embedHTML: z.string(),
            message: z.string(),
          }),
        },
        ...standardErrors,
        409: conflict,
      },
      handler: async (c, { body }) => {
        const { organizationId: orgId, actor } = c.get("auth");
        await checkPageSize(deps, orgId, randomUUID(), body);
        const nowMs = deps.now();
        let full: ReturnType<typeof toFull>;
        try {
          full = await deps.store.db.transaction().execute(async (trx) => {
            const form = await insertForm(trx, orgId, body, isoAt(nowMs));
            const created = toFull(config.publicUrl, form);
            await emitEvent(trx, orgId, "form.created", form.id, created, nowMs);
            await recordAudit(
              trx,
              {
                organizationId: orgId,
                actor,
                action: "form.created",
                subjectType: "form",
                subjectId: form.id,
                before: {},
                after: { title: created.title, formType: created.formType },
              },
              nowMs,
            );
            return created;
          });
        } catch (err) {
          if (isUniqueViolation(err)) throw duplicateTitle(body.title);
          throw err;
        }
        return c.json(
          {
            formID: full.formID,
            formUrl: full.formUrl,
            embedHTML: full.embedHTML,
            message: "Form created successfully",
          },
          201,
        );
      },
    }),

    defineRoute({
      method: "get",
      path: "/v1/forms",
      operationId: "listForms",
      permission: "forms:read",
      tags: ["Forms"],
      summary: "List forms",
      description:
        "The organization's live forms, newest first, in the summary shape. Deleted forms are left out.",
      query: paginationQuery(),
      responses: {
        200: {
          description: "A page of forms",
          schema: pageSchema("forms", formSummarySchema),
        },
        ...standardErrors,
      },
      handler: async (c, { query }) => {
        const orgId = c.get("auth").organizationId;
        const after = query.lastEvaluatedKey
          ? decodeCursor("forms", orgId, query.lastEvaluatedKey)
          : undefined;
        const rows = await listLiveForms(deps.store.db, orgId, query.limit + 1, after);
        return c.json(
          page(
            "forms",
            rows,
            query.limit,
            (form) => toSummary(config.publicUrl, form),
            (form) => ({ sort: form.createdAt, id: form.id }),
            (position) => encodeCursor("forms", orgId, position),
          ),
        );
      },
    }),

    defineRoute({
      method: "get",
      path: "/v1/forms/{id}",
      operationId: "getForm",
      permission: "forms:read",
      tags: ["Forms"],
      summary: "Get a form",
      params: idParams,
      responses: {
        200: { description: "The full form", schema: formFullSchema },
        ...standardErrors,
        404: notFound,
        410: gone,
      },
      handler: async (c, { params }) => {
        const orgId = c.get("auth").organizationId;
        // A form the read cache holds is answered without waiting on anything.
        const cached = isUuid(params.id) ? peekForm(deps.store, params.id.toLowerCase()) : undefined;
        const form = cached
          ? owned(cached, orgId)
          : await loadOwnedForm(deps, orgId, params.id, { cached: true });
        if (answerNeedsSales(form))
          return c.json(toFull(config.publicUrl, form, await salesOf(deps.store.db, form)));
        return answer(c, 200, answers.json(form), JSON_TYPE);
      },
    }),

    ...(["put", "patch"] as const).map((method) =>
      defineRoute({
        method,
        path: "/v1/forms/{id}",
        operationId: method === "put" ? "updateForm" : "patchForm",
        permission: "forms:write",
        tags: ["Forms"],
        summary: method === "put" ? "Update a form (partial)" : "Update a form (alias of PUT)",
        description:
          "Changes only the fields sent; the merged form is validated by the create rules. Arrays (funds, tickets, ...) are replaced whole. Sales are counted by name: a ticket type, sponsorship option or promo code that has sales (or seats held by checkouts in progress) cannot be renamed or removed, nor its `quantity` lowered below them (409, nothing written): add a new one instead, and set the old one's `quantity` to what it sold to stop its sales.",
        params: idParams,
        body: z.record(z.string(), z.unknown()),
        bodyDoc: formUpdateShape,
        rules: FORM_RULES,
        responses: {
          200: {
            description: "Updated",
            schema: z.object({ message: z.string(), form: formFullSchema }),
          },
          ...standardErrors,
          404: notFound,
          409: updateConflict,
          410: gone,
        },
        handler: async (c, { params, body }) => {
          const { organizationId: orgId, actor } = c.get("auth");
          const existing = await loadOwnedForm(deps, orgId, params.id);
          if (Object.keys(body).length === 0)
            throw ApiError.validation(["body must contain at least one form field to change"]);
          const next = parseWith(schema, mergeFormUpdate(existing, body));
          // Custom inputs keep their ids across updates when the client sends them back without one.
          next.customInputs = next.customInputs.map((input, i) => {
            const sent = Array.isArray(body.customInputs)
              ? (body.customInputs[i] as { id?: unknown })
              : undefined;
            if (sent && sent.id === undefined) {
              const same = existing.config.customInputs.find((e) => e.title === input.title);
              if (same) return { ...input, id: same.id };
            }
            return input;
          });
          await checkPageSize(deps, orgId, existing.id, next);
          const nowMs = deps.now();
          let full: ReturnType<typeof toFull>;
          try {
            // A write transaction from its first statement (SQLite: `begin immediate`): it reads before it
            // writes, and on SQLite a transaction that only read could not become a write once another
            // process had written in between.
            full = await deps.store.transact(async (trx) => {
              // The form as it stands, locked: checkouts wait to take stock until this commits, and
              // what they took before is counted here.
              const current = await lockLiveForm(trx, existing.id);
              if (!current) throw new ApiError(410, "Form has been deleted");
              const problems = salesConflicts(current.config, next, await stockTaken(trx, current));
              if (problems.length) throw salesConflict(problems);
              // Later than the version a checkout priced, even within one millisecond: checkouts tell a
              // changed form by it (inventory.ts).
              const now = isoAt(Math.max(nowMs, Date.parse(current.updatedAt) + 1));
              if (!(await updateFormConfig(trx, existing.id, next, now)))
                throw new ApiError(410, "Form has been deleted");
              const form = { ...existing, config: next, updatedAt: now };
              const updated = toFull(config.publicUrl, form, await salesOf(trx, form));
              await emitEvent(trx, orgId, "form.updated", form.id, updated, nowMs);
              // The top-level fields that changed, as the form is read and sent.
              await recordChange(
                trx,
                {
                  organizationId: orgId,
                  actor,
                  action: "form.updated",
                  subjectType: "form",
                  subjectId: form.id,
                  before: toInput(existing),
                  after: toInput(form),
                },
                nowMs,
              );
              return updated;
            });
          } catch (err) {
            if (isUniqueViolation(err)) throw duplicateTitle(next.title);
            throw err;
          }
          return c.json({ message: "Form updated successfully", form: full });
        },
      }),
    ),

    defineRoute({
      method: "delete",
      path: "/v1/forms/{id}",
      operationId: "deleteForm",
      permission: "forms:write",
      tags: ["Forms"],
      summary: "Delete a form (soft)",
      description: "The form leaves list results, its reads and hosted pages answer 410; the record is kept.",
      params: idParams,
      responses: {
        200: { description: "Deleted", schema: z.object({ message: z.string(), formID: z.string() }) },
        ...standardErrors,
        404: notFound,
        410: { description: "Already deleted", schema: errorSchema },
      },
      handler: async (c, { params }) => {
        const { organizationId: orgId, actor } = c.get("auth");
        const form = isUuid(params.id) ? await findForm(deps.store.db, params.id.toLowerCase()) : undefined;
        if (!form) throw new ApiError(404, "Form not found");
        if (form.organizationId !== orgId) throw new ApiError(403, "Form belongs to another organization");
        const nowMs = deps.now();
        await deps.store.db.transaction().execute(async (trx) => {
          if (!(await softDeleteForm(trx, form.id, isoAt(nowMs))))
            throw new ApiError(410, "Form has already been deleted");
          await recordAudit(
            trx,
            {
              organizationId: orgId,
              actor,
              action: "form.deleted",
              subjectType: "form",
              subjectId: form.id,
              before: { title: form.config.title, deletedAt: null },
              after: { deletedAt: wireTime(isoAt(nowMs)) },
            },
            nowMs,
          );
        });
        return c.json({ message: "Form deleted successfully", formID: form.id });
      },
    }),
  ];
}

/** Tickets sold and promo redemptions, read only for forms that have either. */
async function salesOf(db: Db, form: FormRecord): Promise<FormSales | undefined> {
  if (!answerNeedsSales(form)) return undefined;
  const a = await formAvailability(db, form.id);
  return { ticketsSold: a.ticketsSold, promoRedemptions: a.promoRedemptions };
}

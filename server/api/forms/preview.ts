import { z } from "zod";
import { NO_SALES } from "../../../shared/pricing/availability.js";
import { formChangesShape, formInputShape, formSchema } from "../../../shared/schemas/form.js";
import { publicFormViewSchema } from "../../../shared/schemas/publicForm.js";
import { isoAt } from "../../../shared/time.js";
import { publicFormView } from "../../checkout/publicView.js";
import { ApiError } from "../../errors.js";
import { messagesFor } from "../../i18n.js";
import type { FormRecord } from "../../store/forms.js";
import { stockTaken } from "../../store/inventory.js";
import { getOrganization } from "../../store/organizations.js";
import type { AppDeps } from "../env.js";
import { defineRoute, errorSchema, pathId, type RouteSpec, standardErrors } from "../route.js";
import { parseWith } from "../validate.js";
import { mergeFormUpdate } from "./merge.js";
import { toInput } from "./present.js";
import { FORM_RULES } from "./rules.js";
import { salesConflict, salesConflicts } from "./sales.js";

/**
 * The dashboard's form editor asks what a draft would look like before it is saved: the draft is checked by
 * the very schema `POST /v1/forms` and `PUT /v1/forms/{id}` use (so each problem is the same 400 detail the
 * save would give), and the answer is the public view the checkout renders (`GET /api/forms/{id}`), which the
 * editor hands to the checkout's own components. Nothing is written.
 */

/** The id a new form's preview is shown under (no form has it: ids are random UUID v4). */
export const PREVIEW_FORM_ID = "00000000-0000-4000-8000-000000000000";

const previewSchema = z.object({
  view: publicFormViewSchema.meta({ description: "What the checkout would show (as GET /api/forms/{id})" }),
  language: z.string().meta({ description: "The organization's language, the checkout's" }),
  messages: z.record(z.string(), z.unknown()).meta({
    description: "The checkout's compiled messages in that language, as the hosted page sends them",
  }),
  input: z.record(z.string(), z.unknown()).meta({
    description: "The whole form as POST /v1/forms takes it: the draft's fields over the stored form",
  }),
});

const idParams = z.object({ id: pathId("The form's formID (UUID)") });

export function formPreviewRoutes(
  deps: AppDeps,
  loadOwnedForm: (orgId: string, id: string) => Promise<FormRecord>,
) {
  const schema = formSchema({ allowHttpImages: !deps.config.production });
  const db = deps.store.db;

  async function preview(orgId: string, form: FormRecord, input: Record<string, unknown>, sold: boolean) {
    const org = await getOrganization(db, orgId);
    if (!org) throw new ApiError(401, "Invalid API key");
    const view = await publicFormView(
      db,
      { form, org },
      sold ? await stockTaken(db, form) : NO_SALES,
      null,
      null,
    );
    return { view, language: org.language, messages: messagesFor(org.language, "checkout."), input };
  }

  const routes: RouteSpec[] = [
    defineRoute({
      method: "post",
      path: "/v1/forms/preview",
      operationId: "previewNewForm",
      permission: "forms:read",
      idempotent: false,
      tags: ["Forms"],
      summary: "Preview a new form without saving it",
      description:
        "The body is what `POST /v1/forms` takes; it is checked by the same rules (a 400 lists every problem, as the save would) and nothing is saved. The answer is the checkout's view of the form, as `GET /api/forms/{id}` would give it once created.",
      body: z.record(z.string(), z.unknown()),
      bodyDoc: formInputShape,
      rules: FORM_RULES,
      responses: { 200: { description: "The preview", schema: previewSchema }, ...standardErrors },
      handler: async (c, { body }) => {
        const orgId = c.get("auth").organizationId;
        const config = parseWith(schema, body);
        const now = isoAt(deps.now());
        const form: FormRecord = {
          id: PREVIEW_FORM_ID,
          organizationId: orgId,
          config,
          createdAt: now,
          updatedAt: now,
          deletedAt: null,
        };
        return c.json(await preview(orgId, form, toInput(form), false), 200, { "Cache-Control": "no-store" });
      },
    }),
    defineRoute({
      method: "post",
      path: "/v1/forms/{id}/preview",
      operationId: "previewFormChanges",
      permission: "forms:read",
      idempotent: false,
      tags: ["Forms"],
      summary: "Preview changes to a form without saving them",
      description:
        "The body is what `PUT /v1/forms/{id}` takes (only the fields to change; `{}` previews the form as it is); it is merged and checked as the update would be (a 400, or the 409 of a change that would undo sales), and nothing is saved. The answer is the checkout's view of the changed form, with what is already sold, and the whole form as `POST /v1/forms` takes it (the editor's starting point, and a duplicate's body).",
      params: idParams,
      body: z.record(z.string(), z.unknown()),
      bodyDoc: formChangesShape,
      rules: FORM_RULES,
      responses: {
        200: { description: "The preview", schema: previewSchema },
        ...standardErrors,
        404: { description: "No such form", schema: errorSchema },
        409: {
          description:
            "The changes would undo sales, as `PUT /v1/forms/{id}` would refuse them: a ticket type, sponsorship option or promo code with sales renamed or removed, or a `quantity` lowered below them (`details` lists each)",
          schema: errorSchema,
        },
        410: { description: "The form was deleted", schema: errorSchema },
      },
      handler: async (c, { params, body }) => {
        const orgId = c.get("auth").organizationId;
        const existing = await loadOwnedForm(orgId, params.id);
        const merged = mergeFormUpdate(existing, body);
        const config = parseWith(schema, merged);
        // What the save would refuse for what is sold: the same 409 (nothing locked: the save checks again).
        const problems = salesConflicts(existing.config, config, await stockTaken(db, existing));
        if (problems.length) throw salesConflict(problems);
        const form: FormRecord = { ...existing, config };
        return c.json(await preview(orgId, form, toInput(form), true), 200, { "Cache-Control": "no-store" });
      },
    }),
  ];
  return routes;
}

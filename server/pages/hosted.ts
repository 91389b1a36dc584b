import type { Context } from "hono";
import type { AppDeps, AppEnv } from "../api/env.js";
import { escapeHtml } from "../api/forms/present.js";
import { isUuid } from "../ids.js";
import { findForm } from "../store/forms.js";
import { page } from "./layout.js";

/**
 * The hosted form page. For now it tells the donor what the form is and whether it is open; the
 * interactive checkout is not built yet.
 */
export async function hostedFormPage(c: Context<AppEnv>, deps: AppDeps, formId: string): Promise<Response> {
  const form = isUuid(formId) ? await findForm(deps.store.db, formId.toLowerCase()) : undefined;
  if (!form) {
    return c.html(
      page({
        title: "Form not found",
        heading: "Form not found",
        body: "<p>There is no form at this address. Check the link you followed.</p>",
      }),
      404,
    );
  }
  if (form.deletedAt) {
    return c.html(
      page({
        title: "Form no longer available",
        heading: "This form is no longer available",
        body: "<p>The organization has removed this form. Contact them for other ways to give.</p>",
      }),
      410,
    );
  }
  const { config } = form;
  const description = config.description ? `<p>${escapeHtml(config.description)}</p>` : "";
  if (!config.active) {
    return c.html(
      page({
        title: config.title,
        heading: config.title,
        color: config.color,
        description: config.description,
        body: `${description}<p role="status"><strong>This form is not accepting ${config.formType === "EVENT" ? "registrations" : "donations"} right now.</strong></p>`,
      }),
    );
  }
  return c.html(
    page({
      title: config.title,
      heading: config.title,
      color: config.color,
      description: config.description,
      body: `${description}<p role="status">Online checkout for this form is not available yet.</p>`,
    }),
  );
}

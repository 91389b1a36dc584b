import { isExpressible } from "../../shared/currency.js";
import { type DonorPrefill, donorPrefill } from "../../shared/prefill.js";
import { isUuid } from "../ids.js";
import type { Db } from "../store/database.js";
import { findForm } from "../store/forms.js";
import { findLink } from "../store/links.js";
import { getOrganization } from "../store/organizations.js";

export type PrefillResolution =
  | { kind: "form-missing" }
  | { kind: "form-deleted" }
  | {
      kind: "ok";
      prefill: DonorPrefill | null;
      reason: "applied" | "no-link" | "unknown-link" | "inactive-link" | "foreign-link";
    };

/**
 * Turns `{formID, elementid}` into the state the donor page starts from. The prefill applies only for an
 * active link of that very form; otherwise the form loads without prefill. A deleted form is gone (410).
 */
export async function resolveElementPrefill(
  db: Db,
  formId: string,
  elementId?: string | null,
): Promise<PrefillResolution> {
  const form = isUuid(formId) ? await findForm(db, formId.toLowerCase()) : undefined;
  if (!form) return { kind: "form-missing" };
  if (form.deletedAt) return { kind: "form-deleted" };
  if (!elementId) return { kind: "ok", prefill: null, reason: "no-link" };
  const link = isUuid(elementId) ? await findLink(db, elementId.toLowerCase()) : undefined;
  if (!link) return { kind: "ok", prefill: null, reason: "unknown-link" };
  if (link.formId !== form.id || link.organizationId !== form.organizationId)
    return { kind: "ok", prefill: null, reason: "foreign-link" };
  if (!link.active) return { kind: "ok", prefill: null, reason: "inactive-link" };
  const org = await getOrganization(db, form.organizationId);
  const prefill = donorPrefill(link.prefill, form.config, org?.globalCustomInputs ?? []);
  // An amount the currency cannot express (a link saved with decimals before the links were held to the
  // currency) would only be refused by the checkout: the donor starts from the form's own amount instead.
  if (org && prefill.amount !== undefined && !isExpressible(prefill.amount, org.currency))
    delete prefill.amount;
  return { kind: "ok", prefill, reason: "applied" };
}

import type { FormRecord } from "../../store/forms.js";
import { toInput } from "./present.js";

/**
 * A form's fields after an update that sends only some of them (PUT/PATCH, and the editor's preview of a
 * draft): the stored form as the API takes it, with the sent fields over it. A new list of frequencies without
 * a default keeps the old default only if it is still offered.
 */
export function mergeFormUpdate(
  existing: FormRecord,
  body: Record<string, unknown>,
): Record<string, unknown> {
  const merged = { ...toInput(existing), ...body };
  if (
    Array.isArray(body.frequencies) &&
    body.defaultFrequency === undefined &&
    !body.frequencies.includes(merged.defaultFrequency)
  )
    delete merged.defaultFrequency;
  return merged;
}

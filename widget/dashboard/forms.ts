import { signal } from "@preact/signals";
import { listPage } from "./api.js";

/** The organization's forms by id and title, read once for the pages that name or filter by a form. */

export interface FormName {
  formID: string;
  title: string;
  formType: string;
}

export const formNames = signal<FormName[] | null>(null);
let loading: Promise<void> | undefined;

/** Loads up to `max` forms (newest first), page by page through the API's cursor. */
export function loadFormNames(max = 200): Promise<void> {
  loading ??= (async () => {
    const all: FormName[] = [];
    let cursor: string | undefined;
    do {
      const page = await listPage<FormName>("/v1/forms", "forms", { limit: 100 }, cursor);
      all.push(...page.items.map((f) => ({ formID: f.formID, title: f.title, formType: f.formType })));
      cursor = page.next;
    } while (cursor && all.length < max);
    formNames.value = all;
  })().catch(() => {
    formNames.value = [];
  });
  return loading;
}

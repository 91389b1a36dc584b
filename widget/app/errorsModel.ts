import { signal } from "@preact/signals";

/** What the donor is told to fix: a message per field id, and one for the whole form. */
export function createErrorsModel() {
  const errors = signal<Record<string, string>>({});
  const formError = signal<string | null>(null);

  function clearError(field: string): void {
    if (errors.value[field] === undefined) return;
    const { [field]: _, ...rest } = errors.value;
    errors.value = rest;
  }

  return { errors, formError, clearError };
}

export type ErrorsModel = ReturnType<typeof createErrorsModel>;

/** A server detail about the promo code ("Promo code … is not valid"): the donor fixes it at the code. */
export const PROMO_CODE_DETAIL = /^Promo code|^promoCode/;

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

/** Server details ("donor.email must be …") tied to the fields they name. */
export function fieldErrors(details: string[]): Record<string, string> {
  const map: [RegExp, string][] = [
    [/^donor\.email/, "email"],
    [/^donor\.firstName/, "firstName"],
    [/^donor\.lastName/, "lastName"],
    [/^donor\.phone/, "phone"],
    [/^paymentMethod\.number|^paymentMethod .*card/i, "cardNumber"],
    [/^paymentMethod\.cvc/, "cardCvc"],
    [/^paymentMethod\.exp/, "cardExp"],
    [/^paymentMethod\.routingNumber/, "routingNumber"],
    [/^paymentMethod\.accountNumber/, "accountNumber"],
    [/^Promo code|^promoCode/, "promoCode"],
    [/^amount/, "customAmount"],
    [/^tickets/, "tickets"],
    [/^product/, "product"],
  ];
  const out: Record<string, string> = {};
  for (const d of details) {
    const hit = map.find(([re]) => re.test(d));
    if (hit && !out[hit[1]]) out[hit[1]] = d;
  }
  return out;
}

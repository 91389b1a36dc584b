import type { FormConfig } from "../schemas/form.js";
import { type Availability, left, productKey, sold } from "./availability.js";
import { isObject, isWholeCents } from "./inputChecks.js";
import { MAX_PRODUCT_QUANTITY } from "./limits.js";
import type { OrderInput } from "./order.js";
import type { Fail, QuoteLine } from "./quote.js";
import { plural } from "./wording.js";

/**
 * The product line of a sponsorship (PRODUCT) order: `product.group`/`product.name` must exist; quantity
 * 1..100 (default 1) and within stock. Null when the product is refused (with the reasons in `fail`).
 */
export function productLine(
  form: FormConfig,
  input: OrderInput,
  availability: Availability,
  fail: Fail,
): QuoteLine | null {
  const product = input.product as unknown;
  if (product === undefined || product === null) {
    fail("product", "required", "product is required on a sponsorship form");
    return null;
  }
  if (!isObject(product)) {
    fail("product", "invalid", "product must be an object {group, name, quantity?}");
    return null;
  }
  const quantity = product.quantity === undefined || product.quantity === null ? 1 : product.quantity;
  let quantityOk = true;
  if (!isWholeCents(quantity) || quantity < 1 || quantity > MAX_PRODUCT_QUANTITY) {
    fail(
      "product.quantity",
      "invalid",
      `product.quantity must be a whole number from 1 to ${MAX_PRODUCT_QUANTITY}`,
    );
    quantityOk = false;
  }
  const group =
    typeof product.group === "string"
      ? form.sponsorshipGroups.find((g) => g.groupTitle === product.group)
      : undefined;
  if (!group) {
    fail(
      "product.group",
      product.group === undefined || product.group === null ? "required" : "unknown",
      `product.group must be one of: ${form.sponsorshipGroups.map((g) => g.groupTitle).join(", ")}`,
    );
    return null;
  }
  const option =
    typeof product.name === "string" ? group.options.find((o) => o.optionTitle === product.name) : undefined;
  if (!option) {
    fail(
      "product.name",
      product.name === undefined || product.name === null ? "required" : "unknown",
      `product.name must be one of the products in "${group.groupTitle}": ${group.options.map((o) => o.optionTitle).join(", ")}`,
    );
    return null;
  }
  if (!quantityOk) return null;
  const qty = quantity as number;
  const remaining = left(
    option.quantity,
    sold(availability.productsSold, productKey(group.groupTitle, option.optionTitle)),
  );
  if (remaining !== null && qty > remaining) {
    fail(
      "product.quantity",
      "sold_out",
      remaining === 0
        ? `"${option.optionTitle}" is sold out`
        : `Only ${remaining} "${option.optionTitle}" ${plural(remaining, "is", "are")} left`,
    );
    return null;
  }
  return {
    kind: "product",
    label: `${option.optionTitle} (${group.groupTitle})`,
    unitCents: option.amount,
    quantity: qty,
    amountCents: option.amount * qty,
  };
}

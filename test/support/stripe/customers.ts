/** Customers and the PaymentMethods saved to them. */

import { invalidParam } from "./errors.js";
import { newId, randomChars } from "./ids.js";
import { addressFrom, page, shippingFrom } from "./objects.js";
import { mergeMetadata, Params } from "./params.js";
import { attachViaApi } from "./payment-methods.js";
import { type Op, previousAttributes, snapshot } from "./state.js";
import type { CustomerObject, PaymentMethodObject } from "./types.js";

function checkEmail(email: string | null | undefined): void {
  if (email && !/^[^\s@]+@[^\s@]+$/.test(email))
    throw invalidParam("email", `Invalid email address: ${email}`);
}

export function createCustomer(op: Op, p: Params): CustomerObject {
  const email = p.strOrNull("email");
  checkEmail(email);
  const customer: CustomerObject = {
    id: newId("cus", 14),
    object: "customer",
    address: addressFrom(p.obj("address")),
    balance: 0,
    created: op.now,
    currency: null,
    customer_account: null,
    default_source: null,
    delinquent: false,
    description: p.strOrNull("description") ?? null,
    discount: null,
    email: email ?? null,
    invoice_prefix: randomChars(8).toUpperCase(),
    invoice_settings: {
      custom_fields: null,
      default_payment_method: null,
      footer: null,
      rendering_options: null,
    },
    livemode: op.livemode,
    metadata: p.metadata() ?? {},
    name: p.strOrNull("name") ?? null,
    next_invoice_sequence: 1,
    phone: p.strOrNull("phone") ?? null,
    preferred_locales: p.list("preferred_locales") ?? [],
    shipping: shippingFrom(p.obj("shipping")),
    tax_exempt: "none",
    test_clock: null,
  };
  op.put("customer", customer);
  op.emit("customer.created", customer);
  const pmId = p.str("payment_method");
  if (pmId) attachViaApi(op, pmId, new Params({ customer: customer.id }));
  const defaultPm = p.obj("invoice_settings")?.str("default_payment_method");
  if (defaultPm) customer.invoice_settings.default_payment_method = defaultPm;
  return customer;
}

export function updateCustomer(op: Op, id: string, p: Params): CustomerObject {
  const record = op.find<CustomerObject>("customer", id);
  const before = snapshot(record.obj);
  const customer = op.modify(record);
  const email = p.strOrNull("email");
  checkEmail(email);
  if (email !== undefined) customer.email = email;
  for (const key of ["name", "description", "phone"] as const) {
    const value = p.strOrNull(key);
    if (value !== undefined) customer[key] = value;
  }
  if (p.has("address")) customer.address = addressFrom(p.obj("address"));
  customer.metadata = mergeMetadata(customer.metadata, p.metadata());
  const settings = p.obj("invoice_settings");
  const defaultPm = settings?.strOrNull("default_payment_method");
  if (defaultPm !== undefined) {
    if (defaultPm) {
      const pm = op.find<PaymentMethodObject>(
        "payment_method",
        defaultPm,
        "invoice_settings[default_payment_method]",
      );
      if (pm.obj.customer !== id)
        throw invalidParam(
          "invoice_settings[default_payment_method]",
          `The customer does not have a payment method with the ID ${defaultPm}. The payment method must be attached to the customer.`,
        );
    }
    customer.invoice_settings.default_payment_method = defaultPm;
  }
  const previous = previousAttributes(before, customer);
  if (Object.keys(previous).length > 0) op.emit("customer.updated", customer, previous);
  return customer;
}

/**
 * Deletes a customer for good, as Stripe's dashboard does: the answer is Stripe's deleted-object stub,
 * the customer's saved payment methods are detached, and a later request naming it gets `resource_missing`.
 */
export function deleteCustomer(op: Op, id: string): Record<string, unknown> {
  const record = op.find<CustomerObject>("customer", id);
  for (const pm of op.all<PaymentMethodObject>("payment_method"))
    if (pm.obj.customer === id) op.modify(pm).customer = null;
  op.remove(id);
  op.emit("customer.deleted", record.obj);
  return { id, object: "customer", deleted: true };
}

export function customerPaymentMethods(op: Op, id: string, p: Params): Record<string, unknown> {
  op.find<CustomerObject>("customer", id);
  const type = p.str("type");
  const items = op
    .all<PaymentMethodObject>("payment_method")
    .map((r) => r.obj)
    .filter((pm) => pm.customer === id && (!type || pm.type === type));
  return page(items, p, `/v1/customers/${id}/payment_methods`);
}

/** Payment method domains: the domains allowed to show Apple Pay / Google Pay / Link. */

import { invalidParam } from "./errors.js";
import { newId } from "./ids.js";
import { page } from "./objects.js";
import type { Params } from "./params.js";
import type { Op } from "./state.js";
import type { StripeObject } from "./types.js";

export interface PaymentMethodDomainObject extends StripeObject {
  object: "payment_method_domain";
  domain_name: string;
  enabled: boolean;
}

const ACTIVE = { status: "active" };

export function createPaymentMethodDomain(op: Op, p: Params): PaymentMethodDomainObject {
  const domain = p.reqStr("domain_name").toLowerCase();
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(domain))
    throw invalidParam(
      "domain_name",
      `Invalid domain name: ${domain}. Pass a bare domain such as example.com.`,
    );
  const existing = op
    .all<PaymentMethodDomainObject>("payment_method_domain")
    .find((r) => r.obj.domain_name === domain);
  if (existing) return existing.obj;
  const pmd: PaymentMethodDomainObject = {
    id: newId("pmd"),
    object: "payment_method_domain",
    amazon_pay: { ...ACTIVE },
    apple_pay: { ...ACTIVE },
    created: op.now,
    domain_name: domain,
    enabled: p.bool("enabled") ?? true,
    google_pay: { ...ACTIVE },
    klarna: { ...ACTIVE },
    link: { ...ACTIVE },
    livemode: op.livemode,
    paypal: { ...ACTIVE },
  };
  op.put("payment_method_domain", pmd);
  return pmd;
}

export function listPaymentMethodDomains(op: Op, p: Params): Record<string, unknown> {
  const domain = p.str("domain_name")?.toLowerCase();
  const enabled = p.bool("enabled");
  const items = op
    .all<PaymentMethodDomainObject>("payment_method_domain")
    .map((r) => r.obj)
    .filter((d) => (!domain || d.domain_name === domain) && (enabled === undefined || d.enabled === enabled));
  return page(items, p, "/v1/payment_method_domains");
}

export function updatePaymentMethodDomain(op: Op, id: string, p: Params): PaymentMethodDomainObject {
  const record = op.find<PaymentMethodDomainObject>("payment_method_domain", id);
  const pmd = op.modify(record);
  const enabled = p.bool("enabled");
  if (enabled !== undefined) pmd.enabled = enabled;
  return pmd;
}

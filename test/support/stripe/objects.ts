/** Builders for Stripe's object shapes, list envelopes, `expand[]`, and the publishable-key view of intents. */

import { invalidRequest } from "./errors.js";
import { newId } from "./ids.js";
import type { Params } from "./params.js";
import { type Op, snapshot } from "./state.js";
import type { Address, BillingDetails, EmulatorAccount, Kind, RefundObject } from "./types.js";

export function emptyAddress(): Address {
  return { city: null, country: null, line1: null, line2: null, postal_code: null, state: null };
}

export function addressFrom(p: Params | undefined): Address | null {
  if (!p) return null;
  return {
    city: p.strOrNull("city") ?? null,
    country: p.strOrNull("country") ?? null,
    line1: p.strOrNull("line1") ?? null,
    line2: p.strOrNull("line2") ?? null,
    postal_code: p.strOrNull("postal_code") ?? null,
    state: p.strOrNull("state") ?? null,
  };
}

export function billingDetailsFrom(p: Params | undefined): BillingDetails {
  return {
    address: addressFrom(p?.obj("address")) ?? emptyAddress(),
    email: p?.strOrNull("email") ?? null,
    name: p?.strOrNull("name") ?? null,
    phone: p?.strOrNull("phone") ?? null,
    tax_id: p?.strOrNull("tax_id") ?? null,
  };
}

export function shippingFrom(p: Params | undefined): Record<string, unknown> | null {
  if (!p) return null;
  return {
    address: addressFrom(p.obj("address")) ?? emptyAddress(),
    carrier: p.strOrNull("carrier") ?? null,
    name: p.strOrNull("name") ?? null,
    phone: p.strOrNull("phone") ?? null,
    tracking_number: p.strOrNull("tracking_number") ?? null,
  };
}

export function listOf(data: unknown[], url: string, limit?: number): Record<string, unknown> {
  const max = Math.min(Math.max(limit ?? 10, 1), 100);
  return { object: "list", data: data.slice(0, max), has_more: data.length > max, url };
}

/** Newest first, like Stripe's list endpoints; `starting_after` / `ending_before` by id. */
export function page<T extends { id: string; created: number }>(items: T[], p: Params, url: string) {
  let sorted = [...items].reverse();
  const after = p.str("starting_after");
  const before = p.str("ending_before");
  if (after) {
    const i = sorted.findIndex((x) => x.id === after);
    sorted = i === -1 ? [] : sorted.slice(i + 1);
  }
  if (before) {
    const i = sorted.findIndex((x) => x.id === before);
    sorted = i === -1 ? [] : sorted.slice(0, i);
  }
  return listOf(snapshot(sorted), url, p.int("limit"));
}

export function accountObject(account: EmulatorAccount): Record<string, unknown> {
  const capability = account.chargesEnabled ? "active" : "inactive";
  return {
    id: account.id,
    object: "account",
    business_profile: {
      annual_revenue: null,
      estimated_worker_count: null,
      mcc: "8398",
      minority_owned_business_designation: null,
      name: account.businessName,
      product_description: null,
      support_address: null,
      support_email: account.email,
      support_phone: null,
      support_url: null,
      url: null,
    },
    business_type: "non_profit",
    capabilities: {
      card_payments: capability,
      link_payments: capability,
      transfers: capability,
      us_bank_account_ach_payments: capability,
    },
    charges_enabled: account.chargesEnabled,
    controller: { type: "account" },
    country: account.country,
    created: account.created,
    default_currency: account.defaultCurrency,
    details_submitted: account.detailsSubmitted,
    email: account.email,
    metadata: {},
    payouts_enabled: account.payoutsEnabled,
    settings: {
      bacs_debit_payments: { display_name: null, service_user_number: null },
      branding: { icon: null, logo: null, primary_color: null, secondary_color: null },
      card_issuing: { tos_acceptance: { date: null, ip: null } },
      card_payments: {
        decline_on: { avs_failure: false, cvc_failure: false },
        statement_descriptor_prefix: null,
        statement_descriptor_prefix_kana: null,
        statement_descriptor_prefix_kanji: null,
      },
      dashboard: { display_name: account.displayName, timezone: "Etc/UTC" },
      invoices: { default_account_tax_ids: null, hosted_payment_method_save: "always" },
      payments: {
        statement_descriptor: account.statementDescriptor,
        statement_descriptor_kana: null,
        statement_descriptor_kanji: null,
      },
      payouts: {
        debit_negative_balances: true,
        schedule: { delay_days: 2, interval: "daily" },
        statement_descriptor: null,
      },
      sepa_debit_payments: {},
    },
    tos_acceptance: { date: account.created, ip: null, user_agent: null },
    type: "standard",
  };
}

/** Which id-valued fields `expand[]` may replace with the object, per object type. */
const EXPANDABLE: Record<string, Record<string, Kind>> = {
  payment_intent: { latest_charge: "charge", payment_method: "payment_method", customer: "customer" },
  setup_intent: { payment_method: "payment_method", customer: "customer" },
  charge: { payment_intent: "payment_intent", customer: "customer" },
  refund: { charge: "charge", payment_intent: "payment_intent" },
  dispute: { charge: "charge", payment_intent: "payment_intent" },
  payment_method: { customer: "customer" },
  confirmation_token: { payment_intent: "payment_intent", setup_intent: "setup_intent" },
  customer: {},
};

export function refundsList(op: Op, chargeId: string): Record<string, unknown> {
  const refunds = op
    .all<RefundObject>("refund")
    .map((r) => r.obj)
    .filter((r) => r.charge === chargeId)
    .reverse();
  return {
    ...listOf(snapshot(refunds), `/v1/charges/${chargeId}/refunds`, 100),
    total_count: refunds.length,
  };
}

function expandPath(op: Op, target: unknown, segments: string[], fullPath: string): void {
  if (!target || typeof target !== "object") return;
  const obj = target as Record<string, unknown>;
  const [first, ...rest] = segments;
  if (obj.object === "list" && first === "data") {
    for (const item of (obj.data as unknown[]) ?? []) expandPath(op, item, rest, fullPath);
    return;
  }
  if (obj.object === "charge" && first === "refunds") {
    obj.refunds = refundsList(op, String(obj.id));
    if (rest.length) expandPath(op, obj.refunds, rest, fullPath);
    return;
  }
  const kind = EXPANDABLE[String(obj.object)]?.[first];
  if (!kind) throw invalidRequest(`This property cannot be expanded (${fullPath}).`, { param: "expand" });
  const value = obj[first];
  if (typeof value === "string") {
    const record = op.findOptional(kind, value);
    if (record) obj[first] = snapshot(record.obj);
  }
  if (rest.length) expandPath(op, obj[first], rest, fullPath);
}

/** Applies `expand[]` paths (`latest_charge`, `latest_charge.refunds`, `data.payment_method`) to a snapshot. */
export function expand(op: Op, value: unknown, paths: string[]): unknown {
  for (const path of paths) expandPath(op, value, path.split("."), path);
  return value;
}

/** What a publishable key (Stripe.js with the client secret) may see of a PaymentIntent or SetupIntent. */
export function publishableView(obj: Record<string, unknown>): Record<string, unknown> {
  const out = { ...obj };
  for (const key of [
    "metadata",
    "customer",
    "latest_charge",
    "application",
    "application_fee_amount",
    "on_behalf_of",
    "transfer_data",
    "transfer_group",
    "statement_descriptor",
    "statement_descriptor_suffix",
    "review",
    "amount_received",
    "mandate",
    "latest_attempt",
    "single_use_mandate",
    "flow_directions",
  ]) {
    delete out[key];
  }
  return out;
}

export function balanceTransactionId(): string {
  return newId("txn");
}

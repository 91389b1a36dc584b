/** The `/v1` endpoints: which key may call each, and the operation behind it. */

import { createConfirmationToken } from "./confirmation-tokens.js";
import { createCustomer, customerPaymentMethods, deleteCustomer, updateCustomer } from "./customers.js";
import { closeDispute, listDisputes, updateDisputeViaApi } from "./disputes.js";
import { resourceMissing } from "./errors.js";
import { accountObject, page, publishableView } from "./objects.js";
import type { Params } from "./params.js";
import {
  cancelPaymentIntent,
  checkClientSecret,
  confirmPaymentIntent,
  createPaymentIntent,
  retrievePaymentIntent,
  updatePaymentIntent,
  verifyPaymentIntentMicrodeposits,
} from "./payment-intents.js";
import {
  createPaymentMethodDomain,
  listPaymentMethodDomains,
  type PaymentMethodDomainObject,
  updatePaymentMethodDomain,
} from "./payment-method-domains.js";
import { attachViaApi, detachViaApi } from "./payment-methods.js";
import { createRefund, listRefunds, retrieveRefund, updateRefund } from "./refunds.js";
import {
  cancelSetupIntent,
  confirmSetupIntent,
  createSetupIntent,
  retrieveSetupIntent,
  updateSetupIntent,
  verifySetupIntentMicrodeposits,
} from "./setup-intents.js";
import type { KeyInfo, Op } from "./state.js";
import type {
  ChargeObject,
  ConfirmationTokenObject,
  CustomerObject,
  DisputeObject,
  EventObject,
  PaymentIntentObject,
  PaymentMethodObject,
} from "./types.js";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookEndpoints,
  retrieveWebhookEndpoint,
  updateWebhookEndpoint,
} from "./webhook-endpoints.js";

export interface RouteContext {
  op: Op;
  params: Params;
  path: Record<string, string>;
  keyKind: KeyInfo["kind"];
  userAgent: string | null;
}

export interface Route {
  method: "GET" | "POST" | "DELETE";
  pattern: RegExp;
  names: string[];
  /** Publishable keys may call it (Stripe.js); otherwise secret and restricted keys only. */
  browser: boolean;
  handle(ctx: RouteContext): unknown;
}

function route(
  method: Route["method"],
  path: string,
  handle: Route["handle"],
  opts: { browser?: boolean } = {},
): Route {
  const names: string[] = [];
  const source = path.replace(/:([a-z_]+)/g, (_m, name: string) => {
    names.push(name);
    return "([^/]+)";
  });
  return { method, pattern: new RegExp(`^${source}$`), names, browser: opts.browser === true, handle };
}

const browserView = (
  ctx: RouteContext,
  obj: PaymentIntentObject | { client_secret: string },
  kind: "PaymentIntent" | "SetupIntent",
) => {
  if (ctx.keyKind !== "publishable") return obj;
  checkClientSecret(obj, ctx.params, kind);
  return publishableView(obj as Record<string, unknown>);
};

export const ROUTES: Route[] = [
  route("GET", "/v1/account", ({ op }) => accountObject(op.account)),
  route("GET", "/v1/accounts/:id", ({ op, path }) => {
    if (path.id !== op.account.id) throw resourceMissing("account", path.id, "account");
    return accountObject(op.account);
  }),

  route("POST", "/v1/webhook_endpoints", ({ op, params }) => createWebhookEndpoint(op, params)),
  route("GET", "/v1/webhook_endpoints", ({ op, params }) => listWebhookEndpoints(op, params)),
  route("GET", "/v1/webhook_endpoints/:id", ({ op, path }) => retrieveWebhookEndpoint(op, path.id)),
  route("POST", "/v1/webhook_endpoints/:id", ({ op, path, params }) =>
    updateWebhookEndpoint(op, path.id, params),
  ),
  route("DELETE", "/v1/webhook_endpoints/:id", ({ op, path }) => deleteWebhookEndpoint(op, path.id)),

  route("POST", "/v1/payment_method_domains", ({ op, params }) => createPaymentMethodDomain(op, params)),
  route("GET", "/v1/payment_method_domains", ({ op, params }) => listPaymentMethodDomains(op, params)),
  route(
    "GET",
    "/v1/payment_method_domains/:id",
    ({ op, path }) => op.find<PaymentMethodDomainObject>("payment_method_domain", path.id).obj,
  ),
  route("POST", "/v1/payment_method_domains/:id", ({ op, path, params }) =>
    updatePaymentMethodDomain(op, path.id, params),
  ),
  route(
    "POST",
    "/v1/payment_method_domains/:id/validate",
    ({ op, path }) => op.find<PaymentMethodDomainObject>("payment_method_domain", path.id).obj,
  ),

  route("POST", "/v1/customers", ({ op, params }) => createCustomer(op, params)),
  route("GET", "/v1/customers/:id", ({ op, path }) => op.find<CustomerObject>("customer", path.id).obj),
  route("POST", "/v1/customers/:id", ({ op, path, params }) => updateCustomer(op, path.id, params)),
  route("DELETE", "/v1/customers/:id", ({ op, path }) => deleteCustomer(op, path.id)),
  route("GET", "/v1/customers/:id/payment_methods", ({ op, path, params }) =>
    customerPaymentMethods(op, path.id, params),
  ),

  route(
    "POST",
    "/v1/confirmation_tokens",
    ({ op, params, userAgent }) => createConfirmationToken(op, params, userAgent),
    {
      browser: true,
    },
  ),
  route("POST", "/v1/test_helpers/confirmation_tokens", ({ op, params, userAgent }) =>
    createConfirmationToken(op, params, userAgent),
  ),
  route(
    "GET",
    "/v1/confirmation_tokens/:id",
    ({ op, path }) =>
      op.find<ConfirmationTokenObject>("confirmation_token", path.id, "confirmation_token").obj,
  ),

  route("POST", "/v1/payment_intents", ({ op, params }) => createPaymentIntent(op, params)),
  route("GET", "/v1/payment_intents", ({ op, params }) => {
    const customer = params.str("customer");
    const items = op
      .all<PaymentIntentObject>("payment_intent")
      .map((r) => r.obj)
      .filter((pi) => !customer || pi.customer === customer);
    return page(items, params, "/v1/payment_intents");
  }),
  route(
    "GET",
    "/v1/payment_intents/:id",
    (ctx) => browserView(ctx, retrievePaymentIntent(ctx.op, ctx.path.id).obj, "PaymentIntent"),
    { browser: true },
  ),
  route("POST", "/v1/payment_intents/:id", ({ op, path, params }) =>
    updatePaymentIntent(op, path.id, params),
  ),
  route("POST", "/v1/payment_intents/:id/confirm", ({ op, path, params }) => {
    const record = retrievePaymentIntent(op, path.id);
    confirmPaymentIntent(op, record, params);
    return record.obj;
  }),
  route("POST", "/v1/payment_intents/:id/cancel", ({ op, path, params }) =>
    cancelPaymentIntent(op, path.id, params),
  ),
  route(
    "POST",
    "/v1/payment_intents/:id/verify_microdeposits",
    (ctx) => {
      const pi = retrievePaymentIntent(ctx.op, ctx.path.id).obj;
      if (ctx.keyKind === "publishable") checkClientSecret(pi, ctx.params, "PaymentIntent");
      const result = verifyPaymentIntentMicrodeposits(ctx.op, ctx.path.id, ctx.params);
      return ctx.keyKind === "publishable" ? publishableView(result) : result;
    },
    { browser: true },
  ),

  route(
    "GET",
    "/v1/payment_methods/:id",
    ({ op, path }) => op.find<PaymentMethodObject>("payment_method", path.id).obj,
  ),
  route("POST", "/v1/payment_methods/:id/attach", ({ op, path, params }) =>
    attachViaApi(op, path.id, params),
  ),
  route("POST", "/v1/payment_methods/:id/detach", ({ op, path }) => detachViaApi(op, path.id)),

  route("POST", "/v1/setup_intents", ({ op, params }) => createSetupIntent(op, params)),
  route(
    "GET",
    "/v1/setup_intents/:id",
    (ctx) => browserView(ctx, retrieveSetupIntent(ctx.op, ctx.path.id).obj, "SetupIntent"),
    { browser: true },
  ),
  route("POST", "/v1/setup_intents/:id", ({ op, path, params }) => updateSetupIntent(op, path.id, params)),
  route("POST", "/v1/setup_intents/:id/confirm", ({ op, path, params }) => {
    const record = retrieveSetupIntent(op, path.id);
    confirmSetupIntent(op, record, params);
    return record.obj;
  }),
  route("POST", "/v1/setup_intents/:id/cancel", ({ op, path, params }) =>
    cancelSetupIntent(op, path.id, params),
  ),
  route(
    "POST",
    "/v1/setup_intents/:id/verify_microdeposits",
    (ctx) => {
      const si = retrieveSetupIntent(ctx.op, ctx.path.id).obj;
      if (ctx.keyKind === "publishable") checkClientSecret(si, ctx.params, "SetupIntent");
      const result = verifySetupIntentMicrodeposits(ctx.op, ctx.path.id, ctx.params);
      return ctx.keyKind === "publishable" ? publishableView(result) : result;
    },
    { browser: true },
  ),

  route("GET", "/v1/charges/:id", ({ op, path }) => op.find<ChargeObject>("charge", path.id, "charge").obj),
  route("GET", "/v1/charges", ({ op, params }) => {
    const pi = params.str("payment_intent");
    const customer = params.str("customer");
    const items = op
      .all<ChargeObject>("charge")
      .map((r) => r.obj)
      .filter((c) => (!pi || c.payment_intent === pi) && (!customer || c.customer === customer));
    return page(items, params, "/v1/charges");
  }),

  route("POST", "/v1/refunds", ({ op, params }) => createRefund(op, params)),
  route("GET", "/v1/refunds", ({ op, params }) => listRefunds(op, params)),
  route("GET", "/v1/refunds/:id", ({ op, path }) => retrieveRefund(op, path.id)),
  route("POST", "/v1/refunds/:id", ({ op, path, params }) => updateRefund(op, path.id, params)),

  route("GET", "/v1/disputes", ({ op, params }) => listDisputes(op, params)),
  route(
    "GET",
    "/v1/disputes/:id",
    ({ op, path }) => op.find<DisputeObject>("dispute", path.id, "dispute").obj,
  ),
  route("POST", "/v1/disputes/:id", ({ op, path, params }) => updateDisputeViaApi(op, path.id, params)),
  route("POST", "/v1/disputes/:id/close", ({ op, path }) => {
    op.find<DisputeObject>("dispute", path.id, "dispute");
    return closeDispute(op, path.id, "lost");
  }),

  route("GET", "/v1/events", ({ op, params }) => {
    const type = params.str("type");
    const types = params.list("types");
    const items = op
      .all<EventObject>("event")
      .map((r) => r.obj)
      .filter((e) => (!type || matchesType(type, e.type)) && (!types || types.includes(e.type)));
    return page(items, params, "/v1/events");
  }),
  route("GET", "/v1/events/:id", ({ op, path }) => op.find<EventObject>("event", path.id).obj),
];

function matchesType(pattern: string, type: string): boolean {
  if (!pattern.includes("*")) return pattern === type;
  return type.startsWith(pattern.slice(0, pattern.indexOf("*")));
}

export function matchRoute(
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } | "method" | null {
  let pathMatched = false;
  for (const r of ROUTES) {
    const m = r.pattern.exec(path);
    if (!m) continue;
    pathMatched = true;
    if (r.method !== method) continue;
    const params: Record<string, string> = {};
    r.names.forEach((name, i) => {
      params[name] = decodeURIComponent(m[i + 1]);
    });
    return { route: r, params };
  }
  return pathMatched ? "method" : null;
}

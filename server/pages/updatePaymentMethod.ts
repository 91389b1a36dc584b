import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { formatDollars } from "../../shared/money.js";
import type { UpdateLinkMethod } from "../../shared/schemas/subscription.js";
import type { AppDeps, AppEnv } from "../api/env.js";
import { escapeHtml } from "../api/forms/present.js";
import { UPDATE_PAGE_PATH } from "../api/subscriptions.js";
import { ApiError } from "../errors.js";
import { sha256Hex } from "../ids.js";
import type { PaymentMethod, PaymentMethodInput } from "../processors/port.js";
import { emitEvent } from "../store/events.js";
import { getOrganization, type Organization } from "../store/organizations.js";
import type { PaymentMethodUpdateLinksTable, SubscriptionsTable } from "../store/schema.js";
import {
  consumeUpdateLink,
  countUpdateLinkFailure,
  findSubscription,
  findUpdateLinkByHash,
  presentSubscription,
  setSubscriptionPaymentMethod,
} from "../store/subscriptions.js";
import { page } from "./layout.js";

/**
 * The hosted "update your payment method" page of a subscription (contract 7). The link's token is the
 * only credential, so the page shows nothing beyond what the donor needs to recognise the gift
 * (organization, amount, frequency, current method's brand and last 4). Card and bank details go to the
 * processor only; the subscription keeps the reusable token it returns. The link is single-use: using it
 * and replacing the method happen in one transaction. Refused details do not use it up, but a few of
 * them end it (so it cannot be used to test cards).
 */

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const MAX_FAILED_ATTEMPTS = 5;
const MAX_BODY_BYTES = 16 * 1024;

const FREQUENCY_WORDS: Record<string, string> = {
  DAILY: "every day",
  WEEKLY: "every week",
  MONTHLY: "every month",
  ANNUALLY: "every year",
};

const BRAND_NAMES: Record<string, string> = {
  visa: "Visa",
  mastercard: "Mastercard",
  amex: "American Express",
  discover: "Discover",
};

const SECURITY_HEADERS = {
  "Cache-Control": "no-store",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy":
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

type Html = { status: 200 | 404 | 410 | 422 | 503; html: string };

function html(c: Context<AppEnv>, out: Html): Response {
  return c.html(out.html, out.status, SECURITY_HEADERS);
}

const notFound = (): Html => ({
  status: 404,
  html: page({
    title: "Link not valid",
    heading: "This link is not valid",
    body: "<p>Check that you opened the whole link from your message, or ask the organization for a new one.</p>",
  }),
});

const ended = (why: string): Html => ({
  status: 410,
  html: page({
    title: "Link no longer valid",
    heading: "This link can no longer be used",
    body: `<p>${escapeHtml(why)}</p><p>Ask the organization for a new link if you still need to update your payment method.</p>`,
  }),
});

interface Loaded {
  link: PaymentMethodUpdateLinksTable;
  sub: SubscriptionsTable;
  org: Organization;
  orgName: string;
}

/** The link behind a token, if it can still be used; else the page to show. */
async function load(deps: AppDeps, token: string): Promise<Loaded | Html> {
  if (!TOKEN.test(token)) return notFound();
  const db = deps.store.db;
  const link = await findUpdateLinkByHash(db, sha256Hex(token));
  if (!link) return notFound();
  if (link.used_at) return ended("This link has already been used to update the payment method.");
  if (link.expires_at <= new Date(deps.now()).toISOString()) return ended("This link has expired.");
  if (link.failed_attempts >= MAX_FAILED_ATTEMPTS)
    return ended("Too many payment methods were refused on this link.");
  const sub = await findSubscription(db, link.subscription_id);
  if (sub?.status !== "ACTIVE") return ended("This recurring gift is no longer active.");
  const org = await getOrganization(db, link.organization_id);
  if (!org) return notFound();
  return { link, sub, org, orgName: org.name };
}

function describeMethod(
  sub: Pick<SubscriptionsTable, "payment_method_type" | "card_brand" | "last4">,
): string {
  if (sub.payment_method_type === "bank") return `Bank account ending ${sub.last4 ?? ""}`;
  const brand = BRAND_NAMES[sub.card_brand ?? ""] ?? "Card";
  return `${brand} ending ${sub.last4 ?? ""}`;
}

function summary(loaded: Loaded): string {
  const { sub, orgName } = loaded;
  const amount = formatDollars(Number(sub.amount_cents));
  const every = FREQUENCY_WORDS[sub.frequency] ?? sub.frequency.toLowerCase();
  return `<dl class="summary">
<dt>Organization</dt><dd>${escapeHtml(orgName)}</dd>
<dt>Gift</dt><dd>${escapeHtml(amount)} ${escapeHtml(every)}</dd>
<dt>Current payment method</dt><dd>${escapeHtml(describeMethod(sub))}</dd>
</dl>`;
}

const STYLE = `<style>
dl.summary{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0 0 1.5rem}
dt{font-weight:600}dd{margin:0}
fieldset{border:1px solid #d0d7de;border-radius:8px;margin:0 0 1rem;padding:1rem}
label{display:block;margin:.5rem 0 .2rem;font-weight:500}
input[type=text]{width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #8c959f;border-radius:6px;font:inherit}
.row{display:flex;gap:1rem}.row>div{flex:1}
button{background:#1f6feb;color:#fff;border:0;border-radius:6px;padding:.7rem 1.2rem;font:inherit;cursor:pointer}
.error{background:#ffebe9;border:1px solid #ff8182;border-radius:6px;padding:.6rem .8rem}
</style>`;

function formPage(loaded: Loaded, allowed: UpdateLinkMethod[], error?: string): string {
  const card = allowed.includes("CARD");
  const bank = allowed.includes("PAY_BY_BANK");
  const both = card && bank;
  const chooser = (value: "card" | "bank", text: string, checked: boolean) =>
    both
      ? `<label><input type="radio" name="method" value="${value}"${checked ? " checked" : ""}> ${text}</label>`
      : `<input type="hidden" name="method" value="${value}">`;
  const cardFields = card
    ? `<fieldset><legend>${both ? chooser("card", "Card", true) : "Card"}</legend>
<label for="cardNumber">Card number</label><input type="text" id="cardNumber" name="cardNumber" inputmode="numeric" autocomplete="cc-number" maxlength="30">
<div class="row"><div><label for="expiry">Expiry (MM/YY)</label><input type="text" id="expiry" name="expiry" autocomplete="cc-exp" maxlength="7" placeholder="MM/YY"></div>
<div><label for="cvc">Security code</label><input type="text" id="cvc" name="cvc" inputmode="numeric" autocomplete="cc-csc" maxlength="4"></div></div>
<label for="postalCode">Postal code</label><input type="text" id="postalCode" name="postalCode" autocomplete="postal-code" maxlength="20">
${both ? "" : chooser("card", "", true)}</fieldset>`
    : "";
  const bankFields = bank
    ? `<fieldset><legend>${both ? chooser("bank", "Bank account", false) : "Bank account"}</legend>
<label for="accountHolder">Account holder</label><input type="text" id="accountHolder" name="accountHolder" autocomplete="name" maxlength="100">
<label for="routingNumber">Routing number</label><input type="text" id="routingNumber" name="routingNumber" inputmode="numeric" maxlength="20">
<label for="accountNumber">Account number</label><input type="text" id="accountNumber" name="accountNumber" inputmode="numeric" maxlength="30">
${both ? "" : chooser("bank", "", true)}</fieldset>`
    : "";
  const problem = error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : "";
  return page({
    title: "Update your payment method",
    heading: "Update your payment method",
    body: `${STYLE}${summary(loaded)}${problem}<form method="post" autocomplete="on">${cardFields}${bankFields}<button type="submit">Save payment method</button></form>`,
  });
}

function field(body: Record<string, unknown>, name: string, max: number): string {
  const v = body[name];
  return typeof v === "string" ? v.trim().slice(0, max) : "";
}

/** The details the donor typed, or the problem to show. Only the processor validates numbers fully. */
function readDetails(
  body: Record<string, unknown>,
  allowed: UpdateLinkMethod[],
): PaymentMethodInput | string {
  const method = field(body, "method", 10);
  if (method === "bank" && allowed.includes("PAY_BY_BANK")) {
    const accountHolder = field(body, "accountHolder", 100);
    const routingNumber = field(body, "routingNumber", 20);
    const accountNumber = field(body, "accountNumber", 30);
    if (!accountHolder || !routingNumber || !accountNumber)
      return "Enter the account holder, routing number and account number.";
    return { type: "bank", accountHolder, routingNumber, accountNumber };
  }
  if (method === "card" && allowed.includes("CARD")) {
    const number = field(body, "cardNumber", 30);
    const expiry = /^(\d{1,2})\s*\/\s*(\d{2}|\d{4})$/.exec(field(body, "expiry", 10));
    const cvc = field(body, "cvc", 4);
    if (!number) return "Enter the card number.";
    if (!expiry) return "Enter the expiry date as MM/YY.";
    if (!/^\d{3,4}$/.test(cvc)) return "Enter the 3 or 4 digit security code.";
    const postalCode = field(body, "postalCode", 20);
    return {
      type: "card",
      number,
      expMonth: Number(expiry[1]),
      expYear: Number(expiry[2]),
      cvc,
      ...(postalCode ? { postalCode } : {}),
    };
  }
  return "Choose a payment method.";
}

/** Tokenizes and sets up the new method for off-session charges: the method, or the donor's message. */
async function saveable(
  deps: AppDeps,
  loaded: Loaded,
  input: PaymentMethodInput,
): Promise<PaymentMethod | string> {
  const processor = deps.processors.named(loaded.sub.processor, loaded.org);
  const created = await processor.createPaymentMethod(input);
  if (!created.ok) return created.message;
  const setup = await processor.setupForFutureUse({ paymentMethod: created.method.token });
  if (setup.status === "failed") return setup.failureMessage;
  if (setup.status === "requires_action")
    return "Your bank asks to confirm this payment method, which this page cannot do yet. Try another one.";
  return setup.method;
}

function successPage(loaded: Loaded, method: PaymentMethod): string {
  const returnLink = loaded.link.return_url
    ? `<p><a href="${escapeHtml(loaded.link.return_url)}">Continue</a></p>`
    : "";
  const updated = {
    ...loaded.sub,
    payment_method_type: method.type,
    card_brand: method.brand ?? null,
    last4: method.last4,
  };
  return page({
    title: "Payment method updated",
    heading: "Payment method updated",
    body: `${STYLE}<p role="status">Thank you. Your next payment will use the new payment method.</p>${summary({ ...loaded, sub: updated })}${returnLink}`,
  });
}

async function submit(c: Context<AppEnv>, deps: AppDeps, token: string): Promise<Html> {
  const loaded = await load(deps, token);
  if ("html" in loaded) return loaded;
  const allowed = JSON.parse(loaded.link.allowed_methods) as UpdateLinkMethod[];
  const body = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  const details = readDetails(body, allowed);
  if (typeof details === "string") return { status: 422, html: formPage(loaded, allowed, details) };
  let method: PaymentMethod | string;
  try {
    method = await saveable(deps, loaded, details);
  } catch (err) {
    // The processor is unreachable or refused the request itself: nothing was saved; the link still works.
    console.error(`Payment-method update link ${loaded.link.id}: processor error: ${(err as Error).message}`);
    return {
      status: 503,
      html: formPage(
        loaded,
        allowed,
        "We could not reach the payment processor. Please try again in a moment.",
      ),
    };
  }
  if (typeof method === "string") {
    await countUpdateLinkFailure(deps.store.db, loaded.link.id);
    if (loaded.link.failed_attempts + 1 >= MAX_FAILED_ATTEMPTS)
      return ended("Too many payment methods were refused on this link.");
    return { status: 422, html: formPage(loaded, allowed, method) };
  }
  const nowMs = deps.now();
  const nowIso = new Date(nowMs).toISOString();
  try {
    await deps.store.db.transaction().execute(async (trx) => {
      if (!(await consumeUpdateLink(trx, loaded.link.id, nowIso)))
        throw new ApiError(410, "This link has already been used or has expired.");
      const sub = await setSubscriptionPaymentMethod(
        trx,
        loaded.sub.id,
        {
          token: method.token,
          type: method.type,
          brand: method.type === "card" ? (method.brand ?? null) : null,
          last4: method.last4,
        },
        nowIso,
      );
      if (!sub) throw new ApiError(410, "This recurring gift is no longer active.");
      const view = presentSubscription(sub);
      await emitEvent(trx, sub.organization_id, "subscription.payment_method_updated", sub.id, view, nowMs);
      await emitEvent(trx, sub.organization_id, "subscription.updated", sub.id, view, nowMs);
    });
  } catch (err) {
    // Thrown inside the transaction to roll it back; the donor gets the 410 page, not JSON.
    if (err instanceof ApiError && err.status === 410) return ended(err.message);
    throw err;
  }
  return { status: 200, html: successPage(loaded, method) };
}

/** Mounts GET (the form) and POST (the new method) of the hosted page. */
export function mountUpdatePaymentMethodPages(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const path = `${UPDATE_PAGE_PATH}/:token`;
  app.get(path, async (c) => {
    const loaded = await load(deps, c.req.param("token"));
    if ("html" in loaded) return html(c, loaded);
    const allowed = JSON.parse(loaded.link.allowed_methods) as UpdateLinkMethod[];
    return html(c, { status: 200, html: formPage(loaded, allowed) });
  });
  app.post(
    path,
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => c.html(page({ title: "Too large", heading: "Request too large", body: "" }), 413),
    }),
    async (c) => html(c, await submit(c, deps, c.req.param("token"))),
  );
}

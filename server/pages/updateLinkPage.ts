import type { Context } from "hono";
import { formatMoney } from "../../shared/currency.js";
import { escapeHtml } from "../../shared/html.js";
import { isoAt } from "../../shared/time.js";
import type { AppDeps, AppEnv } from "../api/env.js";
import { ApiError } from "../errors.js";
import { sha256Hex } from "../ids.js";
import { AWAITING_AUTHENTICATION } from "../payments/confirmationRequest.js";
import type { PaymentMethod } from "../processors/port.js";
import { getOrganization, type Organization } from "../store/organizations.js";
import { findPayment } from "../store/payments.js";
import type { PaymentMethodUpdateLinksTable, PaymentsTable, SubscriptionsTable } from "../store/schema.js";
import {
  consumeUpdateLink,
  findSubscription,
  findUpdateLinkByHash,
  setSubscriptionPaymentMethod,
} from "../store/subscriptions.js";
import { emitEvent } from "../webhooks/events.js";
import { presentSubscription } from "../wire/subscription.js";
import { page } from "./layout.js";

/**
 * What the hosted update page shows and does whichever processor holds the gift's method: the link behind
 * a token (its only credential), the gift's summary, the pages for a link that cannot be used, and saving
 * the new method (which uses the link up).
 */

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
export const MAX_FAILED_ATTEMPTS = 5;
export const MAX_BODY_BYTES = 16 * 1024;

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

export const SECURITY_HEADERS = {
  "Cache-Control": "no-store",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy":
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

export type Html = { status: 200 | 404 | 410 | 422 | 503; html: string };

export function html(c: Context<AppEnv>, out: Html): Response {
  return c.html(out.html, out.status, SECURITY_HEADERS);
}

export const notFound = (): Html => ({
  status: 404,
  html: page({
    title: "Link not valid",
    heading: "This link is not valid",
    body: "<p>Check that you opened the whole link from your message, or ask the organization for a new one.</p>",
  }),
});

export const ended = (why: string): Html => ({
  status: 410,
  html: page({
    title: "Link no longer valid",
    heading: "This link can no longer be used",
    body: `<p>${escapeHtml(why)}</p><p>Ask the organization for a new link if you still need to update your payment method.</p>`,
  }),
});

export interface Loaded {
  link: PaymentMethodUpdateLinksTable;
  sub: SubscriptionsTable;
  org: Organization;
  orgName: string;
  /** The recurring charge held for the donor's confirmation, while it still waits (see confirmationRequest.ts). */
  held: PaymentsTable | null;
  /** The charge the link was made for, whatever became of it (a webhook may have recorded it first). */
  linkedPayment: PaymentsTable | null;
}

/** The link behind a token, if it can still be used; else the page to show. */
export async function load(deps: AppDeps, token: string): Promise<Loaded | Html> {
  if (!TOKEN.test(token)) return notFound();
  const db = deps.store.db;
  const link = await findUpdateLinkByHash(db, sha256Hex(token));
  if (!link) return notFound();
  if (link.used_at) return ended("This link has already been used to update the payment method.");
  if (link.expires_at <= isoAt(deps.now())) return ended("This link has expired.");
  if (link.failed_attempts >= MAX_FAILED_ATTEMPTS)
    return ended("Too many payment methods were refused on this link.");
  const sub = await findSubscription(db, link.subscription_id);
  if (sub?.status !== "ACTIVE") return ended("This recurring gift is no longer active.");
  const org = await getOrganization(db, link.organization_id);
  if (!org) return notFound();
  const payment = link.payment_id ? await findPayment(db, link.payment_id) : undefined;
  const held =
    payment?.status === "PENDING" && payment.failure_code === AWAITING_AUTHENTICATION ? payment : null;
  return { link, sub, org, orgName: org.name, held, linkedPayment: payment ?? null };
}

function describeMethod(
  sub: Pick<SubscriptionsTable, "payment_method_type" | "card_brand" | "last4">,
): string {
  if (sub.payment_method_type === "bank") return `Bank account ending ${sub.last4 ?? ""}`;
  const brand = BRAND_NAMES[sub.card_brand ?? ""] ?? "Card";
  return `${brand} ending ${sub.last4 ?? ""}`;
}

export function summary(loaded: Loaded): string {
  const { sub, orgName } = loaded;
  const amount = formatMoney(Number(sub.amount_cents), sub.currency);
  const every = FREQUENCY_WORDS[sub.frequency] ?? sub.frequency.toLowerCase();
  return `<dl class="summary">
<dt>Organization</dt><dd>${escapeHtml(orgName)}</dd>
<dt>Gift</dt><dd>${escapeHtml(amount)} ${escapeHtml(every)}</dd>
<dt>Current payment method</dt><dd>${escapeHtml(describeMethod(sub))}</dd>
</dl>`;
}

export const STYLE = `<style>
dl.summary{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0 0 1.5rem}
dt{font-weight:600}dd{margin:0}
fieldset{border:1px solid #d0d7de;border-radius:8px;margin:0 0 1rem;padding:1rem}
label{display:block;margin:.5rem 0 .2rem;font-weight:500}
input[type=text]{width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #8c959f;border-radius:6px;font:inherit}
.row{display:flex;gap:1rem}.row>div{flex:1}
button{background:#1f6feb;color:#fff;border:0;border-radius:6px;padding:.7rem 1.2rem;font:inherit;cursor:pointer}
.error{background:#ffebe9;border:1px solid #ff8182;border-radius:6px;padding:.6rem .8rem}
</style>`;

export function successPage(loaded: Loaded, method: PaymentMethod): string {
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

/**
 * Keeps the new method on the gift and uses the link up, in one transaction; emits
 * `subscription.payment_method_updated` and `subscription.updated`. The page to show when the link was
 * used meanwhile or the gift ended, else null.
 */
export async function saveMethod(deps: AppDeps, loaded: Loaded, method: PaymentMethod): Promise<Html | null> {
  const nowMs = deps.now();
  const nowIso = isoAt(nowMs);
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
    // Thrown inside the transaction to roll it back; the donor gets the 410 page.
    if (err instanceof ApiError && err.status === 410) return ended(err.message);
    throw err;
  }
  return null;
}

import type { Context } from "hono";
import { cardBrandName } from "../../shared/cardBrands.js";
import { formatMoney } from "../../shared/currency.js";
import { emailKey } from "../../shared/email.js";
import { escapeHtml } from "../../shared/html.js";
import type { MessageKey } from "../../shared/i18n/catalogs/en.js";
import type { MessageValues } from "../../shared/i18n/format.js";
import type { Language } from "../../shared/languages.js";
import { isoAt } from "../../shared/time.js";
import type { AppDeps, AppEnv } from "../api/env.js";
import { ApiError } from "../errors.js";
import { chooseLanguage, translator } from "../i18n.js";
import { isSecretToken, sha256Hex } from "../ids.js";
import { AWAITING_AUTHENTICATION } from "../payments/confirmationRequest.js";
import { portalUrl } from "../payments/portalUrl.js";
import type { PaymentMethod } from "../processors/port.js";
import { recordAudit } from "../store/auditLog.js";
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
import { languageSwitcher } from "./languageLinks.js";
import { page } from "./layout.js";

/**
 * What the hosted update page shows and does whichever processor holds the gift's method: the link behind
 * a token (its only credential), the gift's summary, the pages for a link that cannot be used, and saving
 * the new method (which uses the link up).
 */

export const MAX_FAILED_ATTEMPTS = 5;
export const MAX_BODY_BYTES = 16 * 1024;

/** The page's translator and language (?lang=, Accept-Language, the organization's). */
export interface PageLanguage {
  language: Language;
  tr: (key: MessageKey, values?: MessageValues) => string;
  /** The page's query string, which its language links keep (the token is in the path). */
  search: string;
}

/** What the request asks for; the organization's language is the fallback once it is known. */
export interface LanguagePrefs {
  query?: string;
  accept?: string;
  /** The request's whole query string. */
  search?: string;
}

export function pageLanguage(prefs: LanguagePrefs, organizationLanguage: Language = "en"): PageLanguage {
  const language = chooseLanguage(prefs.query, prefs.accept, organizationLanguage);
  return { language, tr: translator(language), search: prefs.search ?? "" };
}

export const languagePrefs = (c: Context<AppEnv>): LanguagePrefs => ({
  query: c.req.query("lang"),
  accept: c.req.header("Accept-Language"),
  search: new URL(c.req.url).search,
});

/**
 * The links to the page in each language, as the checkout and the donor portal have them: `?lang=` with
 * the rest of the query, relative to the page, so they keep its path and with it the link's token.
 */
export const languageLinks = ({ language, search }: PageLanguage): string =>
  languageSwitcher(language, search);

/** The headers of a page in `language`, as the checkout and the portal send them. */
export const languageHeaders = (language: Language) => ({
  "Content-Language": language,
  Vary: "Accept-Language",
});

const FREQUENCY_WORDS: Record<string, string> = {
  DAILY: "every day",
  WEEKLY: "every week",
  MONTHLY: "every month",
  ANNUALLY: "every year",
};

export const SECURITY_HEADERS = {
  "Cache-Control": "no-store",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy":
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

/** A page to answer, and the language it is in. */
export type Html = { status: 200 | 404 | 410 | 413 | 422 | 503; html: string; language: Language };

export function html(c: Context<AppEnv>, out: Html): Response {
  return c.html(out.html, out.status, { ...SECURITY_HEADERS, ...languageHeaders(out.language) });
}

export const notFound = ({ language, tr }: PageLanguage): Html => ({
  status: 404,
  language,
  html: page({
    title: tr("update.notFound.title"),
    heading: tr("update.notFound.heading"),
    body: `<p>${escapeHtml(tr("update.notFound.body"))}</p>`,
    language,
  }),
});

export const ended = ({ language, tr }: PageLanguage, why: MessageKey): Html => ({
  status: 410,
  language,
  html: page({
    title: tr("update.ended.title"),
    heading: tr("update.ended.heading"),
    body: `<p>${escapeHtml(tr(why))}</p><p>${escapeHtml(tr("update.ended.body"))}</p>`,
    language,
  }),
});

/** A body over MAX_BODY_BYTES, refused before the link is read: in the language the request asks for. */
export const tooLarge = ({ language, tr }: PageLanguage): Html => ({
  status: 413,
  language,
  html: page({
    title: tr("update.tooLarge.title"),
    heading: tr("update.tooLarge.title"),
    body: `<p>${escapeHtml(tr("update.tooLarge.body"))}</p>`,
    language,
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
  /** The page's language and translator. */
  lang: PageLanguage;
}

/** The link behind a token, if it can still be used; else the page to show. */
export async function load(deps: AppDeps, token: string, prefs: LanguagePrefs = {}): Promise<Loaded | Html> {
  const db = deps.store.db;
  const link = isSecretToken(token) ? await findUpdateLinkByHash(db, sha256Hex(token)) : undefined;
  const org = link ? await getOrganization(db, link.organization_id) : undefined;
  const lang = pageLanguage(prefs, org?.language);
  if (!link || !org) return notFound(lang);
  if (link.used_at) return ended(lang, "update.ended.used");
  if (link.expires_at <= isoAt(deps.now())) return ended(lang, "update.ended.expired");
  if (link.failed_attempts >= MAX_FAILED_ATTEMPTS) return ended(lang, "update.ended.refused");
  const sub = await findSubscription(db, link.subscription_id);
  if (sub?.status !== "ACTIVE") return ended(lang, "update.ended.inactive");
  const payment = link.payment_id ? await findPayment(db, link.payment_id) : undefined;
  const held =
    payment?.status === "PENDING" && payment.failure_code === AWAITING_AUTHENTICATION ? payment : null;
  return { link, sub, org, orgName: org.name, held, linkedPayment: payment ?? null, lang };
}

function describeMethod(
  sub: Pick<SubscriptionsTable, "payment_method_type" | "card_brand" | "last4">,
  tr: PageLanguage["tr"],
): string {
  const method =
    sub.payment_method_type === "bank"
      ? tr("update.bank")
      : (cardBrandName(sub.card_brand) ?? tr("update.card"));
  return tr("update.ending", { method, last4: sub.last4 ?? "" });
}

export function summary(loaded: Loaded): string {
  const { sub, orgName } = loaded;
  const { tr, language } = loaded.lang;
  const amount = formatMoney(Number(sub.amount_cents), sub.currency, language);
  const every = FREQUENCY_WORDS[sub.frequency]
    ? tr(`update.every.${sub.frequency}` as MessageKey)
    : sub.frequency;
  return `<dl class="summary">
<dt>${escapeHtml(tr("update.summary.organization"))}</dt><dd>${escapeHtml(orgName)}</dd>
<dt>${escapeHtml(tr("update.summary.gift"))}</dt><dd>${escapeHtml(amount)} ${escapeHtml(every)}</dd>
<dt>${escapeHtml(tr("update.summary.method"))}</dt><dd>${escapeHtml(describeMethod(sub, tr))}</dd>
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
.alm-langs{max-width:40rem;margin:.5rem auto 0;padding:0 1rem;display:flex;flex-wrap:wrap;gap:.25rem .75rem;justify-content:flex-end;font-size:14px}.alm-langs a[aria-current]{font-weight:600;text-decoration:none;color:#1f2328}
</style>`;

/**
 * Where "Continue" leads: the link's return URL; when that is the organization's donor portal (the portal
 * made the link), in the page's language, so that the donor does not land in the organization's.
 */
export function continueUrl(loaded: Loaded, publicUrl: string): string | null {
  const url = loaded.link.return_url;
  if (!url) return null;
  return url === portalUrl(publicUrl, loaded.org.id)
    ? portalUrl(publicUrl, loaded.org.id, { language: loaded.lang.language })
    : url;
}

export function successPage(loaded: Loaded, method: PaymentMethod, publicUrl: string): string {
  const { tr, language } = loaded.lang;
  const next = continueUrl(loaded, publicUrl);
  const returnLink = next
    ? `<p><a href="${escapeHtml(next)}">${escapeHtml(tr("update.continue"))}</a></p>`
    : "";
  const updated = {
    ...loaded.sub,
    payment_method_type: method.type,
    card_brand: method.brand ?? null,
    last4: method.last4,
  };
  return page({
    title: tr("update.done.title"),
    heading: tr("update.done.title"),
    body: `${STYLE}<p role="status">${escapeHtml(tr("update.done.body"))}</p>${summary({ ...loaded, sub: updated })}${returnLink}`,
    language,
  });
}

/**
 * Keeps the new method on the gift and uses the link up, in one transaction; emits
 * `subscription.payment_method_updated` and `subscription.updated`, and writes the audit-log entry: the
 * donor (the link's holder, by the gift's address, as the portal records the donor's own changes) replaced
 * the method, the old and new ones as the API shows them (type, brand, last 4; never the token). Written
 * even when both read the same (a renewed card of the same number): the method was replaced. The page to
 * show when the link was used meanwhile or the gift ended, else null.
 */
export async function saveMethod(deps: AppDeps, loaded: Loaded, method: PaymentMethod): Promise<Html | null> {
  const nowMs = deps.now();
  const nowIso = isoAt(nowMs);
  try {
    await deps.store.db.transaction().execute(async (trx) => {
      if (!(await consumeUpdateLink(trx, loaded.link.id, nowIso)))
        throw new ApiError(410, "update.ended.used");
      const before = await findSubscription(trx, loaded.sub.id);
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
      if (!sub || !before) throw new ApiError(410, "update.ended.inactive");
      const view = presentSubscription(sub);
      await emitEvent(trx, sub.organization_id, "subscription.payment_method_updated", sub.id, view, nowMs);
      await emitEvent(trx, sub.organization_id, "subscription.updated", sub.id, view, nowMs);
      await recordAudit(
        trx,
        {
          organizationId: sub.organization_id,
          actor: { type: "donor", email: emailKey(sub.email) },
          action: "subscription.updated",
          subjectType: "subscription",
          subjectId: sub.id,
          before: { paymentMethod: presentSubscription(before).paymentMethod },
          after: { paymentMethod: view.paymentMethod },
        },
        nowMs,
      );
    });
  } catch (err) {
    // Thrown inside the transaction to roll it back; the donor gets the 410 page.
    if (err instanceof ApiError && err.status === 410) return ended(loaded.lang, err.message as MessageKey);
    throw err;
  }
  return null;
}

import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { escapeHtml } from "../../shared/html.js";
import type { MessageKey } from "../../shared/i18n/catalogs/en.js";
import type { UpdateLinkMethod } from "../../shared/schemas/subscription.js";
import type { AppDeps, AppEnv } from "../api/env.js";
import { declineText } from "../checkout/finalize.js";
import { UPDATE_PAGE_PATH } from "../payments/updateLink.js";
import type { PaymentMethod, PaymentMethodInput } from "../processors/port.js";
import { giveBackUpdateLinkAttempt, takeUpdateLinkAttempt } from "../store/subscriptions.js";
import { page } from "./layout.js";
import {
  ended,
  type Html,
  html,
  type Loaded,
  languageHeaders,
  languageLinks,
  languagePrefs,
  load,
  MAX_BODY_BYTES,
  MAX_FAILED_ATTEMPTS,
  type PageLanguage,
  pageLanguage,
  SECURITY_HEADERS,
  STYLE,
  saveMethod,
  successPage,
  summary,
  tooLarge,
} from "./updateLinkPage.js";
import { STRIPE_ACTIONS_SUFFIX, stripeAction, stripeFormPage, stripePageCsp } from "./updateWithStripe.js";

/**
 * The hosted "update your payment method" page of a subscription. The link's token is the
 * only credential, so the page shows nothing beyond what the donor needs to recognise the gift
 * (organization, amount, frequency, current method's brand and last 4). Card and bank details go to the
 * processor only; the subscription keeps the reusable token it returns. The link is single-use: using it
 * and replacing the method happen in one transaction. Refused details do not use it up, but a few of
 * them end it (so it cannot be used to test cards).
 */

function formPage(loaded: Loaded, allowed: UpdateLinkMethod[], error?: string): string {
  const { tr, language } = loaded.lang;
  const label = (key: MessageKey) => escapeHtml(tr(key));
  const card = allowed.includes("CARD");
  const bank = allowed.includes("PAY_BY_BANK");
  const both = card && bank;
  const chooser = (value: "card" | "bank", text: string, checked: boolean) =>
    both
      ? `<label><input type="radio" name="method" value="${value}"${checked ? " checked" : ""}> ${text}</label>`
      : `<input type="hidden" name="method" value="${value}">`;
  const cardFields = card
    ? `<fieldset><legend>${both ? chooser("card", label("update.card"), true) : label("update.card")}</legend>
<label for="cardNumber">${label("update.cardNumber")}</label><input type="text" id="cardNumber" name="cardNumber" inputmode="numeric" autocomplete="cc-number" maxlength="30">
<div class="row"><div><label for="expiry">${label("update.expiry")}</label><input type="text" id="expiry" name="expiry" autocomplete="cc-exp" maxlength="7" placeholder="${label("update.expiryFormat")}"></div>
<div><label for="cvc">${label("update.cvc")}</label><input type="text" id="cvc" name="cvc" inputmode="numeric" autocomplete="cc-csc" maxlength="4"></div></div>
<label for="postalCode">${label("update.postal")}</label><input type="text" id="postalCode" name="postalCode" autocomplete="postal-code" maxlength="20">
${both ? "" : chooser("card", "", true)}</fieldset>`
    : "";
  const bankFields = bank
    ? `<fieldset><legend>${both ? chooser("bank", label("update.bank"), false) : label("update.bank")}</legend>
<label for="accountHolder">${label("update.accountHolder")}</label><input type="text" id="accountHolder" name="accountHolder" autocomplete="name" maxlength="100">
<label for="routingNumber">${label("update.routing")}</label><input type="text" id="routingNumber" name="routingNumber" inputmode="numeric" maxlength="20">
<label for="accountNumber">${label("update.account")}</label><input type="text" id="accountNumber" name="accountNumber" inputmode="numeric" maxlength="30">
${both ? "" : chooser("bank", "", true)}</fieldset>`
    : "";
  const problem = error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : "";
  return page({
    title: tr("update.title"),
    heading: tr("update.title"),
    body: `${STYLE}${summary(loaded)}${problem}<form method="post" autocomplete="on">${cardFields}${bankFields}<button type="submit">${label("update.save")}</button></form>`,
    language,
    header: languageLinks(loaded.lang),
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
  tr: PageLanguage["tr"],
): PaymentMethodInput | string {
  const method = field(body, "method", 10);
  if (method === "bank" && allowed.includes("PAY_BY_BANK")) {
    const accountHolder = field(body, "accountHolder", 100);
    const routingNumber = field(body, "routingNumber", 20);
    const accountNumber = field(body, "accountNumber", 30);
    if (!accountHolder || !routingNumber || !accountNumber) return tr("update.error.bank");
    return { type: "bank", accountHolder, routingNumber, accountNumber };
  }
  if (method === "card" && allowed.includes("CARD")) {
    const number = field(body, "cardNumber", 30);
    const expiry = /^(\d{1,2})\s*\/\s*(\d{2}|\d{4})$/.exec(field(body, "expiry", 10));
    const cvc = field(body, "cvc", 4);
    if (!number) return tr("update.error.card");
    if (!expiry) return tr("update.error.expiry");
    if (!/^\d{3,4}$/.test(cvc)) return tr("update.error.cvc");
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
  return tr("update.error.method");
}

/** Tokenizes and sets up the new method for off-session charges: the method, or the donor's message. */
async function saveable(
  deps: AppDeps,
  loaded: Loaded,
  input: PaymentMethodInput,
): Promise<PaymentMethod | string> {
  const processor = deps.processors.named(loaded.sub.processor, loaded.org);
  // The processor's refusal in the page's language, in the checkout's words for it.
  const { language, tr } = loaded.lang;
  const created = await processor.createPaymentMethod(input);
  if (!created.ok) return declineText(language, created.code, created.message);
  const setup = await processor.setupForFutureUse({ paymentMethod: created.method.token });
  if (setup.status === "failed") return declineText(language, setup.failureCode, setup.failureMessage);
  if (setup.status === "requires_action") return tr("update.error.bankConfirmation");
  return setup.method;
}

async function submit(c: Context<AppEnv>, deps: AppDeps, token: string): Promise<Html> {
  const loaded = await load(deps, token, languagePrefs(c));
  if ("html" in loaded) return loaded;
  const allowed = JSON.parse(loaded.link.allowed_methods) as UpdateLinkMethod[];
  const body = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  const details = readDetails(body, allowed, loaded.lang.tr);
  const { language } = loaded.lang;
  if (typeof details === "string") return { status: 422, html: formPage(loaded, allowed, details), language };
  const db = deps.store.db;
  const attempt = await takeUpdateLinkAttempt(db, loaded.link.id, MAX_FAILED_ATTEMPTS);
  if (attempt === null) {
    // Used or out of attempts since it was loaded (submissions sent at once): the page it ended with.
    const now = await load(deps, token, languagePrefs(c));
    return "html" in now ? now : ended(loaded.lang, "update.ended.refused");
  }
  let method: PaymentMethod | string;
  try {
    method = await saveable(deps, loaded, details);
  } catch (err) {
    // The processor is unreachable or refused the request itself: nothing was saved; the link still works.
    await giveBackUpdateLinkAttempt(db, loaded.link.id);
    console.error(`Payment-method update link ${loaded.link.id}: processor error: ${(err as Error).message}`);
    return {
      status: 503,
      html: formPage(loaded, allowed, loaded.lang.tr("update.error.processor")),
      language,
    };
  }
  if (typeof method === "string") {
    if (attempt >= MAX_FAILED_ATTEMPTS) return ended(loaded.lang, "update.ended.refused");
    return { status: 422, html: formPage(loaded, allowed, method), language };
  }
  await giveBackUpdateLinkAttempt(db, loaded.link.id);
  const refused = await saveMethod(deps, loaded, method);
  if (refused) return refused;
  return { status: 200, html: successPage(loaded, method, deps.config.publicUrl), language };
}

/** Mounts GET (the form) and POST (the new method) of the hosted page, and the Stripe page's JSON calls. */
export function mountUpdatePaymentMethodPages(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const path = `${UPDATE_PAGE_PATH}/:token`;
  app.get(path, async (c) => {
    const loaded = await load(deps, c.req.param("token"), languagePrefs(c));
    if ("html" in loaded) return html(c, loaded);
    if (loaded.sub.processor === "stripe")
      return c.html(stripeFormPage(deps, loaded, c.req.param("token")), 200, {
        ...SECURITY_HEADERS,
        ...languageHeaders(loaded.lang.language),
        "Content-Security-Policy": stripePageCsp(deps.config.stripeJsUrl),
      });
    const allowed = JSON.parse(loaded.link.allowed_methods) as UpdateLinkMethod[];
    return html(c, { status: 200, html: formPage(loaded, allowed), language: loaded.lang.language });
  });
  app.post(
    `${path}${STRIPE_ACTIONS_SUFFIX}`,
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) =>
        c.json({ status: "error", error: pageLanguage(languagePrefs(c)).tr("update.tooLarge.body") }, 413, {
          "Cache-Control": "no-store",
        }),
    }),
    async (c) => {
      const answer = await stripeAction(c, deps, await load(deps, c.req.param("token"), languagePrefs(c)));
      return c.json(answer.body, answer.status, { "Cache-Control": "no-store" });
    },
  );
  app.post(
    path,
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => html(c, tooLarge(pageLanguage(languagePrefs(c)))),
    }),
    async (c) => html(c, await submit(c, deps, c.req.param("token"))),
  );
}

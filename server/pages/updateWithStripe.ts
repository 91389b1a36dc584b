import type { Context } from "hono";
import { formatMoney } from "../../shared/currency.js";
import { escapeHtml } from "../../shared/html.js";
import type { UpdateLinkMethod } from "../../shared/schemas/subscription.js";
import { isoAt } from "../../shared/time.js";
import type { AppDeps, AppEnv } from "../api/env.js";
import { checkSubmissionOrigin } from "../api/requestSource.js";
import { declineText } from "../checkout/finalize.js";
import { ApiError } from "../errors.js";
import { outcomeOfLookup } from "../payments/outcome.js";
import { customerFor } from "../payments/processorCustomer.js";
import { settlePayment } from "../payments/transition.js";
import { UPDATE_PAGE_PATH } from "../payments/updateLink.js";
import { CustomerMissing, type PaymentProcessor, type SetupResult } from "../processors/port.js";
import {
  giveBackUpdateLinkAttempt,
  replaceProcessorCustomer,
  takeUpdateLinkAttempt,
} from "../store/subscriptions.js";
import { checkoutAssetUrl } from "./assets.js";
import { jsonForScript } from "./json.js";
import { page } from "./layout.js";
import {
  continueUrl,
  type Html,
  type Loaded,
  languageLinks,
  languagePrefs,
  MAX_FAILED_ATTEMPTS,
  pageLanguage,
  STYLE,
  saveMethod,
  summary,
} from "./updateLinkPage.js";

/**
 * The update page of a gift whose method is at Stripe. Card and bank details go into Stripe's Payment
 * Element (setup mode) on the page, driven by the same module as the checkout (`/checkout/stripe.js`); the
 * page sends the server a ConfirmationToken, and the server saves the method to the donor's Stripe
 * customer with a SetupIntent. A recurring charge the bank held for authentication is confirmed here too:
 * the server confirms that same PaymentIntent with the donor present and the page completes the bank's
 * challenge. The page's calls are JSON POSTs to `<page>/stripe`, from this instance's pages only.
 */

export const STRIPE_ACTIONS_SUFFIX = "/stripe";

/** Content-Security-Policy of the page: its own script and styles, plus the origins Stripe documents. */
export function stripePageCsp(jsUrl: string | undefined): string {
  const standIn = jsUrl ? ` ${new URL(jsUrl).origin}` : "";
  return [
    "default-src 'none'",
    `script-src 'self' https://js.stripe.com https://*.js.stripe.com${standIn}`,
    "style-src 'unsafe-inline'",
    `connect-src 'self' https://api.stripe.com${standIn}`,
    `frame-src https://js.stripe.com https://*.js.stripe.com https://hooks.stripe.com${standIn}`,
    "img-src 'self' data: https:",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

/** The Stripe payment method types of the kinds an update link takes. */
function stripeMethodTypes(allowed: UpdateLinkMethod[]): string[] {
  return allowed.flatMap((kind) => (kind === "CARD" ? ["card", "link"] : ["us_bank_account"]));
}

export function stripeFormPage(deps: AppDeps, loaded: Loaded, token: string): string {
  const { tr, language } = loaded.lang;
  const stripe = loaded.org.processor;
  const boot = {
    publishableKey: stripe?.publishableKey ?? "",
    // A stand-in Stripe.js (tests, development) only ever with test keys: live card details reach Stripe.
    ...(deps.config.stripeJsUrl && !stripe?.publishableKey.startsWith("pk_live_")
      ? { jsUrl: deps.config.stripeJsUrl }
      : {}),
    // The page's language goes along, so that a refusal the server words is in it.
    actionUrl: `${UPDATE_PAGE_PATH}/${token}${STRIPE_ACTIONS_SUFFIX}?lang=${encodeURIComponent(language)}`,
    held: loaded.held
      ? { amount: formatMoney(Number(loaded.held.amount_cents), loaded.held.currency, language) }
      : null,
    // Stripe's fields offer the methods this gift can be paid with: its currency's, of the kinds the link
    // takes (card includes Link, which pays with a card), none that would leave the page for a bank.
    currency: loaded.sub.currency.toLowerCase(),
    methodTypes: stripeMethodTypes(JSON.parse(loaded.link.allowed_methods) as UpdateLinkMethod[]),
    text: {
      fieldsFailed: tr("checkout.error.fieldsFailed"),
      details: tr("update.error.details"),
      network: tr("update.error.network"),
      notConfirmed: tr("update.error.notConfirmed"),
    },
  };
  // Where the donor goes on once it is done (the link's returnUrl), as the sandbox's page offers it.
  const next = continueUrl(loaded, deps.config.publicUrl);
  const continueLink = next
    ? `<p id="almoner-update-continue" hidden><a href="${escapeHtml(next)}">${escapeHtml(tr("update.continue"))}</a></p>`
    : "";
  const amount = loaded.held
    ? formatMoney(Number(loaded.held.amount_cents), loaded.held.currency, language)
    : "";
  const held = loaded.held
    ? `<section aria-labelledby="held-h"><h2 id="held-h">${escapeHtml(tr("update.held.heading"))}</h2>
<p>${escapeHtml(tr("update.held.body", { amount }))}</p>
<button type="button" id="almoner-confirm-payment">${escapeHtml(tr("update.held.confirm", { amount }))}</button>
<p id="almoner-confirm-status" role="status"></p></section><h2>${escapeHtml(tr("update.held.other"))}</h2>`
    : "";
  return page({
    language,
    header: languageLinks(loaded.lang),
    title: tr("update.title"),
    heading: loaded.held ? tr("update.confirmTitle") : tr("update.title"),
    body: `${STYLE}${summary(loaded)}${held}<form id="almoner-update-form" novalidate>
<div id="almoner-update-fields"></div>
<p id="almoner-update-error" class="error" role="alert" hidden></p>
<button type="submit">${escapeHtml(tr("update.save"))}</button></form>
<p id="almoner-update-done" role="status" hidden></p>
${continueLink}
<script type="application/json" id="almoner-update-boot">${jsonForScript(boot)}</script>
<script type="module" src="${checkoutAssetUrl("stripe.js")}"></script>`,
  });
}

type Answer = { status: 200 | 400 | 402 | 409 | 410 | 503; body: Record<string, unknown> };

const refused = (message: string): Answer => ({ status: 402, body: { status: "error", error: message } });

/** The page's JSON calls: save a method (a token, or a set-up back from the bank), or confirm the held charge. */
export async function stripeAction(
  c: Context<AppEnv>,
  deps: AppDeps,
  loaded: Loaded | Html,
): Promise<Answer> {
  checkSubmissionOrigin(c, deps.config);
  if ("html" in loaded) {
    // The link is gone, and with it the organization's language: the request's own says it.
    const { tr } = pageLanguage(languagePrefs(c));
    return { status: 410, body: { status: "error", error: tr("update.ended.heading") } };
  }
  const body = (await c.req.json().catch(() => null)) as Record<string, unknown> | null;
  const action = typeof body?.action === "string" ? body.action : "";
  const processor = deps.processors.named(loaded.sub.processor, loaded.org);
  const pageUrl = `${deps.config.publicUrl}${c.req.path.slice(0, -STRIPE_ACTIONS_SUFFIX.length)}`;
  try {
    switch (action) {
      case "save": {
        const token = typeof body?.confirmationToken === "string" ? body.confirmationToken : "";
        if (!/^ctoken_[A-Za-z0-9_]{1,200}$/.test(token))
          return { status: 400, body: { status: "error", error: "confirmationToken is required" } };
        const setup = (customer: string | null, key: string) =>
          processor.setupForFutureUse({
            paymentMethod: token,
            ...(customer ? { customer } : {}),
            idempotencyKey: key,
            returnUrl: pageUrl,
            reference: setupReference(loaded),
          });
        const key = `setup:${loaded.link.id}:${token}`;
        return withAttempt(deps, loaded, async (attempt) => {
          const gone = loaded.sub.processor_customer;
          const done = await setup(gone, key).catch(async (err: unknown) => {
            // The donor's customer is gone at the processor (deleted, or another account connected since):
            // the gift takes the donor's customer as it is now, and the new method is saved to that one.
            if (!(err instanceof CustomerMissing) || !gone) throw err;
            const customer = await newCustomer(deps, processor, loaded, gone);
            return setup(customer, `${key.slice(0, 200)}:${customer}`);
          });
          return finishSetup(deps, loaded, done, attempt);
        });
      }
      case "setup-completed": {
        const setupId = typeof body?.setupIntent === "string" ? body.setupIntent : "";
        const notHere: Answer = {
          status: 400,
          body: { status: "error", error: "setupIntent is not a set-up of this page" },
        };
        if (!/^seti_[A-Za-z0-9_]{1,200}$/.test(setupId)) return notHere;
        return withAttempt(deps, loaded, async (attempt) => {
          // Only a set-up this link's page made: never another donor's, whose card this gift would take.
          const setup = await processor.retrieveSetup?.(setupId, setupReference(loaded));
          return setup ? finishSetup(deps, loaded, setup, attempt) : notHere;
        });
      }
      case "confirm-payment":
        return confirmHeld(deps, loaded, processor, pageUrl);
      case "payment-completed":
        return recordHeld(deps, loaded, processor);
      default:
        return {
          status: 400,
          body: {
            status: "error",
            error: "action must be save, setup-completed, confirm-payment or payment-completed",
          },
        };
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    console.error(`Payment-method update link ${loaded.link.id}: processor error: ${(err as Error).message}`);
    return {
      status: 503,
      body: {
        status: "error",
        error: loaded.lang.tr("update.error.processor"),
      },
    };
  }
}

/** A new customer of the gift's donor in place of `gone`, kept on the gift (before any method is saved). */
async function newCustomer(
  deps: AppDeps,
  processor: PaymentProcessor,
  loaded: Loaded,
  gone: string,
): Promise<string | null> {
  const { sub } = loaded;
  const customer = await customerFor(
    deps,
    processor,
    loaded.org,
    { email: sub.email, firstName: sub.first_name, lastName: sub.last_name },
    gone,
  );
  if (customer) await replaceProcessorCustomer(deps.store.db, sub.id, gone, customer, isoAt(deps.now()));
  return customer;
}

/** What the link's set-ups are made for, kept with them at the processor (SetupInput.reference). */
const setupReference = (loaded: Loaded) => `payment-method-update-link:${loaded.link.id}`;

const outOfAttempts = (loaded: Loaded): Answer => ({
  status: 410,
  body: { status: "error", error: loaded.lang.tr("update.ended.refused") },
});

/** One of a link's attempts, taken for a method entered on its page; `kept` once the method is refused. */
interface Attempt {
  /** The link's attempts taken, this one included. */
  count: number;
  kept: boolean;
}

/**
 * Runs `ask` (which asks the processor about a method entered on the page) with one of the link's
 * attempts taken first (takeUpdateLinkAttempt): a 410 when none is left. The attempt is given back
 * afterwards unless `ask` kept it (a refused method), also when the processor could not be asked (the
 * error goes on to the caller's 503).
 */
async function withAttempt(
  deps: AppDeps,
  loaded: Loaded,
  ask: (attempt: Attempt) => Promise<Answer>,
): Promise<Answer> {
  const count = await takeUpdateLinkAttempt(deps.store.db, loaded.link.id, MAX_FAILED_ATTEMPTS);
  if (count === null) return outOfAttempts(loaded);
  const attempt: Attempt = { count, kept: false };
  try {
    return await ask(attempt);
  } finally {
    if (!attempt.kept) await giveBackUpdateLinkAttempt(deps.store.db, loaded.link.id);
  }
}

/** The processor's answer about a method entered on the page: a refused one keeps its attempt. */
async function finishSetup(
  deps: AppDeps,
  loaded: Loaded,
  setup: SetupResult,
  attempt: Attempt,
): Promise<Answer> {
  if (setup.status === "failed") {
    attempt.kept = true;
    if (attempt.count >= MAX_FAILED_ATTEMPTS) return outOfAttempts(loaded);
    return refused(declineText(loaded.lang.language, setup.failureCode, setup.failureMessage));
  }
  if (setup.status === "requires_action")
    return {
      status: 200,
      body: { status: "requires_action", clientSecret: setup.clientSecret, setupIntent: setup.setupId },
    };
  // The link's own rule (allowedPaymentMethods): a kind of method it does not take is never saved.
  const allowed = JSON.parse(loaded.link.allowed_methods) as UpdateLinkMethod[];
  if (!allowed.includes(setup.method.type === "bank" ? "PAY_BY_BANK" : "CARD"))
    return { status: 400, body: { status: "error", error: loaded.lang.tr("update.error.methodNotAllowed") } };
  const problem = await saveMethod(deps, loaded, setup.method);
  if (problem)
    return { status: 410, body: { status: "error", error: loaded.lang.tr("update.ended.usedOrExpired") } };
  const m = setup.method;
  return {
    status: 200,
    body: {
      status: "saved",
      message: loaded.lang.tr(m.type === "bank" ? "update.saved.bank" : "update.saved.card", {
        last4: m.last4,
      }),
    },
  };
}

async function confirmHeld(
  deps: AppDeps,
  loaded: Loaded,
  processor: PaymentProcessor,
  pageUrl: string,
): Promise<Answer> {
  const held = loaded.held;
  if (!held?.processor_payment_id || !processor.confirmOnSession)
    return { status: 409, body: { status: "error", error: loaded.lang.tr("update.error.noHeld") } };
  const result = await processor.confirmOnSession(held.processor_payment_id, pageUrl);
  if (result.status === "requires_action")
    return { status: 200, body: { status: "requires_action", clientSecret: result.clientSecret } };
  return recordHeld(deps, loaded, processor);
}

/** How the held charge stands at the processor now, recorded by the one payment transition. */
async function recordHeld(deps: AppDeps, loaded: Loaded, processor: PaymentProcessor): Promise<Answer> {
  const payment = loaded.linkedPayment;
  if (!payment?.processor_payment_id)
    return { status: 409, body: { status: "error", error: loaded.lang.tr("update.error.noHeld") } };
  let row = payment;
  // Still waiting here (Stripe's own news of it may have been recorded already): ask Stripe, and record.
  if (loaded.held) {
    const lookup = await processor.retrievePayment(payment.processor_payment_id);
    const outcome = lookup && outcomeOfLookup(lookup, null);
    if (!outcome) return refused(loaded.lang.tr("update.error.notConfirmed"));
    row = (
      await deps.store.transact((trx) =>
        settlePayment(
          trx,
          { nowMs: deps.now(), publicUrl: deps.config.publicUrl },
          { id: payment.id },
          outcome,
        ),
      )
    ).row;
  }
  if (row.status === "FAILED")
    return refused(declineText(loaded.lang.language, row.failure_code, row.failure_message));
  return {
    status: 200,
    body: {
      status: "paid",
      message:
        row.status === "COMPLETED" || row.status === "REFUNDED"
          ? loaded.lang.tr("update.paid", {
              amount: formatMoney(Number(row.amount_cents), row.currency, loaded.lang.language),
            })
          : loaded.lang.tr("update.processing"),
    },
  };
}

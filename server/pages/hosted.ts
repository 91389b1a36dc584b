import { randomBytes } from "node:crypto";
import type { Context } from "hono";
import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import { escapeHtml } from "../../shared/html.js";
import { DEFAULT_LANGUAGE, directionOf, type Language } from "../../shared/languages.js";
import { PARENT_ORIGIN_PARAM } from "../../shared/messages.js";
import { quoteRequestSchema } from "../../shared/schemas/checkout.js";
import { App } from "../../widget/app/App.js";
import { currencySymbol, setLocale } from "../../widget/app/locale.js";
import { createCheckout } from "../../widget/app/store.js";
import type { Boot, Quote } from "../../widget/app/view.js";
import type { AppDeps, AppEnv } from "../api/env.js";
import { quoteOrder } from "../checkout/engine.js";
import { resolveElementPrefill } from "../checkout/prefill.js";
import { type PaymentOptions, paymentOptions, publicFormView } from "../checkout/publicView.js";
import { ApiError } from "../errors.js";
import { chooseLanguage, messagesFor, translator } from "../i18n.js";
import { isUuid } from "../ids.js";
import type { Db } from "../store/database.js";
import { type FormRecord, findForm } from "../store/forms.js";
import { formAvailability } from "../store/inventory.js";
import { getOrganization, type Organization, siteOrigins } from "../store/organizations.js";
import { checkoutAssetUrl, serveWidgetAsset } from "./assets.js";
import { readableAccent } from "./color.js";
import { jsonForScript } from "./json.js";
import { languageSwitcher } from "./languageLinks.js";
import { page } from "./layout.js";

/**
 * Page rules that cost the checkout's first-paint bundle nothing: the live regions of the total's error
 * and the promo code's result stay in the page while empty (a region that appears and fills in one change
 * is not announced), taking no room.
 */
const PAGE_STYLE = ".alm [aria-live]:empty{display:block;margin:0;padding:0}";
/**
 * In an iframe the page is transparent over the host's own background: the language links, outside the
 * white card, get a white ground of their own, readable on a dark site.
 */
const EMBED_STYLE = ".alm-langs{background:#fff;border-radius:6px;padding:0.25rem 1rem}";

/**
 * The hosted checkout pages, /donate/<formID> and /attend/<formID>. The checkout app's components are rendered
 * to HTML here, so the form arrives in the first response; the data they were rendered from is embedded as
 * JSON (a data block, never executed) and app.js hydrates the same tree without fetching it again.
 *
 * The same page is the iframe page of the embed snippet and of the overlay. Query parameters it reads:
 *   elementid     a checkout link: its prefill is applied (server side, so it is in the first HTML);
 *   embed=1       iframe mode: no page chrome, and the page may be framed by any site (only `1` or
 *                 `true` turn it on; `embed=0` does not);
 *   embedId       the embed instance id given by the loader or the overlay (messages in shared/messages.ts);
 *   parentOrigin  in embed mode, the framing page's origin, named by the page's language links (framingOrigin);
 *   overlay=1     set by the overlay script (the modal has its own close button): the page may then be
 *                 framed only by the organization's own sites (its organizationBaseURLs), so no other
 *                 tenant's overlay can show this form in its pages;
 *   utm_source, utm_medium, utm_campaign, utm_term, utm_content: recorded with the donation.
 *
 * Security: every page sends a Content-Security-Policy. Scripts only from this origin ('self'), and on a
 * message page in embed mode (inactive, deleted or unknown form) the one inline script this host built,
 * frame.js, by the response's nonce; the embedded JSON is `type="application/json"`, which CSP does not
 * govern since it never runs, and is escaped so no `</script>` or `<!--` can end it early. The one inline <style> (the form's color) carries a per-response
 * nonce. Pages other than embed mode refuse framing (frame-ancestors 'none' and X-Frame-Options: DENY).
 */

/** Who may frame a page: nobody, any site (the iframe embed), or the listed origins (the overlay). */
export type Framing = "none" | "any" | readonly string[];

type Html = {
  status: 200 | 404 | 410;
  html: string;
  language: Language;
  payment?: PaymentOptions | null;
  /** The origins of the form's organization's sites (where its overlay may frame the page). */
  sites?: readonly string[];
  /** The page runs an inline script, allowed by the response's nonce. */
  inlineScript?: boolean;
};

/**
 * The origins Stripe documents for Stripe.js (its security guide): scripts and frames from js.stripe.com,
 * 3-D Secure frames from hooks.stripe.com, calls to api.stripe.com. Pages of Stripe organizations only.
 */
const STRIPE_SOURCES = {
  script: ["https://js.stripe.com", "https://*.js.stripe.com"],
  frame: ["https://js.stripe.com", "https://*.js.stripe.com", "https://hooks.stripe.com"],
  connect: ["https://api.stripe.com"],
};

export function contentSecurityPolicy(
  nonce: string,
  framing: Framing,
  production: boolean,
  payment?: PaymentOptions | null,
  inlineScript = false,
): string {
  const stripe = payment?.processor === "stripe";
  // A stand-in Stripe.js (STRIPE_JS_URL, tests) talks to its own origin.
  const standIn = stripe && payment.jsUrl ? [new URL(payment.jsUrl).origin] : [];
  const list = (own: string[], extra: string[]) =>
    [...own, ...(stripe ? [...extra, ...standIn] : [])].join(" ");
  return [
    "default-src 'none'",
    `script-src ${list(["'self'", ...(inlineScript ? [`'nonce-${nonce}'`] : [])], STRIPE_SOURCES.script)}`,
    `style-src 'self' 'nonce-${nonce}'`,
    `img-src 'self' data: https:${production ? "" : " http:"}`,
    `connect-src ${list(["'self'"], STRIPE_SOURCES.connect)}`,
    ...(stripe ? [`frame-src ${list([], STRIPE_SOURCES.frame)}`] : []),
    "form-action 'self'",
    "base-uri 'none'",
    ...(framing === "any"
      ? []
      : [`frame-ancestors ${framing === "none" || framing.length === 0 ? "'none'" : framing.join(" ")}`]),
  ].join("; ");
}

/** The form's description for link previews: one line, at most 200 characters, never cut inside one. */
function describe(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const characters = [...flat];
  return characters.length > 200 ? `${characters.slice(0, 199).join("").trimEnd()}…` : flat;
}

interface CheckoutPage {
  view: Boot["view"];
  /** The page's language, and the query string its language links keep (embed, UTM, elementid). */
  language: Language;
  query: string;
  quote: Boot["quote"];
  url: string;
  embed: boolean;
  /** In embed mode, the origin of the page that framed the checkout, if known (`framingOrigin`). */
  parentOrigin?: string;
  nonce: string;
  brand: string;
}

function checkoutHtml(p: CheckoutPage): string {
  // The donor list names anonymous supporters in the page's language (the public API says "Anonymous", with
  // `anonymous: true` for a client to word).
  const tr = translator(p.language);
  const anonymous = tr("page.donors.anonymous");
  const view = p.view.donorList
    ? {
        ...p.view,
        donorList: p.view.donorList.map((d) => (d.anonymous ? { ...d, name: anonymous } : d)),
      }
    : p.view;
  const messages = messagesFor(p.language, "checkout.");
  // The render is synchronous: the page's locale holds for exactly this page.
  setLocale({ language: p.language, currency: view.currency, messages });
  const c = createCheckout({ view, quote: p.quote });
  const body = renderToString(h(App, { c, embedded: p.embed }));
  // The typed amount starts after the currency's symbol: wider symbols ("US$", "CHF") push it further.
  const symbolChars = [...currencySymbol()].length;
  const symbolStyle =
    symbolChars > 1
      ? `.alm .alm-custom input:not([type="radio"]):not([type="checkbox"]){padding-inline-start:calc(0.95rem + ${symbolChars}ch)}`
      : "";
  // Without a description of its own, the page is described in its language ("Donate to …", "Spenden: …").
  const fallback = tr(view.formType === "EVENT" ? "page.meta.register" : "page.meta.donate", {
    title: view.title,
    organization: view.organization.name,
  });
  const description = describe(view.description || fallback);
  const image = view.headerImage;
  const meta: [string, string, string][] = [
    ["name", "description", description],
    ["property", "og:type", "website"],
    ["property", "og:title", view.title],
    ["property", "og:description", description],
    ["property", "og:url", p.url],
    ["property", "og:site_name", view.organization.name],
    ...(image ? ([["property", "og:image", image]] as [string, string, string][]) : []),
    ["name", "twitter:card", image ? "summary_large_image" : "summary"],
    ["name", "twitter:title", view.title],
    ["name", "twitter:description", description],
    ...(image ? ([["name", "twitter:image", image]] as [string, string, string][]) : []),
  ];
  const accent = readableAccent(p.brand);
  return `<!doctype html>
<html lang="${p.language}" dir="${directionOf(p.language)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(view.title)}</title>
${meta.map(([attr, key, value]) => `<meta ${attr}="${key}" content="${escapeHtml(value)}">`).join("\n")}
<link rel="icon" href="data:,">
<link rel="canonical" href="${escapeHtml(p.url)}">
<link rel="stylesheet" href="${checkoutAssetUrl("app.css")}">
<style nonce="${p.nonce}">body{margin:0;background:${p.embed ? "transparent" : "#f6f7f9"}}.alm{--alm-brand:${p.brand};--alm-accent:${accent}}${PAGE_STYLE}${p.embed ? EMBED_STYLE : ""}${symbolStyle}</style>
<script type="module" src="${checkoutAssetUrl("app.js")}"></script>
</head>
<body>
<noscript><p class="alm-noscript">${escapeHtml(tr("page.noscript.checkout"))}</p></noscript>
${languageSwitcher(p.language, p.query)}
<main id="almoner-app">${body}</main>
<script type="application/json" id="almoner-boot">${jsonForScript({ view, quote: p.quote, language: p.language, messages, ...(p.parentOrigin ? { parentOrigin: p.parentOrigin } : {}) } satisfies Boot)}</script>
</body>
</html>`;
}

/**
 * A form's hosted page stays under 200 KB: a form whose page, rendered as a donor would first get it, is
 * larger than `FORM_PAGE_LIMIT_BYTES` is refused when it is saved. The page holds the organization's part
 * too (its name, its global custom inputs, amounts in its currency, its language): a change of those that
 * would take any live form's page past the limit is refused as well (api/organization.ts). The margin below
 * 200 KB is for what the page gains after that (the donor list and fundraising bar, a link's prefill, the
 * first quote, another language the donor asks for).
 */
export const HOSTED_PAGE_BUDGET_BYTES = 200 * 1024;
export const FORM_PAGE_LIMIT_BYTES = 180 * 1024;

/**
 * The size in bytes of the hosted page a form with this config would have (nothing sold, no prefill), with
 * `org` as it is or would be. `db` reads the form's donors (a transaction's, when measuring inside one).
 */
export async function formPageBytes(
  deps: AppDeps,
  org: Organization,
  formId: string,
  config: FormRecord["config"],
  db: Db = deps.store.db,
): Promise<number> {
  const form: FormRecord = {
    id: formId,
    organizationId: org.id,
    config,
    createdAt: "",
    updatedAt: "",
    deletedAt: null,
  };
  const view = await publicFormView(
    db,
    { form, org },
    { ticketsSold: {}, productsSold: {}, promoRedemptions: {} },
    null,
    paymentOptions(org, deps.processors.forOrganization(org), {
      stripeModule: checkoutAssetUrl("stripe.js"),
      stripeJsUrl: deps.config.stripeJsUrl,
    }),
  );
  const html = checkoutHtml({
    view,
    quote: null,
    language: org.language,
    query: "",
    url: `${deps.config.publicUrl}/${config.formType === "EVENT" ? "attend" : "donate"}/${formId}`,
    embed: false,
    nonce: "0".repeat(24),
    brand: config.color,
  });
  return Buffer.byteLength(html);
}

async function initialQuote(deps: AppDeps, view: Boot["view"]): Promise<Boot["quote"]> {
  const order = createCheckout({ view }).orderKey.value;
  if (!order) return null;
  const parsed = quoteRequestSchema.safeParse(JSON.parse(order));
  if (!parsed.success) return null;
  try {
    return { order, quote: (await quoteOrder(deps, view.formID, parsed.data)) as Quote };
  } catch (err) {
    // An order the server refuses (say, stock ran out): the app asks again and shows the reason.
    if (err instanceof ApiError) return null;
    throw err;
  }
}

async function render(
  c: Context<AppEnv>,
  deps: AppDeps,
  formId: string,
  nonce: string,
  embed: boolean,
): Promise<Html> {
  const db = deps.store.db;
  const form = isUuid(formId) ? await findForm(db, formId.toLowerCase()) : undefined;
  const org = form ? await getOrganization(db, form.organizationId) : undefined;
  const language = chooseLanguage(
    c.req.query("lang"),
    c.req.header("Accept-Language"),
    org?.language ?? DEFAULT_LANGUAGE,
  );
  const tr = translator(language);
  const parentOrigin = framingOrigin(c, deps, embed);
  // In embed mode a message page, like the checkout, tells the framing page its height and Escape.
  const frameScript = embed ? serveWidgetAsset("frame.js") : undefined;
  const script = frameScript && {
    code: frameScript.body,
    ...(parentOrigin ? { data: { "parent-origin": parentOrigin } } : {}),
  };
  /** A page with a message instead of the checkout, in the donor's language. */
  const message = (
    status: Html["status"],
    content: Parameters<typeof page>[0],
    sites?: readonly string[],
  ): Html => ({
    status,
    language,
    ...(sites ? { sites } : {}),
    ...(script ? { inlineScript: true } : {}),
    html: page({ ...content, nonce, language, ...(script ? { script } : {}) }),
  });
  if (!form || !org)
    return message(404, {
      title: tr("page.notFound.title"),
      heading: tr("page.notFound.title"),
      body: `<p>${escapeHtml(tr("page.notFound.body"))}</p>`,
    });
  if (form.deletedAt)
    return message(
      410,
      {
        title: tr("page.gone.tab"),
        heading: tr("page.gone.title"),
        body: `<p>${escapeHtml(tr("page.gone.body"))}</p>`,
      },
      siteOrigins(org),
    );
  const { config } = form;
  // A form that takes no gifts now: its own title, colour and description, and why.
  const unavailable = (reason: string, body = "") =>
    message(
      200,
      {
        title: config.title,
        heading: config.title,
        color: config.color,
        description: config.description,
        body: `${body}<p role="status"><strong>${escapeHtml(reason)}</strong></p>`,
      },
      siteOrigins(org),
    );
  if (!config.active)
    return unavailable(
      tr("page.inactive", { kind: config.formType }),
      config.description ? `<p>${escapeHtml(config.description)}</p>` : "",
    );
  if (!deps.processors.forOrganization(org))
    return unavailable(tr("page.notReady", { kind: config.formType }));
  const resolution = await resolveElementPrefill(db, form.id, c.req.query("elementid")?.slice(0, 100));
  const view = await publicFormView(
    db,
    { form, org },
    await formAvailability(db, form.id),
    resolution.kind === "ok" ? resolution.prefill : null,
    paymentOptions(org, deps.processors.forOrganization(org), {
      stripeModule: checkoutAssetUrl("stripe.js"),
      stripeJsUrl: deps.config.stripeJsUrl,
    }),
  );
  const path = config.formType === "EVENT" ? "attend" : "donate";
  return {
    status: 200,
    language,
    sites: siteOrigins(org),
    payment: view.payment,
    html: checkoutHtml({
      view,
      quote: await initialQuote(deps, view),
      language,
      query: linkQuery(c, parentOrigin),
      parentOrigin,
      url: `${deps.config.publicUrl}/${path}/${form.id}`,
      embed,
      nonce,
      brand: /^#[0-9A-Fa-f]{6}$/.test(config.color) ? config.color : "#3B82F6",
    }),
  };
}

/** `value` if it is exactly an http(s) origin (scheme, host, optional port: nothing more), else undefined. */
function exactOrigin(value: string | undefined): string | undefined {
  try {
    const origin = new URL(value ?? "").origin;
    return /^https?:/.test(origin) && origin === value ? origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * In embed mode, the origin of the page that framed the checkout, which the checkout sends its messages to
 * (shared/messages.ts). As the framing page loaded the iframe, that is the Referer's origin. The page's
 * language links reload it inside the iframe, and the Referer is then this host: so those links name the
 * framing page's origin (PARENT_ORIGIN_PARAM), and a page whose Referer is this host takes the origin its
 * query names. A wrong name only stops the messages: they go to the parent window alone, which the browser
 * delivers them to only if it is of that origin, and they carry no donor data.
 */
function framingOrigin(c: Context<AppEnv>, deps: AppDeps, embed: boolean): string | undefined {
  if (!embed) return undefined;
  const url = new URL(c.req.url);
  let referrer: string | undefined;
  try {
    referrer = new URL(c.req.header("Referer") ?? "").origin;
  } catch {
    return undefined;
  }
  if (referrer !== url.origin && referrer !== new URL(deps.config.publicUrl).origin)
    return exactOrigin(referrer);
  return exactOrigin(c.req.query(PARENT_ORIGIN_PARAM));
}

/** The query string the page's own links keep, naming the framing page's origin when there is one. */
function linkQuery(c: Context<AppEnv>, parentOrigin: string | undefined): string {
  const url = new URL(c.req.url);
  if (parentOrigin) url.searchParams.set(PARENT_ORIGIN_PARAM, parentOrigin);
  return url.search;
}

const EXPLICITLY_ON = new Set(["1", "true"]);

export async function hostedFormPage(c: Context<AppEnv>, deps: AppDeps, formId: string): Promise<Response> {
  const nonce = randomBytes(16).toString("base64");
  const overlay = EXPLICITLY_ON.has(c.req.query("overlay") ?? "");
  const embed = overlay || EXPLICITLY_ON.has(c.req.query("embed") ?? "");
  const { status, html, payment, sites, language, inlineScript } = await render(
    c,
    deps,
    formId,
    nonce,
    embed,
  );
  const framing: Framing = overlay ? (sites ?? "none") : embed ? "any" : "none";
  const headers: Record<string, string> = {
    "Content-Security-Policy": contentSecurityPolicy(
      nonce,
      framing,
      deps.config.production,
      payment,
      inlineScript,
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "Cache-Control": "no-store",
    "Content-Language": language,
    Vary: "Accept-Language",
  };
  if (framing === "none" || (framing !== "any" && framing.length === 0)) headers["X-Frame-Options"] = "DENY";
  return c.html(html, status, headers);
}

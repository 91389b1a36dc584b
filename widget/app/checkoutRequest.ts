import { controlsAsSpace } from "../../shared/controlChars.js";
import { COUNTRY_CODES } from "../../shared/countries.js";
import { isEmailAddress } from "../../shared/email.js";
import { pageLanguage, t as tr } from "./locale.js";
import { typedAmount } from "./orderModel.js";
import type { Checkout } from "./store.js";
import { trimmedText } from "./textFields.js";
import { money } from "./view.js";

/**
 * The checkout request, built from the checkout's state when the donor sends it: first every problem the
 * donor can fix (each keyed by the id of the field that shows it), then the body of POST /checkout. Loaded
 * after the page is up (later.ts), never needed to draw it.
 */

/** The processor's fields on the page (Stripe's) collect the payment, not the app's own. */
export const browserCollected = (c: Checkout): boolean => c.view.payment?.processor === "stripe";

/** Whether the app's own payment fields are sent: something to pay, and no processor's fields. */
const ownPaymentFields = (c: Checkout): boolean => c.total.value !== 0 && !browserCollected(c);

/** MM/YY, MM / YY, MM/YYYY, MM YY, MMYY or MMYYYY → month and four-digit year; null for anything else. */
export function parseExpiry(text: string): { month: number; year: number } | null {
  // MM/YY or MM/YYYY; a space, hyphen or dot for the slash, or none at all (a phone's number pad has none).
  const t = text.trim();
  const m = /^(\d{1,2})\s*[/\-.\s]\s*(\d{2}|\d{4})$/.exec(t) ?? /^(\d{2})(\d{2}|\d{4})$/.exec(t);
  if (!m) return null;
  const month = Number(m[1]);
  const year = m[2].length === 2 ? 2000 + Number(m[2]) : Number(m[2]);
  return month >= 1 && month <= 12 ? { month, year } : null;
}

/** Every problem the donor can fix before sending, keyed by field id. */
export function validate(c: Checkout): Record<string, string> {
  return { ...orderProblems(c), ...donorProblems(c), ...paymentProblems(c) };
}

/** The order: an amount in range, a level, a product or a ticket chosen; extra donation and promo code. */
function orderProblems(c: Checkout): Record<string, string> {
  const { kind, view } = c;
  const e: Record<string, string> = {};
  const t = trimmedText(c.text);
  if (kind === "EMBED_FORM" || kind === "CROWDFUNDING_FORM") {
    if (c.useCustom.value) {
      const d = typedAmount(t("customAmount"));
      if (d === null || d < view.minAmount || d > view.maxAmount)
        e.customAmount = tr("checkout.error.customAmount", {
          min: money(view.minAmount),
          max: money(view.maxAmount),
        });
    } else if (!c.order.value) {
      const problem = kind === "EMBED_FORM" ? tr("checkout.error.amount") : tr("checkout.error.level");
      // Without presets at this frequency the amount is typed: the field that shows the error is that one.
      if (c.presets.value.length === 0 && kind === "EMBED_FORM") e.customAmount = problem;
      else e.amount = problem;
    }
  }
  if (kind === "PRODUCT" && !c.product.value) e.product = tr("checkout.error.product");
  if (kind === "EVENT") {
    if (!Object.values(c.tickets.value).some((q) => q > 0)) e.tickets = tr("checkout.error.tickets");
    if (t("extraDonation") && typedAmount(t("extraDonation")) === null)
      e.extraDonation = tr("checkout.error.extraDonation");
    if (t("promoCode") && t("promoCode").toUpperCase() !== c.appliedPromo.value.toUpperCase())
      e.promoCode = tr("checkout.error.promoCode");
  }
  return e;
}

/** The donor's details, the answers the form requires and the dedication's name and e-mail. */
function donorProblems(c: Checkout): Record<string, string> {
  const { view } = c;
  const e: Record<string, string> = {};
  const t = trimmedText(c.text);
  for (const input of view.customInputs) {
    const v = c.answers.value[input.id];
    if (input.required && (v === undefined || (Array.isArray(v) ? v.length === 0 : v.trim() === "")))
      e[`ci-${input.id}`] = tr("checkout.error.required", { title: input.title });
  }
  if (!t("firstName")) e.firstName = tr("checkout.error.firstName");
  if (!t("lastName")) e.lastName = tr("checkout.error.lastName");
  if (!isEmailAddress(t("email"))) e.email = tr("checkout.error.email");
  if (view.options.tribute && c.dedicate.value) {
    if (!t("honoreeName")) e.honoreeName = tr("checkout.error.honoreeName");
    if (t("tributeEmail") && !isEmailAddress(t("tributeEmail")))
      e.tributeEmail = tr("checkout.error.tributeEmail");
  }
  return e;
}

/** The app's own card or bank fields (the processor's fields check themselves). */
function paymentProblems(c: Checkout): Record<string, string> {
  const e: Record<string, string> = {};
  if (!ownPaymentFields(c)) return e;
  const t = trimmedText(c.text);
  if (c.method.value === "card") {
    const digits = t("cardNumber").replace(/[\s-]/g, "");
    if (!/^\d{12,19}$/.test(digits)) e.cardNumber = tr("checkout.error.cardNumber");
    const exp = parseExpiry(t("cardExp"));
    const now = new Date();
    if (!exp) e.cardExp = tr("checkout.error.cardExp");
    // A card is good to the end of its month (as the processor checks it, by the donor's calendar here).
    else if (exp.year * 12 + exp.month < now.getFullYear() * 12 + now.getMonth() + 1)
      e.cardExp = tr("checkout.error.cardExpired");
    if (!/^\d{3,4}$/.test(t("cardCvc"))) e.cardCvc = tr("checkout.error.cardCvc");
  } else {
    if (!/^\d{9}$/.test(t("routingNumber").replace(/[\s-]/g, "")))
      e.routingNumber = tr("checkout.error.routingNumber");
    if (!/^\d{4,17}$/.test(t("accountNumber").replace(/[\s-]/g, "")))
      e.accountNumber = tr("checkout.error.accountNumber");
    if (!t("accountHolder")) e.accountHolder = tr("checkout.error.accountHolder");
  }
  return e;
}

/** The checkout request: the order, the donor, the payment, their answers and where they came from. */
export function checkoutBody(c: Checkout): Record<string, unknown> {
  const { view, env, text } = c;
  const body: Record<string, unknown> = { ...(c.order.value ?? {}), donor: donorBody(c) };
  const paymentMethod = paymentMethodBody(c);
  if (paymentMethod) body.paymentMethod = paymentMethod;
  Object.assign(body, answersBody(c));
  // From the page's address, as the server keeps them (controls as a space): the server refuses a NUL in
  // any body, and the donor cannot change the address, so the gift would be refused for good.
  const utm: Record<string, string> = { ...(view.prefill?.utm ?? {}) };
  for (const [name, value] of Object.entries(env.utm ?? {})) if (value) utm[name] = controlsAsSpace(value);
  if (Object.keys(utm).length) body.utm = utm;
  if (env.elementId) body.elementId = controlsAsSpace(env.elementId);
  if (text.website.value) body.website = text.website.value;
  // The currency of the amounts the donor was shown: the server refuses the checkout if it has changed.
  body.currency = view.currency;
  // Always, English too: the receipt and every later e-mail are in the page's language, not the browser's.
  body.language = pageLanguage();
  return body;
}

/** The checkout's `donor`: the fields the form asks for that the donor filled. */
function donorBody(c: Checkout): Record<string, unknown> {
  const o = c.view.options;
  const t = trimmedText(c.text);
  const donor: Record<string, unknown> = {
    firstName: t("firstName"),
    lastName: t("lastName"),
    email: t("email"),
  };
  if (o.phone && t("phone")) donor.phone = t("phone");
  if (o.organizationName && t("organizationName")) donor.organizationName = t("organizationName");
  const address: Record<string, string> = {};
  if (o.billingAddress)
    for (const k of ["line1", "line2", "city", "region", "postal"] as const) if (t(k)) address[k] = t(k);
  // Only a country of the select, which the donor saw chosen there: never text it could not show.
  if ((o.country || o.billingAddress) && COUNTRY_CODES.includes(t("country"))) address.country = t("country");
  if (Object.keys(address).length) donor.address = address;
  return donor;
}

/**
 * The checkout's `anonymous` (when the form offers it), `emailOptIn`, `customInputs` (those answered) and
 * `tribute` (when the donor dedicates the gift).
 */
function answersBody(c: Checkout): Record<string, unknown> {
  const { view } = c;
  const t = trimmedText(c.text);
  const body: Record<string, unknown> = {};
  if (view.options.anonymous && c.anonymous.value) body.anonymous = true;
  body.emailOptIn = c.emailOptIn.value;
  const given = Object.fromEntries(
    Object.entries(c.answers.value).filter(
      ([id, v]) => view.customInputs.some((i) => i.id === id) && (Array.isArray(v) ? v.length : v.trim()),
    ),
  );
  if (Object.keys(given).length) body.customInputs = given;
  if (view.options.tribute && c.dedicate.value) {
    const tribute: Record<string, string> = { kind: c.tributeKind.value, honoreeName: t("honoreeName") };
    if (t("tributeEmail")) tribute.notifyEmail = t("tributeEmail");
    if (t("tributeMessage")) tribute.message = t("tributeMessage");
    body.tribute = tribute;
  }
  return body;
}

/** The checkout's `paymentMethod` from the app's own fields; undefined when they are not used. */
function paymentMethodBody(c: Checkout): Record<string, unknown> | undefined {
  if (!ownPaymentFields(c)) return undefined;
  const t = trimmedText(c.text);
  if (c.method.value === "card") {
    const exp = parseExpiry(t("cardExp")) ?? { month: 0, year: 0 };
    return {
      type: "card",
      number: t("cardNumber"),
      expMonth: exp.month,
      expYear: exp.year,
      cvc: t("cardCvc"),
      ...(t("cardPostal") ? { postalCode: t("cardPostal") } : {}),
    };
  }
  return {
    type: "bank",
    routingNumber: t("routingNumber"),
    accountNumber: t("accountNumber"),
    accountHolder: t("accountHolder"),
  };
}

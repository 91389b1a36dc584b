import { batch } from "@preact/signals";
import type { MessageKey } from "../../shared/i18n/catalogs/en.js";
import { browserCollected, checkoutBody, validate } from "./checkoutRequest.js";
import { PROMO_CODE_DETAIL } from "./errorsModel.js";
import { pageLanguage, t as tr } from "./locale.js";
import type { Checkout, PaymentCollector } from "./store.js";
import type { Receipt } from "./view.js";

/**
 * Sending the checkout: every problem the donor can fix is found first; a one-time gift that qualifies is
 * first offered as a monthly one (once); the processor's fields, when on the page, make the payment token;
 * the donor's bank may ask them to confirm; the answer is a receipt, a decline, or errors shown at the
 * fields they name. Sent again after no answer, a conflict or a server error, the checkout keeps its
 * idempotency key, so it cannot charge twice; any other answer ends the attempt. Loaded after the page is
 * up (later.ts); the state it works on is the checkout's (store.ts).
 */

function newKey(): string {
  const c = globalThis.crypto;
  return c?.randomUUID ? c.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

/** Server details ("donor.email must be …") tied to the fields they name. */
export function fieldErrors(details: string[]): Record<string, string> {
  const map: [RegExp, string][] = [
    [/^donor\.email/, "email"],
    [/^donor\.firstName/, "firstName"],
    [/^donor\.lastName/, "lastName"],
    [/^donor\.phone/, "phone"],
    // The processor's refusals ("paymentMethod Your card's expiration date is invalid.") name their field
    // in words: the expiry, the security code, the routing number, the account or its holder before "card".
    [/^paymentMethod\.exp|^paymentMethod .*expir/i, "cardExp"],
    [/^paymentMethod\.cvc|^paymentMethod .*(security code|cvc)/i, "cardCvc"],
    [/^paymentMethod\.routingNumber|^paymentMethod .*routing/i, "routingNumber"],
    [/^paymentMethod\.accountHolder|^paymentMethod .*holder/i, "accountHolder"],
    [/^paymentMethod\.accountNumber|^paymentMethod .*account number/i, "accountNumber"],
    [/^paymentMethod\.number|^paymentMethod .*card/i, "cardNumber"],
    [PROMO_CODE_DETAIL, "promoCode"],
    [/^amount/, "customAmount"],
    // A ticket's own refusal names it in words ('"Adult" tickets are sold out', 'Only 2 "Adult" tickets are left').
    [/^tickets|\btickets?\b/i, "tickets"],
    [/^product/, "product"],
  ];
  const out: Record<string, string> = {};
  for (const d of details) {
    const hit = map.find(([re]) => re.test(d));
    if (hit && !out[hit[1]]) out[hit[1]] = d;
  }
  return out;
}

/**
 * A server detail as a donor reads it: without the field's name in the API's terms, which starts it
 * ("paymentMethod Your card's …", "donor.email must be …"; a question is named by its title after
 * "customInputs."), and starting with a capital.
 */
export function donorWords(detail: string): string {
  const words = detail.replace(
    /^(?:(?:donor|paymentMethod|amount|tickets|promoCode|product)\b[\w.[\]]*\s+|customInputs\.)/,
    "",
  );
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The catalog's message for each field the server may refuse. */
const FIELD_WORDS: Record<string, MessageKey> = {
  email: "checkout.error.email",
  firstName: "checkout.error.firstName",
  lastName: "checkout.error.lastName",
  phone: "checkout.error.phone",
  cardNumber: "checkout.error.cardNumber",
  cardCvc: "checkout.error.cardCvc",
  cardExp: "checkout.error.cardExp",
  routingNumber: "checkout.error.routingNumber",
  accountNumber: "checkout.error.accountNumber",
  accountHolder: "checkout.error.accountHolder",
  promoCode: "checkout.error.promoInvalid",
  customAmount: "checkout.error.amount",
  tickets: "checkout.error.tickets",
  product: "checkout.error.product",
};

/** The page's own message for each field the server refused (its catalog's, not the server's English). */
function ownWords(placed: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, detail] of Object.entries(placed)) {
    const key = FIELD_WORDS[field];
    out[field] = key ? tr(key) : detail;
  }
  return out;
}

/** What the form says on a page not in English when the server refused the checkout. */
function refusalInPageLanguage(status: number, error: string, placed: Record<string, string>): string {
  if (status === 429) return tr("checkout.error.tooMany");
  if (/sold out/i.test(error)) return tr("checkout.error.soldOut");
  const n = Object.keys(placed).length;
  return n ? tr("checkout.error.fix", { count: n }) : tr("checkout.error.notAccepted");
}

/** Sends the checkout; a one-time gift that qualifies is first offered as a monthly one (once). */
export async function submit(c: Checkout): Promise<void> {
  // Enter in the promo code's field applies the code, as its Apply button does, and sends nothing; the
  // field keeps the focus (the form's own handler moves it first, to what needs attention).
  const promo = document.getElementById("alm-promoCode");
  if (promo && document.activeElement === promo) {
    c.applyPromo();
    setTimeout(() => promo.focus());
    return;
  }
  // A code applied, then its field emptied without Apply: the order the donor now sees has no code. It is
  // taken off (the total is priced again) and nothing is sent until the donor has seen the new total.
  if (c.appliedPromo.value && !c.text.promoCode.value.trim()) {
    c.applyPromo();
    c.formError.value = tr("checkout.promo.removed");
    return;
  }
  // The offer is on the screen: it is answered by its own buttons (a second press of the form's button,
  // queued while the code loaded, does not send the one-time gift past it).
  if (c.upsell.value) return;
  if (Object.keys(validate(c)).length === 0 && offerMonthly(c)) return;
  await send(c);
}

/** Declines the monthly offer and sends the one-time gift as chosen. */
export async function keepOneTime(c: Checkout): Promise<void> {
  c.upsell.value = false;
  await send(c);
  // The offer, which had the focus, is gone: a refusal takes the donor to what needs attention, as the
  // form's own button does (once the refusal is drawn).
  if (c.status.value === "form")
    setTimeout(() =>
      (
        document.querySelector<HTMLElement>('.alm-form [aria-invalid="true"]') ??
        document.querySelector<HTMLElement>(".alm-alert")
      )?.focus(),
    );
}

/**
 * "Make it monthly": on forms that enable it, a one-time gift at or above the form's minimum may become a
 * monthly gift of the form's share of it. The monthly amount suggested for the order as it is now, or null
 * when it does not qualify (read again whenever the order changes while the offer shows).
 */
export function monthlySuggestion(c: Checkout): number | null {
  const { view } = c;
  const offer = view.options.monthlyUpsell;
  const once = c.chosenAmount.value;
  if (
    !offer ||
    !view.allowCustomAmount ||
    (view.formType !== "EMBED_FORM" && view.formType !== "CROWDFUNDING_FORM") ||
    c.frequency.value !== "ONE_TIME" ||
    once === null ||
    once < offer.minimum
  )
    return null;
  // The suggestion is a whole amount the form itself takes; none when that is not less than the gift.
  const monthly = Math.min(view.maxAmount, Math.max(view.minAmount, 1, Math.round(once * offer.ratio)));
  return monthly < once ? monthly : null;
}

/** Whether sending now should first show the monthly offer (made at most once per checkout), and shows it. */
function offerMonthly(c: Checkout): boolean {
  if (c.sending.upsellOffered || monthlySuggestion(c) === null) return false;
  c.sending.upsellOffered = true;
  // Every field is right now: what an earlier try said of them no longer holds.
  c.errors.value = {};
  c.formError.value = null;
  c.upsell.value = true;
  return true;
}

/** Accepting the offer switches the choice to the monthly amount; the donor confirms with the form's button. */
export function acceptUpsell(c: Checkout): void {
  const monthly = monthlySuggestion(c);
  if (!c.upsell.value || monthly === null) return;
  batch(() => {
    c.setFrequency("MONTHLY");
    c.useCustom.value = true;
    c.text.customAmount.value = String(monthly);
    c.upsell.value = false;
  });
}

/** The processor's fields say they are ready (or gone, with null). */
export function setCollector(c: Checkout, next: PaymentCollector | null): void {
  c.sending.collector = next;
  if (next && c.sending.focusCollector) {
    c.sending.focusCollector = false;
    next.focus();
  }
}

/**
 * Escape while a payment is on its way is held (its default prevented), so an overlay is not closed by it
 * (iframe-side.ts forwards only an Escape nothing handled): closing would lose the answer, and a donor who
 * opened the form again would start a new checkout and could pay twice.
 */
const holdEscape = (event: KeyboardEvent) => {
  if (event.key === "Escape") event.preventDefault();
};

async function send(c: Checkout): Promise<void> {
  if (c.status.value === "submitting") return;
  document.addEventListener("keydown", holdEscape, true);
  try {
    await sendOnce(c);
  } finally {
    document.removeEventListener("keydown", holdEscape, true);
  }
}

async function sendOnce(c: Checkout): Promise<void> {
  const { status, errors, formError, sending } = c;
  const found = validate(c);
  errors.value = found;
  formError.value = null;
  if (Object.keys(found).length) {
    const n = Object.keys(found).length;
    formError.value = tr("checkout.error.fix", { count: n });
    return;
  }
  status.value = "submitting";
  const payload = checkoutBody(c);
  if (browserCollected(c) && c.total.value !== 0) {
    const collector = sending.collector;
    const collected = collector ? await collector.collect() : { error: tr("checkout.error.fieldsLoading") };
    if ("error" in collected) {
      batch(() => {
        status.value = "form";
        errors.value = { ...errors.value, payment: collected.error };
        formError.value = collected.error;
      });
      return;
    }
    payload.paymentMethod = { type: "token", token: collected.token };
  }
  const sent = JSON.stringify(payload);
  let answer: { res: Response; body: Record<string, unknown> } | undefined;
  try {
    // A checkout sent before got no answer, and may have been charged. Before anything the donor changed
    // since is sent as a new checkout, the earlier one is sent again as it was (its key, its body), so the
    // server answers what came of it: charged, or still not known, that answer is the one shown.
    const { idempotencyKey: key, sentBody } = sending;
    if (key && sentBody && sentBody !== sent) answer = await exchange(c, sentBody, key);
    if (!answer || (answer.res.status !== 201 && !unsettled(answer.res.status))) {
      // Refused (nothing was charged), or nothing sent before: this body, under a key of its own.
      if (answer) sending.idempotencyKey = null;
      sending.idempotencyKey ??= newKey();
      sending.sentBody = sent;
      answer = await exchange(c, sent, sending.idempotencyKey);
    }
  } catch {
    batch(() => {
      status.value = "form";
      // The checkout went out and no answer came: whether it was charged is not known yet.
      formError.value = tr("checkout.error.noAnswer");
    });
    return;
  }
  const { res, body } = answer;
  // A definitive answer ends this attempt; the next one is a new checkout.
  if (!unsettled(res.status)) {
    sending.idempotencyKey = null;
    sending.sentBody = undefined;
  }
  batch(() => {
    if (res.status === 201) {
      c.receipt.value = body.payment as Receipt;
      c.thanks.value = String(body.message ?? tr("checkout.thanks"));
      status.value = "success";
    } else if (res.status === 402) {
      c.declineMessage.value = String(body.error ?? tr("checkout.error.declined"));
      status.value = "declined";
    } else {
      status.value = "form";
      const details = (body.details as string[] | undefined) ?? [];
      const placed = fieldErrors(details);
      // Other answers (a conflict, the processor out of reach) say exactly what happened to the money:
      // their words are kept as the server wrote them.
      if (pageLanguage() === "en" || (res.status !== 400 && res.status !== 429)) {
        const said = Object.values(placed);
        errors.value = Object.fromEntries(Object.entries(placed).map(([f, d]) => [f, donorWords(d)]));
        const error = String(body.error ?? tr("checkout.error.generic"));
        // Fields refused are each told at the field, and counted here, as the page's own checks are; what
        // no field shows is said here. A sold-out refusal's error already quotes its details: once each.
        formError.value = [
          error === "Validation failed" && said.length
            ? tr("checkout.error.fix", { count: said.length })
            : error,
          ...details.filter((d) => !error.includes(d) && !said.includes(d)).map(donorWords),
        ].join(" ");
      } else {
        // The server's refusals are in English (the API's language): the page says them in its own words.
        errors.value = ownWords(placed);
        formError.value = refusalInPageLanguage(res.status, String(body.error ?? ""), placed);
      }
    }
  });
  if (res.status === 201 && c.receipt.value) c.env.onComplete?.(c.receipt.value);
}

/**
 * Whether an answer leaves the attempt's outcome open, so that sending again must reuse its key: a
 * conflict (409: the same checkout still under way), the key refused for another body (422), a server
 * error or the processor out of reach (5xx).
 */
const unsettled = (status: number): boolean => status === 409 || status === 422 || status >= 500;

/**
 * Sends one checkout body under its key; when the donor's bank asks them to confirm (3-D Secure), has them
 * confirm, then asks the server what came of it. Throws when no answer comes.
 */
async function exchange(
  c: Checkout,
  body: string,
  key: string,
): Promise<{ res: Response; body: Record<string, unknown> }> {
  let answer = await c.post("/checkout", body, key);
  if (answer.res.status === 202 && typeof answer.body.clientSecret === "string") {
    const collector = c.sending.collector;
    const confirmed = collector ? await collector.confirm(answer.body.clientSecret) : { error: "" };
    answer = await c.post(`/checkout/${encodeURIComponent(String(answer.body.paymentID))}/complete`, "{}");
    // Stripe.js words a failed confirmation for the donor; the server's record has the API's wording.
    if (confirmed.error && (answer.res.status === 202 || answer.res.status === 402))
      answer = { res: new Response(null, { status: 402 }), body: { error: confirmed.error } };
  }
  return answer;
}

/** Back from a decline: the card fields are cleared so the donor enters another one. */
export function retry(c: Checkout): void {
  batch(() => {
    for (const k of ["cardNumber", "cardExp", "cardCvc", "routingNumber", "accountNumber"] as const)
      c.text[k].value = "";
    c.status.value = "form";
    c.formError.value = `${c.declineMessage.value} ${tr("checkout.declined.nothingCharged")}`;
  });
  c.sending.focusCollector = browserCollected(c);
}

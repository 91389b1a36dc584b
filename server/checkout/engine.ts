import { emailKey } from "../../shared/email.js";
import { DEFAULT_LANGUAGE } from "../../shared/languages.js";
import { centsToDollars } from "../../shared/money.js";
import { type Availability, productKey, promoKey } from "../../shared/pricing/availability.js";
import { priceOrder } from "../../shared/pricing/priceOrder.js";
import { promoRefusal } from "../../shared/pricing/promo.js";
import type { Quote } from "../../shared/pricing/quote.js";
import { type CheckoutRequest, type QuoteRequest, toOrderInput } from "../../shared/schemas/checkout.js";
import { isoAt } from "../../shared/time.js";
import type { AppDeps } from "../deps.js";
import { ApiError, errorMessage } from "../errors.js";
import { chooseLanguage } from "../i18n.js";
import { isUuid, prefixedId } from "../ids.js";
import { chargeOrigin, checkoutChargeKey } from "../payments/chargeKey.js";
import { outcomeOfCharge, outcomeOfLookup, PROCESSOR_DOWN_MESSAGE } from "../payments/outcome.js";
import { customerFor } from "../payments/processorCustomer.js";
import { type PaymentOutcome, settlePayment } from "../payments/transition.js";
import {
  type ChargeInput,
  type ChargeResult,
  CustomerMissing,
  chargeLimitRefusal,
  type PaymentMethod,
  type PaymentProcessor,
  ProcessorError,
} from "../processors/port.js";
import type { Db, Store } from "../store/database.js";
import { type FormRecord, findFormCached } from "../store/forms.js";
import { type HeldItem, stockTaken, takeItems } from "../store/inventory.js";
import { getOrganizationCached, type Organization } from "../store/organizations.js";
import {
  type DeclineCap,
  findPayment,
  insertPaymentUnlessDeclined,
  PAYMENT_ID,
  type PaymentDetails,
  paymentDetails as paymentDetailsOf,
  paymentWithGift,
} from "../store/payments.js";
import type { PaymentsTable } from "../store/schema.js";
import { writeOne } from "../store/writeOne.js";
import { checkAnswers } from "./answers.js";
import { actionAnswer, checkoutAnswer, type FinalizedCheckout, finalizeCheckout } from "./finalize.js";
import { cardDeclinedTooOften, declineCap } from "./guards.js";

/**
 * The donor checkout. It runs in steps so that no database transaction ever waits on the payment
 * processor, whichever it is:
 *  1. validate and price on the server; read the payment method (a token the processor's own script made
 *     in the browser, or, on the sandbox, test details it turns into one): card data goes to the
 *     processor only;
 *  2. the processor makes its payment, and before it moves money hands over the payment's id: one short
 *     transaction then takes the stock (tickets, products, promo redemptions) with atomic conditional
 *     updates and writes the payment as PROCESSING with that id, which holds the stock (sold out: the
 *     processor is stopped before it charges);
 *  3. the processor charges, with the payment's own idempotency key, so it can never charge twice; then one
 *     transaction records the outcome (payments/transition.ts): payment, contact, subscription, events,
 *     receipt. A payment the donor must confirm (3-D Secure) stays PROCESSING until the page comes back
 *     (`completeCheckout`), a webhook says, or recovery gives up on it.
 * A crash after step 2 is finished by recovery, which asks the processor by the stored id. A free order
 * needs no processor: it is taken and recorded in one transaction.
 */

export interface LoadedForm {
  form: FormRecord;
  org: Organization;
}

/**
 * The form a donor addresses: unknown → 404; deleted → 410 for reads, 400 for submissions (see callers).
 * Read through the store's read caches: the records are shared and never to be modified.
 */
export async function loadPublicForm(
  store: Store,
  formId: string,
): Promise<LoadedForm & { deleted: boolean }> {
  const form = isUuid(formId) ? await findFormCached(store, formId.toLowerCase()) : undefined;
  if (!form) throw new ApiError(404, "Form not found");
  const org = await getOrganizationCached(store, form.organizationId);
  if (!org) throw new ApiError(404, "Form not found");
  return { form, org, deleted: form.deletedAt !== null };
}

/** A form that takes submissions: live and active. */
async function loadSubmittableForm(store: Store, formId: string): Promise<LoadedForm> {
  const loaded = await loadPublicForm(store, formId);
  if (loaded.deleted) throw new ApiError(400, "This form has been deleted and no longer accepts donations");
  if (!loaded.form.config.active) throw new ApiError(400, "This form is not accepting donations right now");
  return loaded;
}

export function presentQuote(q: Quote, currency: string) {
  return {
    currency,
    frequency: q.frequency,
    fund: q.fund,
    lines: q.lines.map((l) => ({
      kind: l.kind,
      label: l.label,
      unitPrice: centsToDollars(l.unitCents),
      quantity: l.quantity,
      amount: centsToDollars(l.amountCents),
      ...(l.admits !== undefined ? { admits: l.admits } : {}),
    })),
    subtotal: centsToDollars(q.subtotalCents),
    discount: centsToDollars(q.discountCents),
    promoCode: q.promoCode,
    coverFees: q.coverFees,
    fee: centsToDollars(q.feeCents),
    total: centsToDollars(q.totalCents),
    attendees: q.attendees,
  };
}

export type QuoteView = ReturnType<typeof presentQuote>;

function pricingErrors(form: FormRecord, org: Organization, req: QuoteRequest, availability: Availability) {
  const result = priceOrder(
    form.config,
    toOrderInput(req, form.config.defaultFrequency),
    availability,
    org.feeRate,
    org.currency,
  );
  return result;
}

/** Errors that are only about stock running out (tickets and products; a used-up promo code is a refused code). */
function isStockError(code: string): boolean {
  return code === "sold_out";
}

/**
 * The 400 of an order whose promo code was refused (with or without other problems): the public routes
 * count these per donor and form, so that codes cannot be guessed by trying them.
 */
export class PromoCodeRefused extends ApiError {}

/** Throws the 400 for a list of problems; one that is only about stock says "sold out" up front. */
function refuse(details: string[], soldOut: boolean, promoRefused = false): never {
  if (soldOut) throw new ApiError(400, `Sold out: ${details.join("; ")}`, details);
  if (promoRefused) throw new PromoCodeRefused(400, "Validation failed", details);
  throw ApiError.validation(details);
}

const refusesPromo = (errors: { field: string }[]) => errors.some((e) => e.field === "promoCode");

export async function quoteOrder(deps: AppDeps, formId: string, req: QuoteRequest): Promise<QuoteView> {
  const { form, org } = await loadSubmittableForm(deps.store, formId);
  const result = pricingErrors(form, org, req, await stockTaken(deps.store.db, form));
  if (!result.ok)
    refuse(
      result.errors.map((e) => e.message),
      result.errors.every((e) => isStockError(e.code)),
      refusesPromo(result.errors),
    );
  // Below the processor's smallest charge: said now, as the checkout would say it, not at the payment.
  // Likewise above its largest.
  const refusal = chargeLimitRefusal(quotingProcessor(deps, org), result.quote.totalCents, org.currency);
  if (refusal) throw ApiError.validation([refusal.message]);
  return presentQuote(result.quote, org.currency);
}

/**
 * The organization's processor, whose limits a quote is held to. One that cannot be opened (its keys
 * unreadable) holds it to none: the quote still prices, the checkout says why.
 */
function quotingProcessor(deps: AppDeps, org: Organization): PaymentProcessor | undefined {
  try {
    return deps.processors.forOrganization(org) ?? undefined;
  } catch (err) {
    if (err instanceof ProcessorError) return undefined;
    throw err;
  }
}

/** The stock an order takes, with each item's limit from the form. */
function itemsToHold(form: FormRecord, req: CheckoutRequest, quote: Quote): HeldItem[] {
  const c = form.config;
  const items: HeldItem[] = [];
  for (const t of req.tickets ?? []) {
    if (t.quantity <= 0) continue;
    const ticket = c.tickets.find((x) => x.name === t.name);
    if (ticket)
      items.push({ kind: "ticket", key: ticket.name, quantity: t.quantity, limit: ticket.quantity ?? null });
  }
  if (req.product) {
    const group = c.sponsorshipGroups.find((g) => g.groupTitle === req.product?.group);
    const option = group?.options.find((o) => o.optionTitle === req.product?.name);
    if (group && option)
      items.push({
        kind: "product",
        key: productKey(group.groupTitle, option.optionTitle),
        quantity: req.product.quantity ?? 1,
        limit: option.quantity ?? null,
      });
  }
  if (quote.promoCode) {
    const promo = c.promoCodes.find((p) => promoKey(p.code) === promoKey(quote.promoCode ?? ""));
    if (promo)
      items.push({ kind: "promo", key: promoKey(promo.code), quantity: 1, limit: promo.quantity ?? null });
  }
  return items;
}

function soldOutMessage(form: FormRecord, item: HeldItem): string {
  if (item.kind === "ticket") return `tickets: "${item.key}" is sold out`;
  if (item.kind === "promo") return promoRefusal(item.key);
  const [group, name] = JSON.parse(item.key) as [string, string];
  const option = form.config.sponsorshipGroups
    .find((g) => g.groupTitle === group)
    ?.options.find((o) => o.optionTitle === name);
  return `product: "${option?.optionTitle ?? name}" is sold out`;
}

/** Stock that ran out as it was taken: sold out, or (a promo code's last use) a refused code. */
function refuseShort(form: FormRecord, item: HeldItem): never {
  refuse([soldOutMessage(form, item)], item.kind !== "promo", item.kind === "promo");
}

/** Checks everything the form asks of the donor beyond the order; returns the donor part of the details. */
function checkDonor(form: FormRecord, req: CheckoutRequest, details: string[]): PaymentDetails["donor"] {
  const c = form.config;
  const d = req.donor;
  const out: PaymentDetails["donor"] = {};
  if (req.tribute && c.enableTribute !== true)
    details.push("tribute is not taken on this form: it takes no dedication");
  if (d.phone) {
    if (!c.enablePhone) details.push("donor.phone is not collected on this form");
    else out.phone = d.phone;
  }
  if (d.organizationName) {
    if (!c.enableOrganizationName) details.push("donor.organizationName is not collected on this form");
    else out.organizationName = d.organizationName;
  }
  if (d.address) {
    const { country, ...street } = d.address;
    const hasStreet = Object.values(street).some((v) => v);
    if (hasStreet && !c.enableBillingAddress) details.push("donor.address is not collected on this form");
    if (country && !c.enableCountryDropdown && !c.enableBillingAddress)
      details.push("donor.address.country is not collected on this form");
    const address = Object.fromEntries(Object.entries(d.address).filter(([, v]) => v));
    if (Object.keys(address).length) out.address = address;
  }
  if (req.anonymous && !c.enableAnonymous) details.push("anonymous is not enabled on this form");
  return out;
}

/** The processor for this organization's checkouts: 409 when it has none (production, not connected). */
export function checkoutProcessor(deps: AppDeps, org: Organization): PaymentProcessor {
  const processor = deps.processors.forOrganization(org);
  if (!processor)
    throw new ApiError(
      409,
      "This form is not accepting gifts yet: the organization has not connected a payment processor",
    );
  return processor;
}

/** A payment method the processor refused outright (at tokenization): what the payment records of it. */
interface RefusedMethod {
  ok: false;
  code: string;
  message: string;
  type: PaymentMethod["type"];
  last4: string | null;
}

/** The payment method of a checkout, read (or on the sandbox, made) by the processor. */
async function paymentMethodOf(
  processor: PaymentProcessor,
  req: CheckoutRequest,
): Promise<{ ok: true; method: PaymentMethod } | RefusedMethod> {
  const pm = req.paymentMethod;
  if (!pm) throw ApiError.validation(["paymentMethod is required"]);
  if (pm.type === "token") {
    const method = await processor.retrievePaymentMethod(pm.token);
    if (!method)
      throw ApiError.validation([
        "paymentMethod.token is not a valid payment method (unknown, expired or used)",
      ]);
    return { ok: true, method };
  }
  if (processor.collection === "browser")
    throw ApiError.validation([
      'paymentMethod: this organization takes card and bank details only in its processor\'s own fields on the page; send { type: "token", token } from them',
    ]);
  const created = await processor.createPaymentMethod(pm);
  if (created.ok) return { ok: true, method: created.method };
  if (created.code === "card_declined") {
    const digits = (pm.type === "card" ? pm.number : pm.accountNumber).replace(/\D/g, "");
    return {
      ok: false,
      code: created.code,
      message: created.message,
      type: pm.type,
      last4: digits.length >= 4 ? digits.slice(-4) : null,
    };
  }
  throw ApiError.validation([`paymentMethod ${created.message}`]);
}

/** Runs a checkout from a validated request. Declines are results (402), not exceptions. */
export async function runCheckout(
  deps: AppDeps,
  formId: string,
  req: CheckoutRequest,
  donorSide: {
    /** The request's Accept-Language: the donor's language when the body names none. */
    acceptLanguage?: string | undefined;
    /** The page the donor is on: where a payment method that needs a redirect brings them back. */
    returnUrl?: string | undefined;
  } = {},
  /** The donor's customer that a first attempt found gone at the processor (nothing else was done). */
  goneCustomer?: string,
): Promise<FinalizedCheckout> {
  const db = deps.store.db;
  const { form, org } = await loadSubmittableForm(deps.store, formId);
  // The figures the donor saw were in the currency the page named; the same figures in another are not
  // what they agreed to pay.
  if (req.currency !== undefined && req.currency !== org.currency)
    throw new ApiError(
      409,
      `This form's amounts are now in ${org.currency}, not in ${req.currency} as on your page: reload the page to see them. Nothing was charged.`,
    );
  const processor = checkoutProcessor(deps, org);
  const details: string[] = [];
  const donor = checkDonor(form, req, details);
  const answers = checkAnswers(form.config, org.globalCustomInputs, req.customInputs, details);
  const priced = pricingErrors(form, org, req, await stockTaken(db, form));
  let soldOut = false;
  if (!priced.ok) {
    details.push(...priced.errors.map((e) => e.message));
    soldOut = details.length === priced.errors.length && priced.errors.every((e) => isStockError(e.code));
  }
  const quote = priced.ok ? priced.quote : null;
  if (quote && quote.totalCents > 0 && !req.paymentMethod) details.push("paymentMethod is required");
  // As Stripe's US bank accounts: dollars only (the page offers a bank account only to such forms).
  if (req.paymentMethod?.type === "bank" && org.currency !== "USD")
    details.push(
      `paymentMethod Bank accounts pay in US dollars only, and this form takes ${org.currency}: pay by card`,
    );
  if (details.length || !quote) refuse(details, soldOut, !priced.ok && refusesPromo(priced.errors));

  const charged = quote.totalCents > 0;
  const tokenized = charged ? await paymentMethodOf(processor, req) : null;
  const method = tokenized?.ok ? tokenized.method : null;
  const refused = tokenized?.ok === false ? tokenized : null;
  const customer = method ? await customerFor(deps, processor, org, req.donor, goneCustomer) : null;

  const now = deps.now();
  const nowIso = isoAt(now);
  const paymentId = prefixedId("pay", now);
  const hold = itemsToHold(form, req, quote);
  // Decided once and kept with the payment: its receipts, this answer's words and its recurring charges'.
  const language = chooseLanguage(req.language, donorSide.acceptLanguage, org.language);
  const paymentDetails: PaymentDetails = {
    lines: quote.lines,
    subtotalCents: quote.subtotalCents,
    discountCents: quote.discountCents,
    promoCode: quote.promoCode,
    attendees: quote.attendees,
    customInputs: answers,
    utm: req.utm ?? {},
    donor,
    hold,
    ...(req.elementId ? { elementId: req.elementId } : {}),
    ...(req.emailOptIn !== undefined ? { emailOptIn: req.emailOptIn } : {}),
    ...(customer ? { processorCustomer: customer } : {}),
    // Refused above unless the form takes dedications.
    ...(req.tribute ? { tribute: req.tribute } : {}),
    ...(language !== DEFAULT_LANGUAGE ? { language } : {}),
  };
  const row: PaymentsTable = {
    id: paymentId,
    organization_id: org.id,
    form_id: form.id,
    contact_id: null,
    subscription_id: null,
    status: "PROCESSING",
    amount_cents: quote.totalCents,
    fee_cents: quote.feeCents,
    refunded_cents: 0,
    currency: org.currency,
    fund: quote.fund,
    form_title: form.config.title,
    frequency: quote.frequency,
    cover_fees: quote.coverFees ? 1 : 0,
    anonymous: req.anonymous ? 1 : 0,
    email: req.donor.email,
    email_key: emailKey(req.donor.email),
    first_name: req.donor.firstName,
    last_name: req.donor.lastName,
    payment_method_type: method?.type ?? refused?.type ?? "none",
    card_brand: method?.type === "card" ? (method.brand ?? null) : null,
    last4: method?.last4 ?? refused?.last4 ?? null,
    fingerprint: method?.fingerprint ?? null,
    processor_payment_id: null,
    charge_key: checkoutChargeKey(paymentId),
    failure_code: null,
    failure_message: null,
    details: JSON.stringify(paymentDetails),
    processor: charged ? processor.name : "none",
    dispute: null,
    // The process charging it: should it die, recovery takes the payment over at once (recovery.ts).
    claimed_by: deps.processId ?? null,
    created_at: nowIso,
    updated_at: nowIso,
  };
  const loaded = { form, org, email: row.email };

  if (!charged) {
    // Free: nothing to charge, so nothing to wait for; the stock and the record in one transaction.
    const done = await deps.store.transact(async (trx) => {
      const missing = await takeItems(trx, form, hold);
      if (missing) return { short: missing } as const;
      const settled = await settlePayment(
        trx,
        { nowMs: deps.now(), publicUrl: deps.config.publicUrl },
        { row },
        { to: "COMPLETED", processorPaymentId: null },
        loaded,
      );
      return { short: null, settled } as const;
    });
    if (done.short) refuseShort(form, done.short);
    return checkoutAnswer(done.settled, org.timeZone);
  }

  if (!method) {
    // Refused by the processor before any payment was made (card testing looks like this): recorded as
    // a FAILED payment the organization sees, as a declined charge is.
    const failure = refused ?? { code: "processing_error", message: "The payment method was refused" };
    const missing = await recordHeld(deps, form, hold, row, null);
    if (missing) refuseShort(form, missing);
    return finalizeCheckout(
      deps,
      paymentId,
      { to: "FAILED", processorPaymentId: null, code: failure.code, message: failure.message },
      loaded,
    );
  }

  const input: ChargeInput = {
    amountCents: quote.totalCents,
    currency: org.currency,
    paymentMethod: method.token,
    idempotencyKey: row.charge_key,
    description: `${form.config.formType === "EVENT" ? "Order" : "Donation"}: ${form.config.title}`,
    offSession: false,
    saveForFutureUse: quote.frequency !== "ONE_TIME",
    ...(customer ? { customer } : {}),
    statementName: org.name,
    returnUrl:
      donorSide.returnUrl ??
      `${deps.config.publicUrl}/${form.config.formType === "EVENT" ? "attend" : "donate"}/${form.id}`,
    metadata: { almoner_payment: paymentId, almoner_form: form.id, almoner_organization: org.id },
  };
  // Step 2, once the processor has made its payment (before it moves money): the stock and the PROCESSING
  // payment, with the processor's id, in one write, which also refuses a card declined too often. Sold out
  // or refused: the processor is stopped before it charges.
  let held = false;
  const cap = declineCap(deps, method.fingerprint);
  const takeStock = async (processorPaymentId: string | null) => {
    const missing = await recordHeld(
      deps,
      form,
      hold,
      { ...row, processor_payment_id: processorPaymentId },
      cap,
    );
    if (missing) throw new SoldOut(missing);
    held = true;
  };
  let charge: ChargeResult;
  try {
    charge = await processor.charge(input, { created: takeStock });
  } catch (error) {
    if (error instanceof SoldOut) refuseShort(form, error.item);
    // The processor made the payment, then could not be heard from: it may have gone through. It stays
    // PROCESSING (holding its stock) until recovery asks the processor by its id; the donor must not pay again.
    if (held)
      throw paymentInDoubt(
        paymentId,
        "We could not hear back from the payment processor. Please do not pay again: if the payment went through, a receipt will reach you by email within a few minutes.",
      );
    // Nothing reached the processor's money-moving step, and nothing was recorded.
    // The donor's customer deleted at the processor (an erasure request): once, with a new customer.
    if (error instanceof CustomerMissing && customer && !goneCustomer)
      return runCheckout(deps, formId, req, donorSide, customer);
    if (error instanceof ProcessorError && error.code === "unavailable")
      throw new ApiError(503, PROCESSOR_DOWN_MESSAGE, undefined, { "Retry-After": "30" });
    throw error;
  }
  // A method refused before any payment was made (no id): the attempt is recorded all the same.
  if (!held) {
    if (charge.status !== "failed")
      throw new Error(`${processor.name} charged without making a payment first`);
    try {
      await takeStock(null);
    } catch (error) {
      if (error instanceof SoldOut) refuseShort(form, error.item);
      throw error;
    }
  }
  if (charge.status === "requires_action") return actionAnswer(row, charge.clientSecret);
  try {
    return await finalizeCheckout(
      deps,
      paymentId,
      outcomeOfCharge(charge, customer) as PaymentOutcome,
      loaded,
    );
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) throw error;
    // The processor has answered; the payment stays PROCESSING until recovery records that answer.
    console.error(`checkout ${paymentId}: recording the processor's answer failed: ${errorMessage(error)}`);
    throw paymentInDoubt(
      paymentId,
      "We could not record your payment yet. Please do not pay again: if the payment went through, a receipt will reach you by email within a few minutes.",
    );
  }
}

/**
 * The answer once the processor holds a payment whose outcome is not recorded: a 503 with the payment's
 * id, kept under the request's Idempotency-Key (ApiError's `ran`), so that a retry with the same key is
 * told the same instead of paying again.
 */
function paymentInDoubt(paymentId: string, message: string): ApiError {
  return new ApiError(503, message, undefined, undefined, { paymentID: paymentId }, true);
}

/**
 * Takes the order's stock and inserts its payment, in one transaction; an order without stock to take is
 * the insert alone. Returns the item that ran out, or null. With a cap on the card's declines, the insert
 * counts them in the same statement; over the cap nothing is written and the 429 is thrown.
 */
async function recordHeld(
  deps: AppDeps,
  form: FormRecord,
  hold: HeldItem[],
  row: PaymentsTable,
  cap: DeclineCap | null,
): Promise<HeldItem | null> {
  const insert = (db: Db) => insertPaymentUnlessDeclined(db, row, cap);
  if (hold.length === 0) {
    if (!(await writeOne(deps.store, insert))) throw await cardDeclinedTooOften(deps, cap);
    return null;
  }
  return deps.store
    .transact(async (trx) => {
      const short = await takeItems(trx, form, hold);
      if (short) return short;
      // Thrown inside the transaction: the stock just taken is given back with it.
      if (!(await insert(trx))) throw new CardOverCap();
      return null;
    })
    .catch(async (err: unknown) => {
      // Answered once the transaction has ended: its Retry-After is read outside it.
      if (err instanceof CardOverCap) throw await cardDeclinedTooOften(deps, cap);
      throw err;
    });
}

/** The card was over its cap of declines: nothing was written. */
class CardOverCap extends Error {}

/** The stock an order needs ran out while the processor was making its payment. */
class SoldOut extends Error {
  constructor(readonly item: HeldItem) {
    super("sold out");
  }
}

/**
 * The donor's page back from confirming a payment with their bank (3-D Secure): the processor is asked
 * how the payment stands and the outcome is recorded. Safe to call any number of times: a payment that is
 * recorded already is answered as it was.
 */
export async function completeCheckout(
  deps: AppDeps,
  formId: string,
  paymentId: string,
): Promise<FinalizedCheckout> {
  const { form, org } = await loadPublicForm(deps.store, formId);
  const row = PAYMENT_ID.test(paymentId) ? await findPayment(deps.store.db, paymentId) : undefined;
  if (!row || row.form_id !== form.id || chargeOrigin(row.charge_key).kind !== "checkout")
    throw new ApiError(404, "Payment not found");
  if (row.status !== "PROCESSING")
    return checkoutAnswer(await paymentWithGift(deps.store.db, row), org.timeZone);
  if (!row.processor_payment_id)
    throw new ApiError(409, "This payment is still being processed; try again in a moment");
  const processor = deps.processors.named(row.processor, org);
  const lookup = await processor.retrievePayment(row.processor_payment_id);
  if (!lookup) throw new ApiError(404, "Payment not found");
  if (lookup.status === "requires_action" && lookup.clientSecret)
    return actionAnswer(row, lookup.clientSecret);
  const outcome = outcomeOfLookup(lookup, paymentDetailsOf(row).processorCustomer ?? null);
  if (!outcome) throw new ApiError(409, "This payment still waits for the donor's confirmation");
  return finalizeCheckout(deps, row.id, outcome, { form, org, email: row.email });
}

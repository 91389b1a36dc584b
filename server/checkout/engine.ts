import { centsToDollars } from "../../shared/money.js";
import { type Availability, priceOrder, productKey, promoKey, type Quote } from "../../shared/pricing.js";
import { type CheckoutRequest, type QuoteRequest, toOrderInput } from "../../shared/schemas/checkout.js";
import type { AppDeps } from "../api/env.js";
import { ApiError } from "../errors.js";
import { isUuid, prefixedId } from "../ids.js";
import type { Store } from "../store/database.js";
import { type FormRecord, findFormCached } from "../store/forms.js";
import { type HeldItem, stockTaken, takeItems } from "../store/inventory.js";
import { getOrganizationCached, type Organization } from "../store/organizations.js";
import { insertPayment, type PaymentDetails } from "../store/payments.js";
import type { PaymentsTable } from "../store/schema.js";
import { checkAnswers } from "./answers.js";
import {
  type ChargeOutcome,
  type FinalizedCheckout,
  finalizeCheckout,
  outcomeOf,
  recordOutcome,
} from "./finalize.js";
import { checkFingerprint } from "./guards.js";
import type { ChargeInput, PaymentMethod, PaymentProcessor } from "./processor.js";

/** Every checkout payment's `charge_key` (its idempotency key at the processor) starts with this; billing charges' with `sub:`. */
export const CHECKOUT_CHARGE_PREFIX = "checkout:";

/**
 * The donor checkout (issue: money in). A checkout runs in three steps so that no database transaction
 * ever waits on the payment processor:
 *  1. validate and price on the server, tokenize the payment method (card data goes to the processor only);
 *  2. one short transaction takes the stock (tickets, products, promo redemptions) with atomic conditional
 *     updates and writes the payment as PROCESSING, which holds that stock;
 *  3. the processor charges, with the payment's own idempotency key, so it can never charge twice;
 *     then one transaction records the outcome (`finalize.ts`): payment, contact, subscription, events, receipt.
 * A processor that keeps its memory in this database (the sandbox, `PaymentProcessor.inTransaction`) is
 * no outside party to wait on: steps 2 and 3 then run in one transaction (the payment written once, with
 * its outcome), so its charge is recorded exactly when the payment is, and a checkout costs one write
 * transaction instead of three.
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

export function presentQuote(q: Quote) {
  return {
    currency: "USD",
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
  );
  return result;
}

/** Errors that are only about stock running out (tickets, products, promo-code redemptions). */
function isStockError(code: string): boolean {
  return code === "sold_out" || code === "promo_exhausted";
}

/** Throws the 400 for a list of problems; one that is only about stock says "sold out" up front. */
function refuse(details: string[], soldOut: boolean): never {
  if (soldOut) throw new ApiError(400, `Sold out: ${details.join("; ")}`, details);
  throw ApiError.validation(details);
}

export async function quoteOrder(deps: AppDeps, formId: string, req: QuoteRequest): Promise<QuoteView> {
  const { form, org } = await loadSubmittableForm(deps.store, formId);
  const result = pricingErrors(form, org, req, await stockTaken(deps.store.db, form));
  if (!result.ok)
    refuse(
      result.errors.map((e) => e.message),
      result.errors.every((e) => isStockError(e.code)),
    );
  return presentQuote(result.quote);
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
  if (item.kind === "promo") return `promoCode: this promo code has reached its redemption limit`;
  const [group, name] = JSON.parse(item.key) as [string, string];
  const option = form.config.sponsorshipGroups
    .find((g) => g.groupTitle === group)
    ?.options.find((o) => o.optionTitle === name);
  return `product: "${option?.optionTitle ?? name}" is sold out`;
}

/** Checks everything the form asks of the donor beyond the order; returns the donor part of the details. */
function checkDonor(form: FormRecord, req: CheckoutRequest, details: string[]): PaymentDetails["donor"] {
  const c = form.config;
  const d = req.donor;
  const out: PaymentDetails["donor"] = {};
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

/** Runs a checkout from a validated request. Declines are results (402), not exceptions. */
export async function runCheckout(
  deps: AppDeps,
  formId: string,
  req: CheckoutRequest,
): Promise<FinalizedCheckout> {
  const db = deps.store.db;
  const { form, org } = await loadSubmittableForm(deps.store, formId);
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
  if (details.length || !quote) refuse(details, soldOut);

  // Tokenize: card and bank details reach the processor only; from here on we hold a token.
  let method: PaymentMethod | null = null;
  if (quote.totalCents > 0 && req.paymentMethod) {
    const pm = req.paymentMethod;
    if (pm.type === "token") {
      method = await deps.processor.retrievePaymentMethod(pm.token);
      if (!method) throw ApiError.validation(["paymentMethod.token is not a valid payment method"]);
    } else {
      const created = await deps.processor.createPaymentMethod(pm);
      if (!created.ok) {
        if (created.code === "card_declined")
          throw new ApiError(402, created.message, undefined, undefined, { code: created.code });
        throw ApiError.validation([`paymentMethod ${created.message}`]);
      }
      method = created.method;
    }
    await checkFingerprint(deps, method.fingerprint);
  }

  const now = deps.now();
  const nowIso = new Date(now).toISOString();
  const paymentId = prefixedId("pay");
  const hold = itemsToHold(form, req, quote);
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
    currency: "USD",
    fund: quote.fund,
    form_title: form.config.title,
    frequency: quote.frequency,
    cover_fees: quote.coverFees ? 1 : 0,
    anonymous: req.anonymous ? 1 : 0,
    email: req.donor.email,
    first_name: req.donor.firstName,
    last_name: req.donor.lastName,
    payment_method_type: method?.type ?? "none",
    card_brand: method?.type === "card" ? (method.brand ?? null) : null,
    last4: method?.last4 ?? null,
    fingerprint: method?.fingerprint ?? null,
    processor_payment_id: null,
    charge_key: `${CHECKOUT_CHARGE_PREFIX}${paymentId}`,
    failure_code: null,
    failure_message: null,
    details: JSON.stringify(paymentDetails),
    created_at: nowIso,
    updated_at: nowIso,
  };

  const loaded = { form, org, email: row.email };
  const chargeInput: ChargeInput | null = method && {
    amountCents: quote.totalCents,
    currency: "USD",
    paymentMethod: method.token,
    idempotencyKey: row.charge_key,
    description: `${form.config.formType === "EVENT" ? "Order" : "Donation"}: ${form.config.title}`,
    offSession: false,
    saveForFutureUse: quote.frequency !== "ONE_TIME",
    metadata: { paymentId, formId: form.id },
  };

  const inTransaction = deps.processor.inTransaction?.bind(deps.processor);
  if (inTransaction) {
    // The processor remembers its charges in this database: hold, charge and record in one transaction,
    // where the payment is written once, with its outcome.
    type Done = { short: HeldItem } | { short: null; result: FinalizedCheckout; error?: unknown };
    const done = await deps.store.transact(async (trx): Promise<Done> => {
      const missing = await takeItems(trx, form.id, hold);
      if (missing) return { short: missing };
      const charged = await chargeOutcome(inTransaction(trx), chargeInput);
      const result = await recordOutcome(trx, deps, { row }, charged.outcome, loaded);
      return { short: null, result, error: charged.error };
    });
    if (done.short) refuse([soldOutMessage(form, done.short)], true);
    if (done.error !== undefined) throw done.error;
    return done.result;
  }

  const short = await deps.store.transact(async (trx) => {
    const missing = await takeItems(trx, form.id, hold);
    if (missing) return missing;
    await insertPayment(trx, row);
    return null;
  });
  if (short) refuse([soldOutMessage(form, short)], true);
  const charged = await chargeOutcome(deps.processor, chargeInput);
  const result = await finalizeCheckout(deps, paymentId, charged.outcome, loaded);
  if (charged.error !== undefined) throw charged.error;
  return result;
}

/**
 * Charges (none for a free order). An outage or a bug at the processor is recorded as a failed attempt,
 * so the stock goes back, and reported to the donor after that record (`error`).
 */
async function chargeOutcome(
  processor: PaymentProcessor,
  input: ChargeInput | null,
): Promise<{ outcome: ChargeOutcome; error?: unknown }> {
  if (!input) return { outcome: { kind: "free" } };
  try {
    return { outcome: outcomeOf(await processor.charge(input)) };
  } catch (error) {
    return {
      outcome: {
        kind: "failed",
        processorPaymentId: null,
        code: "processing_error",
        message: "The payment could not be processed. Nothing was charged; please try again.",
      },
      error,
    };
  }
}

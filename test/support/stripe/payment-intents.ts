/**
 * PaymentIntents and their status machine: requires_payment_method → requires_confirmation →
 * (requires_action →) processing / succeeded, declines back to requires_payment_method, canceled.
 */

import { createCharge, mandateId } from "./charges.js";
import { useConfirmationToken } from "./confirmation-tokens.js";
import { openDisputeOn } from "./disputes.js";
import {
  cardError,
  type Decline,
  invalidParam,
  invalidRequest,
  missingParam,
  unexpectedState,
} from "./errors.js";
import { clientSecret, newId } from "./ids.js";
import {
  cardOutcome,
  checkReturnUrl,
  checkUrl,
  formatAmount,
  MINIMUM_AMOUNTS,
  microdepositsAction,
  PAYMENT_AUTHENTICATION_FAILURE,
  threeDSecureAction,
} from "./outcomes.js";
import { mergeMetadata, type Params } from "./params.js";
import {
  attachPaymentMethod,
  CONSUMED_MESSAGE,
  createPaymentMethod,
  instrumentFromData,
  instrumentOf,
  resolvePaymentMethod,
} from "./payment-methods.js";
import { type Op, snapshot } from "./state.js";
import {
  bankBehaviour,
  cardBehaviour,
  MICRODEPOSIT_AMOUNTS,
  MICRODEPOSIT_DESCRIPTOR_CODE,
} from "./test-data.js";
import type {
  ChargeObject,
  CustomerObject,
  PaymentIntentObject,
  PaymentMethodObject,
  StoredRecord,
} from "./types.js";

const SUPPORTED_TYPES = ["card", "us_bank_account", "link"];

function automaticTypes(currency: string): string[] {
  return currency === "usd" ? ["card", "link", "us_bank_account"] : ["card", "link"];
}

function checkAmount(amount: number, currency: string): void {
  const minimum = MINIMUM_AMOUNTS[currency];
  if (minimum !== undefined && amount < minimum)
    throw invalidRequest(`Amount must be at least ${formatAmount(minimum, currency)} ${currency}`, {
      param: "amount",
      code: "amount_too_small",
    });
  if (amount > 99_999_999)
    throw invalidRequest(`Amount must be no more than ${formatAmount(99_999_999, currency)}`, {
      param: "amount",
      code: "amount_too_large",
    });
}

function readCurrency(p: Params): string {
  const currency = p.reqStr("currency").toLowerCase();
  if (!/^[a-z]{3}$/.test(currency)) throw invalidParam("currency", `Invalid currency: ${currency}`);
  return currency;
}

function readOffSession(p: Params): boolean {
  const v = p.str("off_session");
  if (v === undefined || v === "" || v === "false") return false;
  if (v === "true" || v === "one_off" || v === "recurring") return true;
  throw invalidParam("off_session", `Invalid off_session: ${v}`);
}

/**
 * `allowed_payment_method_types` (the installed API version's name; `payment_method_types` is accepted as its
 * older alias) or automatic payment methods. Answers the allowed list (null when automatic) and the
 * compatible `payment_method_types` the response shows.
 */
export function readPaymentMethodTypes(
  p: Params,
  currency: string | null,
): {
  allowed: string[] | null;
  types: string[];
  automatic: PaymentIntentObject["automatic_payment_methods"];
} {
  const param = p.has("allowed_payment_method_types")
    ? "allowed_payment_method_types"
    : "payment_method_types";
  if (p.has("allowed_payment_method_types") && p.has("payment_method_types"))
    throw invalidRequest(
      "You may only specify one of these parameters: allowed_payment_method_types, payment_method_types.",
      { param: "payment_method_types", code: "parameters_exclusive" },
    );
  const explicit = p.list(param);
  const apm = p.obj("automatic_payment_methods");
  if (explicit && explicit.length > 0 && apm?.bool("enabled"))
    throw invalidRequest(
      `You may only specify one of these parameters: automatic_payment_methods, ${param}.`,
      {
        param: "automatic_payment_methods",
        code: "parameters_exclusive",
      },
    );
  if (explicit && explicit.length > 0) {
    for (const type of explicit) {
      if (!SUPPORTED_TYPES.includes(type))
        throw invalidParam(
          param,
          `The payment method type "${type}" is invalid or not supported by the Stripe emulator (card, us_bank_account, link).`,
        );
    }
    if (currency && currency !== "usd" && explicit.length === 1 && explicit[0] === "us_bank_account")
      throw invalidRequest(
        `The currency provided (${currency}) is invalid for one or more payment method types on this PaymentIntent. The payment method type us_bank_account only supports usd.`,
        { param: "currency" },
      );
    const types = explicit.filter((t) => t !== "us_bank_account" || !currency || currency === "usd");
    return { allowed: explicit, types, automatic: null };
  }
  const allowRedirects = apm?.oneOf("allow_redirects", ["always", "never"]);
  return {
    allowed: null,
    types: currency ? automaticTypes(currency) : ["card", "link", "us_bank_account"],
    automatic: allowRedirects ? { allow_redirects: allowRedirects, enabled: true } : { enabled: true },
  };
}

function findCustomer(op: Op, id: string): void {
  op.find<CustomerObject>("customer", id, "customer");
}

export function createPaymentIntent(op: Op, p: Params): PaymentIntentObject {
  const amount = p.positiveInt("amount");
  if (amount === undefined) throw missingParam("amount");
  const currency = readCurrency(p);
  checkAmount(amount, currency);
  const customer = p.strOrNull("customer") ?? null;
  if (customer) findCustomer(op, customer);
  const { allowed, types, automatic } = readPaymentMethodTypes(p, currency);
  const capture = p.oneOf("capture_method", ["automatic", "automatic_async", "manual"]);
  if (capture === "manual")
    throw invalidParam("capture_method", "capture_method=manual is not supported by the Stripe emulator.");
  const suffix = p.strOrNull("statement_descriptor_suffix") ?? null;
  if (suffix && suffix.length > 22)
    throw invalidParam(
      "statement_descriptor_suffix",
      "The statement descriptor suffix must be at most 22 characters.",
    );
  const receiptEmail = p.strOrNull("receipt_email") ?? null;
  if (receiptEmail && !/^[^\s@]+@[^\s@]+$/.test(receiptEmail))
    throw invalidParam("receipt_email", `Invalid email address: ${receiptEmail}`);
  const returnUrl = p.strOrNull("return_url") ?? null;
  checkUrl(returnUrl, "return_url");
  const confirm = p.bool("confirm") ?? false;
  if (!confirm && (p.has("return_url") || p.has("off_session")))
    throw invalidRequest(
      `You passed ${p.has("return_url") ? "return_url" : "off_session"}, which can only be used with confirm=true.`,
      { param: p.has("return_url") ? "return_url" : "off_session" },
    );
  const id = newId("pi");
  const pi: PaymentIntentObject = {
    id,
    object: "payment_intent",
    allowed_payment_method_types: allowed,
    amount,
    amount_capturable: 0,
    amount_details: { tip: {} },
    amount_received: 0,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: automatic,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: capture ?? "automatic_async",
    client_secret: clientSecret(id),
    confirmation_method: "automatic",
    created: op.now,
    currency,
    customer,
    customer_account: null,
    description: p.strOrNull("description") ?? null,
    excluded_payment_method_types: null,
    last_payment_error: null,
    latest_charge: null,
    livemode: op.livemode,
    managed_payments: null,
    metadata: p.metadata() ?? {},
    next_action: null,
    on_behalf_of: null,
    payment_method: null,
    payment_method_configuration_details: automatic
      ? { id: `pmc_${op.account.id.slice(5)}`, parent: null }
      : null,
    payment_method_options: {},
    payment_method_types: types,
    payment_record: null,
    processing: null,
    receipt_email: receiptEmail,
    review: null,
    setup_future_usage: p.oneOf("setup_future_usage", ["on_session", "off_session"]) ?? null,
    shipping: null,
    source: null,
    statement_descriptor: p.strOrNull("statement_descriptor") ?? null,
    statement_descriptor_suffix: suffix,
    status: "requires_payment_method",
    transfer_data: null,
    transfer_group: p.strOrNull("transfer_group") ?? null,
  };
  const record = op.put("payment_intent", pi, { returnUrl });
  op.emit("payment_intent.created", pi);
  if (confirm) {
    confirmPaymentIntent(op, record, p);
  } else {
    const pmId = p.str("payment_method");
    const token = p.str("confirmation_token");
    if (pmId) {
      pi.payment_method = resolvePaymentMethod(op, pmId).obj.id;
      pi.status = "requires_confirmation";
    } else if (token) {
      op.find("confirmation_token", token, "confirmation_token");
      record.internal.pendingToken = token;
      pi.status = "requires_confirmation";
    }
  }
  return pi;
}

export function retrievePaymentIntent(op: Op, id: string): StoredRecord<PaymentIntentObject> {
  return op.find<PaymentIntentObject>("payment_intent", id, "intent");
}

export function updatePaymentIntent(op: Op, id: string, p: Params): PaymentIntentObject {
  const record = retrievePaymentIntent(op, id);
  const pi = op.modify(record);
  const open = ["requires_payment_method", "requires_confirmation", "requires_action"].includes(pi.status);
  const needsOpen = [
    "amount",
    "currency",
    "payment_method",
    "setup_future_usage",
    "payment_method_types",
    "customer",
  ];
  for (const key of needsOpen) {
    if (p.has(key) && !open)
      throw unexpectedState(
        `You cannot update this PaymentIntent because it has a status of ${pi.status}. Updates to ${key} are only allowed while the PaymentIntent is in one of these states: requires_payment_method, requires_confirmation, requires_action.`,
        { param: key },
      );
  }
  let reset = false;
  const amount = p.positiveInt("amount");
  if (p.has("currency")) {
    pi.currency = readCurrency(p);
    reset = true;
  }
  if (amount !== undefined) {
    pi.amount = amount;
    reset = true;
  }
  checkAmount(pi.amount, pi.currency);
  if (p.has("payment_method_types") || p.has("allowed_payment_method_types")) {
    const { allowed, types, automatic } = readPaymentMethodTypes(p, pi.currency);
    pi.allowed_payment_method_types = allowed;
    pi.payment_method_types = types;
    pi.automatic_payment_methods = automatic;
    reset = true;
  }
  const customer = p.strOrNull("customer");
  if (customer !== undefined) {
    if (customer) findCustomer(op, customer);
    pi.customer = customer;
  }
  const pmId = p.strOrNull("payment_method");
  if (pmId !== undefined) {
    pi.payment_method = pmId ? resolvePaymentMethod(op, pmId).obj.id : null;
    reset = true;
  }
  const sfu = p.strOrNull("setup_future_usage");
  if (sfu !== undefined) {
    pi.setup_future_usage =
      sfu === null ? null : (p.oneOf("setup_future_usage", ["on_session", "off_session"]) ?? null);
    reset = true;
  }
  for (const key of [
    "description",
    "receipt_email",
    "statement_descriptor_suffix",
    "statement_descriptor",
  ] as const) {
    const value = p.strOrNull(key);
    if (value !== undefined) pi[key] = value;
  }
  pi.metadata = mergeMetadata(pi.metadata, p.metadata());
  if (reset && open) {
    pi.status = pi.payment_method ? "requires_confirmation" : "requires_payment_method";
    pi.next_action = null;
    record.internal.pendingAction = undefined;
  }
  return pi;
}

/** POST /v1/payment_intents/:id/confirm (and create with confirm=true). Throws 402 on a decline. */
export function confirmPaymentIntent(op: Op, record: StoredRecord<PaymentIntentObject>, p: Params): void {
  const pi = op.modify(record);
  if (pi.status === "succeeded")
    throw unexpectedState(
      "You cannot confirm this PaymentIntent because it has already succeeded after being previously confirmed.",
      { payment_intent: snapshot(pi) },
    );
  if (!["requires_payment_method", "requires_confirmation", "requires_action"].includes(pi.status))
    throw unexpectedState(`You cannot confirm this PaymentIntent because it has a status of ${pi.status}.`, {
      payment_intent: snapshot(pi),
    });
  const offSession = readOffSession(p);
  const explicitReturnUrl = p.strOrNull("return_url");
  checkUrl(explicitReturnUrl, "return_url");
  let returnUrl = explicitReturnUrl ?? record.internal.returnUrl ?? null;
  const sfuParam = p.oneOf("setup_future_usage", ["on_session", "off_session"]);
  if (sfuParam) pi.setup_future_usage = sfuParam;

  let pmRecord: StoredRecord<PaymentMethodObject>;
  let useStripeSdk = p.bool("use_stripe_sdk") ?? false;
  const tokenId = p.str("confirmation_token") || record.internal.pendingToken;
  const pmId = p.str("payment_method");
  const pmData = p.obj("payment_method_data");
  if (tokenId) {
    const { token, paymentMethod } = useConfirmationToken(op, tokenId, { paymentIntent: pi.id });
    if ((token.setup_future_usage ?? null) !== (pi.setup_future_usage ?? null))
      throw invalidRequest(
        `The ConfirmationToken's setup_future_usage (${token.setup_future_usage ?? "null"}) does not match the PaymentIntent's setup_future_usage (${pi.setup_future_usage ?? "null"}). Pass the same setupFutureUsage to Elements as setup_future_usage on the PaymentIntent.`,
        { param: "setup_future_usage" },
      );
    returnUrl = explicitReturnUrl ?? token.return_url ?? returnUrl;
    pmRecord = paymentMethod;
    useStripeSdk = true;
    record.internal.pendingToken = undefined;
  } else if (pmId) {
    pmRecord = resolvePaymentMethod(op, pmId);
  } else if (pmData) {
    const verification = p.obj("payment_method_options")?.obj("us_bank_account")?.str("verification_method");
    const { instrument, billing } = instrumentFromData(op, pmData, verification);
    pmRecord = createPaymentMethod(op, instrument, billing);
  } else if (pi.payment_method) {
    pmRecord = op.find<PaymentMethodObject>("payment_method", pi.payment_method, "payment_method");
  } else {
    throw unexpectedState(
      "You cannot confirm this PaymentIntent because it's missing a payment method. You can either update the PaymentIntent with a payment method and then confirm it again, or confirm it again directly with a payment method or ConfirmationToken.",
      { payment_intent: snapshot(pi) },
    );
  }
  const pm = pmRecord.obj;
  if (!pi.payment_method_types.includes(pm.type))
    throw invalidRequest(
      `The PaymentMethod provided (${pm.type}) is not allowed for this PaymentIntent. Please attach a PaymentMethod of one of the following types: ${pi.payment_method_types.join(", ")}. Alternatively update the allowed_payment_method_types for this PaymentIntent to include "${pm.type}".`,
      { param: "payment_method" },
    );
  if (pm.customer && !pi.customer)
    throw invalidRequest(
      "The PaymentMethod you provided belongs to a Customer, but you did not provide the Customer. Please include the Customer in the `customer` parameter on the PaymentIntent.",
      { param: "payment_method" },
    );
  if (pm.customer && pi.customer && pm.customer !== pi.customer)
    throw invalidRequest(
      `The provided PaymentMethod ${pm.id} belongs to a different Customer than ${pi.customer}. Use a PaymentMethod attached to the PaymentIntent's Customer.`,
      { param: "payment_method" },
    );
  if (pmRecord.internal.consumed && !pm.customer)
    throw invalidRequest(CONSUMED_MESSAGE, { param: "payment_method" });
  if (offSession && (!pi.customer || pm.customer !== pi.customer))
    throw invalidRequest(
      `The PaymentMethod ${pm.id} must be attached to the PaymentIntent's Customer${pi.customer ? ` (${pi.customer})` : ""} to be used off-session: save it first (setup_future_usage or a SetupIntent with a customer).`,
      { param: "payment_method" },
    );
  checkReturnUrl("PaymentIntent", pi.automatic_payment_methods, returnUrl, offSession);
  if (!op.account.chargesEnabled && op.livemode)
    throw invalidRequest("Your account cannot currently make live charges.", { code: "account_invalid" });

  record.internal.offSession = offSession;
  record.internal.returnUrl = returnUrl;
  record.internal.pendingAction = undefined;
  pi.payment_method = pm.id;
  pi.last_payment_error = null;
  pi.next_action = null;

  const instrument = instrumentOf(pmRecord);
  if (instrument.kind === "bank") {
    if (instrument.microdeposits && !pmRecord.internal.offSessionReady) {
      pi.status = "requires_action";
      pi.next_action = microdepositsAction(op, pi.id);
      record.internal.pendingAction = "microdeposits";
      op.emit("payment_intent.requires_action", pi);
      return;
    }
    startBankDebit(op, record, pmRecord);
    return;
  }
  const outcome = cardOutcome(op, instrument, {
    setup: false,
    offSession,
    offSessionReady: pmRecord.internal.offSessionReady === true,
  });
  if (outcome.kind === "succeed") {
    succeedCardPayment(op, record, pmRecord, false);
  } else if (outcome.kind === "action") {
    pi.status = "requires_action";
    pi.next_action = threeDSecureAction(op, pi.id, pi.client_secret, returnUrl, useStripeSdk);
    record.internal.pendingAction = "three_d_secure";
    op.emit("payment_intent.requires_action", pi);
  } else {
    declinePayment(op, record, pmRecord, outcome.decline);
  }
}

/** Saves the PaymentMethod to the PaymentIntent's customer when the payment asked for it. */
function saveIfAsked(
  op: Op,
  record: StoredRecord<PaymentIntentObject>,
  pmRecord: StoredRecord<PaymentMethodObject>,
  authenticated: boolean,
): void {
  const pi = record.obj;
  const wantsSave = pi.setup_future_usage !== null || record.internal.offSession === true;
  if (pi.customer && wantsSave) {
    op.modify(pmRecord);
    attachPaymentMethod(op, pmRecord, pi.customer);
    if (pi.setup_future_usage === "off_session" && (authenticated || pmRecord.obj.type === "us_bank_account"))
      pmRecord.internal.offSessionReady = true;
  } else if (!pmRecord.obj.customer) {
    op.modify(pmRecord);
    pmRecord.internal.consumed = true;
  }
}

function succeedCardPayment(
  op: Op,
  record: StoredRecord<PaymentIntentObject>,
  pmRecord: StoredRecord<PaymentMethodObject>,
  threeDSecure: boolean,
): void {
  const pi = op.modify(record);
  const instrument = instrumentOf(pmRecord);
  const behaviour = instrument.kind === "card" ? cardBehaviour(instrument.number) : null;
  // A card that needs no authentication is as good as authenticated for later off-session use.
  saveIfAsked(op, record, pmRecord, threeDSecure || behaviour?.kind !== "auth_unless_set_up");
  const charge = createCharge(op, pi, pmRecord.obj, "succeeded", { threeDSecure });
  pi.status = "succeeded";
  pi.amount_received = pi.amount;
  pi.latest_charge = charge.obj.id;
  pi.next_action = null;
  pi.last_payment_error = null;
  op.emit("charge.succeeded", charge.obj);
  op.emit("payment_intent.succeeded", pi);
  if (behaviour?.kind === "dispute")
    scheduleDispute(op, charge.obj, behaviour.reason, behaviour.inquiry === true);
}

function scheduleDispute(op: Op, charge: ChargeObject, reason: string, inquiry: boolean): void {
  const delay = op.env.followUpDelayMs;
  if (delay === null) return;
  const chargeId = charge.id;
  op.env.followUp(op, delay, (later) => {
    const current = later.findOptional<ChargeObject>("charge", chargeId);
    if (current && !current.obj.disputed) openDisputeOn(later, current, { reason, inquiry });
  });
}

function declinePayment(
  op: Op,
  record: StoredRecord<PaymentIntentObject>,
  pmRecord: StoredRecord<PaymentMethodObject>,
  decline: Decline,
): never {
  const pi = op.modify(record);
  const pm = pmRecord.obj;
  const charge = createCharge(op, pi, pm, "failed", { decline });
  // As on Stripe, a failed confirmation leaves no method on the PaymentIntent (even an off-session
  // `authentication_required` one): it is only in `last_payment_error.payment_method`, whence a retry
  // passes it again (`payment_method` on the next confirm).
  pi.status = "requires_payment_method";
  pi.latest_charge = charge.obj.id;
  pi.next_action = null;
  pi.payment_method = null;
  pi.last_payment_error = {
    charge: charge.obj.id,
    code: decline.code,
    ...(decline.decline_code ? { decline_code: decline.decline_code } : {}),
    doc_url: `https://stripe.com/docs/error-codes/${decline.code.replace(/_/g, "-")}`,
    message: decline.message,
    ...(decline.param ? { param: decline.param } : {}),
    payment_method: snapshot(pm),
    type: "card_error",
  };
  op.emit("charge.failed", charge.obj);
  op.emit("payment_intent.payment_failed", pi);
  throw cardError(decline, {
    charge: charge.obj.id,
    payment_intent: snapshot(pi),
    payment_method: snapshot(pm),
    request_log_url: `https://dashboard.stripe.com/test/logs/${op.request.id ?? ""}`,
  });
}

function startBankDebit(
  op: Op,
  record: StoredRecord<PaymentIntentObject>,
  pmRecord: StoredRecord<PaymentMethodObject>,
): void {
  const pi = op.modify(record);
  saveIfAsked(op, record, pmRecord, true);
  const charge = createCharge(op, pi, pmRecord.obj, "pending", { mandate: mandateId() });
  pi.status = "processing";
  pi.latest_charge = charge.obj.id;
  pi.next_action = null;
  op.emit("charge.pending", charge.obj);
  op.emit("payment_intent.processing", pi);
}

/** Control: the ACH debit settles, succeeding or failing as the test account number says. */
export function settleBankPayment(op: Op, id: string): PaymentIntentObject {
  const record = retrievePaymentIntent(op, id);
  const pi = record.obj;
  if (pi.status !== "processing" || !pi.latest_charge)
    throw invalidRequest(`PaymentIntent ${id} is not a processing bank payment (status ${pi.status}).`);
  const pmRecord = op.find<PaymentMethodObject>("payment_method", pi.payment_method ?? "", "payment_method");
  const instrument = instrumentOf(pmRecord);
  if (instrument.kind !== "bank") throw invalidRequest(`PaymentIntent ${id} is not paid by bank account.`);
  const behaviour = bankBehaviour(instrument.account);
  if (behaviour.kind === "stay_processing") return pi;
  const chargeRecord = op.find<ChargeObject>("charge", pi.latest_charge);
  const charge = op.modify(chargeRecord);
  op.modify(record);
  if (behaviour.kind === "fail") {
    charge.status = "failed";
    charge.paid = false;
    charge.captured = false;
    charge.amount_captured = 0;
    charge.failure_code = behaviour.code;
    charge.failure_message = behaviour.message;
    charge.failure_balance_transaction = newId("txn");
    charge.outcome = {
      network_status: "declined_by_network",
      reason: null,
      risk_level: "not_assessed",
      seller_message: behaviour.message,
      type: "issuer_declined",
    };
    pi.status = "requires_payment_method";
    pi.payment_method = null;
    pi.last_payment_error = {
      code: behaviour.code,
      doc_url: `https://stripe.com/docs/error-codes/${behaviour.code.replace(/_/g, "-")}`,
      message: behaviour.message,
      payment_method: snapshot(pmRecord.obj),
      payment_method_type: "us_bank_account",
      type: "card_error",
    };
    op.emit("charge.failed", charge);
    op.emit("payment_intent.payment_failed", pi);
    return pi;
  }
  charge.status = "succeeded";
  charge.paid = true;
  pi.status = "succeeded";
  pi.amount_received = pi.amount;
  op.emit("charge.succeeded", charge);
  op.emit("payment_intent.succeeded", pi);
  if (behaviour.kind === "dispute") scheduleDispute(op, charge, "fraudulent", false);
  return pi;
}

/** Control / API: the customer verified the microdeposits; the debit starts (`processing`). */
export function verifyPaymentIntentMicrodeposits(op: Op, id: string, p?: Params): PaymentIntentObject {
  const record = retrievePaymentIntent(op, id);
  const pi = record.obj;
  if (pi.status !== "requires_action" || record.internal.pendingAction !== "microdeposits")
    throw unexpectedState(
      `PaymentIntent ${id} is not waiting for microdeposit verification (status ${pi.status}).`,
      { payment_intent: snapshot(pi) },
    );
  if (p) checkMicrodepositValues(p);
  const pmRecord = op.find<PaymentMethodObject>("payment_method", pi.payment_method ?? "", "payment_method");
  op.modify(pmRecord);
  pmRecord.internal.offSessionReady = true;
  op.modify(record);
  record.internal.pendingAction = undefined;
  startBankDebit(op, record, pmRecord);
  return pi;
}

/** Stripe's test values: amounts 32 and 45, or descriptor code SM11AA. */
export function checkMicrodepositValues(p: Params): void {
  const amounts = p.list("amounts");
  const code = p.str("descriptor_code");
  if (amounts && amounts.length > 0) {
    const given = amounts.map(Number).sort((a, b) => a - b);
    if (given.length !== 2 || given[0] !== MICRODEPOSIT_AMOUNTS[0] || given[1] !== MICRODEPOSIT_AMOUNTS[1])
      throw invalidRequest(
        "The amounts provided do not match the amounts that were sent to the bank account.",
        {
          param: "amounts",
          code: "payment_method_microdeposit_verification_amounts_mismatch",
        },
      );
    return;
  }
  if (code !== undefined) {
    if (code !== MICRODEPOSIT_DESCRIPTOR_CODE)
      throw invalidRequest(
        "The verification code provided does not match the code sent to the bank account.",
        {
          param: "descriptor_code",
          code: "payment_method_microdeposit_verification_descriptor_code_mismatch",
        },
      );
    return;
  }
  throw missingParam("amounts");
}

/** Control: the 3-D Secure challenge is passed or failed. */
export function authenticatePaymentIntent(
  op: Op,
  id: string,
  result: "succeed" | "fail",
): PaymentIntentObject {
  const record = retrievePaymentIntent(op, id);
  const pi = op.modify(record);
  if (pi.status !== "requires_action" || record.internal.pendingAction !== "three_d_secure")
    throw unexpectedState(
      `PaymentIntent ${id} is not waiting for 3-D Secure authentication (status ${pi.status}).`,
      {
        payment_intent: snapshot(pi),
      },
    );
  const pmRecord = op.find<PaymentMethodObject>("payment_method", pi.payment_method ?? "", "payment_method");
  record.internal.pendingAction = undefined;
  if (result === "succeed") {
    succeedCardPayment(op, record, pmRecord, true);
    return pi;
  }
  pi.status = "requires_payment_method";
  pi.next_action = null;
  pi.payment_method = null;
  pi.last_payment_error = {
    code: "payment_intent_authentication_failure",
    doc_url: "https://stripe.com/docs/error-codes/payment-intent-authentication-failure",
    message: PAYMENT_AUTHENTICATION_FAILURE,
    payment_method: snapshot(pmRecord.obj),
    type: "invalid_request_error",
  };
  if (!pmRecord.obj.customer) {
    op.modify(pmRecord);
    pmRecord.internal.consumed = true;
  }
  op.emit("payment_intent.payment_failed", pi);
  return pi;
}

export function cancelPaymentIntent(op: Op, id: string, p: Params): PaymentIntentObject {
  const record = retrievePaymentIntent(op, id);
  const pi = op.modify(record);
  const cancelable = [
    "requires_payment_method",
    "requires_capture",
    "requires_confirmation",
    "requires_action",
  ];
  const bankProcessing = pi.status === "processing" && pi.payment_method_types.includes("us_bank_account");
  if (!cancelable.includes(pi.status) && !bankProcessing)
    throw unexpectedState(
      `You cannot cancel this PaymentIntent because it has a status of ${pi.status}. Only a PaymentIntent with one of the following statuses may be canceled: requires_payment_method, requires_capture, requires_confirmation, requires_action, processing.`,
      { payment_intent: snapshot(pi) },
    );
  pi.status = "canceled";
  pi.canceled_at = op.now;
  pi.cancellation_reason =
    p.oneOf("cancellation_reason", ["duplicate", "fraudulent", "requested_by_customer", "abandoned"]) ?? null;
  pi.next_action = null;
  record.internal.pendingAction = undefined;
  op.emit("payment_intent.canceled", pi);
  return pi;
}

export function checkClientSecret(
  obj: { client_secret: string },
  p: Params,
  kind: "PaymentIntent" | "SetupIntent",
): void {
  const given = p.str("client_secret");
  if (!given) throw missingParam("client_secret");
  if (given !== obj.client_secret)
    throw invalidRequest(
      `The client_secret provided does not match the client_secret associated with the ${kind}.`,
      {
        param: "client_secret",
        code:
          kind === "PaymentIntent" ? "payment_intent_invalid_parameter" : "setup_intent_invalid_parameter",
      },
    );
}

/** SetupIntents: saving a card or bank account to a customer for later (off-session) payments. */

import { useConfirmationToken } from "./confirmation-tokens.js";
import { cardError, type Decline, invalidRequest } from "./errors.js";
import { clientSecret, newId } from "./ids.js";
import {
  cardOutcome,
  checkReturnUrl,
  checkUrl,
  microdepositsAction,
  SETUP_AUTHENTICATION_FAILURE,
  threeDSecureAction,
} from "./outcomes.js";
import { mergeMetadata, type Params } from "./params.js";
import { checkMicrodepositValues, readPaymentMethodTypes } from "./payment-intents.js";
import {
  attachPaymentMethod,
  CONSUMED_MESSAGE,
  createPaymentMethod,
  instrumentFromData,
  instrumentOf,
  resolvePaymentMethod,
} from "./payment-methods.js";
import { type Op, snapshot } from "./state.js";
import type { CustomerObject, PaymentMethodObject, SetupIntentObject, StoredRecord } from "./types.js";

export function createSetupIntent(op: Op, p: Params): SetupIntentObject {
  const customer = p.strOrNull("customer") ?? null;
  if (customer) op.find<CustomerObject>("customer", customer, "customer");
  const { allowed, types, automatic } = readPaymentMethodTypes(p, null);
  const returnUrl = p.strOrNull("return_url") ?? null;
  checkUrl(returnUrl, "return_url");
  const confirm = p.bool("confirm") ?? false;
  if (!confirm && p.has("return_url"))
    throw invalidRequest("You passed return_url, which can only be used with confirm=true.", {
      param: "return_url",
    });
  const id = newId("seti");
  const si: SetupIntentObject = {
    id,
    object: "setup_intent",
    allowed_payment_method_types: allowed,
    application: null,
    automatic_payment_methods: automatic,
    cancellation_reason: null,
    client_secret: clientSecret(id),
    created: op.now,
    customer,
    customer_account: null,
    description: p.strOrNull("description") ?? null,
    excluded_payment_method_types: null,
    flow_directions: null,
    last_setup_error: null,
    latest_attempt: null,
    livemode: op.livemode,
    managed_payments: null,
    mandate: null,
    metadata: p.metadata() ?? {},
    next_action: null,
    on_behalf_of: null,
    payment_method: null,
    payment_method_configuration_details: automatic
      ? { id: `pmc_${op.account.id.slice(5)}`, parent: null }
      : null,
    payment_method_options: {
      card: { mandate_options: null, network: null, request_three_d_secure: "automatic" },
    },
    payment_method_types: types,
    single_use_mandate: null,
    status: "requires_payment_method",
    usage: p.oneOf("usage", ["on_session", "off_session"]) ?? "off_session",
  };
  const record = op.put("setup_intent", si, { returnUrl });
  op.emit("setup_intent.created", si);
  if (confirm) {
    confirmSetupIntent(op, record, p);
  } else {
    const pmId = p.str("payment_method");
    const token = p.str("confirmation_token");
    if (pmId) {
      si.payment_method = resolvePaymentMethod(op, pmId).obj.id;
      si.status = "requires_confirmation";
    } else if (token) {
      op.find("confirmation_token", token, "confirmation_token");
      record.internal.pendingToken = token;
      si.status = "requires_confirmation";
    }
  }
  return si;
}

export function retrieveSetupIntent(op: Op, id: string): StoredRecord<SetupIntentObject> {
  return op.find<SetupIntentObject>("setup_intent", id, "intent");
}

export function updateSetupIntent(op: Op, id: string, p: Params): SetupIntentObject {
  const record = retrieveSetupIntent(op, id);
  const si = op.modify(record);
  const customer = p.strOrNull("customer");
  if (customer !== undefined) {
    if (customer) op.find<CustomerObject>("customer", customer, "customer");
    si.customer = customer;
  }
  const description = p.strOrNull("description");
  if (description !== undefined) si.description = description;
  si.metadata = mergeMetadata(si.metadata, p.metadata());
  return si;
}

export function confirmSetupIntent(op: Op, record: StoredRecord<SetupIntentObject>, p: Params): void {
  const si = op.modify(record);
  if (!["requires_payment_method", "requires_confirmation", "requires_action"].includes(si.status))
    throw invalidRequest(`You cannot confirm this SetupIntent because it has a status of ${si.status}.`, {
      code: "setup_intent_unexpected_state",
      extra: { setup_intent: snapshot(si) },
    });
  const explicitReturnUrl = p.strOrNull("return_url");
  checkUrl(explicitReturnUrl, "return_url");
  let returnUrl = explicitReturnUrl ?? record.internal.returnUrl ?? null;
  let useStripeSdk = p.bool("use_stripe_sdk") ?? false;
  let pmRecord: StoredRecord<PaymentMethodObject>;
  const tokenId = p.str("confirmation_token") || record.internal.pendingToken;
  const pmId = p.str("payment_method");
  const pmData = p.obj("payment_method_data");
  if (tokenId) {
    const { token, paymentMethod } = useConfirmationToken(op, tokenId, { setupIntent: si.id });
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
  } else if (si.payment_method) {
    pmRecord = op.find<PaymentMethodObject>("payment_method", si.payment_method, "payment_method");
  } else {
    throw invalidRequest(
      "You cannot confirm this SetupIntent because it's missing a payment method. Update the SetupIntent with a payment method and then confirm it again.",
      { code: "setup_intent_unexpected_state", extra: { setup_intent: snapshot(si) } },
    );
  }
  const pm = pmRecord.obj;
  if (!si.payment_method_types.includes(pm.type))
    throw invalidRequest(
      `The PaymentMethod provided (${pm.type}) is not allowed for this SetupIntent. Please attach a PaymentMethod of one of the following types: ${si.payment_method_types.join(", ")}.`,
      { param: "payment_method" },
    );
  if (pm.customer && si.customer && pm.customer !== si.customer)
    throw invalidRequest(
      `The provided PaymentMethod ${pm.id} belongs to a different Customer than ${si.customer}.`,
      {
        param: "payment_method",
      },
    );
  if (pmRecord.internal.consumed && !pm.customer)
    throw invalidRequest(CONSUMED_MESSAGE, { param: "payment_method" });
  checkReturnUrl("SetupIntent", si.automatic_payment_methods, returnUrl, false);

  record.internal.returnUrl = returnUrl;
  record.internal.pendingAction = undefined;
  si.payment_method = pm.id;
  si.last_setup_error = null;
  si.next_action = null;
  si.latest_attempt = newId("setatt");

  const instrument = instrumentOf(pmRecord);
  if (instrument.kind === "bank") {
    if (instrument.microdeposits && !pmRecord.internal.offSessionReady) {
      si.status = "requires_action";
      si.next_action = microdepositsAction(op, si.id);
      record.internal.pendingAction = "microdeposits";
      op.emit("setup_intent.requires_action", si);
      return;
    }
    succeedSetup(op, record, pmRecord);
    return;
  }
  const outcome = cardOutcome(op, instrument, { setup: true, offSession: false, offSessionReady: false });
  if (outcome.kind === "succeed") succeedSetup(op, record, pmRecord);
  else if (outcome.kind === "action") {
    si.status = "requires_action";
    si.next_action = threeDSecureAction(op, si.id, si.client_secret, returnUrl, useStripeSdk);
    record.internal.pendingAction = "three_d_secure";
    op.emit("setup_intent.requires_action", si);
  } else declineSetup(op, record, pmRecord, outcome.decline);
}

function succeedSetup(
  op: Op,
  record: StoredRecord<SetupIntentObject>,
  pmRecord: StoredRecord<PaymentMethodObject>,
): void {
  const si = op.modify(record);
  op.modify(pmRecord);
  if (si.customer) attachPaymentMethod(op, pmRecord, si.customer);
  if (si.usage === "off_session") pmRecord.internal.offSessionReady = true;
  if (pmRecord.obj.type === "us_bank_account") si.mandate = newId("mandate");
  si.status = "succeeded";
  si.next_action = null;
  op.emit("setup_intent.succeeded", si);
}

function declineSetup(
  op: Op,
  record: StoredRecord<SetupIntentObject>,
  pmRecord: StoredRecord<PaymentMethodObject>,
  decline: Decline,
): never {
  const si = op.modify(record);
  si.status = "requires_payment_method";
  si.payment_method = null;
  si.last_setup_error = {
    code: decline.code,
    ...(decline.decline_code ? { decline_code: decline.decline_code } : {}),
    doc_url: `https://stripe.com/docs/error-codes/${decline.code.replace(/_/g, "-")}`,
    message: decline.message,
    ...(decline.param ? { param: decline.param } : {}),
    payment_method: snapshot(pmRecord.obj),
    type: "card_error",
  };
  op.emit("setup_intent.setup_failed", si);
  throw cardError(decline, { setup_intent: snapshot(si), payment_method: snapshot(pmRecord.obj) });
}

export function authenticateSetupIntent(op: Op, id: string, result: "succeed" | "fail"): SetupIntentObject {
  const record = retrieveSetupIntent(op, id);
  const si = op.modify(record);
  if (si.status !== "requires_action" || record.internal.pendingAction !== "three_d_secure")
    throw invalidRequest(
      `SetupIntent ${id} is not waiting for 3-D Secure authentication (status ${si.status}).`,
      {
        code: "setup_intent_unexpected_state",
      },
    );
  const pmRecord = op.find<PaymentMethodObject>("payment_method", si.payment_method ?? "", "payment_method");
  record.internal.pendingAction = undefined;
  if (result === "succeed") {
    succeedSetup(op, record, pmRecord);
    return si;
  }
  si.status = "requires_payment_method";
  si.next_action = null;
  si.payment_method = null;
  si.last_setup_error = {
    code: "setup_intent_authentication_failure",
    doc_url: "https://stripe.com/docs/error-codes/setup-intent-authentication-failure",
    message: SETUP_AUTHENTICATION_FAILURE,
    payment_method: snapshot(pmRecord.obj),
    type: "invalid_request_error",
  };
  op.emit("setup_intent.setup_failed", si);
  return si;
}

export function verifySetupIntentMicrodeposits(op: Op, id: string, p?: Params): SetupIntentObject {
  const record = retrieveSetupIntent(op, id);
  const si = record.obj;
  if (si.status !== "requires_action" || record.internal.pendingAction !== "microdeposits")
    throw invalidRequest(
      `SetupIntent ${id} is not waiting for microdeposit verification (status ${si.status}).`,
      {
        code: "setup_intent_unexpected_state",
      },
    );
  if (p) checkMicrodepositValues(p);
  const pmRecord = op.find<PaymentMethodObject>("payment_method", si.payment_method ?? "", "payment_method");
  op.modify(record);
  record.internal.pendingAction = undefined;
  op.modify(pmRecord);
  pmRecord.internal.offSessionReady = true;
  succeedSetup(op, record, pmRecord);
  return si;
}

export function cancelSetupIntent(op: Op, id: string, p: Params): SetupIntentObject {
  const record = retrieveSetupIntent(op, id);
  const si = op.modify(record);
  if (!["requires_payment_method", "requires_confirmation", "requires_action"].includes(si.status))
    throw invalidRequest(
      `You cannot cancel this SetupIntent because it has a status of ${si.status}. Only a SetupIntent with one of the following statuses may be canceled: requires_payment_method, requires_confirmation, requires_action.`,
      { code: "setup_intent_unexpected_state" },
    );
  si.status = "canceled";
  si.cancellation_reason =
    p.oneOf("cancellation_reason", ["abandoned", "requested_by_customer", "duplicate"]) ?? null;
  si.next_action = null;
  record.internal.pendingAction = undefined;
  op.emit("setup_intent.canceled", si);
  return si;
}

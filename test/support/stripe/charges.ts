/** Charges: the money movement behind a PaymentIntent attempt (succeeded, pending for bank debits, or failed). */

import type { Decline } from "./errors.js";
import { newId, randomChars } from "./ids.js";
import { balanceTransactionId } from "./objects.js";
import { chargeMethodDetails } from "./payment-methods.js";
import { type Op, snapshot } from "./state.js";
import type { ChargeObject, PaymentIntentObject, PaymentMethodObject, StoredRecord } from "./types.js";

export function approvedOutcome(): Record<string, unknown> {
  return {
    advice_code: null,
    network_advice_code: null,
    network_decline_code: null,
    network_status: "approved_by_network",
    reason: null,
    risk_level: "normal",
    risk_score: 20,
    seller_message: "Payment complete.",
    type: "authorized",
  };
}

export function declinedOutcome(decline: Decline): Record<string, unknown> {
  const reason = decline.decline_code ?? decline.code;
  return {
    advice_code: null,
    network_advice_code: null,
    network_decline_code: null,
    network_status: "declined_by_network",
    reason,
    risk_level: "normal",
    risk_score: 20,
    seller_message:
      reason === "generic_decline" || reason === "card_declined"
        ? "The bank did not return any further details with this decline."
        : `The bank returned the decline code \`${reason}\`.`,
    type: "issuer_declined",
  };
}

export function createCharge(
  op: Op,
  pi: PaymentIntentObject,
  pm: PaymentMethodObject,
  status: ChargeObject["status"],
  opts: { decline?: Decline; threeDSecure?: boolean; mandate?: string } = {},
): StoredRecord<ChargeObject> {
  const descriptor = [op.account.statementDescriptor, pi.statement_descriptor_suffix]
    .filter(Boolean)
    .join("* ");
  const charge: ChargeObject = {
    id: newId("ch"),
    object: "charge",
    amount: pi.amount,
    amount_captured: status === "failed" ? 0 : pi.amount,
    amount_refunded: 0,
    application: null,
    application_fee: null,
    application_fee_amount: null,
    balance_transaction: status === "failed" ? null : balanceTransactionId(),
    billing_details: snapshot(pm.billing_details),
    calculated_statement_descriptor: descriptor ? descriptor.toUpperCase().slice(0, 22) : null,
    captured: status !== "failed",
    created: op.now,
    currency: pi.currency,
    customer: pi.customer,
    description: pi.description,
    destination: null,
    dispute: null,
    disputed: false,
    failure_balance_transaction: null,
    failure_code: opts.decline ? opts.decline.code : null,
    failure_message: opts.decline ? opts.decline.message : null,
    fraud_details: {},
    livemode: op.livemode,
    metadata: { ...pi.metadata },
    on_behalf_of: null,
    outcome: opts.decline ? declinedOutcome(opts.decline) : approvedOutcome(),
    paid: status === "succeeded",
    payment_intent: pi.id,
    payment_method: pm.id,
    payment_method_details: chargeMethodDetails(pm, pi.amount, opts),
    radar_options: {},
    receipt_email: pi.receipt_email,
    receipt_number: null,
    receipt_url: `https://pay.stripe.com/receipts/payment/${randomChars(64)}`,
    refunded: false,
    review: null,
    shipping: null,
    source: null,
    source_transfer: null,
    statement_descriptor: null,
    statement_descriptor_suffix: pi.statement_descriptor_suffix,
    status,
    transfer_data: null,
    transfer_group: null,
  };
  return op.put("charge", charge);
}

export function mandateId(): string {
  return newId("mandate");
}

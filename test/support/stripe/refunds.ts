/** Refunds: immediate for cards, `pending` for bank debits (until settled), partial and full. */

import { invalidRequest } from "./errors.js";
import { newId } from "./ids.js";
import { balanceTransactionId, page } from "./objects.js";
import { formatAmount } from "./outcomes.js";
import { mergeMetadata, type Params } from "./params.js";
import { instrumentOf } from "./payment-methods.js";
import { type Op, previousAttributes, snapshot } from "./state.js";
import { cardBehaviour } from "./test-data.js";
import type {
  ChargeObject,
  DisputeObject,
  PaymentIntentObject,
  PaymentMethodObject,
  RefundObject,
  StoredRecord,
} from "./types.js";

function chargeToRefund(op: Op, p: Params): StoredRecord<ChargeObject> {
  const piId = p.str("payment_intent");
  const chargeId = p.str("charge");
  if (!piId && !chargeId)
    throw invalidRequest(
      "One of the following params should be provided for this request: payment_intent or charge.",
    );
  if (chargeId) return op.find<ChargeObject>("charge", chargeId, "charge");
  const pi = op.find<PaymentIntentObject>("payment_intent", piId ?? "", "payment_intent").obj;
  if (pi.status !== "succeeded" || !pi.latest_charge)
    throw invalidRequest(`This PaymentIntent (${pi.id}) does not have a successful charge to refund.`, {
      param: "payment_intent",
      code: "charge_not_refundable",
    });
  return op.find<ChargeObject>("charge", pi.latest_charge, "payment_intent");
}

export function createRefund(op: Op, p: Params): RefundObject {
  const chargeRecord = chargeToRefund(op, p);
  const charge = chargeRecord.obj;
  if (charge.status !== "succeeded")
    throw invalidRequest(
      `Charge ${charge.id} has not succeeded (status ${charge.status}) and cannot be refunded.`,
      {
        code: "charge_not_refundable",
      },
    );
  const remaining = charge.amount - charge.amount_refunded;
  if (remaining <= 0)
    throw invalidRequest(`Charge ${charge.id} has already been refunded.`, {
      code: "charge_already_refunded",
    });
  if (charge.disputed) {
    const dispute = op.all<DisputeObject>("dispute").find((d) => d.obj.charge === charge.id)?.obj;
    if (dispute && !dispute.is_charge_refundable)
      throw invalidRequest(`Charge ${charge.id} has been charged back; cannot issue a refund.`, {
        code: "charge_disputed",
      });
  }
  const amount = p.positiveInt("amount") ?? remaining;
  if (amount > remaining)
    throw invalidRequest(
      `Refund amount (${formatAmount(amount, charge.currency)}) is greater than unrefunded amount on charge (${formatAmount(remaining, charge.currency)})`,
      { param: "amount", code: "amount_too_large" },
    );
  const reason = p.oneOf("reason", ["duplicate", "fraudulent", "requested_by_customer"]) ?? null;
  const pmRecord = charge.payment_method
    ? op.findOptional<PaymentMethodObject>("payment_method", charge.payment_method)
    : undefined;
  const instrument = pmRecord ? instrumentOf(pmRecord) : null;
  const behaviour = instrument?.kind === "card" ? cardBehaviour(instrument.number) : null;
  const pending = instrument?.kind === "bank" || behaviour?.kind === "refund_pending";
  const refund: RefundObject = {
    id: newId("re"),
    object: "refund",
    amount,
    balance_transaction: pending ? null : balanceTransactionId(),
    charge: charge.id,
    created: op.now,
    currency: charge.currency,
    customer: charge.customer,
    customer_account: null,
    destination_details:
      instrument?.kind === "bank"
        ? { type: "us_bank_transfer", us_bank_transfer: { reference: null, reference_status: "pending" } }
        : {
            card: {
              reference: null,
              reference_status: "pending",
              reference_type: "acquirer_reference_number",
              type: "refund",
            },
            type: "card",
          },
    livemode: op.livemode,
    metadata: p.metadata() ?? {},
    payment_intent: charge.payment_intent,
    payment_method: charge.payment_method,
    reason,
    receipt_number: null,
    source_transfer_reversal: null,
    status: pending ? "pending" : "succeeded",
    transfer_reversal: null,
  };
  op.put("refund", refund);
  const before = snapshot(charge);
  op.modify(chargeRecord);
  charge.amount_refunded += amount;
  charge.refunded = charge.amount_refunded >= charge.amount;
  op.emit("refund.created", refund);
  op.emit("charge.refunded", charge, previousAttributes(before, charge));
  if (behaviour?.kind === "refund_fail" && op.env.followUpDelayMs !== null) {
    const refundId = refund.id;
    op.env.followUp(op, op.env.followUpDelayMs, (later) => {
      settleRefund(later, refundId, "failed", "expired_or_canceled_card");
    });
  }
  return refund;
}

export function retrieveRefund(op: Op, id: string): RefundObject {
  return op.find<RefundObject>("refund", id).obj;
}

export function updateRefund(op: Op, id: string, p: Params): RefundObject {
  const record = op.find<RefundObject>("refund", id);
  const before = snapshot(record.obj);
  const refund = op.modify(record);
  refund.metadata = mergeMetadata(refund.metadata, p.metadata());
  const previous = previousAttributes(before, refund);
  if (Object.keys(previous).length > 0) op.emit("refund.updated", refund, previous);
  return refund;
}

export function listRefunds(op: Op, p: Params): Record<string, unknown> {
  const pi = p.str("payment_intent");
  const charge = p.str("charge");
  const items = op
    .all<RefundObject>("refund")
    .map((r) => r.obj)
    .filter((r) => (!pi || r.payment_intent === pi) && (!charge || r.charge === charge));
  return page(items, p, "/v1/refunds");
}

/** Control: a pending refund (bank, or the pending-refund test card) succeeds or fails; or a late card failure. */
export function settleRefund(
  op: Op,
  id: string,
  status: "succeeded" | "failed",
  failureReason = "declined",
): RefundObject {
  const record = op.find<RefundObject>("refund", id);
  const refund = record.obj;
  const lateFailure = refund.status === "succeeded" && status === "failed";
  if (refund.status !== "pending" && !lateFailure)
    throw invalidRequest(`Refund ${id} is not pending (status ${refund.status}).`);
  const before = snapshot(refund);
  op.modify(record);
  refund.status = status;
  if (status === "succeeded") {
    refund.balance_transaction = refund.balance_transaction ?? balanceTransactionId();
  } else {
    refund.failure_reason = failureReason;
    refund.failure_balance_transaction = balanceTransactionId();
    const chargeRecord = op.find<ChargeObject>("charge", refund.charge);
    const charge = op.modify(chargeRecord);
    charge.amount_refunded = Math.max(0, charge.amount_refunded - refund.amount);
    charge.refunded = charge.amount_refunded >= charge.amount;
    op.emit("refund.failed", refund, previousAttributes(before, refund));
  }
  const previous = previousAttributes(before, refund);
  op.emit("refund.updated", refund, previous);
  op.emit("charge.refund.updated", refund, previous);
  return refund;
}

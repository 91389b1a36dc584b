/** Disputes (chargebacks): opened, updated, won (funds reinstated) or lost. */

import { invalidParam, invalidRequest } from "./errors.js";
import { newId } from "./ids.js";
import { page } from "./objects.js";
import { mergeMetadata, type Params } from "./params.js";
import { type Op, previousAttributes, snapshot } from "./state.js";
import type { ChargeObject, DisputeObject, PaymentIntentObject, StoredRecord } from "./types.js";

const DISPUTE_FEE = 1500;

const EVIDENCE_FIELDS = [
  "access_activity_log",
  "billing_address",
  "cancellation_policy",
  "cancellation_policy_disclosure",
  "cancellation_rebuttal",
  "customer_communication",
  "customer_email_address",
  "customer_name",
  "customer_purchase_ip",
  "customer_signature",
  "duplicate_charge_documentation",
  "duplicate_charge_explanation",
  "duplicate_charge_id",
  "product_description",
  "receipt",
  "refund_policy",
  "refund_policy_disclosure",
  "refund_refusal_explanation",
  "service_date",
  "service_documentation",
  "shipping_address",
  "shipping_carrier",
  "shipping_date",
  "shipping_documentation",
  "shipping_tracking_number",
  "uncategorized_file",
  "uncategorized_text",
];

const NETWORK_REASON: Record<string, string> = {
  fraudulent: "10.4",
  product_not_received: "13.1",
  duplicate: "12.6.1",
  subscription_canceled: "13.2",
  product_unacceptable: "13.3",
  credit_not_processed: "13.6",
  general: "13.7",
};

export const DISPUTE_REASONS = [
  "bank_cannot_process",
  "check_returned",
  "credit_not_processed",
  "customer_initiated",
  "debit_not_authorized",
  "duplicate",
  "fraudulent",
  "general",
  "incorrect_account_details",
  "insufficient_funds",
  "product_not_received",
  "product_unacceptable",
  "subscription_canceled",
  "unrecognized",
];

export const DISPUTE_STATUSES = [
  "warning_needs_response",
  "warning_under_review",
  "warning_closed",
  "needs_response",
  "under_review",
  "won",
  "lost",
];

function balanceTransaction(
  op: Op,
  dispute: { amount: number; currency: string; charge: string },
  sign: 1 | -1,
) {
  const fee = sign === -1 ? DISPUTE_FEE : 0;
  return {
    id: newId("txn"),
    object: "balance_transaction",
    amount: sign * dispute.amount,
    available_on: op.now,
    created: op.now,
    currency: dispute.currency,
    description:
      sign === -1
        ? `Chargeback withdrawal for ${dispute.charge}`
        : `Chargeback reversal for ${dispute.charge}`,
    fee,
    fee_details: fee
      ? [{ amount: fee, currency: dispute.currency, description: "Dispute fee", type: "stripe_fee" }]
      : [],
    net: sign * dispute.amount - fee,
    reporting_category: sign === -1 ? "dispute" : "dispute_reversal",
    source: null,
    status: "available",
    type: "adjustment",
  };
}

export function resolveDisputeTarget(op: Op, target: string): StoredRecord<ChargeObject> {
  if (target.startsWith("pi_")) {
    const pi = op.find<PaymentIntentObject>("payment_intent", target, "payment_intent").obj;
    if (!pi.latest_charge) throw invalidRequest(`PaymentIntent ${target} has no charge to dispute.`);
    return op.find<ChargeObject>("charge", pi.latest_charge, "charge");
  }
  return op.find<ChargeObject>("charge", target, "charge");
}

export function openDisputeOn(
  op: Op,
  chargeRecord: StoredRecord<ChargeObject>,
  opts: { reason?: string; amount?: number; inquiry?: boolean } = {},
): DisputeObject {
  const charge = chargeRecord.obj;
  if (charge.status !== "succeeded")
    throw invalidRequest(`Charge ${charge.id} has not succeeded; it cannot be disputed.`);
  if (charge.disputed) throw invalidRequest(`Charge ${charge.id} is already disputed.`);
  const reason = opts.reason ?? "fraudulent";
  if (!DISPUTE_REASONS.includes(reason)) throw invalidParam("reason", `Invalid dispute reason: ${reason}`);
  const amount = opts.amount ?? charge.amount;
  if (!Number.isInteger(amount) || amount < 1 || amount > charge.amount)
    throw invalidParam(
      "amount",
      `The dispute amount must be between 1 and the charge amount (${charge.amount}).`,
    );
  const inquiry = opts.inquiry === true;
  const details = charge.payment_method_details as { type: string; card?: { brand: string } };
  const dispute: DisputeObject = {
    id: newId("dp"),
    object: "dispute",
    amount,
    balance_transactions: [],
    charge: charge.id,
    created: op.now,
    currency: charge.currency,
    enhanced_eligibility_types: [],
    evidence: Object.fromEntries(EVIDENCE_FIELDS.map((f) => [f, null])),
    evidence_details: {
      due_by: op.now + 7 * 24 * 60 * 60,
      enhanced_eligibility: {},
      has_evidence: false,
      past_due: false,
      submission_count: 0,
    },
    intended_submission_method: null,
    is_charge_refundable: inquiry,
    livemode: op.livemode,
    metadata: {},
    payment_intent: charge.payment_intent,
    payment_method_details:
      details.type === "card"
        ? {
            card: {
              brand: details.card?.brand ?? "visa",
              case_type: inquiry ? "inquiry" : "chargeback",
              network_reason_code: NETWORK_REASON[reason] ?? "13.7",
            },
            type: "card",
          }
        : { type: details.type },
    reason,
    status: inquiry ? "warning_needs_response" : "needs_response",
  };
  if (!inquiry) dispute.balance_transactions.push(balanceTransaction(op, dispute, -1));
  op.put("dispute", dispute);
  op.modify(chargeRecord);
  charge.disputed = true;
  op.emit("charge.dispute.created", dispute);
  if (!inquiry) op.emit("charge.dispute.funds_withdrawn", dispute);
  return dispute;
}

export function openDispute(
  op: Op,
  target: string,
  opts: { reason?: string; amount?: number; inquiry?: boolean } = {},
): DisputeObject {
  return openDisputeOn(op, resolveDisputeTarget(op, target), opts);
}

function findDispute(op: Op, id: string): StoredRecord<DisputeObject> {
  return op.find<DisputeObject>("dispute", id, "dispute");
}

function isClosed(status: string): boolean {
  return status === "won" || status === "lost" || status === "warning_closed";
}

export function updateDisputeStatus(op: Op, id: string, status: string): DisputeObject {
  const record = findDispute(op, id);
  if (!DISPUTE_STATUSES.includes(status) || isClosed(status))
    throw invalidParam(
      "status",
      `updateDispute: status must be one of warning_needs_response, warning_under_review, needs_response, under_review (use closeDispute for won/lost).`,
    );
  if (isClosed(record.obj.status))
    throw invalidRequest(`Dispute ${id} is already closed (${record.obj.status}).`);
  const before = snapshot(record.obj);
  const dispute = op.modify(record);
  dispute.status = status;
  op.emit("charge.dispute.updated", dispute, previousAttributes(before, dispute));
  return dispute;
}

export function closeDispute(op: Op, id: string, outcome: "won" | "lost"): DisputeObject {
  const record = findDispute(op, id);
  if (isClosed(record.obj.status))
    throw invalidRequest(`Dispute ${id} is already closed (${record.obj.status}).`);
  const before = snapshot(record.obj);
  const dispute = op.modify(record);
  const inquiry = dispute.status.startsWith("warning_");
  dispute.status = inquiry ? "warning_closed" : outcome;
  dispute.is_charge_refundable = false;
  if (outcome === "won" && !inquiry) {
    dispute.balance_transactions.push(balanceTransaction(op, dispute, 1));
    op.emit("charge.dispute.funds_reinstated", dispute);
  }
  op.emit("charge.dispute.closed", dispute, previousAttributes(before, dispute));
  return dispute;
}

/** POST /v1/disputes/:id: evidence and metadata; Stripe's test evidence `winning_evidence` / `losing_evidence`. */
export function updateDisputeViaApi(op: Op, id: string, p: Params): DisputeObject {
  const record = findDispute(op, id);
  if (isClosed(record.obj.status))
    throw invalidRequest(`This dispute is already closed (${record.obj.status}).`);
  const before = snapshot(record.obj);
  const dispute = op.modify(record);
  dispute.metadata = mergeMetadata(dispute.metadata, p.metadata());
  const evidence = p.obj("evidence");
  if (evidence) {
    for (const field of EVIDENCE_FIELDS) {
      const value = evidence.strOrNull(field);
      if (value !== undefined) dispute.evidence[field] = value;
    }
    dispute.evidence_details.has_evidence = true;
  }
  const submit = p.bool("submit") ?? true;
  const text = dispute.evidence.uncategorized_text;
  if (evidence && submit) {
    dispute.evidence_details.submission_count = Number(dispute.evidence_details.submission_count ?? 0) + 1;
    dispute.status = dispute.status.startsWith("warning_") ? "warning_under_review" : "under_review";
  }
  const previous = previousAttributes(before, dispute);
  if (Object.keys(previous).length > 0) op.emit("charge.dispute.updated", dispute, previous);
  // Stripe's test evidence decides the dispute a moment after the submission is answered.
  const answer = snapshot(dispute);
  if (evidence && submit && (text === "winning_evidence" || text === "losing_evidence"))
    closeDispute(op, id, text === "winning_evidence" ? "won" : "lost");
  return answer;
}

export function listDisputes(op: Op, p: Params): Record<string, unknown> {
  const charge = p.str("charge");
  const pi = p.str("payment_intent");
  const items = op
    .all<DisputeObject>("dispute")
    .map((r) => r.obj)
    .filter((d) => (!charge || d.charge === charge) && (!pi || d.payment_intent === pi));
  return page(items, p, "/v1/disputes");
}

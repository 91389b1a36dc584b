import { formatMoney, isExpressible } from "../../shared/currency.js";
import { centsToDollars } from "../../shared/money.js";
import type { AppDeps } from "../deps.js";
import { ApiError } from "../errors.js";
import { sha256Hex } from "../ids.js";
import type { PaymentProcessor } from "../processors/port.js";
import { type AuditActor, recordAudit, refundAudited } from "../store/auditLog.js";
import type { Db } from "../store/database.js";
import { isLockConflict } from "../store/dialect.js";
import { retryingLockConflicts } from "../store/lockRetry.js";
import type { Organization } from "../store/organizations.js";
import { findPayment } from "../store/payments.js";
import type { PaymentsTable } from "../store/schema.js";
import { cancelFreeOrder, recordRefund } from "./transition.js";

/**
 * A refund asked for by the organization (the API, the command line): through the processor that made the
 * payment, then recorded by the same transition a processor's own refund news goes through. The processor
 * call carries a key made of the payment, what was refunded before, the amount and the refunds that failed
 * since (`derivedRefundKey`), so a retry of a refund whose answer was lost is the same refund, never a
 * second one, while a refund asked again after the first one failed is a new one.
 */

export interface RefundOutcome {
  payment: PaymentsTable;
  /** Null when a free order was cancelled: nothing was charged, so no refund was made. */
  refund: { id: string; amountCents: number; status: "succeeded" | "pending" } | null;
  /**
   * The refund answered was made for an earlier request the processor took as this one (an identical request
   * a moment before, or this one tried before with its answer lost): no money moved for this request.
   */
  replayed?: boolean;
}

/**
 * The processor's key for a refund asked without the client's key: two identical requests meeting the same
 * state make one refund (a retry of one whose answer was lost, even if the process died after the processor
 * made it and before it was recorded). The state is what was refunded before, the amount asked, and how many
 * refunds the processor reports failed: a refund that failed gives its amount back to the refunded total, so
 * the same refund asked again would otherwise meet its old key, and the processor (Stripe keeps keys 24
 * hours) would answer the failed refund's first answer again, refunding nothing. Read from the processor,
 * the count is right whatever was recorded here (a lost answer, a webhook not yet delivered). The key of a
 * payment none of whose refunds failed is the one it always was.
 */
async function derivedRefundKey(
  processor: PaymentProcessor,
  paymentId: string,
  processorPaymentId: string,
  refundedCents: number,
  amountCents: number | undefined,
): Promise<string> {
  const failed = (await processor.failedRefunds?.(processorPaymentId)) ?? 0;
  return `refund:${paymentId}:${refundedCents}:${amountCents ?? "rest"}${failed ? `:failed${failed}` : ""}`;
}

export async function refundPayment(
  deps: AppDeps,
  org: Organization,
  paymentId: string,
  /**
   * `idempotencyKey`: the client's own (the API's Idempotency-Key), which names this refund at the
   * processor, so that a retry of one whose answer was lost reaches the same refund.
   */
  request: { amountCents?: number; reason?: string; idempotencyKey?: string },
  actor: AuditActor,
): Promise<RefundOutcome> {
  const row = await findPayment(deps.store.db, paymentId);
  if (!row || row.organization_id !== org.id || row.status === "PROCESSING")
    throw new ApiError(404, "Payment not found");
  const amount = Number(row.amount_cents);
  const refunded = Number(row.refunded_cents);
  if (row.status === "REFUNDED" || (row.status === "COMPLETED" && amount > 0 && refunded >= amount))
    throw new ApiError(
      409,
      amount === 0 ? "This free order is already cancelled" : "This payment is already fully refunded",
    );
  if (row.status !== "COMPLETED")
    throw new ApiError(
      409,
      row.status === "PENDING"
        ? "This payment has not cleared yet: it can be refunded once it is COMPLETED"
        : "Only a completed payment can be refunded",
    );
  if (amount === 0) return cancelFree(deps, org, row, request, actor);
  if (!row.processor_payment_id || row.processor === "none")
    throw new ApiError(409, "Nothing was charged for this payment: there is nothing to refund");
  const left = amount - refunded;
  if (request.amountCents !== undefined && request.amountCents > left)
    throw ApiError.validation([
      `amount must be at most ${formatMoney(left, row.currency)}, what is left of the payment (${formatMoney(refunded, row.currency)} of ${formatMoney(amount, row.currency)} is refunded already)`,
    ]);
  if (request.amountCents !== undefined && !isExpressible(request.amountCents, row.currency))
    throw ApiError.validation([`amount must be a whole number of ${row.currency}, which has no decimals`]);

  const processor = deps.processors.named(row.processor, org);
  const result = await processor.refund({
    processorPaymentId: row.processor_payment_id,
    amountCents: request.amountCents ?? left,
    currency: row.currency,
    idempotencyKey: request.idempotencyKey
      ? `refund:${row.id}:key:${sha256Hex(request.idempotencyKey).slice(0, 32)}`
      : await derivedRefundKey(processor, row.id, row.processor_payment_id, refunded, request.amountCents),
    ...(request.reason ? { reason: request.reason } : {}),
  });
  if (!result.ok) {
    if (result.code === "invalid_amount") throw ApiError.validation([`amount: ${result.message}`]);
    throw new ApiError(409, result.message);
  }
  const total = result.refundedTotalCents ?? refunded + result.amountCents;
  const nowMs = deps.now();
  const record = () =>
    deps.store.transact(async (trx) => {
      // Locks the payment (PostgreSQL; SQLite writes one at a time), so the check below sees every other
      // request's entry for this refund.
      const done = await recordRefund(trx, nowMs, row.id, total);
      // The refund was made, whether this records it or the processor's own news did a moment before; an
      // identical request answered with the same refund is not audited again.
      if (await refundAudited(trx, org.id, row.id, result.refundId)) return done;
      await auditRefund(
        trx,
        {
          org,
          actor,
          before: row,
          after: done.row,
          refundId: result.refundId,
          amountCents: result.amountCents,
        },
        request.reason,
        nowMs,
      );
      return done;
    });
  // The money has moved: a conflict with another writer is waited out rather than answered with "nothing
  // was changed", which would invite a second refund.
  const recorded = await retryingLockConflicts(record, 5, 50).catch((err: unknown) => {
    if (!isLockConflict(err)) throw err;
    throw new ApiError(
      503,
      `The refund ${result.refundId} was made at the payment processor but could not be recorded yet; it shows on the payment once recorded. Do not ask for it again.`,
      undefined,
      { "Retry-After": "30" },
    );
  });
  return {
    payment: recorded.row,
    refund: { id: result.refundId, amountCents: result.amountCents, status: result.status },
    ...(result.replayed && { replayed: true }),
  };
}

/**
 * The refund of a free order (a registration that cost nothing): no money to give back, so nothing goes to a
 * processor; the order is cancelled, its places given back and its tickets voided, as a full refund does.
 */
async function cancelFree(
  deps: AppDeps,
  org: Organization,
  row: PaymentsTable,
  request: { amountCents?: number; reason?: string },
  actor: AuditActor,
): Promise<RefundOutcome> {
  if (request.amountCents !== undefined)
    throw ApiError.validation([
      `amount must be left out: nothing was charged for this free order (${formatMoney(0, row.currency)}), and refunding it cancels it`,
    ]);
  const nowMs = deps.now();
  const cancelled = await retryingLockConflicts(
    () =>
      deps.store.transact(async (trx) => {
        const done = await cancelFreeOrder(trx, nowMs, row.id);
        if (!done.changed) return done;
        await auditRefund(
          trx,
          { org, actor, before: row, after: done.row, refundId: null, amountCents: 0 },
          request.reason,
          nowMs,
        );
        return done;
      }),
    5,
    50,
  );
  // Another request cancelled it first: the same answer as for any payment refunded already.
  if (!cancelled.changed) throw new ApiError(409, "This free order is already cancelled");
  return { payment: cancelled.row, refund: null };
}

/** The audit entry of a refund (a free order's cancel: no refund id, nothing refunded). */
function auditRefund(
  trx: Db,
  entry: {
    org: Organization;
    actor: AuditActor;
    before: PaymentsTable;
    after: PaymentsTable;
    refundId: string | null;
    amountCents: number;
  },
  reason: string | undefined,
  nowMs: number,
): Promise<void> {
  const { before, after } = entry;
  return recordAudit(
    trx,
    {
      organizationId: entry.org.id,
      actor: entry.actor,
      action: "payment.refunded",
      subjectType: "payment",
      subjectId: before.id,
      before: { status: before.status, refundedAmount: centsToDollars(Number(before.refunded_cents)) },
      after: {
        status: after.status,
        refundedAmount: centsToDollars(Number(after.refunded_cents)),
        refundId: entry.refundId,
        amount: centsToDollars(entry.amountCents),
        currency: before.currency,
        reason: reason ?? null,
      },
    },
    nowMs,
  );
}

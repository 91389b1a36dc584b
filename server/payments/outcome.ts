import type { ChargeResult, PaymentLookup } from "../processors/port.js";
import type { PaymentOutcome } from "./transition.js";

/**
 * A processor's answer (to a charge, or a look-up of the payment later) as the outcome it leads to, or
 * null while the payment still waits for the donor in the browser (3-D Secure): nothing is recorded then.
 */

export const INTERRUPTED_MESSAGE =
  "The checkout was interrupted before the payment was made. Nothing was charged; please try again.";

/** A charge no process finished, that the processor never made (or was cancelled): nothing was charged. */
export function interruptedOutcome(processorPaymentId: string | null): PaymentOutcome {
  return { to: "FAILED", processorPaymentId, code: "processing_error", message: INTERRUPTED_MESSAGE };
}

export const PROCESSOR_DOWN_MESSAGE =
  "The payment could not be processed. Nothing was charged; please try again.";

export function outcomeOfCharge(
  charge: ChargeResult,
  processorCustomer: string | null,
): PaymentOutcome | null {
  switch (charge.status) {
    case "succeeded":
      return {
        to: "COMPLETED",
        processorPaymentId: charge.processorPaymentId,
        savedMethod: charge.savedMethod ?? (charge.method.reusable ? charge.method : null),
        processorCustomer,
      };
    case "pending":
      return {
        to: "PENDING",
        processorPaymentId: charge.processorPaymentId,
        savedMethod: charge.savedMethod ?? (charge.method.reusable ? charge.method : null),
        processorCustomer,
        ...(charge.pendingReason === "verify_microdeposits" && { awaiting: "verify_microdeposits" }),
      };
    case "requires_action":
      return null;
    case "failed":
      return {
        to: "FAILED",
        processorPaymentId: charge.processorPaymentId,
        code: charge.failureCode,
        message: charge.failureMessage,
      };
  }
}

export function outcomeOfLookup(
  lookup: PaymentLookup,
  processorCustomer: string | null,
): PaymentOutcome | null {
  switch (lookup.status) {
    case "succeeded":
      return {
        to: "COMPLETED",
        processorPaymentId: lookup.processorPaymentId,
        savedMethod: lookup.savedMethod ?? null,
        processorCustomer,
      };
    case "pending":
      return {
        to: "PENDING",
        processorPaymentId: lookup.processorPaymentId,
        savedMethod: lookup.savedMethod ?? null,
        processorCustomer,
        ...(lookup.pendingReason === "verify_microdeposits" && { awaiting: "verify_microdeposits" }),
      };
    case "requires_action":
      return null;
    case "failed":
      return {
        to: "FAILED",
        processorPaymentId: lookup.processorPaymentId,
        code: lookup.failureCode ?? "processing_error",
        message: lookup.failureMessage ?? "The payment failed.",
      };
  }
}

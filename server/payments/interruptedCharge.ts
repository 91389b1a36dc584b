import type { ChargeReference, ChargeResult, PaymentProcessor } from "../processors/port.js";

/**
 * A charge that no process is working on any more (its process died between charging and recording, or
 * its gift ended meanwhile), settled so that it can never move money later. Used by the checkout's
 * recovery and by billing's settling of a cancelled gift's last charge.
 */

/** A payment left PROCESSING this long is no longer being worked on anywhere (requests end long before). */
export const INTERRUPTED_AFTER_MS = 5 * 60 * 1000;

/**
 * An off-session charge the bank held for the donor's authentication that the donor can still confirm
 * on-session (the processor gave its client secret): billing asks the donor to (confirmationRequest.ts).
 */
export const confirmableOnSession = (charge: ChargeResult): boolean =>
  charge.status === "failed" && charge.failureCode === "authentication_required" && !!charge.clientSecret;

/** How an interrupted charge stands once settled (see chargeStanding). */
export type ChargeStanding =
  /** As the processor reports it now: made (or failed) at the processor; null: never made. */
  | { charge: ChargeResult | null; cancelled?: undefined }
  /**
   * Nothing was charged, and now never can be: the payment was cancelled at the processor. `held`: it was
   * waiting for the donor (and `giveUp` said to stop waiting); `unconfirmed`: it was made but never
   * confirmed.
   */
  | { charge: null; cancelled: "held" | "unconfirmed"; processorPaymentId: string };

/**
 * Asks the processor how an interrupted charge stands (by the id stored before money could move, or the
 * idempotency key), and cancels what could still move money without anyone left to see it: a payment
 * made but never confirmed, and one waiting for the donor that `giveUp` says nobody will confirm. A
 * payment that cannot be cancelled went through meanwhile (or ended otherwise): asked for again, and
 * answered as it now stands. Never charges.
 */
export async function chargeStanding(
  processor: PaymentProcessor,
  ref: ChargeReference,
  giveUp: (charge: ChargeResult) => boolean,
): Promise<ChargeStanding> {
  const charge = await processor.findCharge(ref);
  const id = charge ? charge.processorPaymentId : ref.processorPaymentId;
  const cancelling = charge ? (giveUp(charge) ? "held" : null) : id ? "unconfirmed" : null;
  if (!cancelling || !id || !processor.cancelPayment) return { charge };
  if (await processor.cancelPayment(id))
    return { charge: null, cancelled: cancelling, processorPaymentId: id };
  return { charge: await processor.findCharge(ref) };
}

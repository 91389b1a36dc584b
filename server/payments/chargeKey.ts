/**
 * Every payment row has a `charge_key`: its idempotency key at the processor, unique, so each attempt is
 * one row, ever. It also says what the payment belongs to:
 *   `checkout:<paymentId>`                       a donor's checkout;
 *   `sub:<subscriptionId>:<cycle>:<attempt>`     one attempt at one cycle of a recurring gift.
 */

import { createHash } from "node:crypto";

export const CHECKOUT_CHARGE_PREFIX = "checkout:";
const BILLING_CHARGE_PREFIX = "sub:";

export type ChargeOrigin =
  | { kind: "checkout" }
  | { kind: "billing"; subscriptionId: string; cycle: number; attempt: number };

export function checkoutChargeKey(paymentId: string): string {
  return `${CHECKOUT_CHARGE_PREFIX}${paymentId}`;
}

/** The key of one attempt at one cycle. */
export function billingChargeKey(subscriptionId: string, cycle: number, attempt: number): string {
  return `${BILLING_CHARGE_PREFIX}${subscriptionId}:${cycle}:${attempt}`;
}

/**
 * The processor key of a charge attempt made again with another saved method or customer than an earlier
 * try of it (the donor replaced the card while the attempt was in doubt): the attempt's key said with the
 * method and customer it now charges and the processor's payment of the try it replaces (none when that
 * one's id was never stored), so that the processor does not refuse it as the first key reused with other
 * details, a retry of this very try gives the same key, and a try that replaces this one gets another.
 */
export function supersedingChargeKey(
  chargeKey: string,
  method: string,
  customer: string | null,
  replaced: string | null,
): string {
  const said = createHash("sha256")
    .update(`${method}\0${customer ?? ""}\0${replaced ?? ""}`)
    .digest("hex")
    .slice(0, 20);
  return `${chargeKey}:m${said}`;
}

export function chargeOrigin(chargeKey: string): ChargeOrigin {
  if (chargeKey.startsWith(BILLING_CHARGE_PREFIX)) {
    const [, subscriptionId, cycle, attempt] = chargeKey.split(":");
    return { kind: "billing", subscriptionId, cycle: Number(cycle), attempt: Number(attempt) };
  }
  return { kind: "checkout" };
}

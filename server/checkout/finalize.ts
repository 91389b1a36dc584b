import type { Frequency } from "../../shared/enums.js";
import { centsToDollars } from "../../shared/money.js";
import { wireTime } from "../../shared/time.js";
import type { AppDeps } from "../deps.js";
import {
  type LoadedCheckout,
  type PaymentOutcome,
  type Settled,
  settlePayment,
} from "../payments/transition.js";
import { paymentDetails } from "../store/payments.js";
import type { PaymentsTable, SubscriptionsTable } from "../store/schema.js";

/**
 * What the donor's page is told once a checkout's outcome is recorded (payments/transition.ts): the
 * receipt (201), the decline (402), or, while the payment waits for the donor's bank (3-D Secure), what the
 * page needs to let them confirm it (202).
 */

/** What the donor is told: the receipt view (201) or the decline (402). */
export interface FinalizedCheckout {
  status: 201 | 202 | 402;
  body: Record<string, unknown>;
}

/** The donor's own view of their payment: what they bought, what they paid, how. */
export function donorReceipt(row: PaymentsTable, sub: SubscriptionsTable | null) {
  const d = paymentDetails(row);
  return {
    paymentID: row.id,
    status: row.status,
    currency: row.currency,
    frequency: row.frequency as Frequency,
    fund: row.fund,
    form: row.form_title,
    date: wireTime(row.created_at),
    lines: d.lines.map((l) => ({
      kind: l.kind,
      label: l.label,
      quantity: l.quantity,
      amount: centsToDollars(l.amountCents),
    })),
    subtotal: centsToDollars(d.subtotalCents),
    discount: centsToDollars(d.discountCents),
    promoCode: d.promoCode,
    fee: centsToDollars(Number(row.fee_cents)),
    total: centsToDollars(Number(row.amount_cents)),
    paymentMethod:
      row.payment_method_type === "none"
        ? null
        : { type: row.payment_method_type, brand: row.card_brand, last4: row.last4 },
    subscription: sub
      ? {
          id: sub.id,
          amount: centsToDollars(Number(sub.amount_cents)),
          frequency: sub.frequency,
          nextBillingDate: wireTime(sub.next_billing_at),
        }
      : null,
  };
}

/** Records the outcome of a checkout's PROCESSING payment (see transition.ts) and answers the donor. */
export async function finalizeCheckout(
  deps: AppDeps,
  paymentId: string,
  outcome: PaymentOutcome,
  loaded?: LoadedCheckout,
): Promise<FinalizedCheckout> {
  const settled = await deps.store.transact((trx) =>
    settlePayment(
      trx,
      { nowMs: deps.now(), publicUrl: deps.config.publicUrl },
      { id: paymentId, expected: "PROCESSING" },
      outcome,
      loaded,
    ),
  );
  return checkoutAnswer(settled);
}

/** The answer for a checkout's payment as it stands (also for one recorded before: a repeat). */
export function checkoutAnswer(settled: Pick<Settled, "row" | "sub">): FinalizedCheckout {
  const { row, sub } = settled;
  if (row.status === "FAILED") return declined(row);
  return { status: 201, body: { payment: donorReceipt(row, sub), message: thanks(row) } };
}

/** A payment the donor must still confirm in the browser (3-D Secure) with `clientSecret`. */
export function actionAnswer(paymentId: string, clientSecret: string): FinalizedCheckout {
  return {
    status: 202,
    body: {
      status: "requires_action",
      paymentID: paymentId,
      clientSecret,
      message: "Your bank asks you to confirm this payment.",
    },
  };
}

function thanks(row: PaymentsTable): string {
  if (row.status === "PENDING" && row.failure_code === "verify_microdeposits")
    return `Thank you, ${row.first_name}! To finish, verify your bank account: look for an email about two small deposits. We will email a receipt to ${row.email} when the payment clears.`;
  if (row.status === "PENDING")
    return `Thank you, ${row.first_name}! Your bank payment is processing; we will email a receipt to ${row.email} when it clears.`;
  return `Thank you, ${row.first_name}! A receipt is on its way to ${row.email}.`;
}

function declined(row: PaymentsTable): FinalizedCheckout {
  return {
    status: 402,
    body: {
      error: row.failure_message ?? "The payment was declined",
      code: row.failure_code,
      paymentID: row.id,
    },
  };
}

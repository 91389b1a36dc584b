import type { Frequency } from "../../shared/enums.js";
import type { MessageKey } from "../../shared/i18n/catalogs/en.js";
import { DEFAULT_LANGUAGE, type Language } from "../../shared/languages.js";
import { localDate } from "../../shared/localDays.js";
import { centsToDollars } from "../../shared/money.js";
import { wireTime } from "../../shared/time.js";
import type { AppDeps } from "../deps.js";
import { translator } from "../i18n.js";
import {
  type LoadedCheckout,
  type PaymentOutcome,
  type Settled,
  settlePayment,
} from "../payments/transition.js";
import { getOrganizationCached } from "../store/organizations.js";
import { paymentDetails } from "../store/payments.js";
import type { PaymentsTable, SubscriptionsTable } from "../store/schema.js";
import { nextChargeAt } from "../wire/subscription.js";

/**
 * What the donor's page is told once a checkout's outcome is recorded (payments/transition.ts): the
 * receipt (201), the decline (402), or, while the payment waits for the donor's bank (3-D Secure), what the
 * page needs to let them confirm it (202).
 */

/**
 * What the donor is told: the receipt view (201) or the decline (402). Its words (`message`, a decline's
 * `error`) are in the checkout's `language` (the donor's page's), English by default.
 */
export interface FinalizedCheckout {
  status: 201 | 202 | 402;
  body: Record<string, unknown>;
}

/** The language the checkout was given in. */
const languageOf = (row: PaymentsTable): Language => paymentDetails(row).language ?? DEFAULT_LANGUAGE;

/**
 * The donor's own view of their payment: what they bought, what they paid, how. `timeZone`: the
 * organization's, whose calendar the next charge's day is told in (`nextBillingDay`), as its receipt does.
 */
export function donorReceipt(row: PaymentsTable, sub: SubscriptionsTable | null, timeZone: string) {
  const d = paymentDetails(row);
  const next = sub && (nextChargeAt(sub) ?? sub.next_billing_at);
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
    subscription:
      sub && next
        ? {
            id: sub.id,
            amount: centsToDollars(Number(sub.amount_cents)),
            frequency: sub.frequency,
            nextBillingDate: wireTime(next),
            nextBillingDay: localDate(Date.parse(next), timeZone),
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
  const org = loaded?.org ?? (await getOrganizationCached(deps.store, settled.row.organization_id));
  return checkoutAnswer(settled, org?.timeZone ?? "UTC");
}

/**
 * The answer for a checkout's payment as it stands (also for one recorded before: a repeat); `timeZone`
 * is the organization's.
 */
export function checkoutAnswer(settled: Pick<Settled, "row" | "sub">, timeZone: string): FinalizedCheckout {
  const { row, sub } = settled;
  if (row.status === "FAILED") return declined(row);
  return {
    status: 201,
    body: { payment: donorReceipt(row, sub, timeZone), message: thanks(row) },
  };
}

/** A payment the donor must still confirm in the browser (3-D Secure) with `clientSecret`. */
export function actionAnswer(row: PaymentsTable, clientSecret: string): FinalizedCheckout {
  return {
    status: 202,
    body: {
      status: "requires_action",
      paymentID: row.id,
      clientSecret,
      message: translator(languageOf(row))("answer.confirm"),
    },
  };
}

function thanks(row: PaymentsTable): string {
  const say = translator(languageOf(row));
  const values = { name: row.first_name, email: row.email };
  if (row.status === "PENDING" && row.failure_code === "verify_microdeposits")
    return say("answer.thanks.verifyDeposits", values);
  if (row.status === "PENDING") return say("answer.thanks.bankPending", values);
  return say("answer.thanks.receipt", values);
}

/** The catalog's words for a decline, by the processor's code. */
const DECLINES: Record<string, MessageKey> = {
  card_declined: "answer.decline.card",
  insufficient_funds: "answer.decline.funds",
  expired_card: "answer.decline.expired",
  incorrect_cvc: "answer.decline.cvc",
  invalid_cvc: "answer.decline.cvc",
  invalid_number: "answer.decline.number",
  incorrect_number: "answer.decline.number",
  invalid_expiry: "answer.decline.expiry",
  processing_error: "answer.decline.processing",
  authentication_required: "answer.decline.authentication",
  invalid_routing: "answer.decline.bank",
  invalid_account: "answer.decline.bank",
  invalid_account_holder: "answer.decline.bank",
};

/**
 * What a donor is told of a processor's refusal (a decline, a refused card or account): in English the
 * processor's own words stand; in another language the catalog's, by the processor's code. The checkout's
 * decline and the payment-method update page say it alike.
 */
export function declineText(
  language: Language,
  code: string | null | undefined,
  processorMessage: string | null | undefined,
): string {
  return language === DEFAULT_LANGUAGE
    ? (processorMessage ?? "The payment was declined")
    : translator(language)(DECLINES[code ?? ""] ?? "answer.decline.other");
}

function declined(row: PaymentsTable): FinalizedCheckout {
  const error = declineText(languageOf(row), row.failure_code, row.failure_message);
  return { status: 402, body: { error, code: row.failure_code, paymentID: row.id } };
}

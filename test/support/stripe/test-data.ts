/**
 * Stripe's documented test card numbers, test bank accounts and magic PaymentMethod ids, and what each one
 * does in the emulator (https://docs.stripe.com/testing, https://docs.stripe.com/payments/ach-direct-debit).
 */

import type { Decline } from "./errors.js";

export const DECLINES = {
  generic_decline: {
    code: "card_declined",
    decline_code: "generic_decline",
    message: "Your card was declined.",
  },
  insufficient_funds: {
    code: "card_declined",
    decline_code: "insufficient_funds",
    message: "Your card has insufficient funds.",
  },
  lost_card: { code: "card_declined", decline_code: "lost_card", message: "Your card was declined." },
  stolen_card: { code: "card_declined", decline_code: "stolen_card", message: "Your card was declined." },
  fraudulent: { code: "card_declined", decline_code: "fraudulent", message: "Your card was declined." },
  expired_card: { code: "expired_card", message: "Your card has expired.", param: "exp_month" },
  incorrect_cvc: { code: "incorrect_cvc", message: "Your card's security code is incorrect.", param: "cvc" },
  processing_error: {
    code: "processing_error",
    message: "An error occurred while processing your card. Try again in a little bit.",
  },
  incorrect_number: { code: "incorrect_number", message: "Your card number is incorrect.", param: "number" },
  test_mode_live_card: {
    code: "card_declined",
    decline_code: "test_mode_live_card",
    message:
      "Your card was declined. Your request was in test mode, but used a non test (live) card. For a list of valid test cards, visit: https://stripe.com/docs/testing.",
  },
  live_mode_test_card: {
    code: "card_declined",
    decline_code: "live_mode_test_card",
    message: "Your card was declined. Your request was in live mode, but used a known test card.",
  },
  authentication_required: {
    code: "authentication_required",
    decline_code: "authentication_required",
    message: "Your card was declined. This transaction requires authentication.",
  },
} satisfies Record<string, Decline>;

/** What a test card does. */
export type CardBehaviour =
  | { kind: "succeed" }
  /** Every charge and every setup is declined. */
  | { kind: "decline"; decline: Decline }
  /** Setting up / attaching succeeds, every charge is declined (4000000000000341). */
  | { kind: "charge_decline"; decline: Decline }
  /** 3-D Secure on session; once set up for off-session use, off-session charges need none (…3155). */
  | { kind: "auth_unless_set_up" }
  /** 3-D Secure always: on-session requires_action, off-session 402 authentication_required (…3184). */
  | { kind: "auth_always" }
  /** The charge succeeds, then a dispute is opened. */
  | { kind: "dispute"; reason: string; inquiry?: boolean }
  /** The charge succeeds; refunds stay pending until settled (…7726). */
  | { kind: "refund_pending" }
  /** The charge succeeds; refunds succeed, then fail asynchronously (…5126). */
  | { kind: "refund_fail" };

export interface TestCard {
  behaviour: CardBehaviour;
  funding?: "credit" | "debit" | "prepaid";
  country?: string;
}

export const TEST_CARDS: Record<string, TestCard> = {
  "4242424242424242": { behaviour: { kind: "succeed" } },
  "4000056655665556": { behaviour: { kind: "succeed" }, funding: "debit" },
  "5555555555554444": { behaviour: { kind: "succeed" } },
  "2223003122003222": { behaviour: { kind: "succeed" } },
  "5200828282828210": { behaviour: { kind: "succeed" }, funding: "debit" },
  "5105105105105100": { behaviour: { kind: "succeed" }, funding: "prepaid" },
  "378282246310005": { behaviour: { kind: "succeed" } },
  "371449635398431": { behaviour: { kind: "succeed" } },
  "6011111111111117": { behaviour: { kind: "succeed" } },
  "6011000990139424": { behaviour: { kind: "succeed" } },
  "3056930009020004": { behaviour: { kind: "succeed" } },
  "3566002020360505": { behaviour: { kind: "succeed" } },
  "6200000000000005": { behaviour: { kind: "succeed" } },
  "4000000000000077": { behaviour: { kind: "succeed" } },
  "4000000000000002": { behaviour: { kind: "decline", decline: DECLINES.generic_decline } },
  "4000000000009995": {
    behaviour: { kind: "decline", decline: DECLINES.insufficient_funds },
    funding: "debit",
  },
  "4000000000009987": { behaviour: { kind: "decline", decline: DECLINES.lost_card } },
  "4000000000009979": { behaviour: { kind: "decline", decline: DECLINES.stolen_card } },
  "4100000000000019": { behaviour: { kind: "decline", decline: DECLINES.fraudulent } },
  "4000000000000069": { behaviour: { kind: "decline", decline: DECLINES.expired_card } },
  "4000000000000127": { behaviour: { kind: "decline", decline: DECLINES.incorrect_cvc } },
  "4000000000000119": { behaviour: { kind: "decline", decline: DECLINES.processing_error } },
  "4242424242424241": { behaviour: { kind: "decline", decline: DECLINES.incorrect_number } },
  "4000000000000341": { behaviour: { kind: "charge_decline", decline: DECLINES.generic_decline } },
  "4000002500003155": { behaviour: { kind: "auth_unless_set_up" } },
  "4000002760003184": { behaviour: { kind: "auth_always" } },
  "4000000000003063": { behaviour: { kind: "auth_always" } },
  "4000000000003220": { behaviour: { kind: "auth_always" } },
  "4000000000000259": { behaviour: { kind: "dispute", reason: "fraudulent" } },
  "4000000000002685": { behaviour: { kind: "dispute", reason: "product_not_received" } },
  "4000000000001976": { behaviour: { kind: "dispute", reason: "fraudulent", inquiry: true } },
  "4000000000007726": { behaviour: { kind: "refund_pending" } },
  "4000000000005126": { behaviour: { kind: "refund_fail" } },
};

/** Stripe's magic test PaymentMethod ids (`payment_method: "pm_card_visa"`), each standing for a card number. */
export const MAGIC_CARD_PAYMENT_METHODS: Record<string, string> = {
  pm_card_visa: "4242424242424242",
  pm_card_visa_debit: "4000056655665556",
  pm_card_mastercard: "5555555555554444",
  pm_card_mastercard_debit: "5200828282828210",
  pm_card_mastercard_prepaid: "5105105105105100",
  pm_card_amex: "378282246310005",
  pm_card_discover: "6011111111111117",
  pm_card_diners: "3056930009020004",
  pm_card_jcb: "3566002020360505",
  pm_card_unionpay: "6200000000000005",
  pm_card_bypassPending: "4000000000000077",
  pm_card_chargeDeclined: "4000000000000002",
  pm_card_chargeDeclinedInsufficientFunds: "4000000000009995",
  pm_card_chargeDeclinedLostCard: "4000000000009987",
  pm_card_chargeDeclinedStolenCard: "4000000000009979",
  pm_card_chargeDeclinedFraudulent: "4100000000000019",
  pm_card_chargeDeclinedExpiredCard: "4000000000000069",
  pm_card_chargeDeclinedIncorrectCvc: "4000000000000127",
  pm_card_chargeDeclinedProcessingError: "4000000000000119",
  pm_card_chargeCustomerFail: "4000000000000341",
  pm_card_authenticationRequiredOnSetup: "4000002500003155",
  pm_card_authenticationRequired: "4000002760003184",
  pm_card_threeDSecureRequired: "4000000000003063",
  pm_card_threeDSecure2Required: "4000000000003220",
  pm_card_createDispute: "4000000000000259",
  pm_card_createDisputeProductNotReceived: "4000000000002685",
  pm_card_createDisputeInquiry: "4000000000001976",
  pm_card_pendingRefund: "4000000000007726",
  pm_card_refundFail: "4000000000005126",
};

export const TEST_ROUTING_NUMBER = "110000000";

export type BankBehaviour =
  | { kind: "succeed" }
  | { kind: "fail"; code: string; message: string }
  | { kind: "dispute" }
  /** Stays `processing`: settling it does nothing (000000000009). */
  | { kind: "stay_processing" };

/** Stripe's ACH Direct Debit test accounts (routing 110000000); any other account number succeeds. */
export const TEST_BANK_ACCOUNTS: Record<string, BankBehaviour> = {
  "000123456789": { kind: "succeed" },
  "000111111113": {
    kind: "fail",
    code: "account_closed",
    message: "The customer's bank account has been closed.",
  },
  "000111111116": {
    kind: "fail",
    code: "no_account",
    message: "The customer's bank account could not be located.",
  },
  "000222222227": {
    kind: "fail",
    code: "insufficient_funds",
    message: "The customer's account has insufficient funds to cover this payment.",
  },
  "000333333335": {
    kind: "fail",
    code: "debit_not_authorized",
    message: "The customer has notified their bank that this payment was unauthorized.",
  },
  "000444444440": {
    kind: "fail",
    code: "invalid_currency",
    message: "The bank was unable to process this payment because of its currency.",
  },
  "000555555559": { kind: "dispute" },
  "000000000009": { kind: "stay_processing" },
};

export const MAGIC_BANK_PAYMENT_METHODS: Record<string, string> = {
  pm_usBankAccount_success: "000123456789",
  pm_usBankAccount_accountClosed: "000111111113",
  pm_usBankAccount_noAccount: "000111111116",
  pm_usBankAccount_insufficientFunds: "000222222227",
  pm_usBankAccount_debitNotAuthorized: "000333333335",
  pm_usBankAccount_invalidCurrency: "000444444440",
  pm_usBankAccount_dispute: "000555555559",
  pm_usBankAccount_processing: "000000000009",
};

/** Stripe's microdeposit test values: amounts 32 and 45, or descriptor code SM11AA, verify the account. */
export const MICRODEPOSIT_AMOUNTS = [32, 45];
export const MICRODEPOSIT_DESCRIPTOR_CODE = "SM11AA";

export function cardBehaviour(number: string): CardBehaviour | null {
  return TEST_CARDS[number]?.behaviour ?? null;
}

export function cardBrand(number: string): string {
  if (/^4/.test(number)) return "visa";
  if (/^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/.test(number)) return "mastercard";
  if (/^3[47]/.test(number)) return "amex";
  if (/^(6011|65|64[4-9])/.test(number)) return "discover";
  if (/^35/.test(number)) return "jcb";
  if (/^3(0|6|8|9)/.test(number)) return "diners";
  if (/^62/.test(number)) return "unionpay";
  return "unknown";
}

export function luhnValid(number: string): boolean {
  if (!/^\d{12,19}$/.test(number)) return false;
  let sum = 0;
  let double = false;
  for (let i = number.length - 1; i >= 0; i--) {
    let d = number.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** The ABA routing-number checksum. */
export function routingNumberValid(routing: string): boolean {
  if (!/^\d{9}$/.test(routing)) return false;
  const d = routing.split("").map(Number);
  const sum = 3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8]);
  return sum % 10 === 0;
}

export function bankBehaviour(account: string): BankBehaviour {
  return TEST_BANK_ACCOUNTS[account] ?? { kind: "succeed" };
}

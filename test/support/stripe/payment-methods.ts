/** PaymentMethods: from card / bank details or Stripe's magic test ids, attach / detach, and charge details. */

import { randomUUID } from "node:crypto";
import { cardError, invalidRequest, missingParam } from "./errors.js";
import { fingerprint, newId, randomChars } from "./ids.js";
import { billingDetailsFrom, emptyAddress } from "./objects.js";
import type { Params } from "./params.js";
import { type Op, previousAttributes, snapshot } from "./state.js";
import {
  cardBehaviour,
  cardBrand,
  DECLINES,
  luhnValid,
  MAGIC_BANK_PAYMENT_METHODS,
  MAGIC_CARD_PAYMENT_METHODS,
  routingNumberValid,
  TEST_CARDS,
  TEST_ROUTING_NUMBER,
} from "./test-data.js";
import type {
  BankDetails,
  BillingDetails,
  CardDetails,
  CustomerObject,
  Instrument,
  PaymentMethodObject,
  StoredRecord,
  WalletType,
} from "./types.js";

/** A wallet (Apple Pay / Google Pay) token with no card number behaves as this card. */
export const WALLET_CARD_NUMBER = "4242424242424242";
/** …and in live mode as this (Luhn-valid, not a test number). */
const LIVE_WALLET_CARD_NUMBER = "4000056655665564";

function futureExpiry(op: Op): { expMonth: number; expYear: number } {
  const d = new Date(op.now * 1000);
  return { expMonth: d.getUTCMonth() + 1, expYear: d.getUTCFullYear() + 3 };
}

/** Reads and validates `payment_method_data` (type card or us_bank_account) into an instrument. */
export function instrumentFromData(
  op: Op,
  data: Params,
  verificationMethod?: string,
): { instrument: Instrument; billing: BillingDetails } {
  const type = data.reqStr("type");
  const billing = billingDetailsFrom(data.obj("billing_details"));
  if (type === "card") {
    const card = data.obj("card");
    if (!card) throw missingParam(data.name("card"));
    const wallet = (card.oneOf("wallet", ["apple_pay", "google_pay"]) ??
      data.obj("wallet")?.oneOf("type", ["apple_pay", "google_pay"]) ??
      null) as WalletType | null;
    const rawNumber = card.str("number")?.replace(/[\s-]/g, "");
    const number = rawNumber || (wallet ? (op.livemode ? LIVE_WALLET_CARD_NUMBER : WALLET_CARD_NUMBER) : "");
    if (!number) throw missingParam(card.name("number"));
    if (!luhnValid(number) && !TEST_CARDS[number]) throw cardError({ ...DECLINES.incorrect_number });
    // Stripe refuses real card numbers in test mode, and its test numbers in live mode, when tokenizing.
    if (!op.livemode && !TEST_CARDS[number]) throw cardError(DECLINES.test_mode_live_card);
    if (op.livemode && TEST_CARDS[number]) throw cardError(DECLINES.live_mode_test_card);
    const fallback = futureExpiry(op);
    const expMonth = card.int("exp_month") ?? (wallet ? fallback.expMonth : undefined);
    let expYear = card.int("exp_year") ?? (wallet ? fallback.expYear : undefined);
    if (expMonth === undefined) throw missingParam(card.name("exp_month"));
    if (expYear === undefined) throw missingParam(card.name("exp_year"));
    if (expYear < 100) expYear += 2000;
    if (expMonth < 1 || expMonth > 12)
      throw cardError({
        code: "invalid_expiry_month",
        message: "Your card's expiration month is invalid.",
        param: "exp_month",
      });
    const now = new Date(op.now * 1000);
    const year = now.getUTCFullYear();
    if (expYear < year || expYear > year + 50)
      throw cardError({
        code: "invalid_expiry_year",
        message: "Your card's expiration year is invalid.",
        param: "exp_year",
      });
    if (expYear === year && expMonth < now.getUTCMonth() + 1)
      throw cardError({
        code: "invalid_expiry_month",
        message: "Your card's expiration month is invalid.",
        param: "exp_month",
      });
    const cvc = card.strOrNull("cvc") ?? null;
    if (cvc !== null && !/^\d{3,4}$/.test(cvc))
      throw cardError({
        code: "invalid_cvc",
        message: "Your card's security code is invalid.",
        param: "cvc",
      });
    return { instrument: { kind: "card", number, expMonth, expYear, cvc, wallet }, billing };
  }
  if (type === "us_bank_account") {
    const bank = data.obj("us_bank_account");
    if (!bank) throw missingParam(data.name("us_bank_account"));
    const routing = bank.reqStr("routing_number").replace(/\D/g, "");
    const account = bank.reqStr("account_number").replace(/\s/g, "");
    if (!/^\d{9}$/.test(routing))
      throw invalidRequest("Routing number must have 9 digits", { param: bank.name("routing_number") });
    if (!routingNumberValid(routing))
      throw invalidRequest(`Invalid routing number: ${routing}`, {
        param: bank.name("routing_number"),
        code: "routing_number_invalid",
      });
    if (!/^\d{4,17}$/.test(account))
      throw invalidRequest("Account number must be between 4 and 17 digits", {
        param: bank.name("account_number"),
        code: "account_number_invalid",
      });
    if (!billing.name) throw missingParam(`${data.name("billing_details")}[name]`);
    const method = bank.str("verification_method") ?? verificationMethod;
    return {
      instrument: {
        kind: "bank",
        routing,
        account,
        holderType: bank.oneOf("account_holder_type", ["individual", "company"]) ?? "individual",
        accountType: bank.oneOf("account_type", ["checking", "savings"]) ?? "checking",
        microdeposits: method === "microdeposits",
      },
      billing,
    };
  }
  throw invalidRequest(
    `The payment method type \`${type}\` is not supported by the Stripe emulator (card, us_bank_account).`,
    { param: data.name("type"), code: "parameter_invalid" },
  );
}

/** Stripe's magic test PaymentMethod ids (`pm_card_visa`, `pm_usBankAccount_success`, …). */
export function magicInstrument(
  op: Op,
  id: string,
): { instrument: Instrument; billing: BillingDetails } | null {
  if (op.livemode) return null;
  const number = MAGIC_CARD_PAYMENT_METHODS[id];
  if (number) {
    const { expMonth, expYear } = futureExpiry(op);
    return {
      instrument: { kind: "card", number, expMonth, expYear, cvc: null, wallet: null },
      billing: { address: emptyAddress(), email: null, name: null, phone: null, tax_id: null },
    };
  }
  const account = MAGIC_BANK_PAYMENT_METHODS[id];
  if (account) {
    return {
      instrument: {
        kind: "bank",
        routing: TEST_ROUTING_NUMBER,
        account,
        holderType: "individual",
        accountType: "checking",
        microdeposits: false,
      },
      billing: { address: emptyAddress(), email: null, name: "Jenny Rosen", phone: null, tax_id: null },
    };
  }
  return null;
}

export function cardDetails(op: Op, instrument: Extract<Instrument, { kind: "card" }>): CardDetails {
  const brand = cardBrand(instrument.number);
  const test = TEST_CARDS[instrument.number];
  const last4 = instrument.number.slice(-4);
  const wallet: CardDetails["wallet"] = instrument.wallet
    ? {
        type: instrument.wallet,
        dynamic_last4: instrument.wallet === "apple_pay" ? last4 : null,
        [instrument.wallet]: {},
      }
    : null;
  return {
    brand,
    checks: {
      address_line1_check: null,
      address_postal_code_check: null,
      cvc_check: instrument.cvc ? "pass" : null,
    },
    country: test?.country ?? "US",
    display_brand: brand === "amex" ? "american_express" : brand,
    exp_month: instrument.expMonth,
    exp_year: instrument.expYear,
    fingerprint: fingerprint(op.account.id, `card:${instrument.number}`),
    funding: test?.funding ?? "credit",
    generated_from: null,
    last4,
    networks: { available: [brand], preferred: null },
    regulated_status: "unregulated",
    three_d_secure_usage: { supported: true },
    wallet,
  };
}

export function bankDetails(op: Op, instrument: Extract<Instrument, { kind: "bank" }>): BankDetails {
  return {
    account_holder_type: instrument.holderType,
    account_type: instrument.accountType,
    bank_name: instrument.routing === TEST_ROUTING_NUMBER ? "STRIPE TEST BANK" : "TEST BANK",
    financial_connections_account: null,
    fingerprint: fingerprint(op.account.id, `bank:${instrument.routing}:${instrument.account}`),
    last4: instrument.account.slice(-4),
    networks: { preferred: "ach", supported: ["ach"] },
    routing_number: instrument.routing,
    status_details: null,
  };
}

/** The type-specific part of a PaymentMethod (or of a ConfirmationToken's payment_method_preview). */
export function methodDetails(op: Op, instrument: Instrument): Record<string, unknown> {
  return instrument.kind === "card"
    ? { type: "card", card: cardDetails(op, instrument) }
    : { type: "us_bank_account", us_bank_account: bankDetails(op, instrument) };
}

export function createPaymentMethod(
  op: Op,
  instrument: Instrument,
  billing: BillingDetails,
  metadata: Record<string, string> = {},
): StoredRecord<PaymentMethodObject> {
  const pm: PaymentMethodObject = {
    id: newId("pm"),
    object: "payment_method",
    allow_redisplay: "unspecified",
    billing_details: billing,
    created: op.now,
    customer: null,
    customer_account: null,
    livemode: op.livemode,
    metadata,
    ...(methodDetails(op, instrument) as { type: "card" | "us_bank_account" }),
  };
  return op.put("payment_method", pm, { instrument });
}

/** A `payment_method` parameter: a magic test id (a new PaymentMethod each time) or an existing one. */
export function resolvePaymentMethod(
  op: Op,
  id: string,
  param = "payment_method",
): StoredRecord<PaymentMethodObject> {
  const magic = magicInstrument(op, id);
  if (magic) return createPaymentMethod(op, magic.instrument, magic.billing);
  return op.find<PaymentMethodObject>("payment_method", id, param);
}

export function instrumentOf(record: StoredRecord<PaymentMethodObject>): Instrument {
  const instrument = record.internal.instrument;
  if (!instrument) throw new Error(`payment method ${record.obj.id} has no instrument`);
  return instrument;
}

export const CONSUMED_MESSAGE =
  "The provided PaymentMethod was previously used with a PaymentIntent without Customer attachment, shared with a connected account without Customer attachment, or was detached from a Customer. It may not be used again. To use a PaymentMethod multiple times, you must attach it to a Customer first.";

export function attachPaymentMethod(
  op: Op,
  record: StoredRecord<PaymentMethodObject>,
  customerId: string,
): void {
  if (record.obj.customer === customerId) return;
  const pm = op.modify(record);
  pm.customer = customerId;
  record.internal.consumed = false;
  op.emit("payment_method.attached", pm);
}

/** POST /v1/payment_methods/:id/attach: Stripe checks the card ($0 authorization) before saving it. */
export function attachViaApi(op: Op, id: string, p: Params): PaymentMethodObject {
  const record = op.find<PaymentMethodObject>("payment_method", id, "payment_method");
  const customerId = p.reqStr("customer");
  op.find<CustomerObject>("customer", customerId, "customer");
  if (record.obj.customer && record.obj.customer !== customerId)
    throw invalidRequest("The payment method you provided has already been attached to a customer.", {
      param: "payment_method",
    });
  if (record.internal.consumed) throw invalidRequest(CONSUMED_MESSAGE, { param: "payment_method" });
  const instrument = instrumentOf(record);
  if (instrument.kind === "card") {
    const behaviour = cardBehaviour(instrument.number);
    if (behaviour?.kind === "decline") throw cardError(behaviour.decline);
    if (!behaviour && !op.livemode) throw cardError(DECLINES.test_mode_live_card);
  }
  attachPaymentMethod(op, record, customerId);
  return record.obj;
}

export function detachViaApi(op: Op, id: string): PaymentMethodObject {
  const record = op.find<PaymentMethodObject>("payment_method", id, "payment_method");
  if (!record.obj.customer)
    throw invalidRequest(`The payment method ${id} is not attached to a customer.`, {
      param: "payment_method",
      code: "payment_method_unexpected_state",
    });
  const before = snapshot(record.obj);
  const pm = op.modify(record);
  pm.customer = null;
  record.internal.consumed = true;
  op.emit("payment_method.detached", pm, previousAttributes(before, pm));
  return pm;
}

/** `payment_method_details` of a charge made with this PaymentMethod. */
export function chargeMethodDetails(
  pm: PaymentMethodObject,
  amount: number,
  opts: { threeDSecure?: boolean; mandate?: string } = {},
): Record<string, unknown> {
  if (pm.type === "us_bank_account" && pm.us_bank_account) {
    const b = pm.us_bank_account;
    return {
      type: "us_bank_account",
      us_bank_account: {
        account_holder_type: b.account_holder_type,
        account_type: b.account_type,
        bank_name: b.bank_name,
        fingerprint: b.fingerprint,
        last4: b.last4,
        mandate: opts.mandate ?? null,
        payment_reference: null,
        routing_number: b.routing_number,
      },
    };
  }
  const c = pm.card as CardDetails;
  return {
    type: "card",
    card: {
      amount_authorized: amount,
      authorization_code: null,
      brand: c.brand,
      checks: c.checks,
      country: c.country,
      exp_month: c.exp_month,
      exp_year: c.exp_year,
      extended_authorization: { status: "disabled" },
      fingerprint: c.fingerprint,
      funding: c.funding,
      incremental_authorization: { status: "unavailable" },
      installments: null,
      last4: c.last4,
      mandate: null,
      multicapture: { status: "unavailable" },
      network: c.brand,
      network_token: { used: false },
      network_transaction_id: randomChars(15),
      overcapture: { maximum_amount_capturable: amount, status: "unavailable" },
      regulated_status: "unregulated",
      three_d_secure: opts.threeDSecure
        ? {
            authentication_flow: "challenge",
            electronic_commerce_indicator: "05",
            exemption_indicator: null,
            result: "authenticated",
            result_reason: null,
            transaction_id: randomUUID(),
            version: "2.2.0",
          }
        : null,
      wallet: c.wallet,
    },
  };
}

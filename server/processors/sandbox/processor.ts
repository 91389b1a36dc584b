/**
 * The sandbox processor: what a fresh install uses. It takes Stripe's test card numbers and
 * test bank accounts, moves no money, and keeps to the same rules as a real processor: card data ends
 * here; callers get brand, last 4, expiry, fingerprint and an opaque token.
 *
 * Stateless by design, so it works across restarts and several server processes:
 * - A token (`pm_sandbox_<payload>.<mac>`) describes itself: type, brand, last 4, expiry, test behaviour,
 *   fingerprint, reusable flag and a random id, signed with an HMAC under the processor secret. It never
 *   holds the number; a changed or foreign token fails the HMAC check and is treated as unknown.
 * - A payment id (`pi_sandbox_<payload>.<mac>`) likewise carries amount, creation time, outcome and, for
 *   bank payments, the time they settle, so `retrievePayment` turns PENDING into COMPLETED (or failed)
 *   once the injected clock passes that time, in any process.
 * - Only what a real processor must remember lives in a `SandboxLedger`: idempotency keys (24 h, as
 *   Stripe) and refunds. The default ledger is in memory, so it is per process and forgotten on restart
 *   (a retried charge in another process would "charge" the sandbox twice, and refund totals reset);
 *   pass a shared ledger (e.g. backed by the database) where that matters.
 *
 * Test data (Stripe's numbers):
 *   4242 4242 4242 4242, 4000 0566 5566 5556 (Visa), 5555 5555 5555 4444, 2223 0031 2200 3222,
 *   5105 1051 0510 5100 (Mastercard), 3782 822463 10005, 3714 496353 98431 (Amex),
 *   6011 1111 1111 1117 (Discover): succeed.
 *   4000 0000 0000 0002 declined (card_declined); 4000 0000 0000 9995 insufficient_funds;
 *   4000 0000 0000 0069 expired_card; 4000 0000 0000 0119 processing_error (all also fail set-up, except
 *   insufficient funds); 4000 0000 0000 0341 sets up fine, then every charge is declined.
 *   Any other number that passes the Luhn check is refused at tokenization (not a test card), as in
 *   Stripe's test mode, so nobody mistakes the sandbox for a real payment.
 *   Bank: routing 110000000, account 000123456789 pending, then succeeds when it settles; account
 *   000111111116 pending, then fails with insufficient_funds. Other accounts: invalid_account.
 */

import crypto from "node:crypto";
import { isCurrency } from "../../../shared/currency.js";
import { randomBytesPooled } from "../../ids.js";
import {
  type CardBrand,
  type ChargeHooks,
  type ChargeInput,
  type ChargeReference,
  type ChargeResult,
  type CreatePaymentMethodResult,
  type FailureCode,
  type PaymentLookup,
  type PaymentMethod,
  type PaymentMethodInput,
  type PaymentProcessor,
  ProcessorError,
  type RefundInput,
  type RefundResult,
  type SetupInput,
  type SetupResult,
} from "../port.js";
import { memoryLedger, type SandboxLedger } from "./ledger.js";

export interface SandboxOptions {
  /** Signs tokens and payment ids and keys fingerprints; at least 16 characters. Keep it stable and secret. */
  secret: string;
  /** How long a bank payment stays pending. Default 2 minutes. */
  bankSettleMs?: number;
  /** Clock in ms since the epoch (tests advance it). */
  now?: () => number;
  /** Default: in memory, per process. */
  ledger?: SandboxLedger;
}

type CardBehaviour =
  | "succeed"
  | "decline"
  | "insufficient_funds"
  | "expired_card"
  | "processing_error"
  | "decline_after_setup";
type BankBehaviour = "bank_succeed" | "bank_insufficient_funds";
type Behaviour = CardBehaviour | BankBehaviour;

export const SANDBOX_TEST_CARDS: Readonly<Record<string, CardBehaviour>> = {
  "4242424242424242": "succeed",
  "4000056655665556": "succeed",
  "5555555555554444": "succeed",
  "2223003122003222": "succeed",
  "5105105105105100": "succeed",
  "378282246310005": "succeed",
  "371449635398431": "succeed",
  "6011111111111117": "succeed",
  "4000000000000002": "decline",
  "4000000000009995": "insufficient_funds",
  "4000000000000069": "expired_card",
  "4000000000000119": "processing_error",
  "4000000000000341": "decline_after_setup",
};

export const SANDBOX_TEST_ROUTING = "110000000";
export const SANDBOX_TEST_ACCOUNTS: Readonly<Record<string, BankBehaviour>> = {
  "000123456789": "bank_succeed",
  "000111111116": "bank_insufficient_funds",
};

const DEFAULT_BANK_SETTLE_MS = 2 * 60 * 1000;
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_EXPIRY_YEARS = 50;
const TOKEN_PREFIX = "pm_sandbox_";
const PAYMENT_PREFIX = "pi_sandbox_";

const CHARGE_FAILURES: Partial<Record<Behaviour, FailureCode>> = {
  decline: "card_declined",
  insufficient_funds: "insufficient_funds",
  expired_card: "expired_card",
  processing_error: "processing_error",
  decline_after_setup: "card_declined",
  bank_insufficient_funds: "insufficient_funds",
};

/** Insufficient funds is only found out when charging; the other failures stop the set-up too. */
const SETUP_FAILURES: Partial<Record<Behaviour, FailureCode>> = {
  decline: "card_declined",
  expired_card: "expired_card",
  processing_error: "processing_error",
};

export function failureMessage(code: FailureCode, type: "card" | "bank"): string {
  switch (code) {
    case "card_declined":
      return "Your card was declined. Try another card.";
    case "insufficient_funds":
      return type === "bank"
        ? "The bank account has insufficient funds. Try another payment method."
        : "Your card has insufficient funds. Try another card.";
    case "expired_card":
      return "Your card has expired. Try another card.";
    case "processing_error":
      return "We couldn't process your payment. Please try again in a moment.";
    case "authentication_required":
      return "Your bank needs you to confirm this payment. Please pay again while signed in to your bank.";
    case "invalid_payment_method":
      return "This payment method can't be used. Please enter your payment details again.";
    case "incorrect_cvc":
      return "Your card's security code is incorrect. Check it and try again.";
    case "bank_account_unusable":
      return "The bank refused this debit. Try another payment method.";
    case "invalid_request":
      return "This payment method can no longer be charged. Please enter your payment details again.";
    case "amount_too_small":
      return "This amount is below the smallest payment that can be taken. Please give a larger amount.";
    case "amount_too_large":
      return "This amount is above the largest payment that can be taken. Please give a smaller amount.";
  }
}

/** Strips the spaces and dashes donors type; anything else stays and makes the number invalid. */
export function normalizeDigits(value: string): string {
  return value.replace(/[\s-]/g, "");
}

export function luhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Brand by prefix: Visa 4, Mastercard 51–55 and 2221–2720, Amex 34/37, Discover 6011/65. */
export function detectBrand(digits: string): CardBrand {
  if (digits.startsWith("4")) return "visa";
  if (/^3[47]/.test(digits)) return "amex";
  if (/^(6011|65)/.test(digits)) return "discover";
  if (/^5[1-5]/.test(digits)) return "mastercard";
  const four = Number(digits.slice(0, 4));
  if (digits.length >= 4 && four >= 2221 && four <= 2720) return "mastercard";
  return "unknown";
}

/** ABA routing number: 9 digits with the 3-7-1 weighted checksum. */
export function routingNumberValid(routing: string): boolean {
  if (!/^\d{9}$/.test(routing)) return false;
  const d = [...routing].map(Number);
  const sum = 3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8]);
  return sum % 10 === 0;
}

/** What a token says about its method (short keys keep tokens short). */
interface TokenPayload {
  v: 1;
  /** Random id of this payment method; kept when it is set up for future use. */
  id: string;
  k: "card" | "bank";
  b?: CardBrand;
  l4: string;
  em?: number;
  ey?: number;
  x: Behaviour;
  fp: string;
  r: 0 | 1;
}

interface PaymentPayload {
  v: 1;
  id: string;
  k: "card" | "bank";
  a: number;
  c: string;
  t: number;
  /** Bank payments: when they leave PENDING. */
  s?: number;
  o: "succeeded" | "failed";
  fc?: FailureCode;
}

interface RefundEntry {
  id: string;
  amount: number;
  /** Hash of the request, to spot a reused idempotency key. */
  h: string;
  /** Random, per write: tells the request that wrote the entry from another that wrote the same one at once. */
  w?: string;
}

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64url");

function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

const sha256 = (text: string) => crypto.hash("sha256", text, "hex");
const randomId = () => randomBytesPooled(12).toString("base64url");

export class SandboxProcessor implements PaymentProcessor {
  readonly name = "sandbox" as const;
  readonly account = "sandbox";
  readonly livemode = false;
  readonly collection = "server" as const;

  private readonly tokenKey: Buffer;
  private readonly paymentKey: Buffer;
  private readonly fingerprintKey: Buffer;
  private readonly idKey: Buffer;
  private readonly bankSettleMs: number;
  private readonly now: () => number;
  private readonly ledger: SandboxLedger;

  constructor(opts: SandboxOptions) {
    if (typeof opts.secret !== "string" || opts.secret.length < 16)
      throw new ProcessorError(
        "misconfigured",
        "The sandbox processor secret must be at least 16 characters",
      );
    const bankSettleMs = opts.bankSettleMs ?? DEFAULT_BANK_SETTLE_MS;
    if (!Number.isSafeInteger(bankSettleMs) || bankSettleMs < 0)
      throw new ProcessorError("misconfigured", "bankSettleMs must be a non-negative integer");
    // One key per purpose, so a signature made for one kind of string is worthless for another.
    const derive = (purpose: string) =>
      crypto.createHmac("sha256", opts.secret).update(`almoner-sandbox/${purpose}/v1`).digest();
    this.tokenKey = derive("token");
    this.paymentKey = derive("payment");
    this.fingerprintKey = derive("fingerprint");
    this.idKey = derive("id");
    this.bankSettleMs = bankSettleMs;
    this.now = opts.now ?? Date.now;
    this.ledger = opts.ledger ?? memoryLedger(this.now);
  }

  async createPaymentMethod(input: PaymentMethodInput): Promise<CreatePaymentMethodResult> {
    return input.type === "bank" ? this.tokenizeBank(input) : this.tokenizeCard(input);
  }

  async retrievePaymentMethod(token: string): Promise<PaymentMethod | null> {
    const payload = this.readToken(token);
    return payload ? this.describe(token, payload) : null;
  }

  async setupForFutureUse(input: SetupInput): Promise<SetupResult> {
    const payload = this.readToken(input.paymentMethod);
    if (!payload) return this.setupFailure("invalid_payment_method", "card");
    if (payload.k === "card" && this.expired(payload)) return this.setupFailure("expired_card", "card");
    const failure = SETUP_FAILURES[payload.x];
    if (failure) return this.setupFailure(failure, payload.k);
    // Same method id, now reusable: setting up the same token again gives the same token.
    return { status: "succeeded", method: this.reusable(payload) };
  }

  async charge(input: ChargeInput, hooks: ChargeHooks = {}): Promise<ChargeResult> {
    this.checkCharge(input);
    const requestHash = sha256(
      stableJson({
        a: input.amountCents,
        c: input.currency,
        pm: input.paymentMethod,
        off: input.offSession,
        save: input.saveForFutureUse === true,
      }),
    );
    const key = `charge:${sha256(input.idempotencyKey)}`;
    const result = this.attempt(input);
    // As a processor that makes its payment before moving money: the caller keeps the id first.
    if (result.processorPaymentId) await hooks.created?.(result.processorPaymentId);
    // One write: a retried key finds its first answer stored and gets that instead of this attempt.
    const stored = await this.ledger.putIfAbsent(
      key,
      JSON.stringify({ h: requestHash, r: result }),
      IDEMPOTENCY_TTL_MS,
    );
    return this.replay(stored, requestHash);
  }

  /** The ledger remembers every charge by its key (the sandbox never hands out an id before charging). */
  async findCharge(ref: ChargeReference): Promise<ChargeResult | null> {
    this.checkKey(ref.idempotencyKey);
    const stored = await this.ledger.get(`charge:${sha256(ref.idempotencyKey)}`);
    return stored === undefined ? null : (JSON.parse(stored) as { r: ChargeResult }).r;
  }

  async retrievePayment(processorPaymentId: string): Promise<PaymentLookup | null> {
    const p = this.readPayment(processorPaymentId);
    if (!p) return null;
    const status = this.statusOf(p);
    const refunds = await this.refunds(p.id);
    const lookup: PaymentLookup = {
      processorPaymentId,
      status,
      amountCents: p.a,
      currency: p.c,
      refundedCents: refunds.reduce((sum, r) => sum + r.amount, 0),
      createdAt: p.t,
    };
    if (status === "failed" && p.fc) {
      lookup.failureCode = p.fc;
      lookup.failureMessage = failureMessage(p.fc, p.k);
    }
    return lookup;
  }

  async refund(input: RefundInput): Promise<RefundResult> {
    const p = this.readPayment(input.processorPaymentId);
    if (!p) return { ok: false, code: "unknown_payment", message: "No such payment." };
    if (
      input.amountCents !== undefined &&
      (!Number.isSafeInteger(input.amountCents) || input.amountCents <= 0)
    )
      return { ok: false, code: "invalid_amount", message: "The refund amount must be a positive amount." };
    if (input.idempotencyKey !== undefined) this.checkKey(input.idempotencyKey);
    const requestHash = sha256(stableJson({ p: p.id, a: input.amountCents ?? null }));
    // With a key, the refund id is derived from it, so a retry finds its own earlier refund in the log.
    const refundId = `re_sandbox_${
      input.idempotencyKey === undefined
        ? randomId()
        : crypto
            .createHmac("sha256", this.idKey)
            .update(`${p.id}:${input.idempotencyKey}`)
            .digest("base64url")
    }`;
    for (;;) {
      const refunds = await this.refunds(p.id);
      const own = refunds.find((r) => r.id === refundId);
      const total = refunds.reduce((sum, r) => sum + r.amount, 0);
      if (own) {
        if (own.h !== requestHash)
          throw new ProcessorError(
            "idempotency_key_reused",
            "Idempotency key reused with a different refund",
          );
        return {
          ok: true,
          refundId,
          amountCents: own.amount,
          refundedTotalCents: total,
          status: "succeeded",
          replayed: true,
        };
      }
      if (this.statusOf(p) !== "succeeded")
        return { ok: false, code: "not_refundable", message: "Only a completed payment can be refunded." };
      const remaining = p.a - total;
      if (remaining <= 0)
        return { ok: false, code: "not_refundable", message: "This payment is already fully refunded." };
      const amount = input.amountCents ?? remaining;
      if (amount > remaining)
        return {
          ok: false,
          code: "invalid_amount",
          message: "The refund amount is more than what is left of the payment.",
        };
      const entry: RefundEntry = { id: refundId, amount, h: requestHash, w: randomId() };
      const written = JSON.parse(
        await this.ledger.putIfAbsent(`refund:${p.id}:${refunds.length}`, JSON.stringify(entry)),
      ) as RefundEntry;
      // Someone else took this slot first: read the log again and start over.
      if (written.id !== refundId) continue;
      return {
        ok: true,
        refundId,
        amountCents: amount,
        refundedTotalCents: total + amount,
        status: "succeeded",
        // The same refund, written a moment before by an identical request.
        ...(written.w !== entry.w && { replayed: true }),
      };
    }
  }

  // ---- tokenization ----

  private tokenizeCard(input: Extract<PaymentMethodInput, { type: "card" }>): CreatePaymentMethodResult {
    const digits = typeof input.number === "string" ? normalizeDigits(input.number) : "";
    if (!/^\d{12,19}$/.test(digits) || !luhnValid(digits))
      return { ok: false, code: "invalid_number", message: "Your card number is invalid." };
    const brand = detectBrand(digits);
    const month = input.expMonth;
    const year =
      Number.isInteger(input.expYear) && input.expYear < 100 ? 2000 + input.expYear : input.expYear;
    const nowYear = new Date(this.now()).getUTCFullYear();
    if (
      !Number.isInteger(month) ||
      month < 1 ||
      month > 12 ||
      !Number.isInteger(year) ||
      year > nowYear + MAX_EXPIRY_YEARS ||
      this.expired({ em: month, ey: year })
    )
      return { ok: false, code: "invalid_expiry", message: "Your card's expiration date is invalid." };
    const cvc = typeof input.cvc === "string" ? input.cvc.trim() : "";
    if (!(brand === "amex" ? /^\d{4}$/ : /^\d{3}$/).test(cvc))
      return { ok: false, code: "invalid_cvc", message: "Your card's security code is invalid." };
    const behaviour = SANDBOX_TEST_CARDS[digits];
    if (!behaviour)
      return {
        ok: false,
        code: "card_declined",
        message: "This is a test checkout: use a test card such as 4242 4242 4242 4242.",
      };
    const payload: TokenPayload = {
      v: 1,
      id: randomId(),
      k: "card",
      b: brand,
      l4: digits.slice(-4),
      em: month,
      ey: year,
      x: behaviour,
      fp: this.fingerprint(`card:${digits}`),
      r: 0,
    };
    return { ok: true, method: this.describe(this.signToken(payload), payload) };
  }

  private tokenizeBank(input: Extract<PaymentMethodInput, { type: "bank" }>): CreatePaymentMethodResult {
    const holder = typeof input.accountHolder === "string" ? input.accountHolder.trim() : "";
    if (!holder || holder.length > 200)
      return { ok: false, code: "invalid_account_holder", message: "Enter the account holder's name." };
    const routing = typeof input.routingNumber === "string" ? normalizeDigits(input.routingNumber) : "";
    if (!routingNumberValid(routing))
      return {
        ok: false,
        code: "invalid_routing",
        message: "The routing number must be a valid 9-digit number.",
      };
    const account = typeof input.accountNumber === "string" ? normalizeDigits(input.accountNumber) : "";
    if (!/^\d{4,17}$/.test(account))
      return { ok: false, code: "invalid_account", message: "The account number is invalid." };
    const behaviour = routing === SANDBOX_TEST_ROUTING ? SANDBOX_TEST_ACCOUNTS[account] : undefined;
    if (!behaviour)
      return {
        ok: false,
        code: "invalid_account",
        message: "This is a test checkout: use routing number 110000000 and account number 000123456789.",
      };
    const payload: TokenPayload = {
      v: 1,
      id: randomId(),
      k: "bank",
      l4: account.slice(-4),
      x: behaviour,
      fp: this.fingerprint(`bank:${routing}:${account}`),
      r: 0,
    };
    return { ok: true, method: this.describe(this.signToken(payload), payload) };
  }

  private fingerprint(normalized: string): string {
    return crypto.createHmac("sha256", this.fingerprintKey).update(normalized).digest("hex");
  }

  private describe(token: string, p: TokenPayload): PaymentMethod {
    const method: PaymentMethod = { token, type: p.k, last4: p.l4, fingerprint: p.fp, reusable: p.r === 1 };
    if (p.k === "card") {
      method.brand = p.b;
      method.expMonth = p.em;
      method.expYear = p.ey;
    }
    return method;
  }

  private reusable(p: TokenPayload): PaymentMethod {
    const payload: TokenPayload = { ...p, r: 1 };
    return this.describe(this.signToken(payload), payload);
  }

  /** A card is good through the last day of its expiry month (UTC). */
  private expired(p: { em?: number; ey?: number }): boolean {
    if (p.em === undefined || p.ey === undefined) return false;
    return this.now() >= Date.UTC(p.ey, p.em, 1);
  }

  // ---- signed strings ----

  private sign(key: Buffer, prefix: string, body: string): string {
    return `${prefix}${body}.${crypto
      .createHmac("sha256", key)
      .update(prefix + body)
      .digest("base64url")}`;
  }

  private verify(key: Buffer, prefix: string, value: unknown): unknown {
    if (typeof value !== "string" || value.length > 2000 || !value.startsWith(prefix)) return null;
    const parts = value.slice(prefix.length).split(".");
    if (parts.length !== 2) return null;
    const [body, mac] = parts;
    const expected = crypto
      .createHmac("sha256", key)
      .update(prefix + body)
      .digest();
    const given = Buffer.from(mac, "base64url");
    // Buffer.from drops characters that are not base64url, so compare the text form too.
    if (given.length !== expected.length || given.toString("base64url") !== mac) return null;
    if (!crypto.timingSafeEqual(given, expected)) return null;
    try {
      return JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    } catch {
      return null;
    }
  }

  private signToken(p: TokenPayload): string {
    return this.sign(this.tokenKey, TOKEN_PREFIX, b64(JSON.stringify(p)));
  }

  private readToken(token: string): TokenPayload | null {
    const p = this.verify(this.tokenKey, TOKEN_PREFIX, token) as TokenPayload | null;
    return p && p.v === 1 && (p.k === "card" || p.k === "bank") ? p : null;
  }

  private readPayment(id: string): PaymentPayload | null {
    const p = this.verify(this.paymentKey, PAYMENT_PREFIX, id) as PaymentPayload | null;
    return p && p.v === 1 && typeof p.id === "string" ? p : null;
  }

  // ---- charging ----

  private checkKey(key: unknown): void {
    if (typeof key !== "string" || key.length === 0 || key.length > 255)
      throw new ProcessorError("invalid_request", "idempotencyKey must be 1 to 255 characters");
  }

  private checkCharge(input: ChargeInput): void {
    if (!Number.isSafeInteger(input.amountCents) || input.amountCents <= 0)
      throw new ProcessorError("invalid_request", "amountCents must be a positive integer");
    if (!isCurrency(input.currency))
      throw new ProcessorError("invalid_request", `${input.currency} is not a currency the sandbox takes`);
    this.checkKey(input.idempotencyKey);
    if (typeof input.description !== "string")
      throw new ProcessorError("invalid_request", "description must be a string");
    if (typeof input.offSession !== "boolean")
      throw new ProcessorError("invalid_request", "offSession must be true or false");
  }

  private replay(stored: string, requestHash: string): ChargeResult {
    const { h, r } = JSON.parse(stored) as { h: string; r: ChargeResult };
    if (h !== requestHash)
      throw new ProcessorError("idempotency_key_reused", "Idempotency key reused with a different charge");
    return r;
  }

  private attempt(input: ChargeInput): ChargeResult {
    const token = this.readToken(input.paymentMethod);
    if (!token) return this.chargeFailure(null, null, "invalid_payment_method", "card");
    const method = this.describe(input.paymentMethod, token);
    // A one-time method cannot be charged while the donor is away (it was never set up for that).
    if (input.offSession && token.r !== 1)
      return this.chargeFailure(null, method, "invalid_payment_method", token.k);
    const now = this.now();
    const payment: PaymentPayload = {
      v: 1,
      id: randomId(),
      k: token.k,
      a: input.amountCents,
      c: input.currency,
      t: now,
      o: "succeeded",
    };
    const failure: FailureCode | undefined =
      token.k === "card" && this.expired(token) ? "expired_card" : CHARGE_FAILURES[token.x];
    if (token.k === "bank") {
      // Bank debits are always accepted first and settle (or bounce) later.
      payment.s = now + this.bankSettleMs;
      if (failure) {
        payment.o = "failed";
        payment.fc = failure;
      }
      return this.chargeSuccess("pending", payment, method, token, input);
    }
    if (failure) {
      payment.o = "failed";
      payment.fc = failure;
      return this.chargeFailure(
        this.sign(this.paymentKey, PAYMENT_PREFIX, b64(JSON.stringify(payment))),
        method,
        failure,
        "card",
      );
    }
    return this.chargeSuccess("succeeded", payment, method, token, input);
  }

  private chargeSuccess(
    status: "succeeded" | "pending",
    payment: PaymentPayload,
    method: PaymentMethod,
    token: TokenPayload,
    input: ChargeInput,
  ): ChargeResult {
    const result: Extract<ChargeResult, { status: "succeeded" | "pending" }> = {
      status,
      processorPaymentId: this.sign(this.paymentKey, PAYMENT_PREFIX, b64(JSON.stringify(payment))),
      method,
    };
    if (input.saveForFutureUse) result.savedMethod = token.r === 1 ? method : this.reusable(token);
    return result;
  }

  private chargeFailure(
    processorPaymentId: string | null,
    method: PaymentMethod | null,
    code: FailureCode,
    type: "card" | "bank",
  ): ChargeResult {
    return {
      status: "failed",
      processorPaymentId,
      method,
      failureCode: code,
      failureMessage: failureMessage(code, type),
    };
  }

  private setupFailure(code: FailureCode, type: "card" | "bank"): SetupResult {
    return { status: "failed", failureCode: code, failureMessage: failureMessage(code, type) };
  }

  private statusOf(p: PaymentPayload): "succeeded" | "pending" | "failed" {
    if (p.s !== undefined && this.now() < p.s) return "pending";
    return p.o;
  }

  private async refunds(paymentId: string): Promise<RefundEntry[]> {
    const out: RefundEntry[] = [];
    for (;;) {
      const raw = await this.ledger.get(`refund:${paymentId}:${out.length}`);
      if (raw === undefined) return out;
      out.push(JSON.parse(raw) as RefundEntry);
    }
  }
}

/**
 * The `PaymentProcessor` interface (contract 10, design "Payments"). Every charge, saved payment method,
 * bank settlement and refund goes through it, so the checkout, recurring billing and the hosted
 * "replace payment method" page never know which processor is behind it.
 *
 * The shape follows Stripe's PaymentMethods, PaymentIntents and SetupIntents, but says nothing
 * Stripe-specific, so a Stripe processor is one more implementation, not a change to callers:
 *
 * - `createPaymentMethod` is tokenization. Card and bank data reach the processor only; callers keep
 *   what a `PaymentMethod` holds (opaque token, brand, last 4, expiry, fingerprint) and never the number.
 *   A processor with `tokenization: "browser"` (Stripe: Stripe.js creates `pm_…` in the donor's
 *   browser) does not take raw details at all and answers `{ ok: false, code: "unsupported" }`; the
 *   caller then receives the token from the browser and reads its details with `retrievePaymentMethod`.
 *   The sandbox (`tokenization: "server"`) takes raw *test* numbers from our own pages.
 * - `charge` is a PaymentIntent created and confirmed at once. `pending` is a payment that settles later
 *   (bank payments); `requires_action` is a payment the donor must still confirm in the browser
 *   (3-D Secure; the sandbox never asks for it). In both cases the caller learns the outcome with
 *   `retrievePayment`, polled by a worker for the payments it has stored as pending, which works the
 *   same in every process and after restarts (no in-memory list of pending payments).
 * - `setupForFutureUse` is a SetupIntent: it turns a one-time method into one that can be charged
 *   off-session (recurring billing, the replacement method of a subscription). Callers store the token it
 *   returns (the sandbox returns a new token; Stripe returns the same `pm_…`, now attached to a customer).
 *   An off-session charge with a method that was not set up fails with `invalid_payment_method`.
 * - `fingerprint` is the same for the same card (or bank account) however it was typed and whichever
 *   token carries it, and does not reveal the number: card-testing limits count failures per fingerprint.
 *
 * Declines and invalid donor input are results, not exceptions, and always carry a message fit to show
 * the donor. A `ProcessorError` is thrown only for a caller's mistake (bad amount, reused idempotency key,
 * bad configuration) or an outage.
 */
import type { Db } from "../store/database.js";
import { type SandboxOptions, SandboxProcessor } from "./sandbox.js";

export type Currency = "USD";
export type PaymentMethodType = "card" | "bank";
export type CardBrand = "visa" | "mastercard" | "amex" | "discover" | "unknown";

/** Raw card details. Only ever passed straight to the processor; never stored, logged or echoed back. */
export interface CardDetails {
  type: "card";
  number: string;
  expMonth: number;
  /** Four digits, or two (`30` means 2030). */
  expYear: number;
  cvc: string;
  name?: string;
  postalCode?: string;
}

/** Raw US bank account details (ACH debit). Same rules as card details. */
export interface BankAccountDetails {
  type: "bank";
  routingNumber: string;
  accountNumber: string;
  accountHolder: string;
}

export type PaymentMethodInput = CardDetails | BankAccountDetails;

/** Everything the server may keep about a payment method. */
export interface PaymentMethod {
  /** Opaque processor id (sandbox: `pm_sandbox_…`), used to charge. */
  token: string;
  type: PaymentMethodType;
  /** Cards only. */
  brand?: CardBrand;
  last4: string;
  /** Cards only. */
  expMonth?: number;
  /** Cards only, four digits. */
  expYear?: number;
  /** Stable per card number (or bank account), not reversible: hex. */
  fingerprint: string;
  /** True once set up for future (off-session) use. */
  reusable: boolean;
}

export type PaymentMethodErrorCode =
  | "invalid_number"
  | "invalid_expiry"
  | "invalid_cvc"
  /** The processor refuses the card at tokenization (sandbox: not a test card). */
  | "card_declined"
  | "invalid_routing"
  | "invalid_account"
  | "invalid_account_holder"
  /** The processor tokenizes in the browser only (see the module comment). */
  | "unsupported";

export type CreatePaymentMethodResult =
  | { ok: true; method: PaymentMethod }
  | { ok: false; code: PaymentMethodErrorCode; message: string };

export type FailureCode =
  | "card_declined"
  | "insufficient_funds"
  | "expired_card"
  /** Temporary; the same method may succeed on a later attempt. */
  | "processing_error"
  /** Off-session charge the bank wants the donor to confirm; ask the donor to pay on-session. */
  | "authentication_required"
  /** Unknown, forged or foreign token, or a one-time method charged off-session. */
  | "invalid_payment_method";

export interface ChargeInput {
  /** Positive integer cents. */
  amountCents: number;
  currency: Currency;
  /** A `PaymentMethod.token`. */
  paymentMethod: string;
  /**
   * At most 255 characters. The same key never charges twice: a repeat returns the first result (as it
   * was then; use `retrievePayment` for the current status); the same key with different charge
   * details throws `ProcessorError("idempotency_key_reused")`.
   */
  idempotencyKey: string;
  /** Shown on the processor's dashboard, e.g. "Donation to Spring Appeal". */
  description: string;
  /** True when the donor is not present (recurring billing); needs a reusable method. */
  offSession: boolean;
  /** Also set the method up for future use (the first payment of a subscription): see `savedMethod`. */
  saveForFutureUse?: boolean;
  metadata?: Record<string, string>;
}

export type ChargeResult =
  | {
      status: "succeeded" | "pending";
      processorPaymentId: string;
      method: PaymentMethod;
      /** The reusable method, when `saveForFutureUse` was asked for. */
      savedMethod?: PaymentMethod;
    }
  | {
      /** The donor must confirm in the browser with `clientSecret`; then `retrievePayment`. */
      status: "requires_action";
      processorPaymentId: string;
      method: PaymentMethod;
      clientSecret: string;
    }
  | {
      status: "failed";
      /** Null when no payment was created at all (the method itself was unusable). */
      processorPaymentId: string | null;
      method: PaymentMethod | null;
      failureCode: FailureCode;
      /** Fit to show the donor, e.g. "Your card was declined. Try another card." */
      failureMessage: string;
    };

export interface SetupInput {
  paymentMethod: string;
}

export type SetupResult =
  | { status: "succeeded"; method: PaymentMethod }
  | {
      /** The donor must confirm in the browser; then `retrievePaymentMethod` shows `reusable`. */
      status: "requires_action";
      setupId: string;
      clientSecret: string;
    }
  | { status: "failed"; failureCode: FailureCode; failureMessage: string };

export type PaymentStatus = "succeeded" | "pending" | "requires_action" | "failed";

/** A payment as the processor sees it now. */
export interface PaymentLookup {
  processorPaymentId: string;
  status: PaymentStatus;
  amountCents: number;
  currency: Currency;
  /** Total refunded so far. */
  refundedCents: number;
  /** When the payment was created, ms since the epoch. */
  createdAt: number;
  failureCode?: FailureCode;
  failureMessage?: string;
}

export interface RefundInput {
  processorPaymentId: string;
  /** Positive integer cents; default: all that is not yet refunded. */
  amountCents?: number;
  /** The same key for the same payment never refunds twice. */
  idempotencyKey?: string;
}

export type RefundErrorCode = "unknown_payment" | "not_refundable" | "invalid_amount";

export type RefundResult =
  | {
      ok: true;
      refundId: string;
      amountCents: number;
      /** Total refunded on the payment, this refund included. */
      refundedTotalCents: number;
      status: "succeeded" | "pending";
    }
  | { ok: false; code: RefundErrorCode; message: string };

export interface PaymentProcessor {
  readonly name: ProcessorName;
  /** False for the sandbox and for test-mode processors: no real money moves. */
  readonly livemode: boolean;
  /** Where card and bank details are turned into tokens (see the module comment). */
  readonly tokenization: "server" | "browser";
  createPaymentMethod(input: PaymentMethodInput): Promise<CreatePaymentMethodResult>;
  /** Null for a token that is unknown, forged or from another processor account. */
  retrievePaymentMethod(token: string): Promise<PaymentMethod | null>;
  setupForFutureUse(input: SetupInput): Promise<SetupResult>;
  charge(input: ChargeInput): Promise<ChargeResult>;
  /**
   * The charge made with this idempotency key (as it was then), or null when none was made: how a
   * checkout interrupted between "charge" and "record" learns whether the donor was charged, without
   * charging. (Stripe: search PaymentIntents by the metadata the charge carried.)
   */
  findCharge(idempotencyKey: string): Promise<ChargeResult | null>;
  /** Null for an id that is unknown, forged or from another processor account. */
  retrievePayment(processorPaymentId: string): Promise<PaymentLookup | null>;
  refund(input: RefundInput): Promise<RefundResult>;
  /**
   * Only for a processor that keeps everything it remembers in the application's own database (the
   * sandbox on a database ledger): the same processor, writing into the caller's transaction `trx`. A
   * checkout then takes its stock, charges and records the outcome in one transaction: a charge exists
   * exactly when its payment does, and nothing waits on anything but the database. A processor that moves
   * money elsewhere (Stripe) leaves this out: its charge must follow a committed PROCESSING payment, which
   * recovery can finish after a crash (engine.ts, recovery.ts).
   */
  inTransaction?(trx: Db): PaymentProcessor;
}

export type ProcessorErrorCode =
  | "invalid_request"
  | "idempotency_key_reused"
  | "misconfigured"
  | "unavailable";

/** A caller's mistake or an outage: never a decline (declines are results). Never carries card data. */
export class ProcessorError extends Error {
  constructor(
    readonly code: ProcessorErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "ProcessorError";
  }
}

export type ProcessorName = "sandbox";

/**
 * The one place that knows the implementations. (This module and `sandbox.ts` import each other; both
 * only use the other's exports inside functions, so the cycle is harmless in either load order.)
 */
export function createProcessor(name: ProcessorName, opts: SandboxOptions): PaymentProcessor {
  switch (name) {
    case "sandbox":
      return new SandboxProcessor(opts);
    default:
      throw new ProcessorError("misconfigured", `Unknown payment processor: ${String(name)}`);
  }
}

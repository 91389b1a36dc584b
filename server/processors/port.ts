import { formatMoney } from "../../shared/currency.js";

/**
 * The payment processor port: every charge, saved payment method, bank settlement and refund goes through
 * it, so the checkout, recurring billing and the hosted "replace payment method" page never know which
 * processor is behind it. It knows no database: what must survive a crash is stored by the caller (the
 * hooks of `charge` say when).
 *
 * The shape follows Stripe's ConfirmationTokens, PaymentIntents and SetupIntents:
 *
 * - Collecting details. A processor with `collection: "browser"` (Stripe) never sees card or bank
 *   details: its own script in the donor's browser turns them into a token (a ConfirmationToken), which
 *   `retrievePaymentMethod` describes (brand, last 4, fingerprint). The sandbox (`collection: "server"`)
 *   takes raw *test* details from our own pages through `createPaymentMethod`.
 * - `charge` creates a payment and confirms it. `pending` is a payment that settles later (bank debits,
 *   bank accounts awaiting microdeposit verification); `requires_action` is one the donor must still
 *   confirm in the browser (3-D Secure) with the `clientSecret`. Either way the caller later learns the
 *   outcome from `retrievePayment` (a worker, a webhook, or the donor's page coming back).
 * - Every processor makes the payment before it moves money and calls `hooks.created` with its id in
 *   between, waiting for it: the caller stores the id (a checkout takes its stock in the same write), so a
 *   crash after that point is reconciled by id (`findCharge`), never by searching the processor; and a
 *   caller that cannot go on (sold out) stops the charge by throwing.
 * - `setupForFutureUse` turns a one-time method into one that can be charged off-session (recurring
 *   billing, a replacement method); `createCustomer` makes the processor's customer a saved method
 *   belongs to (processors without customers leave it out).
 * - `fingerprint` is the same for the same card (or bank account) however it was entered and whichever
 *   token carries it, and does not reveal the number: card-testing limits count failures per fingerprint.
 *
 * Declines and invalid donor input are results, not exceptions, and always carry a message fit to show
 * the donor. A `ProcessorError` is thrown only for a caller's mistake (bad amount, reused idempotency key,
 * bad configuration) or an outage.
 */

export type ProcessorName = "sandbox" | "stripe";
/** ISO 4217, upper case (shared/currency.ts lists those taken). */
export type Currency = string;
export type PaymentMethodType = "card" | "bank";
export type CardBrand = "visa" | "mastercard" | "amex" | "discover" | "unknown";
export type Wallet = "apple_pay" | "google_pay" | "link";

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
  /** Opaque processor id used to charge (sandbox `pm_sandbox_…`; Stripe `ctoken_…` once, `pm_…` saved). */
  token: string;
  type: PaymentMethodType;
  /** Cards only. */
  brand?: CardBrand;
  last4: string;
  /** Cards only. */
  expMonth?: number;
  /** Cards only, four digits. */
  expYear?: number;
  /** Stable per card number (or bank account), not reversible. */
  fingerprint: string;
  /** True once set up for future (off-session) use. */
  reusable: boolean;
  /** A card paid through a wallet. */
  wallet?: Wallet;
}

export type PaymentMethodErrorCode =
  | "invalid_number"
  | "invalid_expiry"
  | "invalid_cvc"
  /** The processor refuses the card when it is entered (sandbox: not a test card). */
  | "card_declined"
  | "invalid_routing"
  | "invalid_account"
  | "invalid_account_holder"
  /** The processor collects details in the browser only (see the module comment). */
  | "unsupported";

export type CreatePaymentMethodResult =
  | { ok: true; method: PaymentMethod }
  | { ok: false; code: PaymentMethodErrorCode; message: string };

export type FailureCode =
  | "card_declined"
  | "insufficient_funds"
  | "expired_card"
  | "incorrect_cvc"
  /** Temporary; the same method may succeed on a later attempt. */
  | "processing_error"
  /** The donor must confirm the payment (3-D Secure) and did not, or could not (off-session). */
  | "authentication_required"
  /** Unknown, forged or foreign token, or a one-time method charged off-session. */
  | "invalid_payment_method"
  /** A bank debit that was returned or refused by the bank. */
  | "bank_account_unusable"
  /**
   * An off-session charge the processor refused outright (the saved method or customer gone, another
   * account): `ProcessorError` `invalid_request`, recorded as the charge's failure.
   */
  | "invalid_request"
  /** An off-session charge below the processor's minimum for its currency (`ProcessorError` of that code). */
  | "amount_too_small"
  /** An off-session charge above the processor's maximum for its currency (`ProcessorError` of that code). */
  | "amount_too_large";

export interface CustomerInput {
  email: string;
  name: string;
  /** The same key never makes two customers. */
  idempotencyKey: string;
  metadata?: Record<string, string>;
}

export interface ChargeInput {
  /** Positive integer cents. */
  amountCents: number;
  currency: Currency;
  /** A `PaymentMethod.token`. */
  paymentMethod: string;
  /**
   * At most 200 characters. The same key never charges twice: a repeat returns the first result (as it
   * was then; use `retrievePayment` for the current status); the same key with different charge
   * details throws `ProcessorError("idempotency_key_reused")`.
   */
  idempotencyKey: string;
  /** Shown on the processor's dashboard, e.g. "Donation: Spring Appeal". */
  description: string;
  /** True when the donor is not present (recurring billing); needs a reusable method. */
  offSession: boolean;
  /** Also set the method up for future use (the first payment of a subscription): see `savedMethod`. */
  saveForFutureUse?: boolean;
  /** The processor's customer (`createCustomer`) the payment and a saved method belong to. */
  customer?: string;
  /** Where a payment method that needs a redirect brings the donor back. */
  returnUrl?: string;
  /** The name donors should recognise on their statement (each processor fits it to its own rules). */
  statementName?: string;
  metadata?: Record<string, string>;
}

export interface ChargeHooks {
  /**
   * The processor made the payment and has not moved money yet: the caller stores `processorPaymentId`
   * now. If this throws, the processor moves no money and the error is the charge's.
   */
  created?(processorPaymentId: string): Promise<void>;
}

/** Why a payment is pending. */
export type PendingReason = "processing" | "verify_microdeposits";

export type ChargeResult =
  | {
      status: "succeeded" | "pending";
      processorPaymentId: string;
      method: PaymentMethod;
      /** Pending payments: why. */
      pendingReason?: PendingReason;
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
      /** Off-session payments the donor can still confirm on-session (`authentication_required`). */
      clientSecret?: string;
    };

export interface SetupInput {
  paymentMethod: string;
  customer?: string;
  idempotencyKey?: string;
  returnUrl?: string;
  /**
   * The caller's name for what the set-up is for (a payment-method update link), kept with it at the
   * processor (Stripe: metadata) so that `retrieveSetup` can tell its own set-ups from others of the account.
   */
  reference?: string;
}

export type SetupResult =
  | { status: "succeeded"; method: PaymentMethod }
  | {
      /** The donor must confirm in the browser; then `retrieveSetup`. */
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
  pendingReason?: PendingReason;
  /** Payments that require action. */
  clientSecret?: string;
  /** The method the payment was made with, when the processor knows it. */
  method?: PaymentMethod;
  /** Succeeded payments asked to save their method. */
  savedMethod?: PaymentMethod;
  failureCode?: FailureCode;
  failureMessage?: string;
}

export interface RefundInput {
  processorPaymentId: string;
  /** Positive integer cents; default: all that is not yet refunded. */
  amountCents?: number;
  /** ISO 4217 of the payment (and so of the amount); read from the processor when left out. */
  currency?: string;
  /** The same key for the same payment never refunds twice. */
  idempotencyKey?: string;
  reason?: string;
}

export type RefundErrorCode = "unknown_payment" | "not_refundable" | "invalid_amount";

export type RefundResult =
  | {
      ok: true;
      refundId: string;
      amountCents: number;
      /** Total refunded on the payment, this refund included, when the processor says. */
      refundedTotalCents?: number;
      status: "succeeded" | "pending";
      /**
       * The processor had made this refund already, for an earlier request with the same key (an identical
       * request, or a retry of one whose answer was lost): this answer is that refund's, none was made now.
       */
      replayed?: boolean;
    }
  | { ok: false; code: RefundErrorCode; message: string };

/** A dispute (a card chargeback, or a returned bank debit) as the processor reports it now. */
export interface DisputeState {
  id: string;
  /** The processor's words: warning_needs_response, needs_response, under_review, won, lost, … */
  status: string;
  reason: string;
  amountCents: number;
  /** The disputed amount has been taken from the organization's balance (and not given back). */
  fundsWithdrawn: boolean;
  createdAt: string;
}

/** One verified delivery of a processor's webhook, before anything is fetched. */
export interface IncomingEvent {
  id: string;
  type: string;
  /** The processor's id of what the event is about (a payment, refund, dispute or set-up). */
  objectId: string;
  /** What the event changes (object, type and state): a second event saying the same is not applied. */
  effectKey: string;
  /** The payment it concerns (the processor's id), or null for events about something else. */
  processorPaymentId: string | null;
}

/** What an event means now: the current state of what it is about (fetched, so order does not matter). */
export type ProcessorEvent =
  /** A payment's status and refunded total as they stand now. */
  | { kind: "payment"; lookup: PaymentLookup }
  | { kind: "dispute"; processorPaymentId: string; dispute: DisputeState }
  | { kind: "setup"; setupId: string; result: SetupResult; metadata: Record<string, string> }
  | { kind: "ignored" };

/** A delivery that is not the processor's (bad or missing signature, too old): nothing is applied. */
export class ProcessorEventError extends Error {}

/** How a charge started by `charge` is found again after a crash: its key, and its id once stored. */
export interface ChargeReference {
  idempotencyKey: string;
  processorPaymentId: string | null;
}

export interface PaymentProcessor {
  readonly name: ProcessorName;
  /** The account payments are made in (the sandbox: "sandbox"; Stripe: `acct_…`). */
  readonly account: string;
  /** False for the sandbox and for test-mode keys: no real money moves. */
  readonly livemode: boolean;
  /** Where card and bank details are entered (see the module comment). */
  readonly collection: "server" | "browser";
  createPaymentMethod(input: PaymentMethodInput): Promise<CreatePaymentMethodResult>;
  /** Null for a token that is unknown, forged, used up, or from another processor account. */
  retrievePaymentMethod(token: string): Promise<PaymentMethod | null>;
  /** The processor's customer for a donor; processors without customers leave it out. */
  createCustomer?(input: CustomerInput): Promise<string>;
  setupForFutureUse(input: SetupInput): Promise<SetupResult>;
  charge(input: ChargeInput, hooks?: ChargeHooks): Promise<ChargeResult>;
  /**
   * The charge started with this reference (as it stands now), or null when none moved money: how a
   * payment interrupted between "charge" and "record" learns its outcome without charging again.
   */
  findCharge(ref: ChargeReference): Promise<ChargeResult | null>;
  /** Null for an id that is unknown, forged or from another processor account. */
  retrievePayment(processorPaymentId: string): Promise<PaymentLookup | null>;
  /** Gives up a payment that has not moved money (an abandoned authentication); false if it had. */
  cancelPayment?(processorPaymentId: string): Promise<boolean>;
  /**
   * Confirms again, with the donor present, a payment held for authentication (an off-session charge the
   * bank wanted confirmed): usually `requires_action`, which the donor's page then completes.
   */
  confirmOnSession?(processorPaymentId: string, returnUrl: string): Promise<ChargeResult>;
  /**
   * A set-up the donor confirmed in the browser, as it stands now; null for an unknown id, or for one not
   * made with `reference` (SetupInput) when one is given.
   */
  retrieveSetup?(setupId: string, reference?: string): Promise<SetupResult | null>;
  refund(input: RefundInput): Promise<RefundResult>;
  /**
   * How many refunds of this payment the processor made and then reports failed or canceled (Stripe: a
   * refund the card's bank sends back days later). A refund asked again after one failed is a new refund,
   * so the key derived for it counts these. Processors whose refunds never fail after the fact leave it out.
   */
  failedRefunds?(processorPaymentId: string): Promise<number>;
  /** Webhooks: verifies one delivery (throws `ProcessorEventError`) and says what it is about. */
  verifyEvent?(rawBody: string, signature: string | undefined): IncomingEvent;
  /**
   * The smallest amount the processor charges in `currency` (lowercase or not), in cents of the currency as
   * Almoner counts them; undefined where it states none. A quote below it is refused before any checkout.
   */
  minimumCharge?(currency: string): number | undefined;
  /** The largest amount the processor charges in `currency`, likewise; a quote above it is refused too. */
  maximumCharge?(currency: string): number | undefined;
  /** The current state behind a verified event. */
  resolveEvent?(event: IncomingEvent): Promise<ProcessorEvent>;
}

export type ProcessorErrorCode =
  | "invalid_request"
  /** The amount is below the smallest payment the processor takes in its currency: the payer's to change. */
  | "amount_too_small"
  /** The amount is above the largest payment the processor takes in its currency: the payer's to change. */
  | "amount_too_large"
  | "idempotency_key_reused"
  | "misconfigured"
  | "unavailable";

/**
 * The refusal of an amount below a processor's minimum in `currency`, in words a donor can act on, naming
 * the minimum when it is known.
 */
export function amountTooSmall(minimum: number | undefined, currency: string | undefined): ProcessorError {
  const message =
    minimum !== undefined && currency
      ? `amount must be at least ${formatMoney(minimum, currency)} for this payment method`
      : `amount is below the smallest payment this payment method takes${currency ? ` in ${currency.toUpperCase()}` : ""}`;
  return new ProcessorError("amount_too_small", message, minimum);
}

/** The refusal of an amount above a processor's largest charge in `currency`, in words a donor can act on. */
export function amountTooLarge(currency: string | undefined): ProcessorError {
  return new ProcessorError(
    "amount_too_large",
    `amount is above the largest payment this payment method takes${currency ? ` in ${currency.toUpperCase()}` : ""}`,
  );
}

/**
 * Why `processor` would refuse a charge of `totalCents` in `currency` for its size: below its smallest or
 * above its largest charge, where it states them (`amount_too_small`, `amount_too_large`). Undefined when it
 * would take it, for a charge of 0 (no charge at all), and without a processor.
 */
export function chargeLimitRefusal(
  processor: PaymentProcessor | undefined,
  totalCents: number,
  currency: string,
): ProcessorError | undefined {
  const minimum = processor?.minimumCharge?.(currency);
  const maximum = processor?.maximumCharge?.(currency);
  if (minimum !== undefined && totalCents > 0 && totalCents < minimum)
    return amountTooSmall(minimum, currency);
  if (maximum !== undefined && totalCents > maximum) return amountTooLarge(currency);
  return undefined;
}

/** A caller's mistake or an outage: never a decline (declines are results). Never carries card data. */
export class ProcessorError extends Error {
  constructor(
    readonly code: ProcessorErrorCode,
    message: string,
    /** With `amount_too_small`: the smallest amount the processor takes, in cents of the currency, when known. */
    readonly minimumCents?: number,
  ) {
    super(message);
    this.name = "ProcessorError";
  }
}

/**
 * The customer a charge named is gone at the processor (deleted there, as a donor's erasure request
 * does): a refused request like any `invalid_request`, which a checkout answers by making the donor a new
 * customer and charging again.
 */
export class CustomerMissing extends ProcessorError {
  constructor(message: string) {
    super("invalid_request", message);
    this.name = "CustomerMissing";
  }
}

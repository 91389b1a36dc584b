import type Stripe from "stripe";
import { fromMinorUnits, isExpressible, toMinorUnits } from "../../../shared/currency.js";
import { isoAt } from "../../../shared/time.js";
import type { StripeConnection } from "../../store/organizations.js";
import type {
  CardBrand,
  ChargeHooks,
  ChargeInput,
  ChargeReference,
  ChargeResult,
  CreatePaymentMethodResult,
  CustomerInput,
  DisputeState,
  FailureCode,
  IncomingEvent,
  PaymentLookup,
  PaymentMethod,
  PaymentProcessor,
  ProcessorEvent,
  RefundInput,
  RefundResult,
  SetupInput,
  SetupResult,
  Wallet,
} from "../port.js";
import { amountTooLarge, amountTooSmall, CustomerMissing, ProcessorError } from "../port.js";
import { statementSuffix, stripeClient, withoutCallSite } from "./client.js";
import type { StripeSecrets } from "./connection.js";
import { eventSubject, verifyStripeEvent } from "./events.js";

/**
 * An organization's own Stripe account behind the processor port. Card and bank details never reach us:
 * Stripe.js in the donor's browser makes a ConfirmationToken (`ctoken_…`), whose `payment_method_preview`
 * gives brand, last 4 and fingerprint. A charge is a PaymentIntent made in two calls, each with its own
 * idempotency key derived from the payment's (`<key>:create`, `<key>:confirm`): created first and its id
 * handed to `hooks.created` (the caller stores it), then confirmed. An answer lost on the way is asked
 * again with the same key and Stripe replays it; a crash is reconciled by the stored id.
 *
 * Each payment is charged in its own currency (the checkout's, or the recurring gift's for its later
 * charges), whatever the account's default currency: Stripe converts what it settles. Amounts leave in the
 * currency's minor units (`toMinorUnits`: EUR 25.50 → 2550, JPY 500 → 500) and come back in hundredths by
 * the currency Stripe names on the object (`fromMinorUnits`).
 */

const KNOWN_BRANDS: ReadonlySet<string> = new Set(["visa", "mastercard", "amex", "discover"]);
const WALLETS: ReadonlySet<string> = new Set(["apple_pay", "google_pay", "link"]);

function brandOf(brand: string | null | undefined): CardBrand {
  return brand && KNOWN_BRANDS.has(brand) ? (brand as CardBrand) : "unknown";
}

function walletOf(wallet: { type?: string } | null | undefined): Wallet | undefined {
  return wallet?.type && WALLETS.has(wallet.type) ? (wallet.type as Wallet) : undefined;
}

interface CardLike {
  brand?: string | null;
  last4?: string | null;
  exp_month?: number | null;
  exp_year?: number | null;
  fingerprint?: string | null;
  wallet?: { type?: string } | null;
}

interface BankLike {
  last4?: string | null;
  fingerprint?: string | null;
}

/** What a PaymentMethod, or a ConfirmationToken's preview of one, says that we may keep. */
function describeMethod(
  token: string,
  source: { type: string; card?: CardLike | null; us_bank_account?: BankLike | null },
  reusable: boolean,
): PaymentMethod | null {
  if (source.type === "card" && source.card) {
    const c = source.card;
    const method: PaymentMethod = {
      token,
      type: "card",
      brand: brandOf(c.brand),
      last4: c.last4 ?? "",
      fingerprint: c.fingerprint ?? `stripe:${token}`,
      reusable,
    };
    if (c.exp_month) method.expMonth = c.exp_month;
    if (c.exp_year) method.expYear = c.exp_year;
    const wallet = walletOf(c.wallet);
    if (wallet) method.wallet = wallet;
    return method;
  }
  if (source.type === "us_bank_account" && source.us_bank_account) {
    const b = source.us_bank_account;
    return {
      token,
      type: "bank",
      last4: b.last4 ?? "",
      fingerprint: b.fingerprint ?? `stripe:${token}`,
      reusable,
    };
  }
  if (source.type === "link")
    // Link pays with a card or bank account kept by Link; its fingerprint is the Link method's own.
    return {
      token,
      type: "card",
      brand: "unknown",
      last4: "",
      fingerprint: `stripe:${token}`,
      reusable,
      wallet: "link",
    };
  return null;
}

/** The SetupIntent metadata key that names what a set-up was made for (SetupInput.reference). */
const SETUP_REFERENCE = "almoner_reference";

/** Stripe's decline and error codes as ours. */
export function failureCodeOf(code: string | null | undefined, declineCode?: string | null): FailureCode {
  const c = declineCode && declineCode !== "generic_decline" ? declineCode : code;
  switch (c) {
    case "insufficient_funds":
      return "insufficient_funds";
    case "expired_card":
      return "expired_card";
    case "incorrect_cvc":
    case "invalid_cvc":
      return "incorrect_cvc";
    case "processing_error":
    case "try_again_later":
      return "processing_error";
    case "authentication_required":
    case "payment_intent_authentication_failure":
    case "setup_intent_authentication_failure":
      return "authentication_required";
    case "account_closed":
    case "no_account":
    case "account_frozen":
    case "bank_account_restricted":
    case "debit_not_authorized":
    case "bank_account_unusable":
    case "invalid_account_number":
      return "bank_account_unusable";
    case "payment_method_unexpected_state":
    case "payment_method_not_available":
      return "invalid_payment_method";
    default:
      return "card_declined";
  }
}

const DEFAULT_FAILURE = "The payment was declined. Try another payment method.";

function isStripeError(err: unknown): err is Stripe.errors.StripeError {
  return err instanceof Error && typeof (err as { type?: unknown }).type === "string" && "rawType" in err;
}

/**
 * Stripe's smallest charge per currency (its "minimum and maximum charge amounts"), in cents of the
 * currency as Almoner counts them (hundredths of the unit, ¥50 is 5000). Stripe refuses less with
 * `amount_too_small`; a currency not listed here has a minimum Stripe states only in its message.
 */
export const STRIPE_MINIMUM_CENTS: Readonly<Record<string, number>> = {
  usd: 50,
  aed: 200,
  aud: 50,
  bgn: 100,
  brl: 50,
  cad: 50,
  chf: 50,
  czk: 1500,
  dkk: 250,
  eur: 50,
  gbp: 30,
  hkd: 400,
  huf: 17500,
  inr: 50,
  jpy: 5000,
  mxn: 1000,
  myr: 200,
  nok: 300,
  nzd: 50,
  pln: 200,
  ron: 200,
  sek: 300,
  sgd: 50,
  thb: 1000,
};

/** Stripe's largest charge: eight digits of the currency's smallest unit (999,999.99 USD, ¥99,999,999). */
const STRIPE_MAXIMUM_MINOR_UNITS = 99_999_999;

/** Stripe's smallest charge in `currency`, when listed (STRIPE_MINIMUM_CENTS). */
const stripeMinimum = (currency: string | undefined) =>
  currency ? STRIPE_MINIMUM_CENTS[currency.toLowerCase()] : undefined;

/** The request parameters that name the donor's saved payment method or Stripe customer. */
const DONORS_METHOD_PARAM = /^(payment_method|customer|mandate|source|confirmation_token)(\b|\[|$)/;

/** A refusal of the donor's own payment method or customer, by the parameter Stripe names. */
function refusesTheDonorsMethod(err: Stripe.errors.StripeError): boolean {
  return DONORS_METHOD_PARAM.test(err.param ?? "");
}

/** An error that is not a decline: a caller's mistake or an outage. Never carries card data. */
function processorError(err: unknown, currency?: string): ProcessorError {
  if (err instanceof ProcessorError) return err;
  if (!isStripeError(err)) return new ProcessorError("unavailable", "Stripe could not be reached");
  switch (err.type) {
    case "StripeIdempotencyError":
      return new ProcessorError("idempotency_key_reused", err.message);
    case "StripeAuthenticationError":
    case "StripePermissionError":
      return new ProcessorError(
        "misconfigured",
        `Stripe refused the organization's key: ${err.message} (reconnect with org stripe)`,
      );
    case "StripeInvalidRequestError":
      // Below the currency's minimum: the amount is the payer's to change, not an outage.
      if (err.code === "amount_too_small") return amountTooSmall(stripeMinimum(currency), currency);
      if (err.code === "amount_too_large") return amountTooLarge(currency);
      if (err.code === "resource_missing" && /^customer\b/.test(err.param ?? ""))
        return new CustomerMissing(err.message);
      // The donor's own method or customer refused (detached, deleted, of another account): theirs to
      // replace, a failed charge. Anything else Stripe refuses (a parameter of ours, the account itself)
      // would refuse every gift alike: no gift is failed, and in the end cancelled, for it.
      if (refusesTheDonorsMethod(err)) return new ProcessorError("invalid_request", err.message);
      return new ProcessorError("misconfigured", `Stripe refused the request: ${err.message}`);
    default:
      return new ProcessorError("unavailable", `Stripe could not be reached: ${err.message}`);
  }
}

/**
 * A confirmation Stripe refused for the donor's method itself (400): nothing was confirmed, and the donor
 * is the one to change it: the parameter Stripe names is the method, the token or the customer (not a
 * token used already, whose first use may have paid), or the token's own making (`setup_future_usage`:
 * a token not made to be saved, for a recurring gift). A refusal of anything else (the account, a
 * parameter of ours) would refuse every gift alike: it stays an error, failing no gift.
 */
function refusedConfirmation(err: unknown): err is Stripe.errors.StripeError {
  return (
    isStripeError(err) &&
    err.type === "StripeInvalidRequestError" &&
    err.code !== "payment_intent_unexpected_state" &&
    err.code !== "confirmation_token_already_used" &&
    (refusesTheDonorsMethod(err) || err.param === "setup_future_usage")
  );
}

function notFound(err: unknown): boolean {
  return isStripeError(err) && (err.statusCode === 404 || err.code === "resource_missing");
}

export class StripeProcessor implements PaymentProcessor {
  readonly name = "stripe" as const;
  readonly collection = "browser" as const;

  minimumCharge(currency: string): number | undefined {
    return stripeMinimum(currency);
  }

  maximumCharge(currency: string): number | undefined {
    return fromMinorUnits(STRIPE_MAXIMUM_MINOR_UNITS, currency.toLowerCase());
  }
  readonly livemode: boolean;
  readonly account: string;
  private readonly client: Stripe;
  /** The app's clock (AppDeps.now), milliseconds. */
  private readonly now: () => number;

  constructor(
    connection: StripeConnection,
    private readonly secrets: StripeSecrets,
    opts: { apiUrl: string | undefined; now: () => number; client?: Stripe },
  ) {
    this.now = opts.now;
    this.livemode = connection.mode === "live";
    this.account = connection.accountId;
    this.client = opts.client ?? stripeClient(secrets.secretKey, opts.apiUrl);
  }

  async createPaymentMethod(): Promise<CreatePaymentMethodResult> {
    return {
      ok: false,
      code: "unsupported",
      message:
        "card and bank details are entered in Stripe's own fields on the page; send the confirmation token Stripe.js made ({ type: 'token', token: 'ctoken_…' })",
    };
  }

  async retrievePaymentMethod(token: string): Promise<PaymentMethod | null> {
    try {
      if (token.startsWith("ctoken_")) {
        const ct = await withoutCallSite(() => this.client.confirmationTokens.retrieve(token));
        const preview = ct.payment_method_preview;
        if (!preview || (ct.expires_at && ct.expires_at * 1000 <= this.now())) return null;
        return describeMethod(token, preview, false);
      }
      if (token.startsWith("pm_")) {
        const pm = await this.client.paymentMethods.retrieve(token);
        // A method saved to a customer is that donor's, charged only for their own gifts (billing): a
        // checkout that names it (with the donor's e-mail, which finds the customer) is refused like an
        // unknown token. A fresh, unattached method is the one its maker just entered.
        if (pm.customer !== null) return null;
        return describeMethod(token, pm, false);
      }
      return null;
    } catch (err) {
      if (notFound(err) || (isStripeError(err) && err.type === "StripeInvalidRequestError")) return null;
      throw processorError(err);
    }
  }

  async createCustomer(input: CustomerInput): Promise<string> {
    try {
      const customer = await withoutCallSite(() =>
        this.client.customers.create(
          { email: input.email, name: input.name, metadata: input.metadata ?? {} },
          { idempotencyKey: input.idempotencyKey },
        ),
      );
      return customer.id;
    } catch (err) {
      throw processorError(err);
    }
  }

  async setupForFutureUse(input: SetupInput): Promise<SetupResult> {
    const withToken = input.paymentMethod.startsWith("ctoken_");
    try {
      const si = await this.client.setupIntents.create(
        {
          confirm: true,
          usage: "off_session",
          ...(input.customer && { customer: input.customer }),
          ...(withToken
            ? { confirmation_token: input.paymentMethod }
            : { payment_method: input.paymentMethod }),
          ...(input.returnUrl && { return_url: input.returnUrl }),
          ...(input.reference && { metadata: { [SETUP_REFERENCE]: input.reference } }),
          automatic_payment_methods: { enabled: true, allow_redirects: "never" },
          expand: ["payment_method"],
        },
        input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : undefined,
      );
      return this.setupResult(si);
    } catch (err) {
      if (isStripeError(err) && err.type === "StripeCardError") {
        const code = failureCodeOf(err.code, err.decline_code);
        return { status: "failed", failureCode: code, failureMessage: err.message || DEFAULT_FAILURE };
      }
      throw processorError(err);
    }
  }

  /** A SetupIntent the donor confirmed in the browser (3-D Secure), as it stands now. */
  async retrieveSetup(setupId: string, reference?: string): Promise<SetupResult | null> {
    try {
      const si = await this.client.setupIntents.retrieve(setupId, { expand: ["payment_method"] });
      // Another set-up of the account (another donor's, another link's) is none of this caller's.
      if (reference !== undefined && si.metadata?.[SETUP_REFERENCE] !== reference) return null;
      return this.setupResult(si);
    } catch (err) {
      if (notFound(err)) return null;
      throw processorError(err);
    }
  }

  private setupResult(si: Stripe.SetupIntent): SetupResult {
    if (si.status === "succeeded") {
      const pm = si.payment_method;
      const method = pm && typeof pm !== "string" ? describeMethod(pm.id, pm, true) : null;
      if (method) return { status: "succeeded", method };
    }
    if (si.status === "requires_action" && si.client_secret)
      return { status: "requires_action", setupId: si.id, clientSecret: si.client_secret };
    const error = si.last_setup_error;
    return {
      status: "failed",
      failureCode: failureCodeOf(error?.code, error?.decline_code),
      failureMessage: error?.message ?? "This payment method could not be saved. Try another one.",
    };
  }

  async charge(input: ChargeInput, hooks: ChargeHooks = {}): Promise<ChargeResult> {
    this.checkCharge(input);
    const withToken = input.paymentMethod.startsWith("ctoken_");
    const suffix = input.statementName ? statementSuffix(input.statementName) : undefined;
    const currency = input.currency.toLowerCase();
    let intent: Stripe.PaymentIntent;
    try {
      intent = await withoutCallSite(() =>
        this.client.paymentIntents.create(
          {
            amount: toMinorUnits(input.amountCents, currency),
            currency,
            description: input.description,
            metadata: input.metadata ?? {},
            ...(input.customer && { customer: input.customer }),
            ...(!withToken && { payment_method: input.paymentMethod }),
            ...(input.saveForFutureUse && !input.offSession && { setup_future_usage: "off_session" }),
            ...(suffix && { statement_descriptor_suffix: suffix }),
            automatic_payment_methods: {
              enabled: true,
              ...(input.returnUrl ? {} : { allow_redirects: "never" }),
            },
          },
          { idempotencyKey: `${input.idempotencyKey}:create` },
        ),
      );
    } catch (err) {
      throw processorError(err, currency);
    }
    const id = intent.id;
    // Stored before any money can move: from here on a crash is reconciled by this id.
    try {
      await hooks.created?.(id);
    } catch (err) {
      // The caller will not go on (its stock ran out, say): the payment is never confirmed.
      await this.client.paymentIntents.cancel(id).catch(() => {});
      throw err;
    }
    try {
      intent = await withoutCallSite(() =>
        this.client.paymentIntents.confirm(
          id,
          {
            ...(withToken
              ? { confirmation_token: input.paymentMethod }
              : { payment_method: input.paymentMethod }),
            ...(input.offSession
              ? { off_session: true }
              : input.returnUrl
                ? { return_url: input.returnUrl }
                : {}),
            // The saved method's details are needed only when it is kept (the caller has the rest already).
            ...(input.saveForFutureUse && { expand: ["payment_method"] }),
          },
          { idempotencyKey: `${input.idempotencyKey}:confirm` },
        ),
      );
    } catch (err) {
      if (isStripeError(err) && err.type === "StripeCardError") return this.declined(err, id);
      if (refusedConfirmation(err)) {
        // Stripe refused to confirm with the donor's method (refusedConfirmation): no money moved. The
        // payment fails now, its PaymentIntent cancelled, instead of waiting in doubt.
        await this.client.paymentIntents.cancel(id).catch(() => {});
        return {
          status: "failed",
          processorPaymentId: id,
          method: null,
          // Off-session, the saved method or customer is gone (a gift's charge); on-session, the token.
          failureCode: input.offSession ? "invalid_request" : "invalid_payment_method",
          failureMessage: err.message || DEFAULT_FAILURE,
        };
      }
      throw processorError(err);
    }
    return this.chargeResult(intent);
  }

  private checkCharge(input: ChargeInput): void {
    if (!Number.isSafeInteger(input.amountCents) || input.amountCents <= 0)
      throw new ProcessorError("invalid_request", "amountCents must be a positive integer");
    if (!isExpressible(input.amountCents, input.currency))
      throw new ProcessorError(
        "invalid_request",
        `amountCents must be a whole number of ${input.currency.toUpperCase()}, which has no decimals`,
      );
    if (
      typeof input.idempotencyKey !== "string" ||
      !input.idempotencyKey ||
      input.idempotencyKey.length > 200
    )
      throw new ProcessorError("invalid_request", "idempotencyKey must be 1 to 200 characters");
  }

  /** A 402 from confirm: the PaymentIntent inside tells what happened. */
  private declined(err: Stripe.errors.StripeError, intentId: string): ChargeResult {
    const pi = err.payment_intent;
    // A failed confirmation leaves no method on the PaymentIntent: it is in the error (and the PI's last error).
    const pm =
      (pi?.payment_method && typeof pi.payment_method !== "string" ? pi.payment_method : null) ??
      err.payment_method ??
      pi?.last_payment_error?.payment_method ??
      null;
    const method = pm ? describeMethod(pm.id, pm, pm.customer !== null) : null;
    const code = failureCodeOf(err.code, err.decline_code);
    return {
      status: "failed",
      processorPaymentId: pi?.id ?? intentId,
      method,
      failureCode: code,
      failureMessage: err.message || DEFAULT_FAILURE,
      ...(code === "authentication_required" && pi?.client_secret && { clientSecret: pi.client_secret }),
    };
  }

  private methodOf(intent: Stripe.PaymentIntent): PaymentMethod | null {
    // After a failed confirmation the method is only in the last error (always the whole object there).
    const pm = intent.payment_method ?? intent.last_payment_error?.payment_method ?? null;
    if (!pm || typeof pm === "string") return null;
    return describeMethod(pm.id, pm, pm.customer !== null);
  }

  private chargeResult(intent: Stripe.PaymentIntent): ChargeResult {
    const method = this.methodOf(intent) ?? {
      token: typeof intent.payment_method === "string" ? intent.payment_method : intent.id,
      type: "card",
      last4: "",
      fingerprint: `stripe:${intent.id}`,
      reusable: false,
    };
    const saved = intent.setup_future_usage && method.reusable ? { savedMethod: method } : {};
    switch (intent.status) {
      case "succeeded":
        return { status: "succeeded", processorPaymentId: intent.id, method, ...saved };
      case "processing":
        return {
          status: "pending",
          pendingReason: "processing",
          processorPaymentId: intent.id,
          method,
          ...saved,
        };
      case "requires_action":
        if (intent.next_action?.type === "verify_with_microdeposits")
          return {
            status: "pending",
            pendingReason: "verify_microdeposits",
            processorPaymentId: intent.id,
            method,
            ...saved,
          };
        return {
          status: "requires_action",
          processorPaymentId: intent.id,
          method,
          clientSecret: intent.client_secret ?? "",
        };
      default: {
        const error = intent.last_payment_error;
        return {
          status: "failed",
          processorPaymentId: intent.id,
          method,
          failureCode: error ? failureCodeOf(error.code, error.decline_code) : "processing_error",
          failureMessage: error?.message ?? DEFAULT_FAILURE,
        };
      }
    }
  }

  /**
   * The held charge is confirmed again with its own method, which Stripe no longer keeps on the
   * PaymentIntent after the off-session decline (only in `last_payment_error.payment_method`): a confirm
   * without it is refused ("missing a payment method").
   */
  async confirmOnSession(processorPaymentId: string, returnUrl: string): Promise<ChargeResult> {
    try {
      const held = await this.client.paymentIntents.retrieve(processorPaymentId);
      const paymentMethod = heldMethodId(held);
      const intent = await this.client.paymentIntents.confirm(processorPaymentId, {
        ...(paymentMethod && { payment_method: paymentMethod }),
        return_url: returnUrl,
      });
      return this.chargeResult(intent);
    } catch (err) {
      if (isStripeError(err) && err.type === "StripeCardError") return this.declined(err, processorPaymentId);
      throw processorError(err);
    }
  }

  /** A charge is found by the id stored before it was confirmed; without one, nothing was confirmed. */
  async findCharge(ref: ChargeReference): Promise<ChargeResult | null> {
    if (!ref.processorPaymentId) return null;
    let intent: Stripe.PaymentIntent;
    try {
      intent = await this.client.paymentIntents.retrieve(ref.processorPaymentId, {
        expand: ["payment_method"],
      });
    } catch (err) {
      if (notFound(err)) return null;
      throw processorError(err);
    }
    // Made but never confirmed: no money moved.
    if (
      intent.status === "requires_confirmation" ||
      (intent.status === "requires_payment_method" && !intent.last_payment_error) ||
      (intent.status === "canceled" && !intent.last_payment_error)
    )
      return null;
    return this.chargeResult(intent);
  }

  async retrievePayment(processorPaymentId: string): Promise<PaymentLookup | null> {
    let intent: Stripe.PaymentIntent;
    try {
      intent = await this.client.paymentIntents.retrieve(processorPaymentId, {
        expand: ["payment_method", "latest_charge"],
      });
    } catch (err) {
      if (notFound(err)) return null;
      throw processorError(err);
    }
    return this.lookupOf(intent);
  }

  /** A PaymentIntent (retrieved, or from a webhook) as the port's lookup. */
  lookupOf(intent: Stripe.PaymentIntent): PaymentLookup {
    const result = this.chargeResult(intent);
    const charge =
      intent.latest_charge && typeof intent.latest_charge !== "string" ? intent.latest_charge : null;
    const lookup: PaymentLookup = {
      processorPaymentId: intent.id,
      status: result.status,
      amountCents: fromMinorUnits(intent.amount, intent.currency),
      currency: intent.currency.toUpperCase(),
      refundedCents: fromMinorUnits(charge?.amount_refunded ?? 0, intent.currency),
      createdAt: intent.created * 1000,
    };
    if (result.method) lookup.method = result.method;
    if (result.status === "pending" && result.pendingReason) lookup.pendingReason = result.pendingReason;
    if ((result.status === "succeeded" || result.status === "pending") && result.savedMethod)
      lookup.savedMethod = result.savedMethod;
    if (result.status === "requires_action") lookup.clientSecret = result.clientSecret;
    // An off-session charge the bank wants confirmed is not over: the donor can still confirm it.
    if (heldForAuthentication(intent)) {
      lookup.status = "requires_action";
      lookup.clientSecret = intent.client_secret ?? "";
      return lookup;
    }
    if (result.status === "failed") {
      lookup.failureCode = result.failureCode;
      lookup.failureMessage = result.failureMessage;
    }
    return lookup;
  }

  async cancelPayment(processorPaymentId: string): Promise<boolean> {
    try {
      const intent = await this.client.paymentIntents.cancel(processorPaymentId);
      return intent.status === "canceled";
    } catch (err) {
      // Already succeeded (or processing): it can no longer be cancelled.
      if (isStripeError(err) && err.type === "StripeInvalidRequestError") return false;
      throw processorError(err);
    }
  }

  /** Refunds of the PaymentIntent that Stripe failed or canceled, every page read. */
  async failedRefunds(processorPaymentId: string): Promise<number> {
    try {
      let failed = 0;
      for await (const refund of this.client.refunds.list({ payment_intent: processorPaymentId, limit: 100 }))
        if (refund.status === "failed" || refund.status === "canceled") failed++;
      return failed;
    } catch (err) {
      if (notFound(err)) return 0;
      throw processorError(err);
    }
  }

  async refund(input: RefundInput): Promise<RefundResult> {
    try {
      // An amount goes in the payment's own currency's minor units: Stripe keeps it on the PaymentIntent.
      const amount =
        input.amountCents === undefined
          ? undefined
          : toMinorUnits(
              input.amountCents,
              input.currency ??
                (await this.client.paymentIntents.retrieve(input.processorPaymentId)).currency,
            );
      let refund = await this.client.refunds.create(
        {
          payment_intent: input.processorPaymentId,
          ...(amount !== undefined && { amount }),
          ...(input.reason && { metadata: { reason: input.reason.slice(0, 500) } }),
        },
        input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : undefined,
      );
      // A replay is the refund's first answer: it may have failed since, which only a fresh read tells.
      const replayed = refund.lastResponse?.headers?.["idempotent-replayed"] === "true";
      if (replayed) refund = await this.client.refunds.retrieve(refund.id);
      if (refund.status === "failed" || refund.status === "canceled")
        return {
          ok: false,
          code: "not_refundable",
          message: `Stripe could not make this refund (${refund.failure_reason ?? refund.status}).`,
        };
      const charge =
        refund.charge && typeof refund.charge === "string"
          ? await this.client.charges.retrieve(refund.charge).catch(() => null)
          : null;
      return {
        ok: true,
        refundId: refund.id,
        amountCents: fromMinorUnits(refund.amount, refund.currency),
        // Unknown when the charge could not be read back: the refund's own amount is counted instead.
        ...(charge ? { refundedTotalCents: fromMinorUnits(charge.amount_refunded, refund.currency) } : {}),
        status: refund.status === "succeeded" ? "succeeded" : "pending",
        ...(replayed && { replayed }),
      };
    } catch (err) {
      if (notFound(err))
        return { ok: false, code: "unknown_payment", message: "Stripe does not know this payment." };
      if (isStripeError(err) && err.type === "StripeInvalidRequestError") {
        if (err.code === "charge_already_refunded")
          return { ok: false, code: "not_refundable", message: "This payment is already fully refunded." };
        if (err.code === "amount_too_large" || err.param === "amount")
          return {
            ok: false,
            code: "invalid_amount",
            message: "The refund amount is more than what is left of the payment.",
          };
        return { ok: false, code: "not_refundable", message: err.message };
      }
      // The same refund key with other details (the same amount asked for at once with another reason):
      // one of them is being made; the caller's 409 says to look before asking again.
      if (isStripeError(err) && err.type === "StripeIdempotencyError")
        return {
          ok: false,
          code: "not_refundable",
          message:
            "A refund of the same amount of this payment is being made at this moment with other details: check the payment's refunded amount before asking again.",
        };
      throw processorError(err);
    }
  }

  verifyEvent(rawBody: string, signature: string | undefined): IncomingEvent {
    return verifyStripeEvent(this.client, rawBody, signature, this.secrets.webhookSecret);
  }

  async resolveEvent(event: IncomingEvent): Promise<ProcessorEvent> {
    const subject = eventSubject(event);
    try {
      if ((subject === "payment" || subject === "refunds") && event.processorPaymentId) {
        const lookup = await this.retrievePayment(event.processorPaymentId);
        return lookup ? { kind: "payment", lookup } : { kind: "ignored" };
      }
      if (subject === "dispute" && event.processorPaymentId) {
        const dispute = await this.client.disputes.retrieve(event.objectId);
        return {
          kind: "dispute",
          processorPaymentId: event.processorPaymentId,
          dispute: disputeState(dispute),
        };
      }
      if (subject === "setup") {
        const si = await this.client.setupIntents.retrieve(event.objectId, { expand: ["payment_method"] });
        return { kind: "setup", setupId: si.id, result: this.setupResult(si), metadata: si.metadata ?? {} };
      }
    } catch (err) {
      if (notFound(err)) return { kind: "ignored" };
      throw processorError(err);
    }
    return { kind: "ignored" };
  }
}

/**
 * Stripe's answer to an off-session charge whose bank asks the cardholder to authenticate it: back to
 * `requires_payment_method`, the error `authentication_required` (as its code, or a `card_declined` with
 * that decline code), and the method that was declined in the error, to confirm again with the donor.
 */
function heldForAuthentication(intent: Stripe.PaymentIntent): boolean {
  const error = intent.last_payment_error;
  return (
    intent.status === "requires_payment_method" &&
    (error?.code === "authentication_required" || error?.decline_code === "authentication_required") &&
    heldMethodId(intent) !== null
  );
}

/** The method to confirm a held charge with: on the PaymentIntent if still there, else its last error's. */
function heldMethodId(intent: Stripe.PaymentIntent): string | null {
  const pm = intent.payment_method ?? intent.last_payment_error?.payment_method ?? null;
  return pm === null ? null : typeof pm === "string" ? pm : pm.id;
}

/**
 * Funds are out of the balance while a dispute is open, lost or under appeal (Stripe withdraws them when it
 * opens); not once it is won, nor for an inquiry (`warning_…`), nor for a dispute the card network
 * `prevented` (settled with a refund instead, which is recorded as a refund).
 */
export function disputeState(d: Stripe.Dispute): DisputeState {
  const withdrawn = !(d.status === "won" || d.status === "prevented" || d.status.startsWith("warning_"));
  return {
    id: d.id,
    status: d.status,
    reason: d.reason,
    amountCents: fromMinorUnits(d.amount, d.currency),
    fundsWithdrawn: withdrawn,
    createdAt: isoAt(d.created * 1000),
  };
}

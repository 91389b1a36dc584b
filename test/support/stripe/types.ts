/** The shapes the emulator stores and answers with (the fields it reads or changes; the rest ride along). */

export type Metadata = Record<string, string>;

export interface StripeObject {
  id: string;
  object: string;
  livemode: boolean;
  created: number;
  [key: string]: unknown;
}

export interface Address {
  city: string | null;
  country: string | null;
  line1: string | null;
  line2: string | null;
  postal_code: string | null;
  state: string | null;
}

export interface BillingDetails {
  address: Address;
  email: string | null;
  name: string | null;
  phone: string | null;
  tax_id: string | null;
}

export type WalletType = "apple_pay" | "google_pay";

export interface CardDetails {
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  fingerprint: string;
  country: string;
  funding: string;
  wallet: null | { type: WalletType; dynamic_last4: string | null; [key: string]: unknown };
  [key: string]: unknown;
}

export interface BankDetails {
  account_holder_type: string;
  account_type: string;
  bank_name: string;
  fingerprint: string;
  last4: string;
  routing_number: string;
  [key: string]: unknown;
}

export interface PaymentMethodObject extends StripeObject {
  object: "payment_method";
  type: "card" | "us_bank_account";
  customer: string | null;
  billing_details: BillingDetails;
  metadata: Metadata;
  card?: CardDetails;
  us_bank_account?: BankDetails;
}

export interface CustomerObject extends StripeObject {
  object: "customer";
  email: string | null;
  name: string | null;
  description: string | null;
  phone: string | null;
  metadata: Metadata;
  invoice_settings: { default_payment_method: string | null; [key: string]: unknown };
}

export interface IntentError {
  type: string;
  code?: string;
  decline_code?: string;
  message: string;
  param?: string;
  doc_url?: string;
  charge?: string;
  payment_method?: PaymentMethodObject;
  payment_method_type?: string;
  [key: string]: unknown;
}

export type PaymentIntentStatus =
  | "requires_payment_method"
  | "requires_confirmation"
  | "requires_action"
  | "processing"
  | "requires_capture"
  | "canceled"
  | "succeeded";

export interface PaymentIntentObject extends StripeObject {
  object: "payment_intent";
  amount: number;
  amount_received: number;
  currency: string;
  status: PaymentIntentStatus;
  client_secret: string;
  customer: string | null;
  description: string | null;
  payment_method: string | null;
  latest_charge: string | null;
  last_payment_error: IntentError | null;
  next_action: Record<string, unknown> | null;
  setup_future_usage: "on_session" | "off_session" | null;
  metadata: Metadata;
  canceled_at: number | null;
  cancellation_reason: string | null;
  allowed_payment_method_types: string[] | null;
  payment_method_types: string[];
  automatic_payment_methods: { enabled: boolean; allow_redirects?: string } | null;
  processing: Record<string, unknown> | null;
  receipt_email: string | null;
  statement_descriptor_suffix: string | null;
}

export type SetupIntentStatus =
  | "requires_payment_method"
  | "requires_confirmation"
  | "requires_action"
  | "processing"
  | "canceled"
  | "succeeded";

export interface SetupIntentObject extends StripeObject {
  object: "setup_intent";
  status: SetupIntentStatus;
  client_secret: string;
  customer: string | null;
  description: string | null;
  payment_method: string | null;
  last_setup_error: IntentError | null;
  next_action: Record<string, unknown> | null;
  metadata: Metadata;
  usage: "on_session" | "off_session";
  allowed_payment_method_types: string[] | null;
  payment_method_types: string[];
  automatic_payment_methods: { enabled: boolean; allow_redirects?: string } | null;
  cancellation_reason: string | null;
  latest_attempt: string | null;
  mandate: string | null;
}

export interface ChargeObject extends StripeObject {
  object: "charge";
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  currency: string;
  customer: string | null;
  description: string | null;
  disputed: boolean;
  failure_code: string | null;
  failure_message: string | null;
  paid: boolean;
  refunded: boolean;
  status: "succeeded" | "pending" | "failed";
  payment_intent: string | null;
  payment_method: string | null;
  payment_method_details: Record<string, unknown>;
  billing_details: BillingDetails;
  outcome: Record<string, unknown> | null;
  metadata: Metadata;
  balance_transaction: string | null;
}

export interface RefundObject extends StripeObject {
  object: "refund";
  amount: number;
  charge: string;
  currency: string;
  payment_intent: string | null;
  reason: string | null;
  status: "pending" | "succeeded" | "failed" | "canceled" | "requires_action";
  failure_reason?: string;
  metadata: Metadata;
}

export interface DisputeObject extends StripeObject {
  object: "dispute";
  amount: number;
  charge: string;
  currency: string;
  payment_intent: string | null;
  reason: string;
  status: string;
  is_charge_refundable: boolean;
  balance_transactions: Record<string, unknown>[];
  metadata: Metadata;
  evidence: Record<string, unknown>;
  evidence_details: Record<string, unknown>;
}

export interface ConfirmationTokenObject extends StripeObject {
  object: "confirmation_token";
  expires_at: number;
  payment_intent: string | null;
  setup_intent: string | null;
  payment_method_preview: Record<string, unknown> & { type: string };
  return_url: string | null;
  setup_future_usage: "on_session" | "off_session" | null;
}

export interface WebhookEndpointObject extends StripeObject {
  object: "webhook_endpoint";
  url: string;
  enabled_events: string[];
  api_version: string | null;
  description: string | null;
  metadata: Metadata;
  status: "enabled" | "disabled";
}

export interface EventObject extends StripeObject {
  object: "event";
  api_version: string;
  type: string;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
}

/** Card or bank details behind a PaymentMethod or ConfirmationToken: the emulator's private knowledge. */
export type Instrument =
  | {
      kind: "card";
      number: string;
      expMonth: number;
      expYear: number;
      cvc: string | null;
      wallet: WalletType | null;
    }
  | {
      kind: "bank";
      routing: string;
      account: string;
      holderType: string;
      accountType: string;
      /** Entered by hand: verified with microdeposits before the debit starts. */
      microdeposits: boolean;
    };

export interface Internal {
  instrument?: Instrument;
  /** A ConfirmationToken made from an existing PaymentMethod. */
  paymentMethodId?: string;
  /** A PaymentMethod used once without being saved to a customer: Stripe refuses to use it again. */
  consumed?: boolean;
  /** A PaymentMethod set up (authenticated) for off-session use. */
  offSessionReady?: boolean;
  /** A ConfirmationToken already used. */
  used?: boolean;
  /** What a `requires_action` intent waits for. */
  pendingAction?: "three_d_secure" | "microdeposits";
  /** The current confirmation was off-session. */
  offSession?: boolean;
  /** An intent's return_url (not part of Stripe's object). */
  returnUrl?: string | null;
  /** A ConfirmationToken attached at creation without confirm=true, used by the next confirm. */
  pendingToken?: string;
  /** A webhook endpoint's signing secret. */
  secret?: string;
}

export type Kind =
  | "customer"
  | "payment_method"
  | "payment_intent"
  | "setup_intent"
  | "charge"
  | "refund"
  | "dispute"
  | "confirmation_token"
  | "webhook_endpoint"
  | "payment_method_domain"
  | "event";

export interface StoredRecord<T extends StripeObject = StripeObject> {
  kind: Kind;
  accountId: string;
  livemode: boolean;
  obj: T;
  internal: Internal;
}

// ---- public configuration and log types ----

export interface AccountOptions {
  id?: string;
  /** `sk_test_…` or `sk_live_…`; generated when absent. */
  secretKey?: string;
  /** `pk_test_…` or `pk_live_…`; generated when absent. */
  publishableKey?: string;
  /** `rk_test_…` keys with all permissions. */
  restrictedKeys?: string[];
  chargesEnabled?: boolean;
  payoutsEnabled?: boolean;
  detailsSubmitted?: boolean;
  defaultCurrency?: string;
  country?: string;
  /** settings.dashboard.display_name */
  displayName?: string;
  /** business_profile.name */
  businessName?: string;
  email?: string;
  statementDescriptor?: string;
}

export interface EmulatorAccount {
  id: string;
  secretKey: string;
  publishableKey: string;
  restrictedKeys: string[];
  chargesEnabled: boolean;
  payoutsEnabled: boolean;
  detailsSubmitted: boolean;
  defaultCurrency: string;
  country: string;
  displayName: string;
  businessName: string;
  email: string;
  statementDescriptor: string;
  created: number;
}

export interface RequestLogEntry {
  method: string;
  /** The path without the query string, e.g. `/v1/payment_intents`. */
  path: string;
  idempotencyKey: string | null;
  replayed: boolean;
  /** The account the key belongs to (null when the key was refused or for `/_emulator` calls). */
  account: string | null;
  keyKind: "secret" | "restricted" | "publishable" | null;
  status: number;
  requestId: string;
  at: number;
}

export interface FaultSpec {
  /** HTTP method to match; any when absent. */
  method?: string;
  /** Path prefix to match, e.g. `/v1/payment_intents`. */
  path: string;
  /**
   * `delay`: wait `ms` before handling (or after, with `after: true`; or while handling, its idempotency key
   * in flight, with `inFlight: true`); `500`: answer api_error without
   * doing anything; `drop`: handle the request, then destroy the socket without answering; `refuse`:
   * answer a 400 invalid_request_error with `refusal`'s message, param and code, without doing anything.
   */
  kind: "delay" | "500" | "drop" | "refuse";
  ms?: number;
  refusal?: { message: string; param?: string; code?: string };
  after?: boolean;
  inFlight?: boolean;
  /** How many matching requests go through untouched before this fault applies (default 0). */
  skip?: number;
  /** How many matching requests this fault applies to (default 1). */
  times?: number;
}

export interface WalletAvailability {
  applePay: boolean;
  googlePay: boolean;
  /** What the stand-in's wallet "sheet" does after `click` is resolved: fire `confirm` (default) or `cancel`. */
  sheet: "confirm" | "cancel";
}

export interface DeliveryRecord {
  eventId: string;
  type: string;
  endpointId: string;
  url: string;
  /** The receiver's HTTP status; 0 when the connection failed. */
  status: number;
  error: string | null;
  at: number;
}

import type { Kysely } from "kysely";

/**
 * Table types for Kysely. Portable column kinds only: text (ids, ISO 8601 UTC times, JSON),
 * integer 0/1 flags, and integer cents (bigint on PostgreSQL, read back as numbers).
 */

export interface OrganizationsTable {
  id: string;
  name: string;
  base_urls: string;
  global_custom_inputs: string;
  sandbox: number;
  /** Card-processing fee the cover-fees option pays: basis points (290 = 2.9%) plus fixed cents. */
  fee_percent_bps: number;
  fee_fixed_cents: number;
  /** "stripe" when connected; null: the instance default (the sandbox outside production). */
  processor: string | null;
  /** JSON of the processor's public settings (mode, account, publishable key, webhook endpoint, domains). */
  processor_settings: string | null;
  /** The processor's secrets, sealed with the instance key (secrets.ts): never in the clear. */
  processor_secrets: string | null;
  /** ISO 3166-1 alpha-2: reads phone numbers typed without a country code. */
  country: string;
  /** For receipts and statements: the legal name, postal address and tax id; null until set. */
  legal_name?: string | null;
  legal_address?: string | null;
  tax_id?: string | null;
  /** ISO 4217 (default USD): what new gifts are taken in. Left out: USD. */
  currency?: string;
  /** The donors' default language (default en). Left out: en. */
  language?: string;
  /** 1: Owners and Finance must sign in with TOTP. Left out: 0. */
  require_two_factor?: number;
  /** IANA time zone (default UTC): the organization's days in reports and exports. Left out: UTC. */
  time_zone?: string;
  /** Branding: the logo's https URL and the `#RRGGBB` colour; null until set. Left out: null. */
  logo_url?: string | null;
  brand_color?: string | null;
  /** Receipt defaults for forms without custom e-mail settings: reply-to, subject, message. */
  receipt_reply_to?: string | null;
  receipt_subject?: string | null;
  receipt_message?: string | null;
  created_at: string;
  updated_at: string;
}

export interface ApiKeysTable {
  id: string;
  organization_id: string;
  key_hash: string;
  key_prefix: string;
  permissions: string;
  created_at: string;
  revoked_at: string | null;
  /** What the key is for, as its creator named it ("" for keys made before names, or without one). */
  name?: string;
}

/** When each API key was last used, noted at most once a minute per key and process (keyUses.ts). */
export interface ApiKeyUsesTable {
  key_id: string;
  last_used_at: string;
}

export interface FormsTable {
  id: string;
  organization_id: string;
  title: string;
  /** Lower-cased title; unique among a merchant's live forms. */
  title_key: string;
  form_type: string;
  active: number;
  config: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface CheckoutLinksTable {
  id: string;
  organization_id: string;
  form_id: string;
  name: string;
  destination_type: string;
  overlay_path: string;
  /** JSON of the validated prefill, amount in cents. */
  prefill: string;
  active: number;
  created_at: string;
  updated_at: string;
}

export interface RateLimitBucketsTable {
  key_id: string;
  /** Minutes since the Unix epoch. */
  bucket: number;
  count: number;
}

export interface IdempotencyKeysTable {
  organization_id: string;
  idem_key: string;
  request_hash: string;
  status_code: number | null;
  response_body: string | null;
  created_at: string;
}

export interface ApiMetricsTable {
  id: string;
  organization_id: string;
  key_id: string;
  endpoint: string;
  method: string;
  status_code: number;
  response_time_us: number;
  created_at: string;
}

export type ConsentValue = "OPTED_IN" | "OPTED_OUT" | "UNKNOWN";

export interface ContactsTable {
  id: string;
  organization_id: string;
  first_name: string;
  last_name: string;
  organization_name: string | null;
  /** JSON [{value, isPrimary, isVerified}] */
  emails: string;
  /** JSON [{value, isPrimary}] */
  phones: string;
  /** JSON [{line1, line2, city, region, postal, country, isPrimary}] */
  addresses: string;
  email_consent: string;
  sms_consent: string;
  communication_consent: string;
  /** ACTIVE, DELETED or MERGED; only ACTIVE contacts are listed or matched. */
  status: string;
  merged_into: string | null;
  created_at: string;
  updated_at: string;
}

export interface ContactKeysTable {
  organization_id: string;
  /** "email" (lower-cased) or "phone" (E.164, or as typed when not a valid number). */
  kind: string;
  value_key: string;
  contact_id: string;
}

export interface SubscriptionsTable {
  id: string;
  organization_id: string;
  form_id: string;
  contact_id: string;
  /** ACTIVE or CANCELLED. */
  status: string;
  /** The recurring gift, before any covered fee. */
  amount_cents: number;
  cover_fees: number;
  currency: string;
  frequency: string;
  fund: string;
  anonymous: number;
  email: string;
  /** The address as donors are found by (shared/email.ts emailKey), made by the application, never by SQL. */
  email_key: string;
  first_name: string;
  last_name: string;
  /** The processor holding the saved method. */
  processor: string;
  /** The processor's customer the saved method belongs to (Stripe), or null. */
  processor_customer: string | null;
  /** A reusable processor token (never card data). */
  payment_method_token: string;
  payment_method_type: string;
  card_brand: string | null;
  last4: string | null;
  /** The first charge's time: every billing date is anchor + n periods (calendar rules). */
  anchor_at: string;
  /** Periods billed so far; the first charge (at checkout) is cycle 0. */
  cycle: number;
  /**
   * The cycle whose billing date `anchor_at` is: 0, or the cycle at which the frequency last changed.
   * Cycle n bills at anchor + (n - anchor_cycle) periods. Left out: 0.
   */
  anchor_cycle?: number;
  next_billing_at: string;
  last_billing_at: string | null;
  end_billing_at: string | null;
  /** Failed attempts at the current cycle's charge. */
  failed_attempts: number;
  retry_at: string | null;
  claimed_until: string | null;
  claim_token: string | null;
  /** The process holding the claim (processes.ts); null or left out: the claim ends with its lease only. */
  claimed_by?: string | null;
  /** JSON: what later charges repeat (custom answers, UTM, cover-fee rate at sign-up, and so on). */
  details: string;
  created_at: string;
  updated_at: string;
  cancelled_at: string | null;
}

export interface PaymentMethodUpdateLinksTable {
  id: string;
  organization_id: string;
  subscription_id: string;
  /** SHA-256 (hex) of the link's secret token; the token itself is never stored. */
  token_hash: string;
  /** JSON array of "CARD" / "PAY_BY_BANK". */
  allowed_methods: string;
  return_url: string | null;
  expires_at: string;
  /** Set once, when the donor's new method is saved: the link is single-use. */
  used_at: string | null;
  /** Refused payment methods entered on the page; too many end the link. */
  failed_attempts: number;
  /** A recurring charge held for the donor's authentication, which the page lets them confirm; or null. */
  payment_id: string | null;
  created_at: string;
}

export interface PaymentsTable {
  id: string;
  organization_id: string;
  form_id: string;
  contact_id: string | null;
  subscription_id: string | null;
  /** PROCESSING (internal: charge in flight, holds stock, never listed), COMPLETED, PENDING, FAILED, REFUNDED. */
  status: string;
  /** What the donor was charged (gift + covered fee). */
  amount_cents: number;
  /** The covered processing fee inside amount_cents (0 unless cover_fees). */
  fee_cents: number;
  refunded_cents: number;
  currency: string;
  fund: string;
  form_title: string;
  frequency: string;
  cover_fees: number;
  anonymous: number;
  email: string;
  /** The address as donors are found by (shared/email.ts emailKey), made by the application, never by SQL. */
  email_key: string;
  first_name: string;
  last_name: string;
  payment_method_type: string;
  card_brand: string | null;
  last4: string | null;
  fingerprint: string | null;
  processor_payment_id: string | null;
  /** The processor idempotency key of this charge: one payment row per charge, ever. */
  charge_key: string;
  failure_code: string | null;
  failure_message: string | null;
  /** JSON PaymentDetails: quote lines, tickets, promo code, custom answers, UTM, donor address, stock held. */
  details: string;
  /** The processor that made the charge ("sandbox", "stripe"). */
  processor: string;
  /** JSON PaymentDispute of the latest dispute (or bank return), or null. */
  dispute: string | null;
  /**
   * While a checkout payment is PROCESSING: the server process charging it (processes.ts), whose death
   * lets recovery finish it at once; null (or left out) when none keeps a heartbeat.
   */
  claimed_by?: string | null;
  created_at: string;
  updated_at: string;
}

export interface InventoryTable {
  form_id: string;
  /** "ticket", "product" or "promo". */
  item_kind: string;
  /** Ticket name, productKey(group, option), or promoKey(code). */
  item_key: string;
  sold: number;
}

export interface OutboxEventsTable {
  id: string;
  organization_id: string;
  type: string;
  subject_id: string;
  /** JSON of the resource as the API returns it. */
  data: string;
  created_at: string;
}

export interface WebhooksTable {
  id: string;
  organization_id: string;
  url: string;
  /** JSON array of event kinds. */
  events: string;
  /** ACTIVE, DISABLED, or DELETED (permanent). */
  status: string;
  description: string;
  /** The signing secret (`whsec_...`). Kept as is: signing needs it, so it cannot be a hash. */
  secret: string;
  /** The secret a rotation replaced: deliveries are signed with it too until previous_secret_expires_at. */
  previous_secret?: string | null;
  previous_secret_expires_at?: string | null;
  success_count: number;
  failure_count: number;
  last_delivery_at: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** One event to one webhook: written with the event, then attempted until a 2xx or the schedule ends. */
export interface WebhookDeliveriesTable {
  id: string;
  organization_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  /** PENDING, SUCCESS, FAILED (gave up) or CANCELLED (webhook deleted or unsubscribed). */
  status: string;
  /** Attempts started so far. */
  attempts: number;
  next_attempt_at: string;
  claimed_until: string | null;
  claim_token: string | null;
  /** The process holding the claim (processes.ts); null or left out: the claim ends with its lease only. */
  claimed_by?: string | null;
  created_at: string;
  updated_at: string;
}

/** One delivery attempt, as `GET /v1/analytics/webhook-logs` lists it. */
export interface WebhookLogsTable {
  id: string;
  organization_id: string;
  webhook_id: string;
  delivery_id: string;
  event_id: string;
  event_type: string;
  /** PENDING while the attempt is under way, then SUCCESS or FAILED. */
  status: string;
  http_status: number | null;
  response_time_ms: number | null;
  attempt: number;
  error: string | null;
  /** The start of the receiver's answer (at most 500 characters); null without one. */
  response_body?: string | null;
  created_at: string;
}

export interface EmailOutboxTable {
  id: string;
  organization_id: string;
  payment_id: string | null;
  to_address: string;
  from_name: string;
  reply_to: string | null;
  subject: string;
  text_body: string;
  html_body: string;
  /** PENDING, SENT or FAILED (gave up). */
  status: string;
  attempts: number;
  next_attempt_at: string;
  claimed_until: string | null;
  claim_token: string | null;
  /** The process holding the claim (processes.ts); null or left out: the claim ends with its lease only. */
  claimed_by?: string | null;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}

export interface ProcessorCustomersTable {
  organization_id: string;
  /** The processor account (Stripe `acct_…`). */
  account: string;
  /** The donor's e-mail, lower-cased. */
  email_key: string;
  customer_id: string;
  created_at: string;
}

export interface ProcessorEventsTable {
  organization_id: string;
  event_id: string;
  /** What the event changes (object, type and state): a second event saying the same is not applied. */
  effect_key: string;
  type: string;
  received_at: string;
}

export interface ProcessorLedgerTable {
  key: string;
  value: string;
  expires_at: string;
}

export interface InstanceSettingsTable {
  key: string;
  value: string;
}

export interface SchemaMigrationsTable {
  version: number;
  name: string;
  applied_at: string;
}

/** One running server process (processes.ts): its claims hold while `alive_until` is ahead. */
export interface ProcessesTable {
  id: string;
  host: string;
  pid: number;
  /** Host boot and pid namespace: processes with the same value can check each other's pids. */
  machine: string | null;
  started_at: string;
  heartbeat_at: string;
  alive_until: string;
}

export interface SchemaLockTable {
  id: number;
  holder: string | null;
}

/** A mailed, single-use sign-in link to the donor portal (only the token's hash is kept). */
export interface DonorLinksTable {
  token_hash: string;
  organization_id: string;
  /** The donor's e-mail address, lower-cased. */
  email_key: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

/** A donor's session in the portal: the cookie's token, hashed. */
export interface DonorSessionsTable {
  token_hash: string;
  organization_id: string;
  email_key: string;
  expires_at: string;
  created_at: string;
}

/** A member of an organization's staff (one per e-mail address). */
export interface StaffUsersTable {
  id: string;
  email_key: string;
  email: string;
  /** `scrypt$N$r$p$salt$hash`; null until the person has set a password. */
  password_hash: string | null;
  /** The TOTP secret, sealed with the instance key (secrets.ts); null while two-factor sign-in is off. */
  totp_secret?: string | null;
  /** A secret handed out for enrolment, sealed, until a code from it confirms it. */
  totp_pending_secret?: string | null;
  totp_enabled_at?: string | null;
  /** The 30-second time-step of the last TOTP code accepted: no code is used twice. */
  totp_last_step?: number | null;
  created_at: string;
  updated_at: string;
}

/** A person's role in one organization: OWNER, FINANCE or STAFF. */
export interface StaffMembershipsTable {
  user_id: string;
  organization_id: string;
  role: string;
  created_at: string;
  /** The address as the invitation spelled it (shown until the person joins); null before migration 29. */
  invited_email: string | null;
}

/** A single-use link of a staff member's (kind `setup`): only the token's hash. */
export interface StaffTokensTable {
  token_hash: string;
  user_id: string;
  organization_id: string;
  kind: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

/** A staff member's signed-in session in one organization: the cookie's token, hashed. */
export interface StaffSessionsTable {
  token_hash: string;
  user_id: string;
  organization_id: string;
  created_at: string;
  last_seen_at: string;
  /** The absolute end (7 days after sign-in); the idle end is last_seen_at plus 8 hours. */
  expires_at: string;
  revoked_at: string | null;
  /** The browser's User-Agent and the client address at sign-in, shown in the person's sessions list. */
  user_agent?: string | null;
  client_ip?: string | null;
}

/** A staff member's one-time recovery code (ten at a time): only its hash; used_at once it is used. */
export interface StaffRecoveryCodesTable {
  user_id: string;
  code_hash: string;
  used_at: string | null;
  created_at: string;
}

/** A failed staff sign-in, counted by its key (`email:<address>` or `ip:<client address>`). */
export interface StaffLoginFailuresTable {
  id: string;
  key: string;
  created_at: string;
}

/** An event ticket: one per ticket bought, written with its order's completed payment (tickets.ts). */
export interface TicketsTable {
  id: string;
  /** `ABCD-EFGH-JK`, unique: what the door types or scans. */
  code: string;
  organization_id: string;
  form_id: string;
  payment_id: string;
  /** Its place among the payment's tickets, from 0. */
  position: number;
  contact_id: string | null;
  buyer_name: string;
  buyer_email: string;
  /** The ticket's name on the form. */
  ticket_type: string;
  /** How many people it lets in (a GROUP ticket: its group size). */
  admits: number;
  checked_in_at: string | null;
  /** Who checked it in, as the audit log labels them (a staff member's address, `key:<id>`). */
  checked_in_by: string | null;
  /** Set when the order was refunded in full: the ticket no longer admits anyone. */
  voided_at: string | null;
  created_at: string;
}

/** Who changed what, with the values before and after (JSON objects of the changed fields). */
export interface AuditLogTable {
  id: string;
  organization_id: string;
  /** "staff" (a staff member's user id), "key" (an API key's id), "donor" (the donor's e-mail address), "system". */
  actor_type: string;
  actor: string;
  /** How the actor reads in the log: a staff member's e-mail address as it was then; null for keys and the system. */
  actor_label: string | null;
  /** What was done, `subject.verb` (`subscription.updated`, `subscription.cancelled`). */
  action: string;
  subject_type: string;
  subject_id: string;
  old_values: string;
  new_values: string;
  created_at: string;
}

export interface Database {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  api_key_uses: ApiKeyUsesTable;
  forms: FormsTable;
  checkout_links: CheckoutLinksTable;
  rate_limit_buckets: RateLimitBucketsTable;
  idempotency_keys: IdempotencyKeysTable;
  api_metrics: ApiMetricsTable;
  contacts: ContactsTable;
  contact_keys: ContactKeysTable;
  subscriptions: SubscriptionsTable;
  payments: PaymentsTable;
  payment_method_update_links: PaymentMethodUpdateLinksTable;
  inventory: InventoryTable;
  outbox_events: OutboxEventsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_logs: WebhookLogsTable;
  email_outbox: EmailOutboxTable;
  processor_ledger: ProcessorLedgerTable;
  processor_customers: ProcessorCustomersTable;
  processor_events: ProcessorEventsTable;
  instance_settings: InstanceSettingsTable;
  processes: ProcessesTable;
  donor_links: DonorLinksTable;
  donor_sessions: DonorSessionsTable;
  audit_log: AuditLogTable;
  tickets: TicketsTable;
  staff_users: StaffUsersTable;
  staff_memberships: StaffMembershipsTable;
  staff_tokens: StaffTokensTable;
  staff_sessions: StaffSessionsTable;
  staff_login_failures: StaffLoginFailuresTable;
  staff_recovery_codes: StaffRecoveryCodesTable;
  almoner_migrations: SchemaMigrationsTable;
  almoner_schema_lock: SchemaLockTable;
}

/** A connection or transaction on the database. */
export type Db = Kysely<Database>;

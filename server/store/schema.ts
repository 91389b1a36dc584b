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

export interface SchemaMigrationsTable {
  version: number;
  name: string;
  applied_at: string;
}

export interface SchemaLockTable {
  id: number;
  holder: string | null;
}

export interface Database {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  forms: FormsTable;
  checkout_links: CheckoutLinksTable;
  rate_limit_buckets: RateLimitBucketsTable;
  idempotency_keys: IdempotencyKeysTable;
  api_metrics: ApiMetricsTable;
  almoner_migrations: SchemaMigrationsTable;
  almoner_schema_lock: SchemaLockTable;
}

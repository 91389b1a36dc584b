import { DEFAULT_CURRENCY } from "../../shared/currency.js";
import { DEFAULT_LANGUAGE, isLanguage, type Language } from "../../shared/languages.js";
import { DEFAULT_COUNTRY } from "../../shared/phone.js";
import { DEFAULT_FEE_RATE, type FeeRate } from "../../shared/pricing/fees.js";
import { type GlobalCustomInput, isSiteHostname } from "../../shared/schemas/organization.js";
import { isoAt } from "../../shared/time.js";
import { prefixedId } from "../ids.js";
import type { Db, Store } from "./database.js";
import type { OrganizationsTable } from "./schema.js";

/** An organization's own Stripe account: what may be shown (never a secret). */
export interface StripeConnection {
  processor: "stripe";
  mode: "test" | "live";
  accountId: string;
  accountName: string | null;
  publishableKey: string;
  /** The account's default currency, lower-case (`usd`). */
  currency: string;
  /** The webhook endpoint made at Stripe for this instance, or null when the secret was given. */
  webhookEndpointId: string | null;
  /** Hosts registered at Stripe as payment method domains (wallets). */
  domains: string[];
  connectedAt: string;
}

export interface OrganizationLegal {
  /** The registered name (receipts fall back to `name`). */
  name: string | null;
  /** The postal address, lines separated by newlines. */
  address: string | null;
  /** The tax id (an EIN, a charity number). */
  taxId: string | null;
}

/** The organization's look: its logo (an https URL) and colour (`#RRGGBB`); null until set. */
export interface OrganizationBranding {
  logoUrl: string | null;
  color: string | null;
}

/** What receipts say when their form sets no custom e-mail of its own; null: the built-in text. */
export interface ReceiptDefaults {
  replyTo: string | null;
  subject: string | null;
  message: string | null;
}

export interface Organization {
  id: string;
  name: string;
  baseUrls: string[];
  globalCustomInputs: GlobalCustomInput[];
  sandbox: boolean;
  feeRate: FeeRate;
  /** The organization's own processor account, or null (the instance default). */
  processor: StripeConnection | null;
  /** Its secrets, sealed (secrets.ts): open only where a processor is built. */
  processorSecrets: string | null;
  /** ISO 3166-1 alpha-2 (default US): the country of phone numbers typed without a country code. */
  country: string;
  /** What receipts and statements name the organization by, and its tax id; null until set. */
  legal: OrganizationLegal;
  /** ISO 4217, upper case: what new gifts are taken in. */
  currency: string;
  /** The language donors' pages speak unless the donor asks for another. */
  language: Language;
  /** IANA time zone (default UTC): the organization's days in reports and exports. */
  timeZone: string;
  /** Owners and Finance must sign in with TOTP. */
  requireTwoFactor: boolean;
  branding: OrganizationBranding;
  receiptDefaults: ReceiptDefaults;
  createdAt: string;
  updatedAt: string;
}

/**
 * The origins of the organization's own sites (its `organizationBaseURLs`, http and https only): where
 * its overlay may open its forms.
 */
export function siteOrigins(org: Pick<Organization, "baseUrls">): string[] {
  const origins = new Set<string>();
  for (const url of org.baseUrls) {
    try {
      const parsed = new URL(url);
      // Only a real host name: a site's origin goes into CSP frame-ancestors (a URL stored before the
      // schema required one names no site).
      if ((parsed.protocol === "https:" || parsed.protocol === "http:") && isSiteHostname(parsed.hostname))
        origins.add(parsed.origin);
    } catch {
      // A stored URL that does not parse names no site.
    }
  }
  return [...origins];
}

function fromRow(row: OrganizationsTable): Organization {
  return {
    id: row.id,
    name: row.name,
    baseUrls: JSON.parse(row.base_urls),
    globalCustomInputs: JSON.parse(row.global_custom_inputs),
    sandbox: row.sandbox === 1,
    feeRate: { percentBps: row.fee_percent_bps, fixedCents: row.fee_fixed_cents },
    processor:
      row.processor === "stripe" && row.processor_settings
        ? (JSON.parse(row.processor_settings) as StripeConnection)
        : null,
    processorSecrets: row.processor_secrets,
    country: row.country,
    legal: { name: row.legal_name ?? null, address: row.legal_address ?? null, taxId: row.tax_id ?? null },
    currency: row.currency ?? DEFAULT_CURRENCY,
    language: row.language && isLanguage(row.language) ? row.language : DEFAULT_LANGUAGE,
    timeZone: row.time_zone ?? "UTC",
    requireTwoFactor: Number(row.require_two_factor ?? 0) === 1,
    branding: { logoUrl: row.logo_url ?? null, color: row.brand_color ?? null },
    receiptDefaults: {
      replyTo: row.receipt_reply_to ?? null,
      subject: row.receipt_subject ?? null,
      message: row.receipt_message ?? null,
    },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function createOrganization(
  db: Db,
  input: { name: string; sandbox?: boolean },
  nowMs: number,
): Promise<Organization> {
  const now = isoAt(nowMs);
  const row: OrganizationsTable = {
    id: prefixedId("org", nowMs),
    name: input.name,
    base_urls: "[]",
    global_custom_inputs: "[]",
    sandbox: input.sandbox ? 1 : 0,
    fee_percent_bps: DEFAULT_FEE_RATE.percentBps,
    fee_fixed_cents: DEFAULT_FEE_RATE.fixedCents,
    processor: null,
    processor_settings: null,
    processor_secrets: null,
    country: DEFAULT_COUNTRY,
    created_at: now,
    updated_at: now,
  };
  await db.insertInto("organizations").values(row).execute();
  return fromRow(row);
}

/** The organization's time zone (an IANA name; UTC when it has none), on whose calendar it bills. */
export async function organizationTimeZone(db: Db, id: string): Promise<string> {
  const row = await db
    .selectFrom("organizations")
    .select("time_zone")
    .where("id", "=", id)
    .executeTakeFirst();
  return row?.time_zone ?? "UTC";
}

export async function getOrganization(db: Db, id: string): Promise<Organization | undefined> {
  const row = await db.selectFrom("organizations").selectAll().where("id", "=", id).executeTakeFirst();
  return row && fromRow(row);
}

/**
 * getOrganization through the store's read cache (readCache.ts), for reads that only use the record (a
 * checkout's fee rate and custom inputs): it is shared and never to be modified.
 */
export function getOrganizationCached(store: Store, id: string): Promise<Organization | undefined> {
  return store.caches.of<Organization>("organizations").get(id, () => getOrganization(store.db, id));
}

export async function listOrganizations(db: Db): Promise<Organization[]> {
  const rows = await db.selectFrom("organizations").selectAll().orderBy("created_at").orderBy("id").execute();
  return rows.map(fromRow);
}

export async function countOrganizations(db: Db): Promise<number> {
  const row = await db
    .selectFrom("organizations")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function updateOrganization(
  db: Db,
  id: string,
  changes: {
    name?: string;
    baseUrls?: string[];
    globalCustomInputs?: GlobalCustomInput[];
    feeRate?: FeeRate;
    country?: string;
    legal?: Partial<OrganizationLegal>;
    currency?: string;
    language?: Language;
    timeZone?: string;
    requireTwoFactor?: boolean;
    branding?: Partial<OrganizationBranding>;
    receiptDefaults?: Partial<ReceiptDefaults>;
  },
  nowMs: number,
): Promise<Organization | undefined> {
  const set: Partial<OrganizationsTable> = { updated_at: isoAt(nowMs) };
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.baseUrls !== undefined) set.base_urls = JSON.stringify(changes.baseUrls);
  if (changes.globalCustomInputs !== undefined)
    set.global_custom_inputs = JSON.stringify(changes.globalCustomInputs);
  if (changes.country !== undefined) set.country = changes.country;
  if (changes.currency !== undefined) set.currency = changes.currency;
  if (changes.language !== undefined) set.language = changes.language;
  if (changes.timeZone !== undefined) set.time_zone = changes.timeZone;
  if (changes.requireTwoFactor !== undefined) set.require_two_factor = changes.requireTwoFactor ? 1 : 0;
  const { branding, receiptDefaults } = changes;
  if (branding?.logoUrl !== undefined) set.logo_url = branding.logoUrl;
  if (branding?.color !== undefined) set.brand_color = branding.color;
  if (receiptDefaults?.replyTo !== undefined) set.receipt_reply_to = receiptDefaults.replyTo;
  if (receiptDefaults?.subject !== undefined) set.receipt_subject = receiptDefaults.subject;
  if (receiptDefaults?.message !== undefined) set.receipt_message = receiptDefaults.message;
  const legal = changes.legal;
  if (legal?.name !== undefined) set.legal_name = legal.name;
  if (legal?.address !== undefined) set.legal_address = legal.address;
  if (legal?.taxId !== undefined) set.tax_id = legal.taxId;
  if (changes.feeRate !== undefined) {
    set.fee_percent_bps = changes.feeRate.percentBps;
    set.fee_fixed_cents = changes.feeRate.fixedCents;
  }
  await db.updateTable("organizations").set(set).where("id", "=", id).execute();
  return getOrganization(db, id);
}

/** Connects (or with null, disconnects) the organization's own processor account. */
export async function setProcessorConnection(
  db: Db,
  organizationId: string,
  connection: { settings: StripeConnection; sealedSecrets: string } | null,
  nowIso: string,
): Promise<boolean> {
  const result = await db
    .updateTable("organizations")
    .set({
      processor: connection ? connection.settings.processor : null,
      processor_settings: connection ? JSON.stringify(connection.settings) : null,
      processor_secrets: connection ? connection.sealedSecrets : null,
      updated_at: nowIso,
    })
    .where("id", "=", organizationId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Every organization's sealed processor secrets (to test the instance's key at start). */
export async function sealedProcessorSecrets(db: Db): Promise<{ organizationId: string; secrets: string }[]> {
  const rows = await db
    .selectFrom("organizations")
    .select(["id", "processor_secrets"])
    .where("processor_secrets", "is not", null)
    .orderBy("id")
    .execute();
  return rows.flatMap((r) =>
    r.processor_secrets ? [{ organizationId: r.id, secrets: r.processor_secrets }] : [],
  );
}

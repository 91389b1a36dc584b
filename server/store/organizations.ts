import { DEFAULT_FEE_RATE, type FeeRate } from "../../shared/pricing.js";
import type { GlobalCustomInput } from "../../shared/schemas/organization.js";
import { prefixedId } from "../ids.js";
import type { Db, Store } from "./database.js";
import { cacheFor, ReadCache } from "./readCache.js";
import type { OrganizationsTable } from "./schema.js";

export interface Organization {
  id: string;
  name: string;
  baseUrls: string[];
  globalCustomInputs: GlobalCustomInput[];
  sandbox: boolean;
  feeRate: FeeRate;
  createdAt: string;
  updatedAt: string;
}

function fromRow(row: OrganizationsTable): Organization {
  return {
    id: row.id,
    name: row.name,
    baseUrls: JSON.parse(row.base_urls),
    globalCustomInputs: JSON.parse(row.global_custom_inputs),
    sandbox: row.sandbox === 1,
    feeRate: { percentBps: row.fee_percent_bps, fixedCents: row.fee_fixed_cents },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function createOrganization(
  db: Db,
  input: { name: string; sandbox?: boolean },
): Promise<Organization> {
  const now = new Date().toISOString();
  const row: OrganizationsTable = {
    id: prefixedId("org"),
    name: input.name,
    base_urls: "[]",
    global_custom_inputs: "[]",
    sandbox: input.sandbox ? 1 : 0,
    fee_percent_bps: DEFAULT_FEE_RATE.percentBps,
    fee_fixed_cents: DEFAULT_FEE_RATE.fixedCents,
    created_at: now,
    updated_at: now,
  };
  await db.insertInto("organizations").values(row).execute();
  return fromRow(row);
}

export async function getOrganization(db: Db, id: string): Promise<Organization | undefined> {
  const row = await db.selectFrom("organizations").selectAll().where("id", "=", id).executeTakeFirst();
  return row && fromRow(row);
}

const orgCaches = new WeakMap<Store, ReadCache<Organization>>();

/**
 * getOrganization through the store's read cache (readCache.ts), for reads that only use the record (a
 * checkout's fee rate and custom inputs): it is shared and never to be modified.
 */
export function getOrganizationCached(store: Store, id: string): Promise<Organization | undefined> {
  const cache = cacheFor(orgCaches, store, () => new ReadCache<Organization>(store.changes, "organizations"));
  return cache.get(id, () => getOrganization(store.db, id));
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
  },
): Promise<Organization | undefined> {
  const set: Partial<OrganizationsTable> = { updated_at: new Date().toISOString() };
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.baseUrls !== undefined) set.base_urls = JSON.stringify(changes.baseUrls);
  if (changes.globalCustomInputs !== undefined)
    set.global_custom_inputs = JSON.stringify(changes.globalCustomInputs);
  if (changes.feeRate !== undefined) {
    set.fee_percent_bps = changes.feeRate.percentBps;
    set.fee_fixed_cents = changes.feeRate.fixedCents;
  }
  await db.updateTable("organizations").set(set).where("id", "=", id).execute();
  return getOrganization(db, id);
}

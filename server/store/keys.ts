import crypto from "node:crypto";
import { PERMISSIONS, type Permission } from "../../shared/enums.js";
import { isoAt } from "../../shared/time.js";
import { prefixedId, randomBase62, sha256Hex } from "../ids.js";
import type { Db, Store } from "./database.js";
import type { ApiKeysTable } from "./schema.js";

/** API keys: shown once at creation, stored only as a SHA-256 hash, looked up by that hash. */

export interface ApiKeyRecord {
  keyId: string;
  organizationId: string;
  prefix: string;
  permissions: Permission[];
  createdAt: string;
  revokedAt: string | null;
  /** What the key is for ("" when unnamed). */
  name: string;
}

const KEY_SHAPE = /^cs_(live|test)_[0-9A-Za-z]{32}$/;

export async function createApiKey(
  db: Db,
  input: { organizationId: string; sandbox: boolean; permissions?: Permission[]; name?: string },
  nowMs: number,
): Promise<{ key: string; record: ApiKeyRecord }> {
  const key = `cs_${input.sandbox ? "test" : "live"}_${randomBase62(32)}`;
  const record: ApiKeyRecord = {
    keyId: prefixedId("key", nowMs),
    organizationId: input.organizationId,
    prefix: key.slice(0, 12),
    permissions: input.permissions ?? [...PERMISSIONS],
    createdAt: isoAt(nowMs),
    revokedAt: null,
    name: input.name ?? "",
  };
  await db
    .insertInto("api_keys")
    .values({
      id: record.keyId,
      organization_id: record.organizationId,
      key_hash: sha256Hex(key),
      key_prefix: record.prefix,
      permissions: JSON.stringify(record.permissions),
      created_at: record.createdAt,
      revoked_at: null,
      name: record.name,
    })
    .execute();
  return { key, record };
}

/**
 * The live key matching a presented secret, or undefined. The lookup is by the secret's hash, so the
 * time it takes reveals nothing about how much of a stored key the guess matched.
 */
export async function findKeyBySecret(db: Db, secret: string): Promise<ApiKeyRecord | undefined> {
  if (!KEY_SHAPE.test(secret)) return undefined;
  const hash = sha256Hex(secret);
  const row = await db.selectFrom("api_keys").selectAll().where("key_hash", "=", hash).executeTakeFirst();
  if (!row || row.revoked_at !== null) return undefined;
  if (!crypto.timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(hash))) return undefined;
  return recordOf(row);
}

/** The key's record if the read cache holds it (see findKeyBySecretCached); never reads the database. */
export function peekKeyBySecret(store: Store, secret: string): ApiKeyRecord | undefined {
  return store.caches.of<ApiKeyRecord>("api_keys").peek(secret);
}

/**
 * findKeyBySecret through the store's read cache (readCache.ts): a key's record is read once, then
 * served from memory until api_keys changes, here or in another process (changes.ts). Unknown and revoked
 * keys are never kept.
 */
export function findKeyBySecretCached(store: Store, secret: string): Promise<ApiKeyRecord | undefined> {
  if (!KEY_SHAPE.test(secret)) return Promise.resolve(undefined);
  const cache = store.caches.of<ApiKeyRecord>("api_keys");
  // Keyed by the presented secret itself: a hit costs no hash. Only live keys are kept (see ReadCache).
  return cache.get(secret, () => findKeyBySecret(store.db, secret));
}

export async function listApiKeys(db: Db, organizationId: string): Promise<ApiKeyRecord[]> {
  const rows = await db
    .selectFrom("api_keys")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  return rows.map(recordOf);
}

function recordOf(row: ApiKeysTable): ApiKeyRecord {
  return {
    keyId: row.id,
    organizationId: row.organization_id,
    prefix: row.key_prefix,
    permissions: JSON.parse(row.permissions),
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    name: row.name ?? "",
  };
}

/** Revokes a key; true when it existed and was live. */
export async function revokeApiKey(db: Db, keyId: string, nowMs: number): Promise<boolean> {
  const result = await db
    .updateTable("api_keys")
    .set({ revoked_at: isoAt(nowMs) })
    .where("id", "=", keyId)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** One of an organization's keys (live or revoked), or undefined. */
export async function findOrganizationKey(
  db: Db,
  organizationId: string,
  keyId: string,
): Promise<ApiKeyRecord | undefined> {
  const row = await db
    .selectFrom("api_keys")
    .selectAll()
    .where("id", "=", keyId)
    .where("organization_id", "=", organizationId)
    .executeTakeFirst();
  return row && recordOf(row);
}

/** The organization a key (live or revoked) belongs to, or undefined for an unknown id. */
export async function keyOrganizationId(db: Db, keyId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("api_keys")
    .select("organization_id")
    .where("id", "=", keyId)
    .executeTakeFirst();
  return row?.organization_id;
}

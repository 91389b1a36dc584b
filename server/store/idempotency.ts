import type { Db } from "./database.js";
import { isUniqueViolation } from "./dialect.js";

/**
 * Idempotency keys (contract 1): the first response to a POST with a given key is kept for 24 hours
 * and replayed to any retry, by whichever process receives it.
 */

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export type IdempotencyClaim =
  | { kind: "new" }
  | { kind: "replay"; status: number; body: string }
  | { kind: "mismatch" }
  | { kind: "in_progress" };

export async function claimIdempotencyKey(
  db: Db,
  organizationId: string,
  key: string,
  requestHash: string,
  nowMs: number,
): Promise<IdempotencyClaim> {
  const expiredBefore = new Date(nowMs - IDEMPOTENCY_TTL_MS).toISOString();
  await db
    .deleteFrom("idempotency_keys")
    .where("organization_id", "=", organizationId)
    .where("idem_key", "=", key)
    .where("created_at", "<", expiredBefore)
    .execute();
  try {
    await db
      .insertInto("idempotency_keys")
      .values({
        organization_id: organizationId,
        idem_key: key,
        request_hash: requestHash,
        status_code: null,
        response_body: null,
        created_at: new Date(nowMs).toISOString(),
      })
      .execute();
    return { kind: "new" };
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
  }
  const row = await db
    .selectFrom("idempotency_keys")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("idem_key", "=", key)
    .executeTakeFirst();
  if (!row) return claimIdempotencyKey(db, organizationId, key, requestHash, nowMs);
  if (row.request_hash !== requestHash) return { kind: "mismatch" };
  if (row.status_code === null || row.response_body === null) return { kind: "in_progress" };
  return { kind: "replay", status: row.status_code, body: row.response_body };
}

export async function completeIdempotencyKey(
  db: Db,
  organizationId: string,
  key: string,
  status: number,
  body: string,
): Promise<void> {
  await db
    .updateTable("idempotency_keys")
    .set({ status_code: status, response_body: body })
    .where("organization_id", "=", organizationId)
    .where("idem_key", "=", key)
    .execute();
}

/** Forgets a claim whose request failed on our side, so that the client's retry runs afresh. */
export async function releaseIdempotencyKey(db: Db, organizationId: string, key: string): Promise<void> {
  await db
    .deleteFrom("idempotency_keys")
    .where("organization_id", "=", organizationId)
    .where("idem_key", "=", key)
    .where("status_code", "is", null)
    .execute();
}

export async function pruneIdempotencyKeys(db: Db, nowMs: number): Promise<void> {
  await db
    .deleteFrom("idempotency_keys")
    .where("created_at", "<", new Date(nowMs - IDEMPOTENCY_TTL_MS).toISOString())
    .execute();
}

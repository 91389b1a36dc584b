import { isoAt } from "../../shared/time.js";
import type { Db } from "./database.js";
import { isUniqueViolation } from "./dialect.js";

/**
 * Idempotency keys: the answer of a POST that ran is kept for 24 hours and replayed to
 * any retry with the same key, by whichever process receives it. A request refused before it ran
 * (validation) keeps nothing; see server/api/route.ts for which answers are kept.
 */

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** What a key already holds, compared with this request. */
export type IdempotencyPrior =
  | { kind: "replay"; status: number; body: string }
  | { kind: "mismatch" }
  | { kind: "in_progress" };

export type IdempotencyClaim = { kind: "new" } | IdempotencyPrior;

/**
 * The key's earlier use, if it has one (forgetting it once 24 hours old): its answer to replay, a
 * mismatch when it was used for another request, or "in progress" while that request still runs.
 */
export async function findIdempotencyKey(
  db: Db,
  organizationId: string,
  key: string,
  /** The request's fingerprints: a key stored with any of them is this request's. */
  requestHashes: readonly string[],
  nowMs: number,
): Promise<IdempotencyPrior | undefined> {
  const row = await db
    .selectFrom("idempotency_keys")
    .select(["request_hash", "status_code", "response_body", "created_at"])
    .where("organization_id", "=", organizationId)
    .where("idem_key", "=", key)
    .executeTakeFirst();
  if (!row) return undefined;
  const expiredBefore = isoAt(nowMs - IDEMPOTENCY_TTL_MS);
  if (row.created_at < expiredBefore) {
    await db
      .deleteFrom("idempotency_keys")
      .where("organization_id", "=", organizationId)
      .where("idem_key", "=", key)
      .where("created_at", "<", expiredBefore)
      .execute();
    return undefined;
  }
  if (!requestHashes.includes(row.request_hash)) return { kind: "mismatch" };
  if (row.status_code === null || row.response_body === null) return { kind: "in_progress" };
  return { kind: "replay", status: row.status_code, body: row.response_body };
}

/**
 * Claims a key for a request about to run (after `findIdempotencyKey` found it free): "new", or, when
 * a concurrent request claimed it first, what that one holds.
 */
export async function claimIdempotencyKey(
  db: Db,
  organizationId: string,
  key: string,
  /** The request's fingerprints, the first one stored. */
  requestHashes: readonly string[],
  nowMs: number,
): Promise<IdempotencyClaim> {
  try {
    await db
      .insertInto("idempotency_keys")
      .values({
        organization_id: organizationId,
        idem_key: key,
        request_hash: requestHashes[0],
        status_code: null,
        response_body: null,
        created_at: isoAt(nowMs),
      })
      .execute();
    return { kind: "new" };
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
  }
  const prior = await findIdempotencyKey(db, organizationId, key, requestHashes, nowMs);
  return prior ?? claimIdempotencyKey(db, organizationId, key, requestHashes, nowMs);
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
    .where("created_at", "<", isoAt(nowMs - IDEMPOTENCY_TTL_MS))
    .execute();
}

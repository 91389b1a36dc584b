import { isoAt } from "../../shared/time.js";
import type { Db } from "./database.js";
import { pruneIdempotencyKeys } from "./idempotency.js";
import { pruneLedger } from "./processorLedger.js";
import { pruneRateLimits } from "./rateLimits.js";

const METRICS_RETENTION_MS = 90 * 24 * 60 * 60 * 1000;

/**
 * Deletes what has expired: old rate-limit buckets, idempotency keys past 24 h, the processor ledger's
 * expired entries, metrics past 90 days, the donor portal's expired sign-in links and sessions.
 */
export async function pruneExpired(db: Db, nowMs: number): Promise<void> {
  await pruneRateLimits(db, nowMs);
  await pruneIdempotencyKeys(db, nowMs);
  await pruneLedger(db, nowMs);
  await db
    .deleteFrom("api_metrics")
    .where("created_at", "<", isoAt(nowMs - METRICS_RETENTION_MS))
    .execute();
  const now = isoAt(nowMs);
  await db.deleteFrom("donor_links").where("expires_at", "<=", now).execute();
  await db.deleteFrom("donor_sessions").where("expires_at", "<=", now).execute();
}

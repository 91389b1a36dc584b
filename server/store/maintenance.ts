import { isoAt } from "../../shared/time.js";
import type { Db } from "./database.js";
import { pruneIdempotencyKeys } from "./idempotency.js";
import { pruneLedger } from "./processorLedger.js";
import { pruneRateLimits } from "./rateLimits.js";

const METRICS_RETENTION_MS = 90 * 24 * 60 * 60 * 1000;
/**
 * How long a sent (or given up) e-mail that belongs to no payment is kept: sign-in, set-up and reset links,
 * invitations, test receipts. Their links are long expired by then, and nothing reads them again; a
 * receipt (it names its payment) stays, for the resend's rate limit and the record.
 */
const LINK_MAIL_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Deletes what has expired: old rate-limit buckets, idempotency keys past 24 h, the processor ledger's
 * expired entries, metrics past 90 days, the donor portal's expired sign-in links and sessions, and sent
 * e-mails of no payment (the ones that carried links) past 30 days.
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
  await db
    .deleteFrom("email_outbox")
    .where("payment_id", "is", null)
    .where("status", "!=", "PENDING")
    .where("created_at", "<", isoAt(nowMs - LINK_MAIL_RETENTION_MS))
    .execute();
}

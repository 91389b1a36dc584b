import { isoAt } from "../../shared/time.js";
import { sha256Hex } from "../ids.js";
import type { Store } from "../store/database.js";
import {
  countAttempt,
  failureKeys,
  refuseCommonPassword,
  SESSION_IDLE_HOURS,
  sessionIdOf,
  useUpResetLinks,
} from "./accounts.js";
import { hashPassword, verifyPassword } from "./passwords.js";
import { recordAccountChange, recordFailedSignIn } from "./signInAudit.js";
import { StaffError } from "./staffError.js";

/**
 * A person's own signed-in sessions: listed (by a public id made from the start of the token's hash, never
 * the token), ended one by one, and all but the current one ended by a password change.
 */

const HOUR = 3_600_000;
const SESSION_ID = /^ses_[0-9a-f]{24}$/;

export interface SessionView {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  userAgent: string | null;
  clientIp: string | null;
}

/** The person's live sessions (not ended, not expired, not idle), newest first. */
export async function listSessions(store: Store, userId: string, nowMs: number): Promise<SessionView[]> {
  const rows = await store.db
    .selectFrom("staff_sessions")
    .select(["token_hash", "created_at", "last_seen_at", "expires_at", "user_agent", "client_ip"])
    .where("user_id", "=", userId)
    .where("revoked_at", "is", null)
    .where("expires_at", ">", isoAt(nowMs))
    .where("last_seen_at", ">", isoAt(nowMs - SESSION_IDLE_HOURS * HOUR))
    .orderBy("created_at", "desc")
    .orderBy("token_hash")
    .limit(200)
    .execute();
  return rows.map((r) => ({
    id: sessionIdOf(r.token_hash),
    createdAt: r.created_at,
    lastSeenAt: r.last_seen_at,
    expiresAt: r.expires_at,
    userAgent: r.user_agent ?? null,
    clientIp: r.client_ip ?? null,
  }));
}

/** Ends one of the person's own live sessions; another person's, or none: a "notFound" StaffError. */
export async function revokeSession(store: Store, userId: string, id: string, nowMs: number): Promise<void> {
  const notFound = new StaffError("notFound", "Session not found");
  if (!SESSION_ID.test(id)) throw notFound;
  const live = await listSessions(store, userId, nowMs);
  const session = live.find((s) => s.id === id);
  if (!session) throw notFound;
  const ended = await store.db
    .updateTable("staff_sessions")
    .set({ revoked_at: isoAt(nowMs) })
    .where("user_id", "=", userId)
    .where("token_hash", "like", `${id.slice("ses_".length)}%`)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  if (Number(ended.numUpdatedRows) === 0) throw notFound;
}

/**
 * Changes the signed-in person's password: the current one is checked (a wrong one counts as a failed
 * sign-in, and the same limit applies), the new one must not be common; every other session ends, and
 * every unused password-reset link.
 */
export async function changePassword(
  store: Store,
  input: {
    userId: string;
    email: string;
    currentToken: string;
    currentPassword: string;
    newPassword: string;
    clientIp: string;
    nowMs: number;
  },
): Promise<void> {
  const attempt = await countAttempt(store, failureKeys(input.email, input.clientIp), input.nowMs);
  try {
    const user = await store.db
      .selectFrom("staff_users")
      .select("password_hash")
      .where("id", "=", input.userId)
      .executeTakeFirst();
    const ok =
      user?.password_hash != null && (await verifyPassword(input.currentPassword, user.password_hash));
    if (!ok) {
      await attempt.failed();
      await recordFailedSignIn(
        store,
        { userId: input.userId, email: input.email, clientIp: input.clientIp },
        "password",
        input.nowMs,
      );
      throw new StaffError("code", "The current password is wrong");
    }
  } finally {
    await attempt.release();
  }
  refuseCommonPassword(input.newPassword);
  const hash = await hashPassword(input.newPassword);
  const now = isoAt(input.nowMs);
  await store.db.transaction().execute(async (trx) => {
    await trx
      .updateTable("staff_users")
      .set({ password_hash: hash, updated_at: now })
      .where("id", "=", input.userId)
      .execute();
    await trx
      .updateTable("staff_sessions")
      .set({ revoked_at: now })
      .where("user_id", "=", input.userId)
      .where("token_hash", "!=", sha256Hex(input.currentToken))
      .where("revoked_at", "is", null)
      .execute();
    await useUpResetLinks(trx, input.userId, now);
    await recordAccountChange(trx, input.userId, "staff.password_changed", input.nowMs);
  });
}

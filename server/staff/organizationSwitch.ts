import { isoAt } from "../../shared/time.js";
import { newSecretToken, sha256Hex } from "../ids.js";
import type { Store } from "../store/database.js";
import { findStaffSession, notMember, type SessionOrigin, sessionRow } from "./accounts.js";
import { joinedOrganizations } from "./memberships.js";
import { recordSignIn } from "./signInAudit.js";
import { StaffError } from "./staffError.js";

/**
 * A person on the staff of several organizations moves their session to another they have joined: the
 * session ends and a new one opens there (a new token, the same absolute end), written in that
 * organization's audit log as a sign-in `via: "switch"`. Nothing changes for the organization already
 * signed in to.
 */
export async function switchOrganization(
  store: Store,
  input: { token: string; organizationId: string; nowMs: number; origin: SessionOrigin },
): Promise<{ sessionToken: string }> {
  const ended = new StaffError("credentials", "Not signed in, or the session has ended: sign in again");
  const session = await findStaffSession(store, input.token, input.nowMs);
  if (!session) throw ended;
  if (session.organizationId === input.organizationId) return { sessionToken: input.token };
  if (!(await joinedOrganizations(store.db, session.userId, input.organizationId)).length) throw notMember();
  const sessionToken = newSecretToken();
  await store.db.transaction().execute(async (trx) => {
    const old = await trx
      .updateTable("staff_sessions")
      .set({ revoked_at: isoAt(input.nowMs) })
      .where("token_hash", "=", sha256Hex(input.token))
      .where("revoked_at", "is", null)
      .returning("expires_at")
      .executeTakeFirst();
    // Ended meanwhile (signed out elsewhere, a password change): no new session.
    if (!old) throw ended;
    const row = sessionRow(sessionToken, session.userId, input.organizationId, input.nowMs, input.origin);
    await trx
      .insertInto("staff_sessions")
      .values({ ...row, expires_at: old.expires_at })
      .execute();
    await recordSignIn(
      trx,
      input.organizationId,
      { userId: session.userId, email: session.email, clientIp: input.origin.clientIp ?? null },
      input.nowMs,
      "switch",
    );
  });
  return { sessionToken };
}

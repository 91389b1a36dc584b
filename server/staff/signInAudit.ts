import { type AuditActor, recordAudit } from "../store/auditLog.js";
import type { Db, Store } from "../store/database.js";
import { joinedHere } from "./memberships.js";

/**
 * Sign-ins in the audit log. A sign-in is written in the organization signed in to, in the transaction
 * that opens the session. A failed sign-in is written under every organization the address's person
 * belongs to (each Owner sees the attempts on their own people), named by the account tried, which says
 * who was tried, not who tried; an address that is nobody's is not written anywhere (no organization's
 * log holds it), though it still counts towards the failure limits.
 */

export interface SignInAttempt {
  userId: string;
  email: string;
  clientIp: string | null;
}

/**
 * How a session was opened: e-mail and password, a set-up link, a password-reset link, or moved from the
 * person's session in another organization.
 */
export type SignInWay = "password" | "setup" | "reset" | "switch";

const actorOf = (attempt: SignInAttempt): AuditActor => ({
  type: "staff",
  userId: attempt.userId,
  email: attempt.email,
});

/** A session opened in `organizationId`, in the caller's transaction. */
export async function recordSignIn(
  trx: Db,
  organizationId: string,
  attempt: SignInAttempt,
  nowMs: number,
  via: SignInWay = "password",
): Promise<void> {
  await recordAudit(
    trx,
    {
      organizationId,
      actor: actorOf(attempt),
      action: "staff.signed_in",
      subjectType: "staff_user",
      subjectId: attempt.userId,
      before: {},
      after: { clientIp: attempt.clientIp, via },
    },
    nowMs,
  );
}

/**
 * A session opened by a link (set-up or password reset) in `organizationId`, in the caller's transaction;
 * the person's address is read there.
 */
export async function recordLinkSignIn(
  trx: Db,
  session: { userId: string; organizationId: string; clientIp?: string },
  via: Exclude<SignInWay, "password" | "switch">,
  nowMs: number,
): Promise<void> {
  const person = await trx
    .selectFrom("staff_users")
    .select("email")
    .where("id", "=", session.userId)
    .executeTakeFirstOrThrow();
  const attempt = { userId: session.userId, email: person.email, clientIp: session.clientIp ?? null };
  await recordSignIn(trx, session.organizationId, attempt, nowMs, via);
}

/** A refused sign-in of a person's account: a wrong password, or a wrong second-factor code. */
export async function recordFailedSignIn(
  store: Store,
  attempt: SignInAttempt,
  reason: "password" | "code",
  nowMs: number,
): Promise<void> {
  await store.db.transaction().execute(async (trx) => {
    // Organizations the person has joined only: one that has merely invited the address learns nothing of
    // its sign-ins elsewhere.
    const memberships = await trx
      .selectFrom("staff_memberships")
      .innerJoin("staff_users", "staff_users.id", "staff_memberships.user_id")
      .select("staff_memberships.organization_id")
      .where("staff_memberships.user_id", "=", attempt.userId)
      .where((eb) => joinedHere(eb))
      .execute();
    for (const { organization_id } of memberships)
      await recordAudit(
        trx,
        {
          organizationId: organization_id,
          actor: actorOf(attempt),
          action: "staff.sign_in_failed",
          subjectType: "staff_user",
          subjectId: attempt.userId,
          before: {},
          after: { clientIp: attempt.clientIp, reason },
        },
        nowMs,
      );
  });
}

/** A change of how a person signs in: their password, or their second factor turned on or off. */
export type AccountChange =
  | "staff.password_changed"
  | "staff.two_factor_enabled"
  | "staff.two_factor_disabled";

/**
 * A change of a person's sign-in, in the caller's transaction, written under every organization the person
 * has joined (as a failed sign-in is: each Owner sees what happens to the accounts of their people). The
 * actor is the person, or the system for the operator's command line.
 */
export async function recordAccountChange(
  trx: Db,
  userId: string,
  action: AccountChange,
  nowMs: number,
  by: "self" | "system" = "self",
): Promise<void> {
  const memberships = await trx
    .selectFrom("staff_memberships")
    .innerJoin("staff_users", "staff_users.id", "staff_memberships.user_id")
    .select(["staff_memberships.organization_id", "staff_users.email"])
    .where("staff_memberships.user_id", "=", userId)
    .where((eb) => joinedHere(eb))
    .execute();
  for (const { organization_id, email } of memberships)
    await recordAudit(
      trx,
      {
        organizationId: organization_id,
        actor: by === "system" ? { type: "system" } : { type: "staff", userId, email },
        action,
        subjectType: "staff_user",
        subjectId: userId,
        before: {},
        after: {},
      },
      nowMs,
    );
}

import { sql } from "kysely";
import { emailKey } from "../../shared/email.js";
import type { Permission } from "../../shared/enums.js";
import { STAFF_ROLES, type StaffRole } from "../../shared/schemas/staff.js";
import { isoAt } from "../../shared/time.js";
import { isSecretToken, newSecretToken, prefixedId, sha256Hex, undatedId } from "../ids.js";
import type { SecretBox } from "../secrets.js";
import { type AuditActor, recordAudit, SYSTEM_ACTOR } from "../store/auditLog.js";
import type { Db, Store } from "../store/database.js";
import { isCommonPassword } from "./commonPasswords.js";
import { joinedOrganizations } from "./memberships.js";
import { decoyHash, hashPassword, needsRehash, verifyPassword } from "./passwords.js";
import { ROLE_PERMISSIONS } from "./roles.js";
import { recordAccountChange, recordFailedSignIn, recordLinkSignIn, recordSignIn } from "./signInAudit.js";
import { StaffError } from "./staffError.js";
import { enrolmentRequired, useSecondFactor } from "./twoFactor.js";

/** The person's membership of the organization (its role), or undefined when they are not a member. */
export function membershipRole(db: Db, userId: string, organizationId: string) {
  return db
    .selectFrom("staff_memberships")
    .select("role")
    .where("user_id", "=", userId)
    .where("organization_id", "=", organizationId)
    .executeTakeFirst();
}

/**
 * The organization's staff: a person (one per e-mail address) has a role in each organization they belong
 * to. The first Owner comes from the command line with a single-use set-up link (24 hours) that sets their
 * password; then they sign in with e-mail and password. A session is an opaque random token kept hashed,
 * ended by sign-out, 8 hours without use, or 7 days after sign-in. Failed sign-ins are counted per
 * address and per client address: 10 in 15 minutes, then the next is refused until the oldest is older.
 */

export const SETUP_LINK_HOURS = 24;
export const SESSION_IDLE_HOURS = 8;
export const SESSION_MAX_DAYS = 7;
export const FAILED_SIGN_INS_ALLOWED = 10;
export const FAILURE_WINDOW_MINUTES = 15;
/** The dashboard's set-up page, where a set-up link leads. */
export const SETUP_PAGE_PATH = "/dashboard/setup";

const HOUR = 3_600_000;

/** Where a session was opened from, as its person's sessions list shows it. */
export interface SessionOrigin {
  userAgent?: string;
  clientIp?: string;
}

/** A new password must not be one of those guessed first (commonPasswords.ts). */
export function refuseCommonPassword(password: string): void {
  if (isCommonPassword(password))
    throw new StaffError(
      "password",
      "This password is among those tried first by anyone guessing: one of the most commonly used passwords (or one with digits or symbols added), a character or short pattern repeated, or a straight run such as abcdef, 123456 or qwerty: choose another",
    );
}

export { StaffError };

export interface StaffSession {
  userId: string;
  email: string;
  organizationId: string;
  role: StaffRole;
  /** Empty while `twoFactorEnrolmentRequired`: such a session reaches nothing but enrolment. */
  permissions: ReadonlySet<Permission>;
  /** The session's public id (`ses_…`, from its token's hash; never the token). */
  sessionId: string;
  twoFactorEnabled: boolean;
  /** The organization requires TOTP of this role and the person has not enrolled. */
  twoFactorEnrolmentRequired: boolean;
}

/** A session's public id: the start of its token's hash (which is not the token, and opens nothing). */
export const sessionIdOf = (tokenHash: string): string => `ses_${tokenHash.slice(0, 24)}`;

/**
 * Makes `email` a member of the organization with `role` (the person is created if new) and returns a
 * single-use set-up link. A person already in the organization is refused: their role is changed elsewhere.
 */
export async function createStaffMember(
  store: Store,
  input: {
    organizationId: string;
    email: string;
    role: StaffRole;
    publicUrl: string;
    nowMs: number;
    /** Who adds the person, for the audit log; the system (the command line) when left out. */
    actor?: AuditActor;
  },
): Promise<{ userId: string; setupUrl: string; expiresAt: string }> {
  const key = emailKey(input.email);
  const now = isoAt(input.nowMs);
  const token = newSecretToken();
  const expiresAt = isoAt(input.nowMs + SETUP_LINK_HOURS * HOUR);
  const userId = await store.db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom("staff_users")
      .select("id")
      .where("email_key", "=", key)
      .executeTakeFirst();
    // Undated: the id is shown to every organization that invites the person, and a date in it would tell
    // them the account was made before (by another organization).
    const id = existing?.id ?? undatedId("usr");
    if (!existing)
      await trx
        .insertInto("staff_users")
        .values({
          id,
          email_key: key,
          email: input.email.trim(),
          password_hash: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
    const member = await membershipRole(trx, id, input.organizationId);
    if (member)
      throw new StaffError("member", `${input.email.trim()} is already a member of this organization`);
    await trx
      .insertInto("staff_memberships")
      .values({
        user_id: id,
        organization_id: input.organizationId,
        role: input.role,
        created_at: now,
        invited_email: input.email.trim(),
      })
      .execute();
    await recordAudit(
      trx,
      {
        organizationId: input.organizationId,
        actor: input.actor ?? SYSTEM_ACTOR,
        action: "staff.invited",
        subjectType: "staff_user",
        subjectId: id,
        before: {},
        after: { email: input.email.trim(), role: input.role },
      },
      input.nowMs,
    );
    await trx
      .insertInto("staff_tokens")
      .values({
        token_hash: sha256Hex(token),
        user_id: id,
        organization_id: input.organizationId,
        kind: "setup",
        expires_at: expiresAt,
        used_at: null,
        created_at: now,
      })
      .execute();
    return id;
  });
  return { userId, setupUrl: `${input.publicUrl}${SETUP_PAGE_PATH}?token=${token}`, expiresAt };
}

/** The refusal of a set-up or reset link that is used, expired or unknown. */
export function deadLink(kind: "setup" | "reset"): StaffError {
  return new StaffError(
    "token",
    kind === "setup"
      ? "This set-up link has been used or has expired: ask an Owner for a new one"
      : "This reset link has been used or has expired: ask for a new one",
  );
}

/**
 * The live link of `token` (of `kind`, not used, not expired) joined to its person, for the caller to
 * select from: a set-up's or reset's use, and the look at whose it is, read it the same way.
 */
export function liveLink(db: Db, token: string, kind: "setup" | "reset", nowMs: number) {
  return db
    .selectFrom("staff_tokens")
    .innerJoin("staff_users", "staff_users.id", "staff_tokens.user_id")
    .where("staff_tokens.token_hash", "=", sha256Hex(token))
    .where("staff_tokens.kind", "=", kind)
    .where("staff_tokens.used_at", "is", null)
    .where("staff_tokens.expires_at", ">", isoAt(nowMs));
}

/**
 * Uses a set-up link: sets the person's password and signs them in. A used or expired link: a "token"
 * StaffError. A set-up link sets a password only while the person has none: a person who already has one
 * (invited to another organization, or who chose a password with a reset link since) gets a
 * "signInRequired" StaffError, and the link stays live for a sign-in with their own password (and code)
 * that accepts it (signIn's `invitation`).
 */
export async function completeSetup(
  store: Store,
  token: string,
  password: string,
  nowMs: number,
  origin: SessionOrigin = {},
): Promise<{ sessionToken: string }> {
  const refused = deadLink("setup");
  if (!isSecretToken(token)) throw refused;
  // A cheap look first: hashing a password costs time no unknown link should buy.
  const live = await liveLink(store.db, token, "setup", nowMs)
    .select("staff_users.password_hash")
    .executeTakeFirst();
  if (!live) throw refused;
  if (live.password_hash != null) throw signInInstead();
  refuseCommonPassword(password);
  const hash = await hashPassword(password);
  return redeemPasswordLink(store, { token, kind: "setup", passwordHash: hash, nowMs, origin }, refused);
}

/**
 * Whose a live set-up or reset link is, for its page to say before anything is typed: the person's
 * address, the organization it opens, and (set-up links) whether the person signs in with a password they
 * already have. A link used, expired or unknown is the same refusal its use would get.
 */
export async function describePasswordLink(
  store: Store,
  token: string,
  kind: "setup" | "reset",
  nowMs: number,
): Promise<{ email: string; organizationName: string; signInRequired: boolean }> {
  const refused = deadLink(kind);
  if (!isSecretToken(token)) throw refused;
  const live = await liveLink(store.db, token, kind, nowMs)
    .innerJoin("organizations", "organizations.id", "staff_tokens.organization_id")
    .select(["staff_users.email", "staff_users.password_hash", "organizations.name"])
    .executeTakeFirst();
  if (!live) throw refused;
  return {
    email: live.email,
    organizationName: live.name,
    signInRequired: kind === "setup" && live.password_hash != null,
  };
}

/** The answer to a set-up link of a person who already has a password. */
const signInInstead = () =>
  new StaffError(
    "signInRequired",
    "This address already has a password here: sign in with it (and your code, if you use one) to accept the invitation",
  );

/**
 * Uses a single-use link (set-up or password reset) and what it opens, in one transaction: the link is taken
 * by one conditional update (a link used twice at once sets one password), the password is set (by a
 * set-up link only while the person has none: else "signInRequired" and nothing changes), every earlier
 * session of the person's ends, every reset link asked for before is used up, and a new session
 * opens, written to the audit log as a sign-in by that link. `refused` when the link is not live.
 */
export function redeemPasswordLink(
  store: Store,
  input: {
    token: string;
    kind: "setup" | "reset";
    passwordHash: string;
    nowMs: number;
    origin: SessionOrigin;
  },
  refused: StaffError,
): Promise<{ sessionToken: string }> {
  const now = isoAt(input.nowMs);
  return store.db.transaction().execute(async (trx) => {
    const used = await trx
      .updateTable("staff_tokens")
      .set({ used_at: now })
      .where("token_hash", "=", sha256Hex(input.token))
      .where("kind", "=", input.kind)
      .where("used_at", "is", null)
      .where("expires_at", ">", now)
      .returning(["user_id", "organization_id"])
      .executeTakeFirst();
    if (!used) throw refused;
    // A link opens its organization only to a member of it.
    const member = await membershipRole(trx, used.user_id, used.organization_id);
    if (!member) throw refused;
    let setPassword = trx
      .updateTable("staff_users")
      .set({ password_hash: input.passwordHash, updated_at: now })
      .where("id", "=", used.user_id);
    if (input.kind === "setup") setPassword = setPassword.where("password_hash", "is", null);
    const set = await setPassword.executeTakeFirst();
    if (Number(set.numUpdatedRows) !== 1) throw input.kind === "setup" ? signInInstead() : refused;
    // Reset links asked for before this (an invited person may ask for one) would undo the new password.
    await useUpResetLinks(trx, used.user_id, now);
    await trx
      .updateTable("staff_sessions")
      .set({ revoked_at: now })
      .where("user_id", "=", used.user_id)
      .where("revoked_at", "is", null)
      .execute();
    const sessionToken = newSecretToken();
    await trx
      .insertInto("staff_sessions")
      .values(sessionRow(sessionToken, used.user_id, used.organization_id, input.nowMs, input.origin))
      .execute();
    const session = {
      userId: used.user_id,
      organizationId: used.organization_id,
      clientIp: input.origin.clientIp,
    };
    await recordLinkSignIn(trx, session, input.kind, input.nowMs);
    // A reset is a change of the person's password, as a change on the account page is.
    if (input.kind === "reset")
      await recordAccountChange(trx, used.user_id, "staff.password_changed", input.nowMs);
    return { sessionToken };
  });
}

export function sessionRow(
  token: string,
  userId: string,
  organizationId: string,
  nowMs: number,
  origin: SessionOrigin = {},
) {
  return {
    token_hash: sha256Hex(token),
    user_id: userId,
    organization_id: organizationId,
    created_at: isoAt(nowMs),
    last_seen_at: isoAt(nowMs),
    expires_at: isoAt(nowMs + SESSION_MAX_DAYS * 24 * HOUR),
    revoked_at: null,
    user_agent: origin.userAgent?.slice(0, 500) ?? null,
    client_ip: origin.clientIp?.slice(0, 100) ?? null,
  };
}

/** Advisory-lock class of the failed sign-in counts on PostgreSQL (the second number is the key's hash). */
const ATTEMPT_LOCK_CLASS = 0x5f10;

/**
 * A check of a password or code, counted before it is made. The count of the keys' recent failures and
 * the attempt's own record are written in one transaction that holds the keys' lock (SQLite's write lock;
 * on PostgreSQL an advisory lock per key), so attempts made at once, by any number of processes, never
 * number more than the limit. A check that fails keeps the record as a failure (`failed`); `release`
 * takes it back otherwise (a success, a missing code, an error), so only failures count.
 */
export class CountedAttempt {
  private kept = false;
  constructor(
    private readonly store: Store,
    private ids: string[],
    private readonly nowMs: number,
  ) {}

  /** The password or code was wrong: the attempt stays counted as a failure. */
  async failed(): Promise<void> {
    this.kept = true;
    await this.store.db
      .deleteFrom("staff_login_failures")
      .where("created_at", "<", isoAt(this.nowMs - 24 * HOUR))
      .execute();
  }

  /** Takes the attempt back unless it failed; the second call does nothing. */
  async release(): Promise<void> {
    const ids = this.ids;
    this.ids = [];
    if (this.kept || ids.length === 0) return;
    await this.store.db.deleteFrom("staff_login_failures").where("id", "in", ids).execute();
  }
}

/**
 * Counts an attempt under each key (the address, the client address) before its check is made. While a
 * key already has 10 attempts in the last 15 minutes (failures, and attempts being checked), the attempt
 * is refused: a "throttled" StaffError whose wait ends when the oldest of them leaves the window.
 */
export async function countAttempt(store: Store, keys: string[], nowMs: number): Promise<CountedAttempt> {
  const since = isoAt(nowMs - FAILURE_WINDOW_MINUTES * 60_000);
  const now = isoAt(nowMs);
  const rows = keys.map((key) => ({ id: prefixedId("log", nowMs), key, created_at: now }));
  await store.transact(async (trx) => {
    if (store.dialect === "postgres")
      for (const key of [...keys].sort())
        await sql`select pg_advisory_xact_lock(${ATTEMPT_LOCK_CLASS}, hashtext(${key}))`.execute(trx);
    for (const key of keys) {
      const recent = await trx
        .selectFrom("staff_login_failures")
        .select("created_at")
        .where("key", "=", key)
        .where("created_at", ">", since)
        .orderBy("created_at", "desc")
        .limit(FAILED_SIGN_INS_ALLOWED)
        .execute();
      if (recent.length < FAILED_SIGN_INS_ALLOWED) continue;
      // Free again once the oldest of the last ten leaves the window.
      const oldest = Date.parse(recent[recent.length - 1].created_at);
      const retry = Math.max(1, Math.ceil((oldest + FAILURE_WINDOW_MINUTES * 60_000 - nowMs) / 1000));
      const minutes = Math.ceil(retry / 60);
      throw new StaffError(
        "throttled",
        `Too many failed sign-ins: try again in ${minutes} minute${minutes === 1 ? "" : "s"}`,
        retry,
      );
    }
    await trx.insertInto("staff_login_failures").values(rows).execute();
  });
  return new CountedAttempt(
    store,
    rows.map((r) => r.id),
    nowMs,
  );
}

/** The keys failed sign-ins are counted under: the address and the client address. */
export const failureKeys = (email: string, clientIp: string): string[] => [
  `email:${emailKey(email)}`,
  `ip:${clientIp}`,
];

/**
 * Signs a person in with e-mail and password, in `organizationId` (one they have joined; else a
 * "notMember" StaffError, told only once the password and code are right) or the organization they joined
 * first. An unknown address
 * and a wrong password are the same refusal and cost the same time. A person with TOTP on also gives a
 * `code` (6 digits of now, or a recovery code): without one the refusal says a code is wanted (and counts
 * for nothing); a wrong or used one counts as a failed sign-in. With `invitation` (the token of a set-up
 * link of the person's, who has a password already) the sign-in, once every check has passed, uses the
 * link up and opens the session in the link's organization; a link not live (used, expired, another
 * person's): a "token" StaffError and no session.
 */
export async function signIn(
  store: Store,
  input: {
    email: string;
    password: string;
    code?: string;
    invitation?: string;
    organizationId?: string;
    clientIp: string;
    userAgent?: string;
    nowMs: number;
    secrets: SecretBox;
  },
): Promise<{ sessionToken: string }> {
  const key = emailKey(input.email);
  const attempt = await countAttempt(store, failureKeys(input.email, input.clientIp), input.nowMs);
  try {
    const person = await store.db
      .selectFrom("staff_users")
      .innerJoin("staff_memberships", "staff_memberships.user_id", "staff_users.id")
      .select([
        "staff_users.id",
        "staff_users.email",
        "staff_users.password_hash",
        "staff_users.totp_secret",
        "staff_memberships.organization_id",
      ])
      .where("staff_users.email_key", "=", key)
      .orderBy("staff_memberships.created_at")
      .limit(1)
      .executeTakeFirst();
    const stored = person?.password_hash ?? (await decoyHash());
    // A hash made with older, cheaper settings is checked while today's hash of the same password is made
    // (the thread pool runs both at once): the answer takes as long as for an unknown address, whose decoy
    // has today's settings, and the new hash replaces the old one once the sign-in succeeds.
    const upgrade =
      person?.password_hash != null && needsRehash(stored) ? hashPassword(input.password) : undefined;
    const [verified, rehashed] = await Promise.all([verifyPassword(input.password, stored), upgrade]);
    const ok = verified && person?.password_hash != null;
    const who = person && { userId: person.id, email: person.email, clientIp: input.clientIp };
    if (!person || !who || !ok) {
      await attempt.failed();
      if (who) await recordFailedSignIn(store, who, "password", input.nowMs);
      throw new StaffError("credentials", "Wrong e-mail address or password");
    }
    if (person.totp_secret != null) {
      if (input.code === undefined || input.code.trim() === "")
        throw new StaffError(
          "twoFactor",
          "Enter the 6-digit code from your authenticator app, or a recovery code",
        );
      if (!(await useSecondFactor(store, input.secrets, person.id, input.code, input.nowMs))) {
        await attempt.failed();
        await recordFailedSignIn(store, who, "code", input.nowMs);
        throw new StaffError("twoFactor", "The code is wrong or has already been used");
      }
    }
    // Without an invitation, only an organization the person has joined (the first they joined when none
    // is asked for): a pending invitation is accepted with its link, never by an everyday sign-in.
    let target: { organizationId: string } | { invitation: string };
    if (input.invitation === undefined) {
      const first = (await joinedOrganizations(store.db, person.id, input.organizationId))[0];
      if (!first) throw notMember();
      target = { organizationId: first.id };
    } else target = { invitation: input.invitation };
    if (rehashed !== undefined)
      await store.db
        .updateTable("staff_users")
        .set({ password_hash: rehashed })
        .where("id", "=", person.id)
        // A change of password in the meantime (another hash) is left as it is.
        .where("password_hash", "=", stored)
        .execute();
    const sessionToken = newSecretToken();
    // The session, the invitation it accepts and its audit-log entry are one.
    await store.db.transaction().execute(async (trx) => {
      const organizationId =
        "organizationId" in target
          ? target.organizationId
          : await acceptInvitation(trx, person.id, target.invitation, input.nowMs, input.organizationId);
      await trx
        .insertInto("staff_sessions")
        .values(
          sessionRow(sessionToken, person.id, organizationId, input.nowMs, {
            userAgent: input.userAgent,
            clientIp: input.clientIp,
          }),
        )
        .execute();
      await recordSignIn(trx, organizationId, who, input.nowMs);
    });
    return { sessionToken };
  } finally {
    await attempt.release();
  }
}

/** The refusal of a session in an organization the person has not joined. */
export const notMember = () =>
  new StaffError(
    "notMember",
    "You are not on this organization's staff, or have not accepted its invitation yet (sign in with the invitation's link)",
  );

/**
 * Uses up a live set-up link of the person's (in the caller's transaction) and returns its organization,
 * of which the person is a member (and which is `organizationId` when one is asked for); else a "token"
 * StaffError, the link left as it was.
 */
async function acceptInvitation(
  trx: Db,
  userId: string,
  token: string,
  nowMs: number,
  organizationId?: string,
): Promise<string> {
  const refused = new StaffError(
    "token",
    "This invitation link has been used or has expired: sign in without it, or ask an Owner for a new one",
  );
  if (!isSecretToken(token)) throw refused;
  const now = isoAt(nowMs);
  const used = await trx
    .updateTable("staff_tokens")
    .set({ used_at: now })
    .where("token_hash", "=", sha256Hex(token))
    .where("user_id", "=", userId)
    .where("kind", "=", "setup")
    .where("used_at", "is", null)
    .where("expires_at", ">", now)
    .returning("organization_id")
    .executeTakeFirst();
  if (!used || (organizationId !== undefined && used.organization_id !== organizationId)) throw refused;
  const member = await membershipRole(trx, userId, used.organization_id);
  if (!member) throw refused;
  return used.organization_id;
}

/** The session of a cookie's token while it lasts (and the person is still a member), else undefined. */
export async function findStaffSession(
  store: Store,
  token: string,
  nowMs: number,
): Promise<StaffSession | undefined> {
  if (!isSecretToken(token)) return undefined;
  const now = isoAt(nowMs);
  const row = await store.db
    .selectFrom("staff_sessions")
    .innerJoin("staff_memberships", (join) =>
      join
        .onRef("staff_memberships.user_id", "=", "staff_sessions.user_id")
        .onRef("staff_memberships.organization_id", "=", "staff_sessions.organization_id"),
    )
    .innerJoin("staff_users", "staff_users.id", "staff_sessions.user_id")
    .innerJoin("organizations", "organizations.id", "staff_sessions.organization_id")
    .select([
      "staff_users.totp_secret",
      "organizations.require_two_factor",
      "staff_sessions.token_hash",
      "staff_sessions.user_id",
      "staff_sessions.organization_id",
      "staff_sessions.last_seen_at",
      "staff_memberships.role",
      "staff_users.email",
    ])
    .where("staff_sessions.token_hash", "=", sha256Hex(token))
    .where("staff_sessions.revoked_at", "is", null)
    .where("staff_sessions.expires_at", ">", now)
    .where("staff_sessions.last_seen_at", ">", isoAt(nowMs - SESSION_IDLE_HOURS * HOUR))
    .executeTakeFirst();
  if (!row || !(STAFF_ROLES as readonly string[]).includes(row.role)) return undefined;
  // Use keeps the session alive; written at most once a minute.
  if (Date.parse(row.last_seen_at) < nowMs - 60_000)
    await store.db
      .updateTable("staff_sessions")
      .set({ last_seen_at: now })
      .where("token_hash", "=", row.token_hash)
      .execute();
  const role = row.role as StaffRole;
  const twoFactorEnabled = row.totp_secret != null;
  const restricted = enrolmentRequired(role, Number(row.require_two_factor ?? 0) === 1, twoFactorEnabled);
  return {
    userId: row.user_id,
    email: row.email,
    organizationId: row.organization_id,
    role,
    permissions: new Set(restricted ? [] : ROLE_PERMISSIONS[role]),
    sessionId: sessionIdOf(row.token_hash),
    twoFactorEnabled,
    twoFactorEnrolmentRequired: restricted,
  };
}

/**
 * Uses up every unused password-reset link of the person (in the caller's transaction): once the password is
 * set, by a set-up link, a reset or a change, a link asked for before would undo it.
 */
export async function useUpResetLinks(trx: Db, userId: string, now: string): Promise<void> {
  await trx
    .updateTable("staff_tokens")
    .set({ used_at: now })
    .where("user_id", "=", userId)
    .where("kind", "=", "reset")
    .where("used_at", "is", null)
    .execute();
}

/** Ends a session (sign-out); nothing happens for an unknown token. */
export async function endStaffSession(store: Store, token: string, nowMs: number): Promise<void> {
  if (!isSecretToken(token)) return;
  await store.db
    .updateTable("staff_sessions")
    .set({ revoked_at: isoAt(nowMs) })
    .where("token_hash", "=", sha256Hex(token))
    .where("revoked_at", "is", null)
    .execute();
}

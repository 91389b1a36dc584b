import type { z } from "zod";
import { emailKey } from "../../shared/email.js";
import type { StaffRole } from "../../shared/schemas/staff.js";
import type { teamMemberSchema } from "../../shared/schemas/staffTeam.js";
import { isoAt } from "../../shared/time.js";
import { newSecretToken, sha256Hex } from "../ids.js";
import { queueEmail } from "../mail/outbox.js";
import { renderStaffInvite } from "../mail/staffInvite.js";
import { type AuditActor, type AuditEntry, recordAudit, SYSTEM_ACTOR } from "../store/auditLog.js";
import type { Db, Store } from "../store/database.js";
import { getOrganization } from "../store/organizations.js";
import {
  createStaffMember,
  membershipRole,
  SETUP_LINK_HOURS,
  SETUP_PAGE_PATH,
  StaffError,
} from "./accounts.js";
import { joinedHere, joinedOrganizations } from "./memberships.js";

/**
 * The organization's team as its Owners manage it: who is in it, inviting a person (a single-use set-up
 * link, mailed), changing a role and removing a person. An organization always keeps an Owner: a change
 * that would leave none is refused, decided inside the change's own transaction (on PostgreSQL the
 * Owners' rows are locked first; on SQLite the transaction holds the write lock from its start), so two
 * Owners demoting each other at once leave one. A change of role or a removal ends the person's sessions
 * in the organization; their next request is refused (sessions take their role from the membership at
 * each request, see findStaffSession).
 */

export type TeamMember = z.infer<typeof teamMemberSchema>;

export class TeamError extends Error {
  constructor(
    readonly kind: "notFound" | "lastOwner",
    message: string,
  ) {
    super(message);
  }
}

const HOUR = 3_600_000;
const LAST_OWNER =
  "An organization keeps at least one Owner: make another person Owner before changing or removing this one";
const LAST_JOINED_OWNER =
  "An organization keeps at least one Owner who has joined: the other Owners have not accepted their invitations yet";

/** The organization's members, oldest first; or the one with `userId`. */
export async function listTeam(db: Db, organizationId: string, userId?: string): Promise<TeamMember[]> {
  let query = db
    .selectFrom("staff_memberships")
    .innerJoin("staff_users", "staff_users.id", "staff_memberships.user_id")
    .select((eb) => [
      "staff_memberships.user_id",
      "staff_users.email",
      "staff_memberships.invited_email",
      "staff_memberships.role",
      "staff_memberships.created_at",
      joinedHere(eb).as("joined"),
      eb
        .selectFrom("staff_sessions as s")
        .select((s) => s.fn.max("s.created_at").as("at"))
        .whereRef("s.user_id", "=", "staff_memberships.user_id")
        .whereRef("s.organization_id", "=", "staff_memberships.organization_id")
        .as("last_sign_in"),
      eb
        .selectFrom("staff_tokens as t")
        .select((t) => t.fn.max("t.expires_at").as("at"))
        .whereRef("t.user_id", "=", "staff_memberships.user_id")
        .whereRef("t.organization_id", "=", "staff_memberships.organization_id")
        .where("t.kind", "=", "setup")
        .where("t.used_at", "is", null)
        .as("invite_expires"),
    ])
    .where("staff_memberships.organization_id", "=", organizationId);
  if (userId !== undefined) query = query.where("staff_memberships.user_id", "=", userId);
  const rows = await query.orderBy("staff_memberships.created_at").orderBy("staff_users.email_key").execute();
  return rows.map((row) => {
    // Whether the person has a password for another organization is not this one's to know.
    const passwordSet = Boolean(row.joined);
    return {
      userId: row.user_id,
      // Until the person joins, the address as this organization spelled it: the spelling of an account
      // made elsewhere would show that the account exists.
      email: passwordSet ? row.email : (row.invited_email ?? row.email),
      role: row.role as StaffRole,
      joinedAt: row.created_at,
      passwordSet,
      invitePending: !passwordSet,
      inviteExpiresAt: row.invite_expires ?? null,
      lastSignInAt: row.last_sign_in ?? null,
    };
  });
}

async function memberOrThrow(db: Db, organizationId: string, userId: string): Promise<TeamMember> {
  const [member] = await listTeam(db, organizationId, userId);
  if (!member) throw new TeamError("notFound", "No such member of this organization");
  return member;
}

/**
 * On PostgreSQL, locks the organization's Owners' rows for the rest of the transaction, so that team
 * changes that could remove an Owner run one after another. SQLite's write transaction is already alone.
 */
async function lockOwners(store: Store, trx: Db, organizationId: string): Promise<void> {
  if (store.dialect !== "postgres") return;
  await trx
    .selectFrom("staff_memberships")
    .select("user_id")
    .where("organization_id", "=", organizationId)
    .where("role", "=", "OWNER")
    .orderBy("user_id")
    .forUpdate()
    .execute();
}

/** The organization's Owners: all of them, or (`joined`) those who have joined, not only been invited. */
async function countOwners(trx: Db, organizationId: string, joined: boolean): Promise<number> {
  let query = trx
    .selectFrom("staff_memberships")
    .innerJoin("staff_users", "staff_users.id", "staff_memberships.user_id")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("staff_memberships.organization_id", "=", organizationId)
    .where("staff_memberships.role", "=", "OWNER");
  if (joined) query = query.where((eb) => joinedHere(eb));
  const { n } = await query.executeTakeFirstOrThrow();
  return Number(n);
}

/** Whether the member has joined the organization (not only been invited to it). */
async function hasJoined(trx: Db, organizationId: string, userId: string): Promise<boolean> {
  return (await joinedOrganizations(trx, userId, organizationId)).length > 0;
}

/**
 * After an Owner's role was taken or they were removed, inside the change's transaction: refused when the
 * organization has no Owner left, and, when that Owner had joined, when no Owner who has joined is left
 * (only invitations, which may never be accepted, would hold the Team page, keys and payment settings).
 */
async function checkOwnersRemain(trx: Db, organizationId: string, takenFromJoined: boolean): Promise<void> {
  if ((await countOwners(trx, organizationId, false)) === 0) throw new TeamError("lastOwner", LAST_OWNER);
  if (takenFromJoined && (await countOwners(trx, organizationId, true)) === 0)
    throw new TeamError("lastOwner", LAST_JOINED_OWNER);
}

/** Ends every session the person has in the organization. */
async function endSessions(trx: Db, organizationId: string, userId: string, now: string): Promise<void> {
  await trx
    .updateTable("staff_sessions")
    .set({ revoked_at: now })
    .where("user_id", "=", userId)
    .where("organization_id", "=", organizationId)
    .where("revoked_at", "is", null)
    .execute();
}

/** Uses up the person's unused links of `kinds` to the organization (set-up, password reset). */
async function endLinks(
  trx: Db,
  organizationId: string,
  userId: string,
  now: string,
  kinds: ("setup" | "reset")[],
): Promise<void> {
  await trx
    .updateTable("staff_tokens")
    .set({ used_at: now })
    .where("user_id", "=", userId)
    .where("organization_id", "=", organizationId)
    .where("kind", "in", kinds)
    .where("used_at", "is", null)
    .execute();
}

/**
 * A single-use set-up link (24 hours) for `email` as `role`: a new member is added (createStaffMember;
 * a person who has a password for another organization becomes a member too, and joins by signing in with
 * the link); a member who has not joined yet gets a fresh link that replaces the earlier ones, and the role
 * given. A member who has joined is refused (StaffError "member"): their role is changed elsewhere.
 */
export async function issueSetupLink(
  store: Store,
  input: {
    organizationId: string;
    email: string;
    role: StaffRole;
    publicUrl: string;
    nowMs: number;
    /** Who invites, for the audit log; the system (the command line, the demo) when left out. */
    actor?: AuditActor;
  },
): Promise<{ userId: string; setupUrl: string; expiresAt: string }> {
  const email = input.email.trim();
  const already = new StaffError("member", `${email} is already a member of this organization`);
  const existing = await memberByEmail(store.db, input.organizationId, email);
  if (!existing)
    return createStaffMember(store, { ...input, email }).catch(async (error: unknown) => {
      // The same address invited twice at once: one adds the person, the other finds them there.
      if (!(error instanceof StaffError) && (await memberByEmail(store.db, input.organizationId, email)))
        throw already;
      throw error;
    });
  if (existing.joined) throw already;
  const token = newSecretToken();
  const now = isoAt(input.nowMs);
  const expiresAt = isoAt(input.nowMs + SETUP_LINK_HOURS * HOUR);
  await store.transact(async (trx) => {
    await lockOwners(store, trx, input.organizationId);
    const current = await memberByEmail(trx, input.organizationId, email);
    if (!current) throw new TeamError("notFound", "No such member of this organization");
    if (current.joined) throw already;
    await trx
      .updateTable("staff_memberships")
      .set({ role: input.role, invited_email: email })
      .where("user_id", "=", current.user_id)
      .where("organization_id", "=", input.organizationId)
      .execute();
    if (current.role === "OWNER" && input.role !== "OWNER")
      await checkOwnersRemain(trx, input.organizationId, false);
    // A fresh link replaces the earlier ones.
    await endLinks(trx, input.organizationId, current.user_id, now, ["setup"]);
    await recordAudit(
      trx,
      teamEntry(input, "staff.invited", current.user_id, { role: current.role }, { email, role: input.role }),
      input.nowMs,
    );
    await trx
      .insertInto("staff_tokens")
      .values({
        token_hash: sha256Hex(token),
        user_id: current.user_id,
        organization_id: input.organizationId,
        kind: "setup",
        expires_at: expiresAt,
        used_at: null,
        created_at: now,
      })
      .execute();
  });
  return {
    userId: existing.user_id,
    setupUrl: `${input.publicUrl}${SETUP_PAGE_PATH}?token=${token}`,
    expiresAt,
  };
}

/** A person's address, for the audit log (which keeps it after they are removed). */
async function emailOf(trx: Db, userId: string): Promise<string | null> {
  const row = await trx.selectFrom("staff_users").select("email").where("id", "=", userId).executeTakeFirst();
  return row?.email ?? null;
}

/** A team change as the audit log keeps it, in the change's own transaction. */
function teamEntry(
  input: { organizationId: string; actor?: AuditActor },
  action: "staff.invited" | "staff.role_changed" | "staff.removed",
  userId: string,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): AuditEntry {
  return {
    organizationId: input.organizationId,
    actor: input.actor ?? SYSTEM_ACTOR,
    action,
    subjectType: "staff_user",
    subjectId: userId,
    before,
    after,
  };
}

async function memberByEmail(db: Db, organizationId: string, email: string) {
  const row = await db
    .selectFrom("staff_users")
    .innerJoin("staff_memberships", "staff_memberships.user_id", "staff_users.id")
    .select((eb) => ["staff_users.id as user_id", "staff_memberships.role", joinedHere(eb).as("joined")])
    .where("staff_users.email_key", "=", emailKey(email))
    .where("staff_memberships.organization_id", "=", organizationId)
    .executeTakeFirst();
  return row && { user_id: row.user_id, role: row.role, joined: Boolean(row.joined) };
}

/**
 * Invites a person: a set-up link (issueSetupLink) mailed to their address from the organization, with
 * the inviting Owner's address to reply to. The link itself is never returned.
 */
export async function inviteMember(
  store: Store,
  input: {
    organizationId: string;
    email: string;
    role: StaffRole;
    invitedBy: string;
    publicUrl: string;
    nowMs: number;
    actor?: AuditActor;
  },
): Promise<TeamMember> {
  const org = await getOrganization(store.db, input.organizationId);
  if (!org) throw new TeamError("notFound", "No such organization");
  const link = await issueSetupLink(store, input);
  const member = await memberOrThrow(store.db, input.organizationId, link.userId);
  const person = await store.db
    .selectFrom("staff_users")
    .select(["email", "password_hash"])
    .where("id", "=", link.userId)
    .executeTakeFirstOrThrow();
  const mail = renderStaffInvite({
    organizationName: org.name,
    invitedBy: input.invitedBy,
    role: input.role,
    url: link.setupUrl,
    hours: SETUP_LINK_HOURS,
    hasPassword: person.password_hash != null,
  });
  // Queued once the link exists; should this fail, the person stays invited and inviting again mails a
  // fresh link.
  await queueEmail(
    store.db,
    {
      organizationId: org.id,
      // To the address as the person first gave it (an invitation may spell it in another case).
      to: person.email,
      fromName: org.name,
      replyTo: input.invitedBy,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
    },
    input.nowMs,
  );
  return member;
}

/**
 * Gives a member another role. A real change ends their sessions in the organization; taking the role of
 * Owner from the last Owner is refused (TeamError "lastOwner").
 */
export async function changeRole(
  store: Store,
  input: { organizationId: string; userId: string; role: StaffRole; nowMs: number; actor?: AuditActor },
): Promise<TeamMember> {
  await store.transact(async (trx) => {
    await lockOwners(store, trx, input.organizationId);
    const current = await membershipRole(trx, input.userId, input.organizationId);
    if (!current) throw new TeamError("notFound", "No such member of this organization");
    if (current.role === input.role) return;
    const wasJoinedOwner =
      current.role === "OWNER" && (await hasJoined(trx, input.organizationId, input.userId));
    await trx
      .updateTable("staff_memberships")
      .set({ role: input.role })
      .where("user_id", "=", input.userId)
      .where("organization_id", "=", input.organizationId)
      .execute();
    if (current.role === "OWNER") await checkOwnersRemain(trx, input.organizationId, wasJoinedOwner);
    await endSessions(trx, input.organizationId, input.userId, isoAt(input.nowMs));
    const email = await emailOf(trx, input.userId);
    await recordAudit(
      trx,
      teamEntry(
        input,
        "staff.role_changed",
        input.userId,
        { email, role: current.role },
        { email, role: input.role },
      ),
      input.nowMs,
    );
  });
  return memberOrThrow(store.db, input.organizationId, input.userId);
}

/**
 * Removes a member from the organization: their sessions and unused set-up and password-reset links to it
 * end. The person (and their other organizations) stay. Removing the last Owner is refused (TeamError
 * "lastOwner").
 */
export async function removeMember(
  store: Store,
  input: { organizationId: string; userId: string; nowMs: number; actor?: AuditActor },
): Promise<void> {
  const now = isoAt(input.nowMs);
  await store.transact(async (trx) => {
    await lockOwners(store, trx, input.organizationId);
    const joined = await hasJoined(trx, input.organizationId, input.userId);
    const removed = await trx
      .deleteFrom("staff_memberships")
      .where("user_id", "=", input.userId)
      .where("organization_id", "=", input.organizationId)
      .returning("role")
      .executeTakeFirst();
    if (!removed) throw new TeamError("notFound", "No such member of this organization");
    if (removed.role === "OWNER") await checkOwnersRemain(trx, input.organizationId, joined);
    await endSessions(trx, input.organizationId, input.userId, now);
    await endLinks(trx, input.organizationId, input.userId, now, ["setup", "reset"]);
    const email = await emailOf(trx, input.userId);
    await recordAudit(
      trx,
      teamEntry(input, "staff.removed", input.userId, { email, role: removed.role }, {}),
      input.nowMs,
    );
  });
}

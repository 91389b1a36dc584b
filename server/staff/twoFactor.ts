import crypto from "node:crypto";
import { Secret, TOTP } from "otpauth";
import QRCode from "qrcode";
import { emailKey } from "../../shared/email.js";
import type { StaffRole } from "../../shared/schemas/staff.js";
import { isoAt } from "../../shared/time.js";
import { sha256Hex } from "../ids.js";
import { type SecretBox, SecretsError } from "../secrets.js";
import type { Db, Store } from "../store/database.js";
import { verifyPassword } from "./passwords.js";
import { recordAccountChange } from "./signInAudit.js";
import { StaffError } from "./staffError.js";

/**
 * Two-factor sign-in with TOTP (RFC 6238: 6 digits, 30 seconds, SHA-1, as every authenticator app reads
 * it), computed by the otpauth library. A person starts enrolment (a new secret, kept aside until a code
 * confirms it), confirms it with a code (TOTP is on, and ten one-time recovery codes are handed out once),
 * and may turn it off with their password or a code. A code is good once: the time-step of the last code
 * accepted is kept, and a code of that step or an earlier one is refused. A code one step early or late is
 * accepted (clocks drift). Secrets are sealed with the instance key (secrets.ts), bound to the person.
 */

export const TOTP_PERIOD_SECONDS = 30;
const TOTP_DIGITS = 6;
/** Steps either side of now that are accepted. */
const TOTP_WINDOW = 1;
export const RECOVERY_CODE_COUNT = 10;
const ISSUER = "Almoner";
/** Crockford's base 32: no I, L, O or U to misread. 10 characters: 50 random bits per code. */
const RECOVERY_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const RECOVERY_CODE = /^[0-9abcdefghjkmnpqrstvwxyz]{10}$/;
const TOTP_CODE = /^\d{6}$/;

/** Roles that the organization's `requireTwoFactor` setting makes sign in with TOTP. */
export const TWO_FACTOR_ROLES: readonly StaffRole[] = ["OWNER", "FINANCE"];

/** Whether a session may only enrol: the organization requires TOTP of the role and the person has none. */
export function enrolmentRequired(role: StaffRole, organizationRequires: boolean, enabled: boolean): boolean {
  return organizationRequires && !enabled && TWO_FACTOR_ROLES.includes(role);
}

/** Whether the organization's `requireTwoFactor` setting is on. */
export async function organizationRequiresTwoFactor(store: Store, organizationId: string): Promise<boolean> {
  const org = await store.db
    .selectFrom("organizations")
    .select("require_two_factor")
    .where("id", "=", organizationId)
    .executeTakeFirst();
  return Number(org?.require_two_factor ?? 0) === 1;
}

/**
 * The name of an organization the person belongs to that requires TOTP of their role there, or null: the
 * person's second step is theirs across every organization they have joined, so any one of them keeps it on.
 */
export async function organizationRequiringTwoFactorOf(store: Store, userId: string): Promise<string | null> {
  const org = await store.db
    .selectFrom("staff_memberships as m")
    .innerJoin("organizations as o", "o.id", "m.organization_id")
    .select("o.name")
    .where("m.user_id", "=", userId)
    .where("m.role", "in", [...TWO_FACTOR_ROLES])
    .where("o.require_two_factor", "=", 1)
    .orderBy("o.name")
    .executeTakeFirst();
  return org?.name ?? null;
}

const sealContext = (userId: string) => `staff-totp:${userId}`;

function seal(box: SecretBox, secret: string, userId: string): string {
  try {
    return box.seal(secret, sealContext(userId));
  } catch (err) {
    if (err instanceof SecretsError) throw new StaffError("unavailable", unavailable(err));
    throw err;
  }
}

function open(box: SecretBox, sealed: string, userId: string): string {
  try {
    return box.open(sealed, sealContext(userId));
  } catch (err) {
    if (err instanceof SecretsError) throw new StaffError("unavailable", unavailable(err));
    throw err;
  }
}

const unavailable = (err: SecretsError) =>
  `Two-factor sign-in cannot be used on this instance until its operator fixes this: ${err.message}`;

function totpOf(secretBase32: string, label: string): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label,
    secret: Secret.fromBase32(secretBase32),
    algorithm: "SHA1",
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
  });
}

/** The time-step a 6-digit code belongs to, when it is one of the accepted steps around now. */
function stepOf(secretBase32: string, code: string, nowMs: number): number | undefined {
  if (!TOTP_CODE.test(code)) return undefined;
  const delta = totpOf(secretBase32, "").validate({ token: code, timestamp: nowMs, window: TOTP_WINDOW });
  if (delta === null) return undefined;
  return TOTP.counter({ period: TOTP_PERIOD_SECONDS, timestamp: nowMs }) + delta;
}

/** A code as typed: spaces and hyphens dropped, letters in lower case. */
const normalise = (code: string) => code.replace(/[\s-]/g, "").toLowerCase();

function newRecoveryCode(): string {
  const bytes = crypto.randomBytes(10);
  const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b & 31]).join("");
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

export interface TwoFactorState {
  enabled: boolean;
  enabledAt: string | null;
  recoveryCodesLeft: number;
}

export async function twoFactorState(store: Store, userId: string): Promise<TwoFactorState> {
  const user = await store.db
    .selectFrom("staff_users")
    .select(["totp_secret", "totp_enabled_at"])
    .where("id", "=", userId)
    .executeTakeFirst();
  const left = await store.db
    .selectFrom("staff_recovery_codes")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("user_id", "=", userId)
    .where("used_at", "is", null)
    .executeTakeFirst();
  const enabled = user?.totp_secret != null;
  return {
    enabled,
    enabledAt: enabled ? (user?.totp_enabled_at ?? null) : null,
    recoveryCodesLeft: enabled ? Number(left?.n ?? 0) : 0,
  };
}

/**
 * Starts enrolment: a new secret, kept aside (sealed) until `confirmEnrolment`; its otpauth:// URI names
 * the person's address. Starting again replaces a secret not yet confirmed. Refused while TOTP is on.
 */
export async function startEnrolment(
  store: Store,
  box: SecretBox,
  person: { userId: string; email: string },
): Promise<{ secret: string; uri: string; qrCode: string }> {
  const user = await store.db
    .selectFrom("staff_users")
    .select("totp_secret")
    .where("id", "=", person.userId)
    .executeTakeFirst();
  if (user?.totp_secret != null)
    throw new StaffError("conflict", "Two-factor sign-in is already on: turn it off first to enrol again");
  const secret = new Secret({ size: 20 }).base32;
  await store.db
    .updateTable("staff_users")
    .set({ totp_pending_secret: seal(box, secret, person.userId) })
    .where("id", "=", person.userId)
    .execute();
  const uri = totpOf(secret, person.email).toString();
  // The URI as a QR code (SVG, medium error correction, a quiet zone of 4 modules) for the app's camera.
  const qrCode = await QRCode.toString(uri, { type: "svg", errorCorrectionLevel: "M", margin: 4 });
  return { secret, uri, qrCode };
}

/**
 * Confirms enrolment with a code from the new secret: TOTP is on from now, and ten recovery codes (any
 * earlier ones are dropped) are returned, this once; only their hashes are kept. Every other session of the
 * person's ends (one opened without the second step, in other hands, would outlive it); the session of
 * `currentToken` goes on.
 */
export async function confirmEnrolment(
  store: Store,
  box: SecretBox,
  person: { userId: string; currentToken: string },
  code: string,
  nowMs: number,
): Promise<{ recoveryCodes: string[] }> {
  const { userId } = person;
  const user = await store.db
    .selectFrom("staff_users")
    .select(["totp_secret", "totp_pending_secret"])
    .where("id", "=", userId)
    .executeTakeFirst();
  if (user?.totp_secret != null) throw new StaffError("conflict", "Two-factor sign-in is already on");
  const pending = user?.totp_pending_secret;
  if (!pending)
    throw new StaffError("conflict", "Start enrolment first: POST /api/staff/two-factor/enrolment");
  const step = stepOf(open(box, pending, userId), normalise(code), nowMs);
  if (step === undefined)
    throw new StaffError(
      "code",
      "The code does not match: type the 6 digits the authenticator app shows now for this account",
    );
  const now = isoAt(nowMs);
  const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await store.db.transaction().execute(async (trx) => {
    // Conditional: of two confirmations at once, one turns it on.
    const on = await trx
      .updateTable("staff_users")
      .set({
        totp_secret: pending,
        totp_pending_secret: null,
        totp_enabled_at: now,
        totp_last_step: step,
        updated_at: now,
      })
      .where("id", "=", userId)
      .where("totp_secret", "is", null)
      .where("totp_pending_secret", "=", pending)
      .executeTakeFirst();
    if (Number(on.numUpdatedRows) !== 1) throw new StaffError("conflict", "Two-factor sign-in is already on");
    await replaceRecoveryCodes(trx, userId, recoveryCodes, nowMs);
    await trx
      .updateTable("staff_sessions")
      .set({ revoked_at: now })
      .where("user_id", "=", userId)
      .where("token_hash", "!=", sha256Hex(person.currentToken))
      .where("revoked_at", "is", null)
      .execute();
    await recordAccountChange(trx, userId, "staff.two_factor_enabled", nowMs);
  });
  return { recoveryCodes };
}

/**
 * Uses a second factor of a person with TOTP on: a 6-digit code of now (not one already used) or an
 * unused recovery code, which is then used up. False for anything else.
 */
export async function useSecondFactor(
  store: Store,
  box: SecretBox,
  userId: string,
  code: string,
  nowMs: number,
): Promise<boolean> {
  const typed = normalise(code);
  if (TOTP_CODE.test(typed)) {
    const user = await store.db
      .selectFrom("staff_users")
      .select("totp_secret")
      .where("id", "=", userId)
      .executeTakeFirst();
    if (!user?.totp_secret) return false;
    const step = stepOf(open(box, user.totp_secret, userId), typed, nowMs);
    if (step === undefined) return false;
    // One conditional update: a code (or an earlier one) already accepted is refused, even by a race.
    const used = await store.db
      .updateTable("staff_users")
      .set({ totp_last_step: step })
      .where("id", "=", userId)
      .where("totp_secret", "is not", null)
      .where((eb) => eb.or([eb("totp_last_step", "is", null), eb("totp_last_step", "<", step)]))
      .executeTakeFirst();
    return Number(used.numUpdatedRows) === 1;
  }
  if (!RECOVERY_CODE.test(typed)) return false;
  const used = await store.db
    .updateTable("staff_recovery_codes")
    .set({ used_at: isoAt(nowMs) })
    .where("user_id", "=", userId)
    .where("code_hash", "=", sha256Hex(typed))
    .where("used_at", "is", null)
    .executeTakeFirst();
  return Number(used.numUpdatedRows) === 1;
}

/** The person's password or a code (used up), else a "code" StaffError. */
async function prove(
  store: Store,
  box: SecretBox,
  userId: string,
  passwordHash: string | null,
  proof: { password?: string; code?: string },
  nowMs: number,
): Promise<void> {
  const proven =
    proof.password !== undefined
      ? passwordHash != null && (await verifyPassword(proof.password, passwordHash))
      : proof.code !== undefined && (await useSecondFactor(store, box, userId, proof.code, nowMs));
  if (!proven) throw new StaffError("code", "The password or code is wrong");
}

/** Ten new recovery codes in place of the old ones (used or not), proven as for turning TOTP off. */
export async function renewRecoveryCodes(
  store: Store,
  box: SecretBox,
  userId: string,
  proof: { password?: string; code?: string },
  nowMs: number,
): Promise<{ recoveryCodes: string[] }> {
  const user = await store.db
    .selectFrom("staff_users")
    .select(["password_hash", "totp_secret"])
    .where("id", "=", userId)
    .executeTakeFirst();
  if (!user?.totp_secret) throw new StaffError("conflict", "Two-factor sign-in is not on");
  await prove(store, box, userId, user.password_hash, proof, nowMs);
  const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await store.db.transaction().execute((trx) => replaceRecoveryCodes(trx, userId, recoveryCodes, nowMs));
  return { recoveryCodes };
}

async function replaceRecoveryCodes(trx: Db, userId: string, codes: string[], nowMs: number): Promise<void> {
  await trx.deleteFrom("staff_recovery_codes").where("user_id", "=", userId).execute();
  await trx
    .insertInto("staff_recovery_codes")
    .values(
      codes.map((c) => ({
        user_id: userId,
        code_hash: sha256Hex(normalise(c)),
        used_at: null,
        created_at: isoAt(nowMs),
      })),
    )
    .execute();
}

/**
 * Turns two-factor sign-in off for a person who has lost both their authenticator and their recovery
 * codes: the operator's way back in (`npm run cli -- user reset-two-factor`). Returns whether it was on.
 */
export async function resetTwoFactor(store: Store, email: string, nowMs: number): Promise<boolean> {
  return store.db.transaction().execute(async (trx) => {
    const user = await trx
      .selectFrom("staff_users")
      .select(["id", "totp_secret"])
      .where("email_key", "=", emailKey(email))
      .executeTakeFirst();
    if (!user) throw new StaffError("notFound", `No staff member has the address ${email.trim()}`);
    await turnOff(trx, user.id, nowMs);
    if (user.totp_secret != null)
      await recordAccountChange(trx, user.id, "staff.two_factor_disabled", nowMs, "system");
    return user.totp_secret != null;
  });
}

/** Forgets the person's TOTP secrets (set up or pending) and their recovery codes; run in a transaction. */
async function turnOff(trx: Db, userId: string, nowMs: number): Promise<void> {
  await trx
    .updateTable("staff_users")
    .set({
      totp_secret: null,
      totp_pending_secret: null,
      totp_enabled_at: null,
      totp_last_step: null,
      updated_at: isoAt(nowMs),
    })
    .where("id", "=", userId)
    .execute();
  await trx.deleteFrom("staff_recovery_codes").where("user_id", "=", userId).execute();
}

/** How many people sign in with TOTP (their secrets are sealed with the instance key). */
export async function countTwoFactorSecrets(db: Db): Promise<number> {
  const row = await db
    .selectFrom("staff_users")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where((eb) => eb.or([eb("totp_secret", "is not", null), eb("totp_pending_secret", "is not", null)]))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Turns TOTP off, proven with the person's password or a code (TOTP or recovery). A wrong proof: a
 * "code" StaffError (the caller counts it as a failed sign-in).
 */
export async function disableTwoFactor(
  store: Store,
  box: SecretBox,
  userId: string,
  proof: { password?: string; code?: string },
  nowMs: number,
): Promise<void> {
  const user = await store.db
    .selectFrom("staff_users")
    .select(["password_hash", "totp_secret"])
    .where("id", "=", userId)
    .executeTakeFirst();
  if (!user?.totp_secret) throw new StaffError("conflict", "Two-factor sign-in is not on");
  await prove(store, box, userId, user.password_hash, proof, nowMs);
  await store.db.transaction().execute(async (trx) => {
    await turnOff(trx, userId, nowMs);
    await recordAccountChange(trx, userId, "staff.two_factor_disabled", nowMs);
  });
}

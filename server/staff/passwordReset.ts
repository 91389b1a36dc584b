import { emailKey } from "../../shared/email.js";
import { isoAt } from "../../shared/time.js";
import { isSecretToken, newSecretToken, sha256Hex } from "../ids.js";
import { outboxRow } from "../mail/outbox.js";
import { renderStaffPasswordReset } from "../mail/staffPasswordReset.js";
import type { SecretBox } from "../secrets.js";
import type { Store } from "../store/database.js";
import { insertRow } from "../store/fixedQuery.js";
import {
  countAttempt,
  deadLink,
  failureKeys,
  liveLink,
  redeemPasswordLink,
  refuseCommonPassword,
  type SessionOrigin,
} from "./accounts.js";
import { joinedHere } from "./memberships.js";
import { hashPassword } from "./passwords.js";
import { recordFailedSignIn } from "./signInAudit.js";
import { StaffError } from "./staffError.js";
import { useSecondFactor } from "./twoFactor.js";

/**
 * A forgotten password: a person asks by e-mail address; when the address is a staff member's, a
 * single-use link (30 minutes) to the dashboard's reset page is mailed to it through the e-mail outbox
 * (SMTP, or an `.eml` under `$DATA_DIR/mail`, as receipts). The link's token sets a new password once:
 * every session of the person's ends, every other reset link of theirs is used up, and a new session
 * begins. With two-factor sign-in on, the link alone is not enough: a code is wanted as for signing in.
 */

export const RESET_LINK_MINUTES = 30;
export const RESET_PAGE_PATH = "/dashboard/reset";

/** Mails a reset link when the address is a staff member's; does nothing otherwise. Returns whether one was. */
export async function requestPasswordReset(
  store: Store,
  email: string,
  publicUrl: string,
  nowMs: number,
): Promise<boolean> {
  const memberships = await store.db
    .selectFrom("staff_users")
    .innerJoin("staff_memberships", "staff_memberships.user_id", "staff_users.id")
    .innerJoin("organizations", "organizations.id", "staff_memberships.organization_id")
    .select((eb) => [
      "staff_users.id",
      "staff_users.email",
      "staff_memberships.organization_id",
      "organizations.name",
      joinedHere(eb).as("joined"),
    ])
    .where("staff_users.email_key", "=", emailKey(email))
    .orderBy("staff_memberships.created_at")
    .execute();
  // The organization the link opens: the first the person has joined. One whose invitation is pending only
  // when they have joined none (the link proves the address, as the invitation's own link does): a reset
  // never takes someone who belongs somewhere into an organization that has merely invited them.
  const person = memberships.find((m) => Boolean(m.joined)) ?? memberships[0];
  if (!person) return false;
  const token = newSecretToken();
  const url = `${publicUrl}${RESET_PAGE_PATH}?token=${token}`;
  const mail = renderStaffPasswordReset({ organizationName: person.name, url, minutes: RESET_LINK_MINUTES });
  const now = isoAt(nowMs);
  await store.db.transaction().execute(async (trx) => {
    await trx
      .insertInto("staff_tokens")
      .values({
        token_hash: sha256Hex(token),
        user_id: person.id,
        organization_id: person.organization_id,
        kind: "reset",
        expires_at: isoAt(nowMs + RESET_LINK_MINUTES * 60_000),
        used_at: null,
        created_at: now,
      })
      .execute();
    await insertRow(
      trx,
      "email_outbox",
      outboxRow(
        {
          organizationId: person.organization_id,
          to: person.email,
          fromName: person.name,
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
        },
        nowMs,
      ),
    );
  });
  return true;
}

/**
 * Sets a new password with a reset link's token and signs in. A used, expired or unknown token: a
 * "token" StaffError; a common password: "password"; TOTP on and no good code: "twoFactor" (the link is
 * not used up, so the person can try again with a code; a wrong code counts as a failed sign-in).
 */
export async function completePasswordReset(
  store: Store,
  box: SecretBox,
  input: { token: string; password: string; code?: string; nowMs: number } & SessionOrigin,
): Promise<{ sessionToken: string }> {
  const refused = deadLink("reset");
  if (!isSecretToken(input.token)) throw refused;
  const live = () =>
    liveLink(store.db, input.token, "reset", input.nowMs).select([
      "staff_tokens.user_id",
      "staff_users.email",
      "staff_users.totp_secret",
    ]);
  const link = await live().executeTakeFirst();
  if (!link) throw refused;
  refuseCommonPassword(input.password);
  if (link.totp_secret != null) {
    const attempt = await countAttempt(
      store,
      failureKeys(link.email, input.clientIp ?? "unknown"),
      input.nowMs,
    );
    try {
      if (input.code === undefined || input.code.trim() === "")
        throw new StaffError(
          "twoFactor",
          "Enter the 6-digit code from your authenticator app, or a recovery code",
        );
      if (!(await useSecondFactor(store, box, link.user_id, input.code, input.nowMs))) {
        await attempt.failed();
        // Written as a wrong code at sign-in is: a reset link in other hands guessing codes shows.
        await recordFailedSignIn(
          store,
          { userId: link.user_id, email: link.email, clientIp: input.clientIp ?? null },
          "code",
          input.nowMs,
        );
        throw new StaffError("twoFactor", "The code is wrong or has already been used");
      }
    } finally {
      await attempt.release();
    }
  }
  const hash = await hashPassword(input.password);
  return redeemPasswordLink(
    store,
    { token: input.token, kind: "reset", passwordHash: hash, nowMs: input.nowMs, origin: input },
    refused,
  );
}

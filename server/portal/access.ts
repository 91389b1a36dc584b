import { emailKey } from "../../shared/email.js";
import type { Language } from "../../shared/languages.js";
import { isoAt } from "../../shared/time.js";
import { isSecretToken, newSecretToken, sha256Hex } from "../ids.js";
import { outboxRow } from "../mail/outbox.js";
import { renderPortalLink } from "../mail/portalLink.js";
import { portalUrl } from "../payments/portalUrl.js";
import type { Store } from "../store/database.js";
import { insertRow } from "../store/fixedQuery.js";
import type { Organization } from "../store/organizations.js";
import { byDonor } from "./gifts.js";

/**
 * Signing in to the donor portal without a password: the donor asks for a link by e-mail address; when
 * the organization has gifts from that address, a single-use link (30 minutes) is mailed to it; the link's
 * token is exchanged once for a session (24 hours). Only tokens' hashes are kept. A donor is an e-mail
 * address: the session sees the gifts given with that address, in any case.
 */

export const LINK_MINUTES = 30;
export const SESSION_HOURS = 24;

/**
 * Whether the organization has any gift (or recurring gift) from this address: a payment that is made,
 * on its way (a bank debit PENDING) or refunded. A declined or abandoned attempt is no gift: anyone can
 * make one with another person's address, which must not bring that person mail.
 */
async function knownDonor(store: Store, organizationId: string, key: string): Promise<boolean> {
  const db = store.db;
  const payment = await db
    .selectFrom("payments")
    .select("id")
    .where(byDonor(organizationId, key))
    .where("status", "in", ["COMPLETED", "PENDING", "REFUNDED"])
    .limit(1)
    .executeTakeFirst();
  return payment !== undefined;
}

/**
 * Mails a sign-in link when the address has given to the organization; does nothing otherwise (the caller
 * answers the same either way). Returns whether one was queued.
 */
export async function requestSignInLink(
  store: Store,
  org: Organization,
  email: string,
  publicUrl: string,
  nowMs: number,
  language?: Language,
): Promise<boolean> {
  const key = emailKey(email);
  if (!(await knownDonor(store, org.id, key))) return false;
  const token = newSecretToken();
  const url = portalUrl(publicUrl, org.id, { token, language });
  const mail = renderPortalLink({ organizationName: org.name, url, minutes: LINK_MINUTES, language });
  const now = isoAt(nowMs);
  await store.db.transaction().execute(async (trx) => {
    await trx
      .insertInto("donor_links")
      .values({
        token_hash: sha256Hex(token),
        organization_id: org.id,
        email_key: key,
        expires_at: isoAt(nowMs + LINK_MINUTES * 60_000),
        used_at: null,
        created_at: now,
      })
      .execute();
    await insertRow(
      trx,
      "email_outbox",
      outboxRow(
        {
          organizationId: org.id,
          // In its canonical form (NFC): a look-alike that folds to the key of a donor's address, such as
          // the Kelvin sign for K, is sent to that address, never to the look-alike's mailbox.
          to: email.trim().normalize("NFC"),
          fromName: org.name,
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
 * The address a mailed link signs in as, without using it up: undefined when the token is unknown, of
 * another organization, used or expired. The portal shows it and asks before it signs in, so a link
 * someone else sent (their own) cannot quietly sign a visitor in to their session.
 */
export async function peekLinkToken(
  store: Store,
  organizationId: string,
  token: string,
  nowMs: number,
): Promise<{ emailKey: string; expiresAt: string } | undefined> {
  if (!isSecretToken(token)) return undefined;
  const row = await store.db
    .selectFrom("donor_links")
    .select(["email_key", "expires_at"])
    .where("token_hash", "=", sha256Hex(token))
    .where("organization_id", "=", organizationId)
    .where("used_at", "is", null)
    .where("expires_at", ">", isoAt(nowMs))
    .executeTakeFirst();
  return row && { emailKey: row.email_key, expiresAt: row.expires_at };
}

export interface DonorSession {
  token: string;
  organizationId: string;
  emailKey: string;
  expiresAt: string;
}

/**
 * Uses a mailed link's token up and opens a session: undefined when the token is unknown, of another
 * organization, used or expired. Two exchanges of one token open one session (a conditional update).
 */
export async function exchangeLinkToken(
  store: Store,
  organizationId: string,
  token: string,
  nowMs: number,
): Promise<DonorSession | undefined> {
  if (!isSecretToken(token)) return undefined;
  const now = isoAt(nowMs);
  const hash = sha256Hex(token);
  return store.db.transaction().execute(async (trx) => {
    const link = await trx
      .updateTable("donor_links")
      .set({ used_at: now })
      .where("token_hash", "=", hash)
      .where("organization_id", "=", organizationId)
      .where("used_at", "is", null)
      .where("expires_at", ">", now)
      .returning(["email_key"])
      .executeTakeFirst();
    if (!link) return undefined;
    const session: DonorSession = {
      token: newSecretToken(),
      organizationId,
      emailKey: link.email_key,
      expiresAt: isoAt(nowMs + SESSION_HOURS * 3_600_000),
    };
    await trx
      .insertInto("donor_sessions")
      .values({
        token_hash: sha256Hex(session.token),
        organization_id: organizationId,
        email_key: session.emailKey,
        expires_at: session.expiresAt,
        created_at: now,
      })
      .execute();
    return session;
  });
}

/** The donor signed in with this session token at this organization, or undefined. */
export async function findDonorSession(
  store: Store,
  organizationId: string,
  token: string,
  nowMs: number,
): Promise<{ emailKey: string } | undefined> {
  if (!isSecretToken(token)) return undefined;
  const row = await store.db
    .selectFrom("donor_sessions")
    .select(["email_key"])
    .where("token_hash", "=", sha256Hex(token))
    .where("organization_id", "=", organizationId)
    .where("expires_at", ">", isoAt(nowMs))
    .executeTakeFirst();
  return row && { emailKey: row.email_key };
}

/** Ends a session (signing out). */
export async function endDonorSession(store: Store, token: string): Promise<void> {
  if (!isSecretToken(token)) return;
  await store.db.deleteFrom("donor_sessions").where("token_hash", "=", sha256Hex(token)).execute();
}

/** The key a donor's gifts are found by (the address, trimmed and lower-cased). */
export { emailKey };

import { isoAt } from "../../shared/time.js";
import { newSecretToken, sha256Hex, ulid } from "../ids.js";
import type { Db } from "../store/database.js";
import { insertUpdateLink } from "../store/subscriptions.js";

/**
 * The hosted page where a donor replaces a recurring gift's payment method, or confirms a recurring
 * charge their bank held for authentication. A link is an unguessable token (only its hash is kept),
 * single-use and short-lived.
 */

export const UPDATE_PAGE_PATH = "/update-payment-method";

export interface NewUpdateLink {
  organizationId: string;
  subscriptionId: string;
  allowedMethods: string[];
  returnUrl: string | null;
  expiresAtMs: number;
  /** The held recurring charge the donor may confirm on the page. */
  paymentId?: string;
}

export async function createUpdateLink(
  db: Db,
  link: NewUpdateLink,
  publicUrl: string,
  nowMs: number,
): Promise<{ id: string; url: string; expiresAt: string }> {
  const token = newSecretToken();
  const id = `pmu_${ulid(nowMs)}`;
  const expiresAt = isoAt(link.expiresAtMs);
  await insertUpdateLink(db, {
    id,
    organization_id: link.organizationId,
    subscription_id: link.subscriptionId,
    token_hash: sha256Hex(token),
    allowed_methods: JSON.stringify(link.allowedMethods),
    return_url: link.returnUrl,
    expires_at: expiresAt,
    used_at: null,
    failed_attempts: 0,
    payment_id: link.paymentId ?? null,
    created_at: isoAt(nowMs),
  });
  return { id, url: `${publicUrl}${UPDATE_PAGE_PATH}/${token}`, expiresAt };
}

import type { Frequency } from "../../shared/enums.js";
import { isoAt } from "../../shared/time.js";
import { renderConfirmationRequest } from "../mail/confirmationRequest.js";
import { mailDueMs, queueEmail } from "../mail/outbox.js";
import type { Db } from "../store/database.js";
import { paymentDetails } from "../store/payments.js";
import type { PaymentsTable } from "../store/schema.js";
import { createUpdateLink } from "./updateLink.js";

/**
 * A recurring charge whose bank wants the donor to authenticate it stays PENDING, and the donor is e-mailed
 * a link to confirm that same payment on the update page, where they may also replace the method. The
 * link lasts as long as the charge is held (`CONFIRMATION_WINDOW_MS`); after that the charge is given up.
 */

export const CONFIRMATION_WINDOW_MS = 7 * 24 * 3600 * 1000;

/** What `failure_code` says of a PENDING payment that waits for the donor's confirmation. */
export const AWAITING_AUTHENTICATION = "authentication_required";

export async function requestConfirmation(
  trx: Db,
  row: PaymentsTable,
  /** The organization: its name signs the e-mail; its time zone dates the link's end. */
  org: { name: string; timeZone: string },
  publicUrl: string,
  nowMs: number,
  /** The real time, earlier than `nowMs` in a billing pass run `--as-of` a later moment (mailDueMs). */
  wallMs: number,
): Promise<void> {
  if (!row.subscription_id) return;
  const expiresAtMs = nowMs + CONFIRMATION_WINDOW_MS;
  const link = await createUpdateLink(
    trx,
    {
      organizationId: row.organization_id,
      subscriptionId: row.subscription_id,
      allowedMethods: ["CARD", "PAY_BY_BANK"],
      returnUrl: null,
      expiresAtMs,
      paymentId: row.id,
    },
    publicUrl,
    nowMs,
  );
  const mail = renderConfirmationRequest({
    organizationName: org.name,
    firstName: row.first_name,
    amountCents: Number(row.amount_cents),
    currency: row.currency,
    frequency: row.frequency as Frequency,
    url: link.url,
    expiresAt: isoAt(expiresAtMs),
    timeZone: org.timeZone,
    language: paymentDetails(row).language,
  });
  await queueEmail(
    trx,
    {
      organizationId: row.organization_id,
      to: row.email,
      fromName: org.name,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
    },
    // Due on the real time even when the charge is dated later (`billing run --as-of`): the server's mail
    // worker sends it at once.
    mailDueMs(nowMs, wallMs),
  );
}

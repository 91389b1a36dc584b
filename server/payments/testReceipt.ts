import { isoAt } from "../../shared/time.js";
import { translator } from "../i18n.js";
import { queueEmail } from "../mail/outbox.js";
import { renderReceipt } from "../mail/receipt.js";
import type { Db } from "../store/database.js";
import type { Organization } from "../store/organizations.js";
import { portalUrl } from "./portalUrl.js";
import { receiptEmailSettings } from "./receiptSettings.js";

/** The made-up gift of a test receipt, in hundredths as every amount: 50 units of any currency, by card. */
const SAMPLE_AMOUNT_CENTS = 5000;

/**
 * A sample receipt, sent from the settings to see what donors get: the organization's name, language,
 * currency, branding and receipt defaults (as a form without custom e-mail settings uses them), with a
 * made-up donor and gift, marked as a test in its subject and at the top of its body. Queued in the mail
 * outbox like a real receipt; it names no payment. Answers the queued e-mail's id.
 */
export async function queueTestReceipt(
  db: Db,
  org: Organization,
  to: string,
  at: { nowMs: number; publicUrl: string },
): Promise<string> {
  const tr = translator(org.language);
  const mail = renderReceipt({
    organizationName: org.name,
    formTitle: tr("mail.receipt.test.form"),
    customEmail: receiptEmailSettings({ enableCustomEmail: false }, org.receiptDefaults),
    branding: org.branding,
    test: true,
    donor: { firstName: "Alex", lastName: "Example", email: to },
    paymentId: "pay_TEST0000000000",
    status: "COMPLETED",
    amountCents: SAMPLE_AMOUNT_CENTS,
    feeCents: 0,
    frequency: "ONE_TIME",
    fund: tr("mail.receipt.test.fund"),
    date: isoAt(at.nowMs),
    timeZone: org.timeZone,
    lines: [],
    discountCents: 0,
    promoCode: null,
    paymentMethod: { type: "card", brand: "visa", last4: "4242" },
    nextBillingDate: null,
    recurringCharge: false,
    portalUrl: portalUrl(at.publicUrl, org.id, { language: org.language }),
    currency: org.currency,
    language: org.language,
  });
  return queueEmail(
    db,
    {
      organizationId: org.id,
      to,
      fromName: org.name,
      ...(mail.replyTo ? { replyTo: mail.replyTo } : {}),
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
    },
    at.nowMs,
  );
}

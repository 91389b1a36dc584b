import type { ReceiptInput } from "../mail/receipt.js";
import type { ReceiptDefaults } from "../store/organizations.js";

/** A form's custom e-mail settings, as its config keeps them. */
export interface FormReceiptSettings {
  enableCustomEmail: boolean;
  replyToAddress?: string | null;
  emailSubject?: string | null;
  customMessage?: string | null;
}

/**
 * What a receipt's reply-to, subject and message are: a form with custom e-mail on (enableCustomEmail)
 * uses its own settings; any other form the organization's receipt defaults, each one that is set; and
 * what neither sets is the built-in text (the built-in subject, no message, replies to the instance's
 * sender address).
 */
export function receiptEmailSettings(
  form: FormReceiptSettings,
  defaults: ReceiptDefaults,
): ReceiptInput["customEmail"] {
  if (form.enableCustomEmail)
    return {
      enabled: true,
      replyToAddress: form.replyToAddress ?? undefined,
      emailSubject: form.emailSubject ?? undefined,
      customMessage: form.customMessage ?? undefined,
    };
  return {
    enabled: true,
    replyToAddress: defaults.replyTo ?? undefined,
    emailSubject: defaults.subject ?? undefined,
    customMessage: defaults.message ?? undefined,
  };
}

/** Enumerations shared by the API, the checkout engine and the widget. */

export const FREQUENCIES = ["ONE_TIME", "DAILY", "WEEKLY", "MONTHLY", "ANNUALLY"] as const;
export type Frequency = (typeof FREQUENCIES)[number];

/** The name of each frequency's suggested-amount list on a form. */
export const AMOUNT_FIELD_BY_FREQUENCY = {
  ONE_TIME: "oneTimeAmounts",
  DAILY: "dailyAmounts",
  WEEKLY: "weeklyAmounts",
  MONTHLY: "monthlyAmounts",
  ANNUALLY: "annuallyAmounts",
} as const satisfies Record<Frequency, string>;

export const INPUT_FORM_TYPES = ["fundraising", "event"] as const;
export type InputFormType = (typeof INPUT_FORM_TYPES)[number];

export const AMOUNT_TYPES = ["standard", "giving_level", "sponsorship"] as const;
export type AmountType = (typeof AMOUNT_TYPES)[number];

export const STORED_FORM_TYPES = ["EMBED_FORM", "CROWDFUNDING_FORM", "PRODUCT", "EVENT"] as const;
export type StoredFormType = (typeof STORED_FORM_TYPES)[number];

/**
 * A form's stored (legacy) type from the friendly names create takes: an event is EVENT; otherwise giving
 * levels are CROWDFUNDING_FORM, sponsorship is PRODUCT and a standard form is EMBED_FORM. Reads return
 * the stored name.
 */
export function storedFormType(formType: InputFormType, amountType: AmountType): StoredFormType {
  if (formType === "event") return "EVENT";
  if (amountType === "giving_level") return "CROWDFUNDING_FORM";
  if (amountType === "sponsorship") return "PRODUCT";
  return "EMBED_FORM";
}

export function inputFormType(stored: StoredFormType): { formType: InputFormType; amountType: AmountType } {
  switch (stored) {
    case "EVENT":
      return { formType: "event", amountType: "standard" };
    case "CROWDFUNDING_FORM":
      return { formType: "fundraising", amountType: "giving_level" };
    case "PRODUCT":
      return { formType: "fundraising", amountType: "sponsorship" };
    default:
      return { formType: "fundraising", amountType: "standard" };
  }
}

export const CUSTOM_INPUT_TYPES = ["short_text", "long_text", "single_select", "multi_select"] as const;
export type CustomInputType = (typeof CUSTOM_INPUT_TYPES)[number];

export const TICKET_TYPES = ["INDIVIDUAL", "GROUP"] as const;
export const DISCOUNT_TYPES = ["percentage", "amount"] as const;

export const PERMISSIONS = [
  "donations:read",
  "donations:write",
  "subscriptions:read",
  "subscriptions:write",
  "contacts:read",
  "contacts:write",
  "forms:read",
  "forms:write",
  "webhooks:read",
  "webhooks:write",
  "analytics:read",
  "organization:read",
  "organization:write",
  "tickets:read",
  "tickets:write",
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** A dedication's kind: the gift is made in honor (HONOR) or in memory (MEMORY) of someone. */
export const TRIBUTE_KINDS = ["HONOR", "MEMORY"] as const;
export type TributeKind = (typeof TRIBUTE_KINDS)[number];

/** The events webhooks are sent for (the widget and the dashboard read them here, without zod). */
export const EVENT_TYPES = [
  "donation.created",
  "donation.updated",
  "subscription.created",
  "subscription.updated",
  "subscription.cancelled",
  "subscription.payment_method_updated",
  "contact.created",
  "contact.updated",
  "form.created",
  "form.updated",
  "ticket.checked_in",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Everything the log records, `subject.verb`. */
export const AUDIT_ACTIONS = [
  "payment.refunded",
  "subscription.updated",
  "subscription.cancelled",
  "form.created",
  "form.updated",
  "form.deleted",
  "organization.updated",
  "key.created",
  "key.revoked",
  "webhook.created",
  "webhook.updated",
  "webhook.deleted",
  "staff.invited",
  "staff.role_changed",
  "staff.removed",
  "staff.signed_in",
  "staff.sign_in_failed",
  "staff.password_changed",
  "staff.two_factor_enabled",
  "staff.two_factor_disabled",
  "ticket.checked_in",
  "ticket.check_in_undone",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

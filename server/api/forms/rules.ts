import { TIME_ZONE_RULE } from "../../../shared/schemas/form.js";
import type { BodyRule } from "../route.js";

/** The rules of a form between its fields (and, on an update, with the stored form the body changes). */
export const FORM_RULES: BodyRule[] = [
  {
    fields: [
      "oneTimeAmounts",
      "dailyAmounts",
      "weeklyAmounts",
      "monthlyAmounts",
      "annuallyAmounts",
      "defaultAmount",
      "goal",
      "givingLevels",
      "sponsorshipGroups",
      "tickets",
      "promoCodes",
    ],
    rule: "whole amounts when the organization's currency has no decimals (JPY)",
  },
  { fields: ["goal"], rule: "goal above 0 when enableFundraisingBar is true" },
  {
    fields: ["replyToAddress", "emailSubject", "customMessage"],
    rule: "replyToAddress, emailSubject and customMessage when enableCustomEmail is true",
  },
  { fields: ["eventDate", "startTime"], rule: "eventDate and startTime when enableTimeAndLocation is true" },
  {
    fields: ["frequencies", "defaultFrequency"],
    rule: 'defaultFrequency one of frequencies; an event form\'s frequencies are ["ONE_TIME"]',
  },
  {
    fields: ["amountType", "givingLevels", "sponsorshipGroups", "tickets", "promoCodes"],
    rule: "by form type: event forms need tickets (promo codes only there); giving_level forms need givingLevels and sponsorship forms sponsorshipGroups, and only they take them; a stored formType (EMBED_FORM, CROWDFUNDING_FORM, PRODUCT) fixes amountType",
  },
  {
    fields: ["sponsorshipGroups", "tickets", "promoCodes", "customInputs", "funds"],
    rule: "no group title, option title, ticket name, promo code (any case), custom input id or title twice; maxPerOrder at most the ticket's quantity; a promo code's applicableTickets name tickets of the form",
  },
  { fields: ["customInputs"], rule: "a custom input's title and question match when both are sent" },
  { fields: ["enableTribute", "formType"], rule: "enableTribute only on donation forms, not on event forms" },
  {
    fields: ["enableMonthlyUpsell", "frequencies"],
    rule: "enableMonthlyUpsell only on donation forms offering ONE_TIME and MONTHLY",
  },
  {
    fields: ["description", "faqs", "givingLevels", "sponsorshipGroups", "tickets", "customInputs"],
    rule: "the form's hosted page at most 180 KB, with the organization's global custom inputs (every text is measured as the page escapes it)",
  },
  TIME_ZONE_RULE,
];

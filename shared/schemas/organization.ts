import { z } from "zod";
import { CURRENCIES, isCurrency } from "../currency.js";
import { EMAIL_ADDRESS, isEmailAddress } from "../email.js";
import { isPhoneCountry, PHONE_COUNTRIES } from "../phone.js";
import {
  boundedString,
  HTTPS_URL,
  hasCredentials,
  languageTag,
  NO_CREDENTIALS,
  questionId,
  readOnlyFields,
  requiredSingleLine,
  requiredString,
  urlTextProblem,
} from "./common.js";
import { dropdownOptionProblems, dropdownRule, inputOptionsSchema, isTimeZone, timeZoneDoc } from "./form.js";

/** Organization settings: name, sites' base URLs (overlay links), phone country, global custom inputs. */

export const GLOBAL_INPUT_TYPES = [
  "SHORT_TEXT_INPUT",
  "LONG_TEXT_INPUT",
  "SINGLE_SELECTION_DROPDOWN",
  "MULTI_SELECTION_DROPDOWN",
] as const;

export const globalCustomInputSchema = z
  .strictObject({
    id: questionId(100).optional(),
    title: requiredString(300),
    inputType: z.enum(GLOBAL_INPUT_TYPES),
    required: z.boolean().default(false),
    options: inputOptionsSchema,
  })
  .meta(dropdownRule(["SINGLE_SELECTION_DROPDOWN", "MULTI_SELECTION_DROPDOWN"]))
  .check(
    z.superRefine((input, ctx) => {
      const isSelect =
        input.inputType === "SINGLE_SELECTION_DROPDOWN" || input.inputType === "MULTI_SELECTION_DROPDOWN";
      if (isSelect && Array.isArray(input.options))
        for (const message of dropdownOptionProblems(input.options))
          ctx.addIssue({ code: "custom", message, path: ["options"] });
      if (!isSelect && Array.isArray(input.options) && input.options.length > 0)
        ctx.addIssue({ code: "custom", message: "are only allowed on dropdown inputs", path: ["options"] });
    }),
  );

export type GlobalCustomInput = {
  id: string;
  title: string;
  inputType: (typeof GLOBAL_INPUT_TYPES)[number];
  required: boolean;
  options: string[];
};

/**
 * Whether a parsed URL's host name (URL.hostname: lower case, IDNs in punycode) is a real one: dot-separated
 * labels of letters, digits and hyphens (1–63 characters, no hyphen at either end; 253 in all), an IPv4
 * address among them. A site's origin is written into the checkout's CSP frame-ancestors, so nothing else may
 * be in it; CSP has no way to name an IPv6 address (browsers drop `[…]` there), so none is taken.
 */
export function isSiteHostname(hostname: string): boolean {
  return (
    hostname.length <= 253 &&
    hostname.split(".").every((label) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label))
  );
}

/** An http(s) URL whose host is written in letters, digits, hyphens and dots (an IPv4 address too); any port. */
const SITE_URL = /^https?:\/\/[a-z0-9.-]+(:[0-9]{1,5})?(\/|$)/i;

const baseUrl = z
  .string()
  .trim()
  .max(2048)
  .meta({
    format: "uri",
    pattern: "^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[^?#\\s]*)?$",
  })
  .check(
    z.superRefine((value, ctx) => {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        ctx.addIssue({ code: "custom", message: "must be an absolute http(s) URL" });
        return;
      }
      if (url.protocol !== "https:" && url.protocol !== "http:")
        ctx.addIssue({ code: "custom", message: "must be an absolute http(s) URL" });
      else if (url.search || url.hash)
        ctx.addIssue({ code: "custom", message: "must not have a query or fragment" });
      else if (!SITE_URL.test(value) || !isSiteHostname(url.hostname))
        ctx.addIssue({
          code: "custom",
          message: url.hostname.startsWith("[")
            ? "must name its host by a name or an IPv4 address: browsers cannot allow an IPv6 address to frame the checkout (CSP frame-ancestors)"
            : "must name its host by letters, digits, hyphens and dots (IDNs in punycode) or an IPv4 address, with an optional port and nothing else",
        });
    }),
  )
  .transform((value) => value.replace(/\/+$/, ""));

const UPDATABLE = [
  "organizationName",
  "organizationBaseURLs",
  "globalCustomInputs",
  "country",
  "legalName",
  "legalAddress",
  "taxId",
  "currency",
  "language",
  "timeZone",
  "requireTwoFactor",
  "logoUrl",
  "brandColor",
  "receiptReplyTo",
  "receiptSubject",
  "receiptMessage",
];

/** `null` or an empty string clears a setting. */
const emptyToNull = (value: string | null) => (value === "" ? null : value);

/** The logo: an absolute https URL without credentials (it is shown in donors' mail), or null. */
const logoUrl = z
  .string()
  .trim()
  .max(2048)
  .meta(HTTPS_URL)
  .check(
    z.superRefine((value, ctx) => {
      if (value === "") return;
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        ctx.addIssue({ code: "custom", message: "must be an https URL" });
        return;
      }
      const problem =
        url.protocol !== "https:"
          ? "must be an https URL"
          : hasCredentials(url)
            ? NO_CREDENTIALS
            : urlTextProblem(value);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
  )
  .nullable()
  .transform(emptyToNull);

const BRAND_COLOR = /^#[0-9A-Fa-f]{6}$/;

const brandColor = z
  .string()
  .trim()
  .meta({ pattern: "^(#[0-9A-Fa-f]{6})?$" })
  .check(
    z.superRefine((value, ctx) => {
      if (value !== "" && !BRAND_COLOR.test(value))
        ctx.addIssue({ code: "custom", message: "must be a hex color like #3B82F6" });
    }),
  )
  .nullable()
  .transform((value) => (value ? value.toUpperCase() : null));

const receiptReplyTo = z
  .string()
  .trim()
  .max(254)
  .meta(EMAIL_ADDRESS)
  .check(
    z.superRefine((value, ctx) => {
      if (value !== "" && !isEmailAddress(value))
        ctx.addIssue({ code: "custom", message: "must be a valid email address" });
    }),
  )
  .nullable()
  .transform(emptyToNull);

const receiptText = (max: number) => boundedString(max).nullable().transform(emptyToNull);

/** A legal detail: text, or null (or "") to clear it. */
const legalText = (max: number, description: string) =>
  z
    .string()
    .trim()
    .max(max)
    .nullable()
    .transform((value) => (value === "" ? null : value))
    .optional()
    .meta({ description });

export const organizationUpdateSchema = z
  .strictObject({
    organizationName: requiredSingleLine(200).optional(),
    organizationBaseURLs: z.array(baseUrl).max(20).optional(),
    globalCustomInputs: z.array(globalCustomInputSchema).max(50).optional().meta({
      description:
        "Custom inputs asked on every form of the organization (replaces the list). They are in every form's hosted page, so a list that would take any live form's page past 180 KB (or a form of a title and a fund alone) is a 400",
    }),
    country: z
      .string()
      .trim()
      .toUpperCase()
      .meta({
        enum: PHONE_COUNTRIES,
        description:
          "ISO 3166-1 alpha-2 code (any case): the country of phone numbers given without a country code",
      })
      .check(
        z.superRefine((code, ctx) => {
          if (!/^[A-Z]{2}$/.test(code) || !isPhoneCountry(code))
            ctx.addIssue({
              code: "custom",
              message: "must be an ISO 3166-1 alpha-2 country code such as US or GB",
            });
        }),
      )
      .optional(),
    legalName: legalText(200, "The registered name receipts and statements show (default: organizationName)"),
    legalAddress: legalText(
      500,
      "The postal address receipts and statements show; lines separated by newlines",
    ),
    taxId: legalText(50, "The tax id receipts and statements show (an EIN, a charity number)"),
    currency: z
      .string()
      .trim()
      .toUpperCase()
      .meta({
        enum: CURRENCIES,
        description:
          "ISO 4217 code (any case) new gifts are taken in; gifts already made keep theirs. Amounts keep the currency's decimals (none for JPY)",
      })
      .check(
        z.superRefine((code, ctx) => {
          if (!isCurrency(code))
            ctx.addIssue({
              code: "custom",
              message: `must be a supported ISO 4217 currency code such as USD, EUR or JPY (one of ${CURRENCIES.join(", ")})`,
            });
        }),
      )
      .optional(),
    language: languageTag.optional().meta({
      description:
        "The language donors' pages speak unless the donor asks for another (?lang=, Accept-Language)",
    }),
    timeZone: z
      .string()
      .trim()
      .max(100)
      .meta(
        timeZoneDoc({
          // Read trimmed: spaces around the name are taken.
          pattern: "^\\s*UTC\\s*$|/",
          description:
            "An IANA time zone name such as America/New_York (default UTC): the organization's days in reports (`/v1/analytics/summary`), the dates of CSV exports and the years and dates of the donor portal's gift list, statements and receipts, and the dates of receipt e-mails",
        }),
      )
      .check(
        z.superRefine((zone, ctx) => {
          if (!isTimeZone(zone))
            ctx.addIssue({
              code: "custom",
              message: "must be an IANA time zone name such as America/New_York",
            });
        }),
      )
      .optional(),
    requireTwoFactor: z.boolean().optional().meta({
      description:
        "true: Owners and Finance must sign in to the dashboard with a TOTP code; one who has not set it up reaches nothing but the set-up until they do",
    }),
    logoUrl: logoUrl.optional().meta({
      description:
        'The organization\'s logo, an https URL (PNG, JPEG, GIF or SVG the mail clients can load): shown at the top of receipts. null or "" removes it',
    }),
    brandColor: brandColor.optional().meta({
      description:
        'The organization\'s colour, #RRGGBB (stored upper case): the accent of receipts. null or "" removes it',
    }),
    receiptReplyTo: receiptReplyTo.optional().meta({
      description:
        "Where donors' replies to receipts go, for receipts of forms without custom e-mail settings (enableCustomEmail false). null or \"\": replies go to the instance's sender address",
    }),
    receiptSubject: receiptText(200).optional().meta({
      description:
        'The subject of receipts of forms without custom e-mail settings, instead of the built-in one. null or "": the built-in subject',
    }),
    receiptMessage: receiptText(5000).optional().meta({
      description:
        'A message put at the top of receipts of forms without custom e-mail settings (blank lines separate paragraphs). null or "": none',
    }),
    // What GET returns and only the payments endpoints (`/v1/organization/payments`, `org stripe`) change:
    // a configuration read can be sent back as it is.
    ...readOnlyFields("paymentProcessor"),
  })
  .meta({ anyOf: UPDATABLE.map((field) => ({ required: [field] })) })
  .check(
    z.superRefine(
      (body, ctx) => {
        if (body === null || typeof body !== "object") return;
        if (
          body.organizationName === undefined &&
          body.organizationBaseURLs === undefined &&
          body.globalCustomInputs === undefined &&
          body.country === undefined &&
          body.legalName === undefined &&
          body.legalAddress === undefined &&
          body.taxId === undefined &&
          body.currency === undefined &&
          body.language === undefined &&
          body.timeZone === undefined &&
          body.requireTwoFactor === undefined &&
          body.logoUrl === undefined &&
          body.brandColor === undefined &&
          body.receiptReplyTo === undefined &&
          body.receiptSubject === undefined &&
          body.receiptMessage === undefined
        )
          ctx.addIssue({
            code: "custom",
            message: `must contain at least one of ${UPDATABLE.join(", ")}`,
            path: [],
          });
        const inputs = Array.isArray(body.globalCustomInputs) ? body.globalCustomInputs : [];
        const seenIds = new Set<string>();
        const seenTitles = new Set<string>();
        for (const input of inputs) {
          if (input === null || typeof input !== "object") continue;
          if (input.id && seenIds.has(input.id))
            ctx.addIssue({
              code: "custom",
              message: `must not repeat the id "${input.id}"`,
              path: ["globalCustomInputs"],
            });
          if (typeof input.title === "string" && seenTitles.has(input.title))
            ctx.addIssue({
              code: "custom",
              message: `must not repeat the title "${input.title}"`,
              path: ["globalCustomInputs"],
            });
          if (input.id) seenIds.add(input.id);
          if (typeof input.title === "string") seenTitles.add(input.title);
        }
      },
      { when: () => true },
    ),
  );

export type OrganizationUpdate = z.output<typeof organizationUpdateSchema>;

/**
 * Gives each global input a stable id: a given id is kept, an input whose title matches an existing
 * one keeps that input's id, and a new input gets a fresh one.
 */
export function assignGlobalInputIds(
  inputs: NonNullable<OrganizationUpdate["globalCustomInputs"]>,
  existing: GlobalCustomInput[],
  newId: () => string,
): GlobalCustomInput[] {
  // Ids sent explicitly are claimed first, so an old title's id is never handed to a second input.
  const taken = new Set(inputs.map((input) => input.id).filter((id): id is string => id !== undefined));
  return inputs.map((input) => {
    let id = input.id;
    if (id === undefined) {
      const previous = existing.find((e) => e.title === input.title)?.id;
      id = previous !== undefined && !taken.has(previous) ? previous : newId();
      taken.add(id);
    }
    return {
      id,
      title: input.title,
      inputType: input.inputType,
      required: input.required,
      options: input.options,
    };
  });
}

import { z } from "zod";
import { emailAddress, NOT_BLANK, readOnlyFields, requiredSingleLine, singleLineString } from "./common.js";
import { count, majorUnits, time, uuid } from "./wire.js";

/**
 * Contacts through the API. Input takes `value` or `email` for an address and
 * `isPrimary` or `is_primary` for the primary flag; output always uses `value` and `isPrimary`.
 */

export const CONSENT_VALUES = ["OPTED_IN", "OPTED_OUT", "UNKNOWN"] as const;

const MAX_ITEMS = 20;

/**
 * A phone number as typed. Formats are not validated: a valid number is matched by its E.164 form (read in
 * the contact's address's country, else the organization's), anything else as typed (shared/phone.ts).
 */
const phoneText = requiredSingleLine(40);

/** How the document says that an object takes one of two synonyms, not both. */
function notBoth(a: string, b: string) {
  return { not: { required: [a, b] } };
}

const ADDRESS_PARTS = ["line1", "line2", "city", "region", "postal", "country"];

/** A list with at most one item marked primary (under either name), as the document states it. */
const ONE_PRIMARY = {
  contains: {
    anyOf: [
      { required: ["isPrimary"], properties: { isPrimary: { const: true } } },
      { required: ["is_primary"], properties: { is_primary: { const: true } } },
    ],
  },
  minContains: 0,
  maxContains: 1,
};

/** One of two synonyms, present at most once; reported on the field that was sent. */
function synonym(value: unknown, alias: unknown, names: [string, string], ctx: z.RefinementCtx): void {
  if (value !== undefined && alias !== undefined)
    ctx.addIssue({
      code: "custom",
      message: `send either ${names[0]} or ${names[1]}, not both`,
      path: [names[1]],
    });
}

const emailItem = z
  .strictObject({
    value: emailAddress.optional(),
    email: emailAddress.optional(),
    isPrimary: z.boolean().optional(),
    is_primary: z.boolean().optional(),
    isVerified: z.boolean().optional(),
  })
  .meta({
    anyOf: [{ required: ["value"] }, { required: ["email"] }],
    allOf: [notBoth("value", "email"), notBoth("isPrimary", "is_primary")],
  })
  .check(
    z.superRefine((e, ctx) => {
      if (e.value === undefined && e.email === undefined)
        ctx.addIssue({ code: "custom", message: "is required (or send email)", path: ["value"] });
      synonym(e.value, e.email, ["value", "email"], ctx);
      synonym(e.isPrimary, e.is_primary, ["isPrimary", "is_primary"], ctx);
    }),
  )
  .transform((e) => ({
    value: (e.value ?? e.email) as string,
    isPrimary: e.isPrimary ?? e.is_primary ?? false,
    isVerified: e.isVerified ?? false,
  }));

const phoneItem = z
  .strictObject({
    value: phoneText,
    isPrimary: z.boolean().optional(),
    is_primary: z.boolean().optional(),
    // Computed from `value` (a read can be sent back).
    ...readOnlyFields("e164"),
  })
  .meta({ allOf: [notBoth("isPrimary", "is_primary")] })
  .check(z.superRefine((p, ctx) => synonym(p.isPrimary, p.is_primary, ["isPrimary", "is_primary"], ctx)))
  .transform((p) => ({ value: p.value, isPrimary: p.isPrimary ?? p.is_primary ?? false }));

const addressText = singleLineString(200).optional();
const addressItem = z
  .strictObject({
    line1: addressText,
    line2: addressText,
    city: addressText,
    region: addressText,
    postal: addressText,
    country: addressText,
    isPrimary: z.boolean().optional(),
    is_primary: z.boolean().optional(),
  })
  .meta({
    allOf: [notBoth("isPrimary", "is_primary")],
    anyOf: ADDRESS_PARTS.map((part) => ({
      required: [part],
      properties: { [part]: { pattern: NOT_BLANK } },
    })),
  })
  .check(
    z.superRefine((a, ctx) => {
      synonym(a.isPrimary, a.is_primary, ["isPrimary", "is_primary"], ctx);
      if (![a.line1, a.line2, a.city, a.region, a.postal, a.country].some((v) => v))
        ctx.addIssue({ code: "custom", message: "must have at least one non-empty field", path: [] });
    }),
  )
  .transform((a) => ({
    line1: a.line1 ?? "",
    line2: a.line2 ?? "",
    city: a.city ?? "",
    region: a.region ?? "",
    postal: a.postal ?? "",
    country: a.country ?? "",
    isPrimary: a.isPrimary ?? a.is_primary ?? false,
  }));

/** Fields a GET returns that the server computes: accepted and ignored, so a read can be sent back. */
const READ_ONLY = readOnlyFields(
  "id",
  "fullName",
  "totalTransactionCount",
  "totalTransactionValue",
  "emailConsent",
  "smsConsent",
  "communicationConsent",
  "hasActiveSubscription",
  "firstDonationAt",
  "lastDonationAt",
  "createdAt",
  "updatedAt",
);

const fields = {
  firstName: requiredSingleLine(100),
  lastName: requiredSingleLine(100),
  organizationName: singleLineString(200).nullable().optional(),
  emails: z.array(emailItem).max(MAX_ITEMS).meta(ONE_PRIMARY).optional(),
  phones: z.array(phoneItem).max(MAX_ITEMS).meta(ONE_PRIMARY).optional(),
  addresses: z.array(addressItem).max(MAX_ITEMS).meta(ONE_PRIMARY).optional(),
  /** Shorthand for one primary email / phone. */
  email: emailAddress.optional().meta({ description: "Shorthand for one primary email (not with `emails`)" }),
  phone: phoneText.optional().meta({ description: "Shorthand for one primary phone (not with `phones`)" }),
};

type Item = { isPrimary: boolean; value?: string };

/** Exactly one primary item in a non-empty list: the one marked, else the first. */
function withOnePrimary<T extends Item>(items: T[]): T[] {
  const marked = items.findIndex((i) => i.isPrimary);
  const primary = marked === -1 ? 0 : marked;
  return items.map((item, i) => ({ ...item, isPrimary: i === primary }));
}

interface ListInput {
  emails?: { value: string; isPrimary: boolean; isVerified: boolean }[];
  phones?: { value: string; isPrimary: boolean }[];
  addresses?: { isPrimary: boolean }[];
  email?: string;
  phone?: string;
}

/** Cross-field rules: no address twice in one list, at most one primary, shorthand not with the list. */
function checkLists(input: ListInput, ctx: z.RefinementCtx): void {
  if (input.email !== undefined && input.emails !== undefined)
    ctx.addIssue({ code: "custom", message: "send either email or emails, not both", path: ["email"] });
  if (input.phone !== undefined && input.phones !== undefined)
    ctx.addIssue({ code: "custom", message: "send either phone or phones, not both", path: ["phone"] });
  const lists: [string, Item[] | undefined, ((i: Item) => string) | null][] = [
    ["emails", input.emails, (i) => String(i.value).toLowerCase()],
    ["phones", input.phones, (i) => String(i.value).trim()],
    ["addresses", input.addresses, null],
  ];
  for (const [name, items, keyOf] of lists) {
    if (!Array.isArray(items)) continue;
    if (items.filter((i) => i?.isPrimary).length > 1)
      ctx.addIssue({ code: "custom", message: "must have at most one primary item", path: [name] });
    if (!keyOf) continue;
    const seen = new Set<string>();
    items.forEach((item, index) => {
      if (!item) return;
      const key = keyOf(item);
      if (seen.has(key))
        ctx.addIssue({
          code: "custom",
          message: "is listed twice in this contact",
          path: [name, index, "value"],
        });
      seen.add(key);
    });
  }
}

export interface ContactFields {
  firstName?: string;
  lastName?: string;
  organizationName?: string | null;
  emails?: { value: string; isPrimary: boolean; isVerified: boolean }[];
  phones?: { value: string; isPrimary: boolean }[];
  addresses?: {
    line1: string;
    line2: string;
    city: string;
    region: string;
    postal: string;
    country: string;
    isPrimary: boolean;
  }[];
}

function normalise(
  input: z.output<z.ZodObject<typeof fields>> | Partial<z.output<z.ZodObject<typeof fields>>>,
) {
  const out: ContactFields = {};
  if (input.firstName !== undefined) out.firstName = input.firstName;
  if (input.lastName !== undefined) out.lastName = input.lastName;
  if (input.organizationName !== undefined) out.organizationName = input.organizationName || null;
  const emails =
    input.email !== undefined ? [{ value: input.email, isPrimary: true, isVerified: false }] : input.emails;
  const phones = input.phone !== undefined ? [{ value: input.phone, isPrimary: true }] : input.phones;
  if (emails !== undefined) out.emails = emails.length ? withOnePrimary(emails) : [];
  if (phones !== undefined) out.phones = phones.length ? withOnePrimary(phones) : [];
  if (input.addresses !== undefined)
    out.addresses = input.addresses.length ? withOnePrimary(input.addresses) : [];
  return out;
}

/** POST /v1/contacts: firstName and lastName required. */
export const contactCreateSchema = z
  .strictObject({ ...fields, ...READ_ONLY })
  .meta({ allOf: [notBoth("email", "emails"), notBoth("phone", "phones")] })
  .check(z.superRefine((input, ctx) => checkLists(input, ctx)))
  .transform((input) => normalise(input) as ContactFields & { firstName: string; lastName: string });

/** PUT /v1/contacts/{id}: any subset of the create fields, at least one. */
export const contactUpdateSchema = z
  .strictObject({
    ...fields,
    firstName: fields.firstName.optional(),
    lastName: fields.lastName.optional(),
    ...READ_ONLY,
  })
  .meta({
    allOf: [notBoth("email", "emails"), notBoth("phone", "phones")],
    anyOf: Object.keys(fields).map((field) => ({ required: [field] })),
  })
  .check(
    z.superRefine((input, ctx) => {
      checkLists(input, ctx);
      const editable = Object.keys(fields).filter((k) => (input as Record<string, unknown>)[k] !== undefined);
      if (editable.length === 0)
        ctx.addIssue({
          code: "custom",
          message: `has no field to update (send any of: ${Object.keys(fields).join(", ")})`,
          path: [],
        });
    }),
  )
  .transform((input) => normalise(input));

const consent = z.enum(CONSENT_VALUES);

/** A contact as the API returns it (and a webhook sends it): exactly these fields. */
export const contactSchema = z.strictObject({
  id: uuid("The contact's id"),
  firstName: z.string(),
  lastName: z.string(),
  fullName: z.string().meta({ description: "firstName and lastName, the blank ones left out" }),
  organizationName: z.string().nullable(),
  emails: z.array(z.strictObject({ value: z.string(), isPrimary: z.boolean(), isVerified: z.boolean() })),
  phones: z.array(
    z.strictObject({
      value: z.string().meta({ description: "As typed" }),
      isPrimary: z.boolean(),
      e164: z.string().nullable().meta({
        description:
          "The number in E.164; typed without a country code, read in the country of the contact's primary address (at checkout, the donor's address) when it is an ISO code, else the organization's; null when the text is not a valid phone number",
      }),
    }),
  ),
  addresses: z.array(
    z.strictObject({
      line1: z.string(),
      line2: z.string(),
      city: z.string(),
      region: z.string(),
      postal: z.string(),
      country: z.string(),
      isPrimary: z.boolean(),
    }),
  ),
  totalTransactionCount: count(
    "Completed payments in the organization's current currency (fully refunded ones excluded)",
  ),
  totalTransactionValue: majorUnits(
    "Charged in completed payments in the organization's current currency, net of refunds",
  ),
  emailConsent: consent,
  smsConsent: consent,
  communicationConsent: consent,
  hasActiveSubscription: z.boolean(),
  firstDonationAt: time("The first completed payment in the organization's current currency").nullable(),
  lastDonationAt: time("The latest completed payment in the organization's current currency").nullable(),
  createdAt: time("When the contact was created"),
  updatedAt: time("When it last changed"),
});

import { randomUUID } from "node:crypto";
import { z } from "zod";
import { decimalsOf } from "../../shared/currency.js";
import { LANGUAGES } from "../../shared/languages.js";
import { formSchema, TIME_ZONE_RULE } from "../../shared/schemas/form.js";
import {
  assignGlobalInputIds,
  GLOBAL_INPUT_TYPES,
  organizationUpdateSchema,
} from "../../shared/schemas/organization.js";
import { ApiError } from "../errors.js";
import { uuid } from "../ids.js";
import { FORM_PAGE_LIMIT_BYTES, formPageBytes } from "../pages/hosted.js";
import { recordChange } from "../store/auditLog.js";
import type { Db } from "../store/database.js";
import { type FormRecord, listLiveForms } from "../store/forms.js";
import { listActiveLinksOfLiveForms } from "../store/links.js";
import { getOrganization, type Organization, updateOrganization } from "../store/organizations.js";
import type { AppDeps } from "./env.js";
import { amountsWithDecimals, prefillAmountsWithDecimals } from "./forms/wholeAmounts.js";
import { defineRoute, errorSchema, type RouteSpec, standardErrors } from "./route.js";

const paymentProcessorSchema = z
  .object({
    name: z.enum(["sandbox", "stripe"]).nullable().meta({
      description: "Who takes this organization's payments; null: nobody yet (production without Stripe)",
    }),
    mode: z.enum(["test", "live"]).meta({ description: "live only with live Stripe keys" }),
    accountId: z.string().nullable().meta({ description: "The Stripe account (acct_…)" }),
    accountName: z.string().nullable(),
    publishableKey: z
      .string()
      .nullable()
      .meta({ description: "Public by design: pages load Stripe.js with it" }),
    currency: z.string().meta({
      description:
        "ISO 4217, upper case: the Stripe account's default currency (the organization's own without Stripe). Gifts are charged in the organization's `currency`, whatever this is",
    }),
    walletDomains: z
      .array(z.string())
      .meta({ description: "Hosts registered at Stripe for Apple Pay and Google Pay" }),
  })
  .meta({
    description:
      "Read-only here: changed through /v1/organization/payments or the command line (org stripe). Never a secret.",
  });

export const organizationSchema = z.object({
  organizationName: z.string(),
  organizationBaseURLs: z.array(z.string()),
  globalCustomInputs: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      inputType: z.enum(GLOBAL_INPUT_TYPES),
      required: z.boolean(),
      options: z.array(z.string()),
    }),
  ),
  country: z.string().meta({
    description:
      "ISO 3166-1 alpha-2 (default US): the country of phone numbers typed without a country code (contacts are matched by E.164)",
  }),
  currency: z.string().meta({ description: "ISO 4217, upper case: what new gifts are taken in" }),
  language: z.enum(LANGUAGES).meta({ description: "The donors' default language" }),
  timeZone: z.string().meta({
    description: "IANA time zone (default UTC): the organization's days in reports and the dates of exports",
  }),
  legalName: z
    .string()
    .nullable()
    .meta({ description: "Shown on receipts and statements; null: organizationName" }),
  legalAddress: z.string().nullable(),
  taxId: z.string().nullable(),
  paymentProcessor: paymentProcessorSchema,
  requireTwoFactor: z.boolean().meta({
    description: "Owners and Finance must sign in to the dashboard with a TOTP code",
  }),
  logoUrl: z.string().nullable().meta({ description: "The logo's https URL, shown at the top of receipts" }),
  brandColor: z.string().nullable().meta({ description: "#RRGGBB: the accent colour of receipts" }),
  receiptReplyTo: z.string().nullable().meta({
    description: "Reply-to of receipts whose form has no custom e-mail settings",
  }),
  receiptSubject: z.string().nullable().meta({
    description: "Subject of receipts whose form has no custom e-mail settings (null: the built-in one)",
  }),
  receiptMessage: z.string().nullable().meta({
    description: "Message at the top of receipts whose form has no custom e-mail settings",
  }),
});

export function presentOrganization(
  org: Organization,
  processorName: "sandbox" | "stripe" | null,
): z.infer<typeof organizationSchema> {
  const stripe = org.processor;
  return {
    organizationName: org.name,
    organizationBaseURLs: org.baseUrls,
    globalCustomInputs: org.globalCustomInputs,
    country: org.country,
    currency: org.currency,
    language: org.language,
    timeZone: org.timeZone,
    legalName: org.legal.name,
    legalAddress: org.legal.address,
    taxId: org.legal.taxId,
    paymentProcessor: {
      name: processorName,
      mode: stripe?.mode ?? "test",
      accountId: stripe?.accountId ?? null,
      accountName: stripe?.accountName ?? null,
      publishableKey: stripe?.publishableKey ?? null,
      currency: (stripe?.currency ?? org.currency).toUpperCase(),
      walletDomains: stripe?.domains ?? [],
    },
    requireTwoFactor: org.requireTwoFactor,
    logoUrl: org.branding.logoUrl,
    brandColor: org.branding.color,
    receiptReplyTo: org.receiptDefaults.replyTo,
    receiptSubject: org.receiptDefaults.subject,
    receiptMessage: org.receiptDefaults.message,
  };
}

/** The settings as the audit log shows them: the configuration without the processor (set elsewhere). */
function settingsOf(org: Organization): Record<string, unknown> {
  const { paymentProcessor: _, ...settings } = presentOrganization(org, null);
  return settings;
}

/** The organization of the authenticated key; a key whose organization is gone is no longer valid. */
export async function loadCallerOrganization(deps: AppDeps, organizationId: string): Promise<Organization> {
  const org = await getOrganization(deps.store.db, organizationId);
  if (!org) throw new ApiError(401, "Invalid API key");
  return org;
}

/** Forms and links named in a currency refusal, at most; the rest are counted. */
const MAX_FORMS_NAMED = 50;
const FORMS_PAGE = 200;

/**
 * A currency without decimals (JPY) charges whole amounts only, so the organization's live forms, and the
 * active checkout links of those forms (a link's prefilled amount), must hold whole amounts before it
 * becomes theirs: a 409 naming each form and link and its fields with decimals otherwise. An inactive link
 * prefills nothing; it is checked when it is activated again (links.ts).
 */
async function checkFormsFitCurrency(db: Db, organizationId: string, currency: string): Promise<void> {
  if (decimalsOf(currency) !== 0) return;
  const problems: string[] = [];
  let after: { sort: string; id: string } | undefined;
  for (;;) {
    const forms = await listLiveForms(db, organizationId, FORMS_PAGE, after);
    for (const form of forms) {
      const fields = amountsWithDecimals(form.config, currency);
      if (fields.length) problems.push(`form ${form.id} ("${form.config.title}"): ${fields.join(", ")}`);
    }
    if (forms.length < FORMS_PAGE) break;
    const last = forms[forms.length - 1];
    after = { sort: last.createdAt, id: last.id };
  }
  problems.push(...(await linksWithDecimals(db, organizationId, currency)));
  if (problems.length === 0) return;
  const details = problems.slice(0, MAX_FORMS_NAMED);
  if (problems.length > MAX_FORMS_NAMED)
    details.push(`and ${problems.length - MAX_FORMS_NAMED} more forms or links`);
  throw new ApiError(
    409,
    `${currency} has no decimals, and these forms and checkout links hold amounts with decimals: make them whole amounts (PUT /v1/forms/{id}; a link's prefill with PUT /v1/forms/{formID}/links/{linkID}, or deactivate the link) before changing the currency`,
    details,
  );
}

/** The active links of the organization's live forms whose prefill the currency cannot express, one problem each. */
async function linksWithDecimals(db: Db, organizationId: string, currency: string): Promise<string[]> {
  const problems: string[] = [];
  let after: { sort: string; id: string } | undefined;
  for (;;) {
    const links = await listActiveLinksOfLiveForms(db, organizationId, FORMS_PAGE, after);
    for (const link of links) {
      const fields = prefillAmountsWithDecimals(link.prefill, currency);
      if (fields.length)
        problems.push(`link ${link.id} ("${link.name}") of form ${link.formId}: ${fields.join(", ")}`);
    }
    if (links.length < FORMS_PAGE) return problems;
    const last = links[links.length - 1];
    after = { sort: last.createdAt, id: last.id };
  }
}

/** The organization's settings that every one of its forms' hosted pages shows, and how each is read. */
const PAGE_FIELDS: [field: string, of: (org: Organization) => unknown][] = [
  ["organizationName", (org) => org.name],
  ["globalCustomInputs", (org) => org.globalCustomInputs],
  ["currency", (org) => org.currency],
  ["language", (org) => org.language],
];

/**
 * The organization's part of a hosted page (its name, its global custom inputs, amounts in its currency and
 * its language's texts) is in every live form's page: a change of it is measured on each live form's page,
 * as a form is when it is saved (forms/routes.ts), and refused when one would outgrow the page budget.
 * `before` and `after` are the organization as it was and as it would be; `db` is the change's transaction.
 * The command line's `org set` checks its changes with it too.
 */
export async function checkFormsFitPage(
  deps: AppDeps,
  db: Db,
  before: Organization,
  after: Organization,
): Promise<void> {
  const changed = PAGE_FIELDS.filter(
    ([, of]) => JSON.stringify(of(before)) !== JSON.stringify(of(after)),
  ).map(([field]) => field);
  if (changed.length === 0) return;
  let largest: { form: FormRecord; bytes: number } | undefined;
  let cursor: { sort: string; id: string } | undefined;
  for (;;) {
    const forms = await listLiveForms(db, after.id, FORMS_PAGE, cursor);
    for (const form of forms) {
      const bytes = await formPageBytes(deps, after, form.id, form.config, db);
      if (!largest || bytes > largest.bytes) largest = { form, bytes };
    }
    if (forms.length < FORMS_PAGE) break;
    const last = forms[forms.length - 1];
    cursor = { sort: last.createdAt, id: last.id };
  }
  const fields = changed.join(", ");
  const limit = `at most ${kb(FORM_PAGE_LIMIT_BYTES)} KB`;
  if (largest && largest.bytes > FORM_PAGE_LIMIT_BYTES) {
    const { form, bytes } = largest;
    throw ApiError.validation([
      `${fields} would make the hosted page of form ${form.id} ("${form.config.title}") too large (${kb(bytes)} KB, ${limit}): shorten the global custom inputs and their options, or that form`,
    ]);
  }
  // Without live forms (or with small ones), the organization's part must still leave room for a form.
  const bare = await formPageBytes(deps, after, randomUUID(), BARE_FORM(), db);
  if (bare > FORM_PAGE_LIMIT_BYTES)
    throw ApiError.validation([
      `${fields} would make every hosted page too large (${kb(bare)} KB with a form of a title and a fund alone, ${limit}): shorten the global custom inputs and their options`,
    ]);
}

/** The smallest form there is: what the organization's part of a page is measured with. */
const BARE_FORM = () => formSchema({ allowHttpImages: true }).parse({ title: "Form", funds: ["General"] });

const kb = (bytes: number) => Math.ceil(bytes / 1024).toLocaleString("en-US");

export function organizationRoutes(deps: AppDeps): RouteSpec[] {
  const load = (id: string) => loadCallerOrganization(deps, id);
  return [
    defineRoute({
      method: "get",
      path: "/v1/organization",
      operationId: "getOrganization",
      permission: "organization:read",
      tags: ["Organization"],
      summary: "Get the organization's configuration",
      responses: { 200: { description: "The configuration", schema: organizationSchema }, ...standardErrors },
      handler: async (c) => {
        const org = await load(c.get("auth").organizationId);
        return c.json(presentOrganization(org, deps.processors.nameFor(org)));
      },
    }),
    defineRoute({
      method: "put",
      path: "/v1/organization",
      operationId: "updateOrganization",
      permission: "organization:write",
      tags: ["Organization"],
      summary: "Change the organization's name, base URLs, global custom inputs, country or legal details",
      description:
        "Only the fields sent change. `organizationBaseURLs` are absolute http(s) URLs without query; the first is used for overlay links. `globalCustomInputs` replaces the list; an input keeps its id when sent with it, or when its title matches an existing input. `country` (ISO 3166-1 alpha-2) reads phone numbers typed without a country code from then on, for donors and contacts who give no country of their own in their address; phones already stored keep their E.164 form. `legalName`, `legalAddress` and `taxId` are printed on the receipts and year-end statements donors download from the donor portal; with a `taxId`, the receipt e-mails also name the legal name and tax id, the deductible amount and the note on goods and services received; null or an empty string clears one. `currency` (ISO 4217) is what new gifts are taken in; payments and recurring gifts already made keep theirs (the hosted pages' fundraising bar and donor list count only gifts in the current one: there are no exchange rates), and the form amounts are read in it (a currency without decimals, such as JPY, refuses amounts with decimals). Changing to a currency without decimals while a live form holds an amount with decimals (12.50), or an active checkout link of one prefills such an amount, is a 409 naming each such form and its fields (`oneTimeAmounts[0]`, `defaultAmount`, …) and each such link (`prefill.amount`): change those first (or deactivate the link). An organization on Stripe may change it too: Stripe charges each payment in its own currency. `language` is the donors' pages' default language. `timeZone` (an IANA name, default UTC) is the organization's day: `/v1/analytics/summary` counts a gift on the day it was made there, CSV exports write dates in it, the donor portal's year-end statements count its calendar year and print its dates, and the portal's gift list and the receipt e-mails show its days. `logoUrl` (https) and `brandColor` (#RRGGBB) brand the receipts. `receiptReplyTo`, `receiptSubject` and `receiptMessage` are the receipts' defaults: a form with its own custom e-mail (`enableCustomEmail`) uses its own, every other form these, and without them the built-in text; null or an empty string clears one. `requireTwoFactor` makes Owners and Finance sign in to the dashboard with a TOTP code: one who has not set it up gets a session that reaches only the set-up (`/api/staff/two-factor/…`) and `/api/staff/me`, and 403 everywhere else, until they do. Any caller with `organization:write` may turn it on; only an Owner signed in to the dashboard may turn it off (an API key: 403).",
      body: organizationUpdateSchema,
      rules: [
        { fields: ["globalCustomInputs"], rule: "no custom input id or title twice" },
        TIME_ZONE_RULE,
        {
          fields: ["globalCustomInputs", "organizationName", "currency", "language"],
          rule: "every live form's hosted page, and a form of a title and a fund alone, at most 180 KB with the new settings (they are in every form's page)",
        },
      ],
      responses: {
        200: { description: "The new configuration", schema: organizationSchema },
        ...standardErrors,
        409: {
          description:
            "A currency without decimals while live forms (or active checkout links of them) hold amounts with decimals: `details` names each form or link and field",
          schema: errorSchema,
        },
      },
      handler: async (c, { body }) => {
        const { organizationId, actor, role } = c.get("auth");
        const org = await load(organizationId);
        // Lifting the second factor's requirement is the Owner's to decide, signed in as one: not an API key (a
        // leaked one would otherwise weaken every staff sign-in). Setting it only makes sign-ins stronger.
        if (body.requireTwoFactor === false && org.requireTwoFactor && role !== "OWNER")
          throw new ApiError(403, "Only an Owner signed in to the dashboard may turn requireTwoFactor off");
        const nowMs = deps.now();
        // The change and its audit-log entry (the settings that changed, before and after) are one: a write
        // transaction from its start (on SQLite `begin immediate`), as it reads the forms before it writes,
        // so a commit of another connection in between (the metrics thread's) cannot make it fail.
        const updated = await deps.store.transact(async (trx) => {
          if (body.currency !== undefined && body.currency !== org.currency)
            await checkFormsFitCurrency(trx, org.id, body.currency);
          const changed = await updateOrganization(
            trx,
            org.id,
            {
              name: body.organizationName,
              baseUrls: body.organizationBaseURLs,
              globalCustomInputs: body.globalCustomInputs
                ? assignGlobalInputIds(body.globalCustomInputs, org.globalCustomInputs, uuid)
                : undefined,
              country: body.country,
              legal: { name: body.legalName, address: body.legalAddress, taxId: body.taxId },
              currency: body.currency,
              language: body.language,
              timeZone: body.timeZone,
              requireTwoFactor: body.requireTwoFactor,
              branding: { logoUrl: body.logoUrl, color: body.brandColor },
              receiptDefaults: {
                replyTo: body.receiptReplyTo,
                subject: body.receiptSubject,
                message: body.receiptMessage,
              },
            },
            nowMs,
          );
          if (changed) await checkFormsFitPage(deps, trx, org, changed);
          if (changed)
            await recordChange(
              trx,
              {
                organizationId,
                actor,
                action: "organization.updated",
                subjectType: "organization",
                subjectId: organizationId,
                before: settingsOf(org),
                after: settingsOf(changed),
              },
              nowMs,
            );
          return changed;
        });
        const now = updated ?? org;
        return c.json(presentOrganization(now, deps.processors.nameFor(now)));
      },
    }),
  ];
}

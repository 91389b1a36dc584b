import { countryCode } from "./countries.js";
import { isEmailAddress } from "./email.js";
import { AMOUNT_FIELD_BY_FREQUENCY, FREQUENCIES, type Frequency } from "./enums.js";
import { dollarsToCents } from "./money.js";
import { isSingleLine, SINGLE_LINE_MESSAGE } from "./schemas/common.js";
import type { FormConfig } from "./schemas/form.js";
import type { GlobalCustomInput } from "./schemas/organization.js";

/**
 * Checkout-link prefill: the rules for each key against the form it opens and the
 * organization's global inputs, and the donor-facing view of a stored prefill.
 */

export const PREFILL_TEXT_KEYS = [
  "firstName",
  "lastName",
  "email",
  "phone",
  "organizationName",
  "address1",
  "address2",
  "city",
  "state",
  "postalCode",
  "country",
] as const;
export const PREFILL_UTM_KEYS = ["utmSource", "utmMedium", "utmCampaign", "utmTerm", "utmContent"] as const;
export const PREFILL_KEYS = [
  ...PREFILL_TEXT_KEYS,
  "amount",
  "fund",
  "frequency",
  "customInputs",
  "sponsorshipGroup",
  "product",
  "ticket",
  ...PREFILL_UTM_KEYS,
] as const;

type TextKey = (typeof PREFILL_TEXT_KEYS)[number];
type UtmKey = (typeof PREFILL_UTM_KEYS)[number];

/** A validated prefill: money in cents, custom answers keyed as the organization sent them. */
export type Prefill = Partial<Record<TextKey | UtmKey, string>> & {
  amount?: number;
  fund?: string;
  frequency?: Frequency;
  customInputs?: Record<string, string | string[]>;
  sponsorshipGroup?: string;
  product?: string;
  ticket?: string;
};

const MAX_TEXT = 200;
/** Text keys the checkout takes shorter than MAX_TEXT (its donor fields): a link may not give more. */
const MAX_TEXT_OF: Partial<Record<TextKey, number>> = {
  firstName: 100,
  lastName: 100,
  phone: 40,
  city: 100,
  state: 100,
  postalCode: 20,
};
const MAX_ANSWER = 2000;

export interface AnyCustomInput {
  id: string;
  title: string;
  kind: "text" | "single" | "multi";
  options: string[];
  required: boolean;
}

/** The form's custom inputs and the organization's global ones, in one list. */
export function customInputsOf(form: FormConfig, globals: GlobalCustomInput[]): AnyCustomInput[] {
  const formInputs = form.customInputs.map((c) => ({
    id: c.id,
    title: c.title,
    kind: c.inputType === "single_select" ? "single" : c.inputType === "multi_select" ? "multi" : "text",
    options: c.options,
    required: c.required,
  })) as AnyCustomInput[];
  const globalInputs = globals.map((g) => ({
    id: g.id,
    title: g.title,
    kind:
      g.inputType === "SINGLE_SELECTION_DROPDOWN"
        ? "single"
        : g.inputType === "MULTI_SELECTION_DROPDOWN"
          ? "multi"
          : "text",
    options: g.options,
    required: g.required,
  })) as AnyCustomInput[];
  return [...formInputs, ...globalInputs];
}

export function findInput(inputs: AnyCustomInput[], key: string): AnyCustomInput | undefined {
  return inputs.find((i) => i.id === key) ?? inputs.find((i) => i.title === key);
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** Checks a prefill object against a form; returns every problem at once, or the normalised prefill. */
export function validatePrefill(
  raw: unknown,
  form: FormConfig,
  globals: GlobalCustomInput[],
): { prefill: Prefill; details: string[] } {
  const details: string[] = [];
  const prefill: Prefill = {};
  if (raw === undefined || raw === null) return { prefill, details };
  if (typeof raw !== "object" || Array.isArray(raw)) {
    return { prefill, details: [`prefill must be an object, not ${describeValue(raw)}`] };
  }
  const input = raw as Record<string, unknown>;
  const accepted = new Set<string>(PREFILL_KEYS);
  for (const key of Object.keys(input)) {
    if (!accepted.has(key))
      details.push(
        `prefill.${key} is not an accepted prefill key; accepted keys: ${PREFILL_KEYS.join(", ")}`,
      );
  }

  for (const key of [...PREFILL_TEXT_KEYS, ...PREFILL_UTM_KEYS]) {
    const value = input[key];
    if (value === undefined) continue;
    const max = MAX_TEXT_OF[key as TextKey] ?? MAX_TEXT;
    if (typeof value !== "string")
      details.push(`prefill.${key} must be a string, not ${describeValue(value)}`);
    else if (value.trim().length > max) details.push(`prefill.${key} must be at most ${max} characters`);
    // Each lands in a single-line field of the checkout (the donor's, or the gift's UTM), which refuses it.
    else if (!isSingleLine(value)) details.push(`prefill.${key} ${SINGLE_LINE_MESSAGE}`);
    else if (key === "email" && value.trim() && !isEmailAddress(value.trim()))
      details.push("prefill.email must be a valid email address");
    else prefill[key] = value.trim();
  }

  const isEvent = form.formType === "EVENT";
  const isProduct = form.formType === "PRODUCT";

  if (input.fund !== undefined) {
    if (typeof input.fund !== "string")
      details.push(`prefill.fund must be a string, not ${describeValue(input.fund)}`);
    else if (!form.funds.includes(input.fund))
      details.push(`prefill.fund must be one of the form's funds: ${form.funds.join(", ")}`);
    else prefill.fund = input.fund;
  }

  if (input.frequency !== undefined) {
    const f = input.frequency;
    if (typeof f !== "string" || !(FREQUENCIES as readonly string[]).includes(f))
      details.push(`prefill.frequency must be one of: ${FREQUENCIES.join(", ")}`);
    else if (!form.frequencies.includes(f as Frequency))
      details.push(
        `prefill.frequency ${f} is not enabled on this form; enabled: ${form.frequencies.join(", ")}`,
      );
    else prefill.frequency = f as Frequency;
  }

  const productGroups = form.sponsorshipGroups;
  let group: FormConfig["sponsorshipGroups"][number] | undefined;
  if (input.sponsorshipGroup !== undefined) {
    const g = input.sponsorshipGroup;
    if (!isProduct) details.push("prefill.sponsorshipGroup is only accepted on sponsorship (PRODUCT) forms");
    else if (typeof g !== "string")
      details.push(`prefill.sponsorshipGroup must be a string, not ${describeValue(g)}`);
    else {
      group = productGroups.find((pg) => pg.groupTitle === g);
      if (!group)
        details.push(
          `prefill.sponsorshipGroup must match a productGroupName: ${productGroups.map((pg) => pg.groupTitle).join(", ")}`,
        );
      else prefill.sponsorshipGroup = g;
    }
  }
  let product: FormConfig["sponsorshipGroups"][number]["options"][number] | undefined;
  if (input.product !== undefined) {
    const p = input.product;
    if (!isProduct) details.push("prefill.product is only accepted on sponsorship (PRODUCT) forms");
    else if (typeof p !== "string") details.push(`prefill.product must be a string, not ${describeValue(p)}`);
    else if (input.sponsorshipGroup === undefined)
      details.push("prefill.product requires prefill.sponsorshipGroup");
    else if (group) {
      product = group.options.find((o) => o.optionTitle === p);
      if (!product)
        details.push(
          `prefill.product must match a productName in ${group.groupTitle}: ${group.options.map((o) => o.optionTitle).join(", ")}`,
        );
      else prefill.product = p;
    }
  }

  if (input.ticket !== undefined) {
    const t = input.ticket;
    if (!isEvent) details.push("prefill.ticket is only accepted on event forms");
    else if (typeof t !== "string") details.push(`prefill.ticket must be a string, not ${describeValue(t)}`);
    else if (!form.tickets.some((ticket) => ticket.name === t))
      details.push(
        `prefill.ticket must name a ticket of this form: ${form.tickets.map((x) => x.name).join(", ")}`,
      );
    else prefill.ticket = t;
  }

  if (input.amount !== undefined) {
    const a = input.amount;
    const cents = typeof a === "number" ? dollarsToCents(a) : null;
    if (typeof a !== "number") details.push(`prefill.amount must be a number, not ${describeValue(a)}`);
    else if (!(a >= 0.01 && a <= 1_000_000))
      details.push("prefill.amount must be between 0.01 and 1,000,000");
    else if (cents === null) details.push("prefill.amount must have at most 2 decimal places");
    else if (form.formType === "CROWDFUNDING_FORM" && !form.givingLevels.some((l) => l.amount === cents))
      details.push(
        `prefill.amount must equal a giving level's amount: ${form.givingLevels.map((l) => l.amount / 100).join(", ")}`,
      );
    else if (isProduct && product && product.amount !== cents)
      details.push(`prefill.amount must equal the price of ${product.optionTitle} (${product.amount / 100})`);
    else if (isProduct && !product && !productGroups.some((g) => g.options.some((o) => o.amount === cents)))
      details.push("prefill.amount must equal the price of one of the form's products");
    else prefill.amount = cents;
  }

  if (input.customInputs !== undefined) {
    const answers = input.customInputs;
    if (answers === null || typeof answers !== "object" || Array.isArray(answers)) {
      details.push(
        `prefill.customInputs must be an object keyed by custom input id or title, not ${describeValue(answers)}`,
      );
    } else {
      const inputs = customInputsOf(form, globals);
      const valid = `valid ids and titles: ${inputs.flatMap((i) => [i.id, i.title]).join(", ") || "(none)"}`;
      const out: Record<string, string | string[]> = {};
      for (const [key, value] of Object.entries(answers as Record<string, unknown>)) {
        const field = `prefill.customInputs.${key}`;
        const ci = findInput(inputs, key);
        if (!ci) {
          details.push(`${field} is not a custom input of this form or organization; ${valid}`);
          continue;
        }
        if (ci.kind === "multi") {
          if (!Array.isArray(value) || value.some((v) => typeof v !== "string"))
            details.push(`${field} must be an array of options`);
          else if (value.some((v) => !ci.options.includes(v)))
            details.push(`${field} must contain only these options: ${ci.options.join(", ")}`);
          // As the checkout refuses it: the donor could not send the answer as the link gave it.
          else if (new Set(value).size !== value.length) details.push(`${field} must not repeat an option`);
          else out[key] = value as string[];
        } else if (typeof value !== "string") {
          details.push(`${field} must be a string, not ${describeValue(value)}`);
        } else if (ci.kind === "single" && !ci.options.includes(value)) {
          details.push(`${field} must be one of: ${ci.options.join(", ")}`);
        } else if (value.length > MAX_ANSWER) {
          details.push(`${field} must be at most ${MAX_ANSWER} characters`);
        } else out[key] = value;
      }
      prefill.customInputs = out;
    }
  }

  return { prefill, details };
}

/** What the donor page starts from: only what the form shows, custom answers keyed by input id. */
export interface DonorPrefill {
  firstName?: string;
  lastName?: string;
  email?: string;
  phone?: string;
  organizationName?: string;
  address1?: string;
  address2?: string;
  city?: string;
  state?: string;
  postalCode?: string;
  /** One of the checkout's countries (shared/countries.ts), as its ISO code. */
  country?: string;
  amount?: number;
  fund?: string;
  frequency?: Frequency;
  sponsorshipGroup?: string;
  product?: string;
  ticket?: string;
  customInputs: Record<string, string | string[]>;
  utm: Partial<Record<"source" | "medium" | "campaign" | "term" | "content", string>>;
}

const ADDRESS_KEYS = ["address1", "address2", "city", "state", "postalCode"] as const;

/**
 * The donor-facing prefill of a stored link, against the form as it is now: fields the form does not show
 * are dropped, and values the form no longer accepts (a removed fund, ticket or option) are dropped too.
 */
export function donorPrefill(stored: Prefill, form: FormConfig, globals: GlobalCustomInput[]): DonorPrefill {
  const { prefill } = validatePrefill(toWire(stored), form, globals);
  const out: DonorPrefill = { customInputs: {}, utm: {} };
  for (const key of ["firstName", "lastName", "email"] as const) if (prefill[key]) out[key] = prefill[key];
  if (prefill.phone && form.enablePhone) out.phone = prefill.phone;
  if (prefill.organizationName && form.enableOrganizationName)
    out.organizationName = prefill.organizationName;
  if (form.enableBillingAddress) for (const key of ADDRESS_KEYS) if (prefill[key]) out[key] = prefill[key];
  // The country as the select's code, from a code or a name in any of the pages' languages; else none.
  const country = prefill.country && form.enableCountryDropdown ? countryCode(prefill.country) : undefined;
  if (country) out.country = country;
  for (const key of ["amount", "fund", "frequency", "sponsorshipGroup", "product", "ticket"] as const) {
    if (prefill[key] !== undefined) (out as unknown as Record<string, unknown>)[key] = prefill[key];
  }
  applyAmountRules(out, form);
  const inputs = customInputsOf(form, globals);
  for (const [key, value] of Object.entries(prefill.customInputs ?? {})) {
    const ci = findInput(inputs, key);
    if (ci) out.customInputs[ci.id] = value;
  }
  const utm = {
    utmSource: "source",
    utmMedium: "medium",
    utmCampaign: "campaign",
    utmTerm: "term",
    utmContent: "content",
  } as const;
  for (const [from, to] of Object.entries(utm)) {
    const value = prefill[from as UtmKey];
    if (value) out.utm[to] = value;
  }
  return out;
}

/**
 * Makes the prefilled amount one the page can show. A standard form without custom amounts keeps it only
 * if it is one of the presets of the prefilled (or default) frequency, else the donor starts from the
 * form's own default (with custom amounts the page shows it, and the quote explains a value out of range).
 * On a sponsorship form an amount without a product chooses the first product of that price (in the
 * prefilled group when one is given).
 */
function applyAmountRules(out: DonorPrefill, form: FormConfig): void {
  const cents = out.amount;
  if (cents === undefined) return;
  if (form.formType === "EMBED_FORM") {
    const presets: number[] = form[AMOUNT_FIELD_BY_FREQUENCY[out.frequency ?? form.defaultFrequency]];
    if (!presets.includes(cents) && !form.allowCustomAmount) delete out.amount;
  } else if (form.formType === "PRODUCT" && out.product === undefined) {
    const groups = form.sponsorshipGroups.filter(
      (g) => out.sponsorshipGroup === undefined || g.groupTitle === out.sponsorshipGroup,
    );
    for (const group of groups) {
      const option = group.options.find((o) => o.amount === cents);
      if (!option) continue;
      out.sponsorshipGroup = group.groupTitle;
      out.product = option.optionTitle;
      return;
    }
  }
}

/** A stored prefill back in wire form (amount in dollars), for re-validation and for API reads. */
export function toWire(prefill: Prefill): Record<string, unknown> {
  const { amount, ...rest } = prefill;
  return amount === undefined ? rest : { ...rest, amount: amount / 100 };
}

import { z } from "zod";
import { EMAIL_ADDRESS, isEmailAddress } from "../email.js";
import {
  AMOUNT_TYPES,
  CUSTOM_INPUT_TYPES,
  DISCOUNT_TYPES,
  FREQUENCIES,
  type Frequency,
  INPUT_FORM_TYPES,
  STORED_FORM_TYPES,
  type StoredFormType,
  storedFormType,
  TICKET_TYPES,
} from "../enums.js";
import { EVENT_DETAILS_MAX, FORM_TITLE_MAX, QUESTION_ID_MAX } from "../formLimits.js";
import { dollarsToCents } from "../money.js";
import {
  boundedString,
  HTTPS_URL,
  hasCredentials,
  money,
  NO_CREDENTIALS,
  questionId,
  readOnlyFields,
  requiredSingleLine,
  requiredString,
  urlTextProblem,
} from "./common.js";

/**
 * The rules of a donation or event form, as one zod schema.
 * Parsing yields the stored configuration, with every amount in integer cents.
 */

const MAX_AMOUNT = 1_000_000;
const formAmount = money({ min: 1, max: MAX_AMOUNT });
const price = money({ min: 0, max: MAX_AMOUNT });
const positiveInt = z.number().int().min(1).max(1_000_000);

const HEX_COLOR = /^#[0-9A-Fa-f]{6}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIME = /^([01]\d|2[0-3]):[0-5]\d$/;
const TIME_OR_EMPTY = "^(([01]\\d|2[0-3]):[0-5]\\d)?$";

function isCalendarDate(value: string): boolean {
  if (!DATE.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/**
 * How the document states a time zone: text of the shape `isTimeZone` checks (UTC, or a name with a
 * slash), with examples. Which names exist is for the server's ICU time zone data to say (it changes with
 * Node's version, and takes both old and new names, Asia/Calcutta and Asia/Kolkata), so it is a rule of
 * the operations (`TIME_ZONE_RULE`) rather than an enum.
 */
export function timeZoneDoc(opts: { pattern: string; description: string }) {
  return {
    pattern: opts.pattern,
    description: opts.description,
    examples: ["America/New_York", "Europe/Kyiv", "Asia/Kolkata", "Etc/UTC", "UTC"],
  };
}

/** The rule of a `timeZone` that no schema states: a name the server's time zone data knows. */
export const TIME_ZONE_RULE = {
  fields: ["timeZone"],
  rule: "timeZone an IANA time zone name the server's ICU time zone data knows (America/New_York, Europe/Kyiv, Asia/Kolkata, Etc/UTC, US/Eastern, UTC): a name with a slash, or UTC",
};

export function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: value });
    return value.includes("/") || value === "UTC";
  } catch {
    return false;
  }
}

/** Read-only fields that reads add; accepted (and ignored) on input so a read can be sent back. */
const readOnly = readOnlyFields("quantitySold", "timesRedeemed");

export const givingLevelSchema = z.strictObject({
  title: requiredSingleLine(200),
  amount: money({ min: 0, max: MAX_AMOUNT, minExclusive: true }),
  description: boundedString(1000).default(""),
});

export const sponsorshipOptionSchema = z.strictObject({
  optionTitle: requiredSingleLine(200),
  amount: money({ min: 0, max: MAX_AMOUNT, minExclusive: true }),
  description: boundedString(1000).default(""),
  quantity: positiveInt.nullable().optional(),
  ...readOnly,
});

export const sponsorshipGroupSchema = z.strictObject({
  groupTitle: requiredSingleLine(200),
  description: boundedString(1000).default(""),
  options: z.array(sponsorshipOptionSchema).min(1).max(100),
});

export const ticketSchema = z
  .strictObject({
    name: requiredSingleLine(200),
    price,
    quantity: positiveInt.nullable().optional(),
    ticketType: z.enum(TICKET_TYPES).default("INDIVIDUAL"),
    groupSize: z.number().int().min(1).max(1000).nullable().optional(),
    description: boundedString(1000).default(""),
    maxPerOrder: positiveInt.nullable().optional(),
    fairMarketValue: price.nullable().optional().meta({
      description:
        "What one ticket is worth to its buyer (a dinner's cost), in the organization's currency: the part of its price that is not a deductible gift; statements show the rest as deductible. Null or left out: not stated.",
    }),
    ...readOnly,
  })
  .meta({
    // A GROUP ticket admits groupSize people (more than one); any other ticket admits one.
    if: { properties: { ticketType: { const: "GROUP" } }, required: ["ticketType"] },
    // biome-ignore lint/suspicious/noThenProperty: the if/then keyword of JSON Schema
    then: { properties: { groupSize: { type: "integer", minimum: 2 } }, required: ["groupSize"] },
    else: { properties: { groupSize: { enum: [1, null] } } },
  });

export const promoCodeSchema = z
  .strictObject({
    code: z
      .string()
      .trim()
      .min(1)
      .max(50)
      .regex(/^[A-Za-z0-9_-]+$/, { message: "must contain only letters, digits, '-' and '_'" }),
    discountType: z.enum(DISCOUNT_TYPES),
    discountValue: z.number().meta({
      exclusiveMinimum: 0,
      maximum: MAX_AMOUNT,
      multipleOf: 0.01,
      description:
        "percentage: more than 0 and at most 100; amount: in the organization's currency, at most 2 decimals (whole units for zero-decimal currencies)",
    }),
    quantity: positiveInt.nullable().optional(),
    applicableTickets: z.array(requiredSingleLine(200)).max(100).default([]),
    ...readOnly,
  })
  .meta({
    if: { properties: { discountType: { const: "percentage" } }, required: ["discountType"] },
    // biome-ignore lint/suspicious/noThenProperty: the if/then keyword of JSON Schema
    then: { properties: { discountValue: { maximum: 100 } } },
  });

/** The options of a custom input (form or organization): at most 100, each 1 to 200 characters. */
export const inputOptionsSchema = z
  .array(requiredSingleLine(200))
  .max(100)
  .meta({ uniqueItems: true })
  .default([]);

/**
 * How the document states the options rule of a custom input: a dropdown (`selectTypes`) lists two
 * options or more, any other input none.
 */
export function dropdownRule(selectTypes: readonly string[]) {
  return {
    if: { properties: { inputType: { enum: [...selectTypes] } }, required: ["inputType"] },
    // biome-ignore lint/suspicious/noThenProperty: the if/then keyword of JSON Schema
    then: { properties: { options: { minItems: 2 } }, required: ["options"] },
    else: { properties: { options: { maxItems: 0 } } },
  };
}

const REPEATED_OPTION = "must not repeat an option";
const hasRepeats = (options: readonly string[]) => new Set(options).size !== options.length;

/** The problems of a dropdown's options, in the same words for form and organization inputs. */
export function dropdownOptionProblems(options: readonly string[]): string[] {
  const problems: string[] = [];
  if (options.length < 2) problems.push("must contain at least 2 options for a dropdown");
  if (hasRepeats(options)) problems.push(REPEATED_OPTION);
  return problems;
}

export const customInputSchema = z
  .strictObject({
    id: questionId(QUESTION_ID_MAX).optional(),
    title: requiredSingleLine(300).optional(),
    question: requiredSingleLine(300).optional(),
    inputType: z.enum(CUSTOM_INPUT_TYPES),
    required: z.boolean().default(false),
    options: inputOptionsSchema,
  })
  .meta({
    ...dropdownRule(["single_select", "multi_select"]),
    anyOf: [{ required: ["title"] }, { required: ["question"] }],
    description: "title (or its synonym question; both must match when both are sent)",
  })
  .check(
    z.superRefine((input, ctx) => {
      if (input.title === undefined && input.question === undefined)
        ctx.addIssue({ code: "custom", message: "is required", path: ["title"] });
      if (input.title !== undefined && input.question !== undefined && input.title !== input.question)
        ctx.addIssue({
          code: "custom",
          message: "and question must match when both are given",
          path: ["title"],
        });
      const isSelect = input.inputType === "single_select" || input.inputType === "multi_select";
      if (!Array.isArray(input.options)) return;
      const problems = isSelect
        ? dropdownOptionProblems(input.options)
        : [
            ...(input.options.length > 0
              ? ["are only allowed on single_select and multi_select inputs"]
              : []),
            ...(hasRepeats(input.options) ? [REPEATED_OPTION] : []),
          ];
      for (const message of problems) ctx.addIssue({ code: "custom", message, path: ["options"] });
    }),
  );

export const faqSchema = z.strictObject({
  question: requiredString(500),
  answer: requiredString(5000),
});

const amountList = z.array(formAmount).max(20);

const FORM_FIELDS = {
  title: requiredSingleLine(FORM_TITLE_MAX),
  // null clears the description like "".
  description: boundedString(650)
    .nullable()
    .transform((d) => d ?? "")
    .default(""),
  formType: z.enum([...INPUT_FORM_TYPES, ...STORED_FORM_TYPES]).default("fundraising"),
  // Left out: what a stored formType implies (CROWDFUNDING_FORM giving_level, PRODUCT sponsorship), else standard.
  amountType: z.enum(AMOUNT_TYPES).optional().meta({
    description:
      "How donors choose an amount on a fundraising form. Left out: standard, or what a stored `formType` implies (`CROWDFUNDING_FORM` giving_level, `PRODUCT` sponsorship, `EMBED_FORM` standard).",
  }),
  funds: z.array(requiredSingleLine(200)).min(1).max(100).meta({ uniqueItems: true }),
  frequencies: z.array(z.enum(FREQUENCIES)).min(1).max(5).meta({ uniqueItems: true }).optional(),
  defaultFrequency: z.enum(FREQUENCIES).optional(),
  color: z.string().regex(HEX_COLOR, { message: "must be a hex color like #3B82F6" }).default("#3B82F6"),
  active: z.boolean().default(true),
  headerImage: z.string().trim().max(2048).meta(HTTPS_URL).nullable().optional(),
  // 0 or null is "no goal"; a goal above 0 is required only with the fundraising bar.
  goal: money({ min: 0, max: 1_000_000_000 }).nullable().optional(),

  // A default of a transformed field is given as input (dollars, as a client sends it), so the document
  // shows it as sent: `prefault` parses it like a value sent.
  oneTimeAmounts: amountList.prefault([25, 50, 100, 250, 500]),
  dailyAmounts: amountList.default([]),
  weeklyAmounts: amountList.default([]),
  monthlyAmounts: amountList.prefault([10, 25, 50, 100]),
  annuallyAmounts: amountList.default([]),
  defaultAmount: formAmount.nullable().optional(),
  allowCustomAmount: z.boolean().default(true),

  givingLevels: z.array(givingLevelSchema).max(100).default([]),
  sponsorshipGroups: z.array(sponsorshipGroupSchema).max(50).default([]),
  tickets: z.array(ticketSchema).max(100).default([]),
  promoCodes: z.array(promoCodeSchema).max(500).default([]),
  customInputs: z.array(customInputSchema).max(50).default([]),
  faqs: z.array(faqSchema).max(50).default([]),

  enableFundraisingBar: z.boolean().default(false),
  enableDonorList: z.boolean().default(false),
  enableCoverFees: z.boolean().default(true),
  enableAnonymous: z.boolean().default(true),
  enableOrganizationName: z.boolean().default(false),
  enableBillingAddress: z.boolean().default(false),
  enableCountryDropdown: z.boolean().default(false),
  enablePhone: z.boolean().default(false),
  enableTribute: z.boolean().default(false).meta({
    description:
      "Offer donors a dedication: a gift in honor or in memory of someone, who may be told of it by e-mail (donation forms)",
  }),

  enableMonthlyUpsell: z.boolean().default(false).meta({
    description:
      "Offer a donor who chose a one-time gift, once, to give a monthly amount instead (monthlyUpsellRatio of the gift); needs ONE_TIME and MONTHLY among the frequencies",
  }),
  monthlyUpsellRatio: z.number().gt(0).max(1).default(0.3).meta({
    description:
      "The suggested monthly amount as a share of the one-time gift (0.3: a $100 gift suggests $30 a month)",
  }),
  monthlyUpsellMinimum: money({ min: 0, max: MAX_AMOUNT }).nullable().optional().meta({
    description:
      "The offer is made for one-time gifts at or above this amount (in the organization's currency); null or 0: any gift",
  }),

  enableCustomEmail: z.boolean().default(false),
  replyToAddress: z.string().trim().max(320).meta(EMAIL_ADDRESS).nullable().optional(),
  emailSubject: boundedString(200).nullable().optional(),
  customMessage: boundedString(5000).nullable().optional(),

  enableTimeAndLocation: z.boolean().default(false),
  eventDate: z.string().meta({ format: "date" }).nullable().optional(),
  startTime: z.string().meta({ pattern: TIME_OR_EMPTY, description: "HH:MM, 24-hour" }).nullable().optional(),
  endTime: z.string().meta({ pattern: TIME_OR_EMPTY, description: "HH:MM, 24-hour" }).nullable().optional(),
  location: boundedString(500).nullable().optional(),
  eventDetails: boundedString(EVENT_DETAILS_MAX).nullable().optional(),
  timeZone: z
    .string()
    .max(100)
    .nullable()
    .meta(
      timeZoneDoc({
        pattern: "^(UTC)?$|/",
        description: "An IANA time zone name such as America/New_York; null or an empty string: none",
      }),
    )
    .optional(),

  // Fields that reads return; accepted on input so that a read can be sent back, and ignored.
  formID: z.unknown().optional(),
  formUrl: z.unknown().optional(),
  embedHTML: z.unknown().optional(),
  createdAt: z.unknown().optional(),
  updatedAt: z.unknown().optional(),
  productGroups: z.unknown().optional(),
};

type Ctx = z.core.$RefinementCtx;

function blank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === "string" && value.trim() === "");
}

function duplicates(values: string[]): string[] {
  const seen = new Set<string>();
  const dups = new Set<string>();
  for (const v of values) {
    if (seen.has(v)) dups.add(v);
    seen.add(v);
  }
  return [...dups];
}

/** Rules spanning several fields. Runs even when single fields failed, so every problem is reported at once. */
function crossFieldRules(allowHttpImages: boolean) {
  return (form: Record<string, unknown>, ctx: Ctx) => {
    // Runs even when the base parse failed, so the value may not be an object at all.
    if (form === null || typeof form !== "object") return;
    const issue = (path: string, message: string) =>
      ctx.addIssue({
        code: "custom",
        message,
        path: path.split(".").map((p) => (/^\d+$/.test(p) ? Number(p) : p)),
      });
    const isEvent = form.formType === "event" || form.formType === "EVENT";
    const amountType = amountTypeOf(form);
    const list = (key: string) => objectsIn(form[key]);

    if (
      form.enableFundraisingBar === true &&
      (form.goal === undefined || form.goal === null || form.goal === 0)
    )
      issue("goal", "is required and must be greater than 0 when enableFundraisingBar is true");

    if (form.enableCustomEmail === true) {
      for (const key of ["replyToAddress", "emailSubject", "customMessage"])
        if (blank(form[key])) issue(key, "is required when enableCustomEmail is true");
    }
    if (
      typeof form.replyToAddress === "string" &&
      form.replyToAddress.trim() &&
      !isEmailAddress(form.replyToAddress)
    )
      issue("replyToAddress", "must be a valid email address");

    if (form.enableTribute === true && isEvent)
      issue("enableTribute", "is for donation forms: an event form takes no dedication");
    if (form.enableMonthlyUpsell === true) {
      const freqs = Array.isArray(form.frequencies) ? (form.frequencies as unknown[]) : ["ONE_TIME"];
      if (isEvent || amountType === "sponsorship")
        issue("enableMonthlyUpsell", "is for donation forms: event and sponsorship orders are one-time only");
      else if (!freqs.includes("ONE_TIME") || !freqs.includes("MONTHLY"))
        issue("enableMonthlyUpsell", "needs ONE_TIME and MONTHLY among the form's frequencies");
    }

    if (form.enableTimeAndLocation === true) {
      for (const key of ["eventDate", "startTime"])
        if (blank(form[key])) issue(key, "is required when enableTimeAndLocation is true");
    }
    if (typeof form.eventDate === "string" && form.eventDate && !isCalendarDate(form.eventDate))
      issue("eventDate", "must be a date in YYYY-MM-DD format");
    for (const key of ["startTime", "endTime"]) {
      const value = form[key];
      if (typeof value === "string" && value && !TIME.test(value))
        issue(key, "must be a time in HH:MM (24-hour) format");
    }
    if (typeof form.timeZone === "string" && form.timeZone && !isTimeZone(form.timeZone))
      issue("timeZone", "must be an IANA time zone name such as America/New_York");

    if (typeof form.headerImage === "string" && form.headerImage) {
      let url: URL | null = null;
      try {
        url = new URL(form.headerImage);
      } catch {
        url = null;
      }
      const okProtocol = url && (url.protocol === "https:" || (allowHttpImages && url.protocol === "http:"));
      if (!okProtocol)
        issue("headerImage", allowHttpImages ? "must be an http(s) URL" : "must be an https URL");
      else if (url && hasCredentials(url)) issue("headerImage", NO_CREDENTIALS);
      else {
        const problem = urlTextProblem(form.headerImage);
        if (problem) issue("headerImage", problem);
      }
    }

    if (Array.isArray(form.funds)) {
      for (const dup of duplicates(form.funds.filter((f): f is string => typeof f === "string")))
        issue("funds", `must not repeat "${dup}"`);
    }
    if (Array.isArray(form.frequencies)) {
      const freqs = form.frequencies as string[];
      if (duplicates(freqs).length) issue("frequencies", "must not repeat a frequency");
      if (isEvent && freqs.some((f) => f !== "ONE_TIME"))
        issue("frequencies", 'must be ["ONE_TIME"] on an event form');
      if (typeof form.defaultFrequency === "string" && !freqs.includes(form.defaultFrequency))
        issue("defaultFrequency", "must be one of the form's frequencies");
    } else if (typeof form.defaultFrequency === "string" && form.defaultFrequency !== "ONE_TIME") {
      issue("defaultFrequency", "must be one of the form's frequencies");
    }

    const givingLevels = list("givingLevels");
    const sponsorshipGroups = list("sponsorshipGroups");
    const tickets = list("tickets");
    const promoCodes = list("promoCodes");

    if (isEvent) {
      if (tickets.length === 0) issue("tickets", "must contain at least 1 ticket on an event form");
      if (givingLevels.length) issue("givingLevels", "are only allowed on giving_level fundraising forms");
      if (sponsorshipGroups.length)
        issue("sponsorshipGroups", "are only allowed on sponsorship fundraising forms");
    } else {
      // A stored type name already fixes the amount type; a different amountType beside it is a contradiction.
      const implied = STORED_AMOUNT_TYPE[String(form.formType)];
      if (implied && typeof form.amountType === "string" && form.amountType !== implied)
        issue(
          "amountType",
          `must be ${implied} (or left out) when formType is ${String(form.formType)}; send formType "fundraising" to choose the amount type`,
        );
      if (tickets.length) issue("tickets", "are only allowed on event forms");
      if (promoCodes.length) issue("promoCodes", "are only allowed on event forms");
      if (amountType === "giving_level" && givingLevels.length === 0)
        issue("givingLevels", "must contain at least 1 level when amountType is giving_level");
      if (amountType !== "giving_level" && givingLevels.length)
        issue(
          "givingLevels",
          `are only allowed when amountType is giving_level (here it is ${amountType}; send "givingLevels": [] to remove them)`,
        );
      if (amountType === "sponsorship" && sponsorshipGroups.length === 0)
        issue(
          "sponsorshipGroups",
          "must contain at least 1 group with at least 1 option when amountType is sponsorship",
        );
      if (amountType !== "sponsorship" && sponsorshipGroups.length)
        issue(
          "sponsorshipGroups",
          `are only allowed when amountType is sponsorship (here it is ${amountType}; send "sponsorshipGroups": [] to remove them)`,
        );
    }

    const groupTitles = sponsorshipGroups
      .map((g) => g.groupTitle)
      .filter((t): t is string => typeof t === "string");
    for (const dup of duplicates(groupTitles))
      issue("sponsorshipGroups", `must not repeat the group title "${dup}"`);
    sponsorshipGroups.forEach((group, i) => {
      const options = objectsIn(group.options);
      const titles = options.map((o) => o.optionTitle).filter((t): t is string => typeof t === "string");
      for (const dup of duplicates(titles))
        issue(`sponsorshipGroups.${i}.options`, `must not repeat the option title "${dup}"`);
    });

    const ticketNames = tickets.map((t) => t.name).filter((n): n is string => typeof n === "string");
    for (const dup of duplicates(ticketNames)) issue("tickets", `must not repeat the ticket name "${dup}"`);
    tickets.forEach((ticket, i) => {
      if (ticket.ticketType === "GROUP" && !(typeof ticket.groupSize === "number" && ticket.groupSize > 1))
        issue(`tickets.${i}.groupSize`, "must be greater than 1 for a GROUP ticket");
      if (ticket.ticketType !== "GROUP" && typeof ticket.groupSize === "number" && ticket.groupSize !== 1)
        issue(`tickets.${i}.groupSize`, "is only allowed on GROUP tickets");
      if (
        typeof ticket.maxPerOrder === "number" &&
        typeof ticket.quantity === "number" &&
        ticket.maxPerOrder > ticket.quantity
      )
        issue(`tickets.${i}.maxPerOrder`, "must not be greater than the ticket's quantity");
    });

    const codes = promoCodes.map((p) => p.code).filter((c): c is string => typeof c === "string");
    for (const dup of duplicates(codes.map((c) => c.toUpperCase())))
      issue("promoCodes", `must not repeat the code "${dup}" (codes are matched case-insensitively)`);
    promoCodes.forEach((promo, i) => {
      const value = promo.discountValue;
      if (typeof value === "number") {
        if (promo.discountType === "percentage" && !(value > 0 && value <= 100))
          issue(
            `promoCodes.${i}.discountValue`,
            "must be greater than 0 and at most 100 for a percentage discount",
          );
        if (
          promo.discountType === "amount" &&
          !(value > 0 && value <= MAX_AMOUNT && dollarsToCents(value) !== null)
        )
          issue(
            `promoCodes.${i}.discountValue`,
            "must be a dollar amount greater than 0 with at most 2 decimal places",
          );
      }
      if (Array.isArray(promo.applicableTickets)) {
        for (const name of promo.applicableTickets as unknown[])
          if (typeof name === "string" && !ticketNames.includes(name))
            issue(`promoCodes.${i}.applicableTickets`, `names "${name}", which is not a ticket on this form`);
      }
    });

    const inputs = list("customInputs");
    const ids = inputs.map((c) => c.id).filter((id): id is string => typeof id === "string");
    for (const dup of duplicates(ids)) issue("customInputs", `must not repeat the id "${dup}"`);
    const titles = inputs.map((c) => c.title ?? c.question).filter((t): t is string => typeof t === "string");
    for (const dup of duplicates(titles)) issue("customInputs", `must not repeat the title "${dup}"`);
  };
}

/** The plain-object items of a list that may hold anything (cross-field rules run on unparsed input). */
function objectsIn(value: unknown): Record<string, unknown>[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (v): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v),
  );
}

const STORED_AMOUNT_TYPE: Record<string, string> = {
  CROWDFUNDING_FORM: "giving_level",
  PRODUCT: "sponsorship",
  EMBED_FORM: "standard",
};

function amountTypeOf(form: Record<string, unknown>): string {
  return (
    STORED_AMOUNT_TYPE[String(form.formType)] ??
    (typeof form.amountType === "string" ? form.amountType : "standard")
  );
}

export interface FormSchemaOptions {
  /** Development allows http:// header images; production requires https. */
  allowHttpImages: boolean;
}

function buildFormSchema(opts: FormSchemaOptions) {
  return z
    .strictObject(FORM_FIELDS)
    .check(z.superRefine(crossFieldRules(opts.allowHttpImages), { when: () => true }))
    .transform(normalize);
}

type ParsedInput = z.output<z.ZodObject<typeof FORM_FIELDS>>;

function normalize(input: ParsedInput) {
  const stored: StoredFormType =
    input.formType === "fundraising" || input.formType === "event"
      ? storedFormType(input.formType, input.amountType ?? "standard")
      : input.formType;
  const isEvent = stored === "EVENT";
  const frequencies: Frequency[] = isEvent ? ["ONE_TIME"] : (input.frequencies ?? ["ONE_TIME"]);
  return {
    title: input.title,
    description: input.description,
    formType: stored,
    funds: input.funds,
    frequencies,
    defaultFrequency: input.defaultFrequency ?? frequencies[0],
    color: input.color,
    active: input.active,
    headerImage: input.headerImage || null,
    goal: input.goal ?? null,
    oneTimeAmounts: input.oneTimeAmounts,
    dailyAmounts: input.dailyAmounts,
    weeklyAmounts: input.weeklyAmounts,
    monthlyAmounts: input.monthlyAmounts,
    annuallyAmounts: input.annuallyAmounts,
    defaultAmount: input.defaultAmount ?? null,
    allowCustomAmount: input.allowCustomAmount,
    givingLevels: input.givingLevels,
    sponsorshipGroups: input.sponsorshipGroups.map((g) => ({
      groupTitle: g.groupTitle,
      description: g.description,
      options: g.options.map((o) => ({
        optionTitle: o.optionTitle,
        amount: o.amount,
        description: o.description,
        quantity: o.quantity ?? null,
      })),
    })),
    tickets: input.tickets.map((t) => ({
      name: t.name,
      price: t.price,
      quantity: t.quantity ?? null,
      ticketType: t.ticketType,
      groupSize: t.ticketType === "GROUP" ? (t.groupSize ?? 2) : 1,
      description: t.description,
      maxPerOrder: t.maxPerOrder ?? null,
      fairMarketValue: t.fairMarketValue ?? null,
    })),
    promoCodes: input.promoCodes.map((p) => ({
      code: p.code,
      discountType: p.discountType,
      // Percentages are kept as given; fixed discounts become cents.
      discountValue: p.discountType === "amount" ? (dollarsToCents(p.discountValue) ?? 0) : p.discountValue,
      quantity: p.quantity ?? null,
      applicableTickets: p.applicableTickets,
    })),
    customInputs: input.customInputs.map((c) => ({
      id: c.id ?? crypto.randomUUID(),
      title: (c.title ?? c.question) as string,
      inputType: c.inputType,
      required: c.required,
      options: c.options,
    })),
    faqs: input.faqs,
    enableFundraisingBar: input.enableFundraisingBar,
    enableDonorList: input.enableDonorList,
    enableCoverFees: input.enableCoverFees,
    enableAnonymous: input.enableAnonymous,
    enableOrganizationName: input.enableOrganizationName,
    enableBillingAddress: input.enableBillingAddress,
    enableCountryDropdown: input.enableCountryDropdown,
    enablePhone: input.enablePhone,
    enableTribute: input.enableTribute,
    enableMonthlyUpsell: input.enableMonthlyUpsell,
    monthlyUpsellRatio: input.monthlyUpsellRatio,
    monthlyUpsellMinimum: input.monthlyUpsellMinimum || null,
    enableCustomEmail: input.enableCustomEmail,
    replyToAddress: input.replyToAddress || null,
    emailSubject: input.emailSubject || null,
    customMessage: input.customMessage || null,
    enableTimeAndLocation: input.enableTimeAndLocation,
    eventDate: input.eventDate || null,
    startTime: input.startTime || null,
    endTime: input.endTime || null,
    location: input.location || null,
    eventDetails: input.eventDetails || null,
    timeZone: input.timeZone || null,
  };
}

/** A form as stored: the create input normalised, every amount in cents. */
export type FormConfig = ReturnType<typeof normalize>;

const schemaCache = new Map<boolean, ReturnType<typeof buildFormSchema>>();

export function formSchema(opts: FormSchemaOptions) {
  let schema = schemaCache.get(opts.allowHttpImages);
  if (!schema) {
    schema = buildFormSchema(opts);
    schemaCache.set(opts.allowHttpImages, schema);
  }
  return schema;
}

/** The input (wire) shape, for the OpenAPI document. */
export const formInputShape = z.strictObject(FORM_FIELDS);

/** A field as an update takes it: optional, with no default (a field left out keeps its stored value). */
function withoutDefault(field: z.ZodType): z.ZodType {
  if (!(field instanceof z.ZodDefault || field instanceof z.ZodPrefault)) return field.optional();
  const meta = z.globalRegistry.get(field);
  const inner = field.unwrap() as z.ZodType;
  return (meta ? inner.meta(meta) : inner).optional();
}

/**
 * The changes to a form (wire shape), for the OpenAPI document: the create fields, each optional and
 * without the create's defaults (changes are merged into the stored form).
 */
export const formChangesShape = z.strictObject(
  Object.fromEntries(Object.entries(FORM_FIELDS).map(([name, field]) => [name, withoutDefault(field)])),
);

/** The update (wire) shape: changes, at least one of them. */
export const formUpdateShape = formChangesShape.meta({
  minProperties: 1,
  description: "The fields to change, at least one; a field left out keeps its value",
});

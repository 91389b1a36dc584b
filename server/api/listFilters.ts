import { z } from "zod";
import { FREQUENCIES } from "../../shared/enums.js";
import { addDays, FIRST_DAY, isDayInRange, LAST_DAY, startOfLocalDay } from "../../shared/localDays.js";
import { dollarsToCents } from "../../shared/money.js";
import { cleanText } from "../../shared/schemas/common.js";
import { PAYMENT_STATUSES, paymentFields } from "../../shared/schemas/payment.js";
import { SUBSCRIPTION_STATUSES } from "../../shared/schemas/subscription.js";
import { isoAt } from "../../shared/time.js";
import { isUuid } from "../ids.js";
import type { Db } from "../store/database.js";
import type { PaymentFilters, SubscriptionFilters } from "../store/listFilters.js";
import { getOrganization } from "../store/organizations.js";
import { paginationQuery } from "./pagination.js";
import type { BodyRule } from "./route.js";

/**
 * The query filters of the payments, subscriptions and contacts lists: each list's query schema (which
 * validates and documents them), and the filter object the store reads, parsed once per request so that
 * a page and a CSV export of the same query show the same rows. A cursor is bound to its filters: the
 * list name it is scoped to (pagination.ts) carries them, so a cursor from one filter set is a 400 with
 * another.
 */

const SEARCH_MAX = 200;
const MAX_AMOUNT = 1_000_000;

/** Text to search for: cleaned (NFC, no control characters), trimmed, lower-cased; empty is no search. */
function searchParam(description: string) {
  return z
    .string()
    .max(SEARCH_MAX)
    .meta({ description })
    .optional()
    .transform((raw) => {
      const text = raw === undefined ? "" : cleanText(raw).trim().toLowerCase();
      return text === "" ? undefined : text;
    });
}

/** A calendar date `YYYY-MM-DD`, a day of the organization's time zone. */
function dateParam(description: string) {
  return z
    .string()
    .meta({ format: "date", description })
    .optional()
    .check(
      z.superRefine((raw, ctx) => {
        if (raw !== undefined && !isDayInRange(raw))
          ctx.addIssue({
            code: "custom",
            message: `must be a date written YYYY-MM-DD, from ${FIRST_DAY} to ${LAST_DAY}`,
          });
      }),
    );
}

const AMOUNT_TEXT = /^\d{1,7}(\.\d{1,2})?$/;

/** An amount in major units (as the API's `amount`), at most 2 decimals, parsed to minor units. */
function amountParam(description: string) {
  return z
    .string()
    .meta({ type: "number", minimum: 0, maximum: MAX_AMOUNT, multipleOf: 0.01, description })
    .optional()
    .check(
      z.superRefine((raw, ctx) => {
        if (raw === undefined) return;
        if (!AMOUNT_TEXT.test(raw))
          ctx.addIssue({
            code: "custom",
            message: "must be an amount such as 25 or 25.50 (at most 2 decimals)",
          });
        else if (Number(raw) > MAX_AMOUNT)
          ctx.addIssue({ code: "custom", message: "must be at most 1,000,000" });
      }),
    )
    .transform((raw) => (raw === undefined ? undefined : (dollarsToCents(Number(raw)) as number)));
}

function uuidParam(description: string) {
  return z
    .string()
    .meta({ format: "uuid", description })
    .optional()
    .check(
      z.superRefine((raw, ctx) => {
        if (raw !== undefined && !isUuid(raw)) ctx.addIssue({ code: "custom", message: "must be a UUID" });
      }),
    )
    .transform((raw) => raw?.toLowerCase());
}

const SUBSCRIPTION_ID_TEXT = /^sub_[0-9a-hjkmnp-tv-z]{26}$/;

const subscriptionIdParam = z
  .string()
  .meta({
    pattern: SUBSCRIPTION_ID_TEXT.source,
    description: "Only the charges of this recurring gift (`sub_…`)",
  })
  .optional()
  .check(
    z.superRefine((raw, ctx) => {
      if (raw !== undefined && !SUBSCRIPTION_ID_TEXT.test(raw))
        ctx.addIssue({ code: "custom", message: "must be a subscription id (sub_…)" });
    }),
  );

const RECURRING_FREQUENCIES = FREQUENCIES.filter((f) => f !== "ONE_TIME") as [
  (typeof FREQUENCIES)[number],
  ...(typeof FREQUENCIES)[number][],
];

// ---- Payments ----

export const paymentListQuery = paginationQuery()
  .extend({
    search: searchParam(
      "One search box: a donor's name or e-mail address containing it (any case), a payment id (`pay_…`) exactly, or the last 4 digits of a card or bank account",
    ),
    from: dateParam("Payments on or after this day, in the organization's time zone"),
    to: dateParam("Payments on or before this day, in the organization's time zone"),
    formID: uuidParam("Only payments made through this form"),
    status: z.enum(PAYMENT_STATUSES).optional().meta({ description: "Only payments of this status" }),
    paymentMethod: paymentFields.paymentMethod
      .optional()
      .meta({ description: "Only payments made this way" }),
    frequency: z
      .enum(FREQUENCIES)
      .optional()
      .meta({ description: "Only one-time gifts, or charges of one frequency" }),
    minAmount: amountParam(
      "Only payments of at least this `amount` (major units, what the donor was charged)",
    ),
    maxAmount: amountParam("Only payments of at most this `amount` (major units)"),
    subscriptionId: subscriptionIdParam,
    contactId: uuidParam("Only this contact's payments"),
  })
  .check(
    z.superRefine((q, ctx) => {
      if (q.from !== undefined && q.to !== undefined && q.from > q.to)
        ctx.addIssue({ code: "custom", path: ["from"], message: "must be on or before to" });
      if (q.minAmount !== undefined && q.maxAmount !== undefined && q.minAmount > q.maxAmount)
        ctx.addIssue({ code: "custom", path: ["minAmount"], message: "must be at most maxAmount" });
    }),
  );

export type PaymentListQuery = z.output<typeof paymentListQuery>;

/** The 400s of the payments list that its schema cannot state. */
export const PAYMENT_LIST_RULES: BodyRule[] = [
  { fields: ["from"], rule: "from on or before to" },
  { fields: ["minAmount"], rule: "minAmount at most maxAmount" },
  { fields: ["from", "to"], rule: `dates from ${FIRST_DAY} to ${LAST_DAY}` },
];

export const PAYMENT_FILTERS_DOC =
  "Filters (all optional, all combined): `search`, `from`/`to` (days in the organization's time zone, both included), `formID`, `status`, `paymentMethod`, `frequency`, `minAmount`/`maxAmount` (the charged `amount`, both included), `subscriptionId`, `contactId`. A `lastEvaluatedKey` pages only the list of the filters it came from: sent with other filters it is a 400.";

/** The store's filters for a parsed query; days are turned into instants in the organization's time zone. */
export async function paymentFilters(
  db: Db,
  organizationId: string,
  q: PaymentListQuery,
): Promise<PaymentFilters> {
  const timeZone =
    q.from !== undefined || q.to !== undefined
      ? ((await getOrganization(db, organizationId))?.timeZone ?? "UTC")
      : "UTC";
  return defined({
    search: q.search,
    fromIso: q.from === undefined ? undefined : isoAt(startOfLocalDay(q.from, timeZone)),
    beforeIso: q.to === undefined ? undefined : isoAt(startOfLocalDay(addDays(q.to, 1), timeZone)),
    formId: q.formID,
    status: q.status,
    paymentMethod: q.paymentMethod,
    frequency: q.frequency,
    minCents: q.minAmount,
    maxCents: q.maxAmount,
    subscriptionId: q.subscriptionId,
    contactId: q.contactId,
  });
}

// ---- Subscriptions ----

export const subscriptionListQuery = paginationQuery().extend({
  status: z
    .enum(SUBSCRIPTION_STATUSES)
    .optional()
    .meta({ description: "Only recurring gifts of this status" }),
  search: searchParam(
    "A donor's name or e-mail address containing it (any case), or a subscription id (`sub_…`) exactly",
  ),
  frequency: z
    .enum(RECURRING_FREQUENCIES)
    .optional()
    .meta({ description: "Only recurring gifts of this frequency" }),
  contactId: uuidParam("Only this contact's recurring gifts"),
});

export function subscriptionFilters(q: z.output<typeof subscriptionListQuery>): SubscriptionFilters {
  return defined({ search: q.search, status: q.status, frequency: q.frequency, contactId: q.contactId });
}

// ---- Contacts ----

export const contactSearchParam = searchParam(
  "Contacts whose name, organization name or an e-mail address contains it (any case)",
);

/**
 * The list name a cursor is scoped to: the list's own name, and the filters when there are any (so that
 * cursors handed out before the filters existed still page the unfiltered list).
 */
export function filteredList(base: string, filters: object): string {
  const set = Object.entries(filters)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return set.length === 0 ? base : `${base}?${JSON.stringify(set)}`;
}

/** The object without its undefined fields (the store's filters are all optional). */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

import { smallestCents } from "../../shared/currency.js";
import { addDays, daysBetween, localDate, startOfLocalDay } from "../../shared/localDays.js";
import { centsToDollars } from "../../shared/money.js";
import {
  SUMMARY_ATTENTION_LIMIT,
  SUMMARY_DEFAULT_DAYS,
  SUMMARY_MAX_DAYS,
  summaryQuerySchema,
  summarySchema,
} from "../../shared/schemas/analytics.js";
import { isoAt } from "../../shared/time.js";
import { ApiError } from "../errors.js";
import {
  activeRecurringByFrequency,
  failedPayments,
  openDisputes,
  raisedBetween,
  raisedByBucket,
} from "../store/analytics.js";
import type { Db } from "../store/database.js";
import type { Organization } from "../store/organizations.js";
import type { PaymentsTable } from "../store/schema.js";
import { presentPayment } from "../wire/payment.js";
import type { AppDeps } from "./env.js";
import { loadCallerOrganization } from "./organization.js";
import { defineRoute, type RouteSpec, standardErrors } from "./route.js";

/** `GET /v1/analytics/summary`: the dashboard's home page in one answer, in the organization's days. */

/**
 * Payments per month of recurring gifts of each frequency, as a fraction `perYear / 12`: a month is a
 * twelfth of a year, so a weekly gift is 52 ÷ 12 charges a month and a daily one 365 ÷ 12.
 */
const CHARGES_PER_YEAR: Record<string, number> = { DAILY: 365, WEEKLY: 52, MONTHLY: 12, ANNUALLY: 1 };

/**
 * The monthly value of recurring gifts, from their sums per frequency (hundredths): each sum × its charges
 * a year, added up, ÷ 12, rounded half up once at the end to the currency's smallest amount (a whole unit
 * for JPY), so no gift's rounding is counted twelve times.
 */
export function monthlyValueCents(
  byFrequency: { frequency: string; cents: number }[],
  currency: string,
): number {
  const perYear = byFrequency.reduce((sum, f) => sum + f.cents * (CHARGES_PER_YEAR[f.frequency] ?? 0), 0);
  const step = smallestCents(currency);
  return Math.round(perYear / 12 / step) * step;
}

/** The summary's range from the query: defaults, and the rules between `from`, `to` and today. */
export function summaryRange(
  query: { from?: string; to?: string },
  today: string,
): { from: string; to: string } {
  const to = query.to ?? today;
  const from = query.from ?? addDays(to, -(SUMMARY_DEFAULT_DAYS - 1));
  if (from > to) throw ApiError.validation([`from (${from}) must not be after to (${to})`]);
  const days = daysBetween(from, to) + 1;
  if (days > SUMMARY_MAX_DAYS)
    throw ApiError.validation([
      `from to to spans ${days} days; a summary covers at most ${SUMMARY_MAX_DAYS}`,
    ]);
  return { from, to };
}

/** Net sums per local day of `[from, to]`, every day listed (zero days too). */
async function byDay(db: Db, org: Organization, from: string, to: string) {
  const tz = org.timeZone;
  const starts: number[] = [];
  for (let d = from; d <= addDays(to, 1); d = addDays(d, 1)) starts.push(startOfLocalDay(d, tz));
  // Hour buckets when every local day of the range begins on a whole UTC hour, as in most zones; else minutes.
  const bucket = starts.every((ms) => ms % 3_600_000 === 0) ? 13 : 16;
  const rows = await raisedByBucket(
    db,
    org.id,
    org.currency,
    isoAt(starts[0]),
    isoAt(starts[starts.length - 1]),
    bucket,
  );
  const days = new Map<string, { cents: number; gifts: number }>();
  for (const r of rows) {
    const at = Date.parse(`${r.bucket}${bucket === 13 ? ":00:00Z" : ":00Z"}`);
    const date = localDate(at, tz);
    const day = days.get(date) ?? { cents: 0, gifts: 0 };
    day.cents += r.cents;
    day.gifts += r.gifts;
    days.set(date, day);
  }
  const out: { date: string; amount: number; count: number }[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) {
    const day = days.get(d);
    out.push({ date: d, amount: centsToDollars(day?.cents ?? 0), count: day?.gifts ?? 0 });
  }
  return out;
}

function attentionItem(row: PaymentsTable) {
  const p = presentPayment(row);
  return {
    paymentID: p.paymentID,
    date: p.date,
    amount: p.amount,
    currency: p.currency,
    email: p.email,
    firstName: p.firstName,
    lastName: p.lastName,
    frequency: p.frequency,
    subscriptionId: p.subscriptionId,
    paymentMethod: p.paymentMethod,
    failureMessage: p.failureMessage,
    dispute: p.dispute,
  };
}

export async function buildSummary(
  db: Db,
  org: Organization,
  query: { from?: string; to?: string },
  nowMs: number,
  /** Whether the caller may read payments (`donations:read`): the lists to act on name donors. */
  showPayments: boolean,
) {
  const tz = org.timeZone;
  const today = localDate(nowMs, tz);
  const { from, to } = summaryRange(query, today);
  const dayStart = (d: string) => isoAt(startOfLocalDay(d, tz));
  const tomorrow = dayStart(addDays(today, 1));
  const sum = (start: string, end: string) => raisedBetween(db, org.id, org.currency, start, end);
  const [todays, last30, year, range, days, recurring, failed, disputed] = await Promise.all([
    sum(dayStart(today), tomorrow),
    sum(dayStart(addDays(today, -29)), tomorrow),
    sum(dayStart(`${today.slice(0, 4)}-01-01`), tomorrow),
    sum(dayStart(from), dayStart(addDays(to, 1))),
    byDay(db, org, from, to),
    activeRecurringByFrequency(db, org.id, org.currency),
    failedPayments(db, org.id, dayStart(from), dayStart(addDays(to, 1)), SUMMARY_ATTENTION_LIMIT),
    openDisputes(db, org.id, SUMMARY_ATTENTION_LIMIT),
  ]);
  return {
    currency: org.currency,
    timeZone: tz,
    today,
    from,
    to,
    raised: {
      today: centsToDollars(todays.cents),
      last30Days: centsToDollars(last30.cents),
      thisYear: centsToDollars(year.cents),
    },
    range: { raised: centsToDollars(range.cents), gifts: range.gifts, donors: range.donors },
    recurring: {
      active: recurring.reduce((n, f) => n + f.count, 0),
      monthlyValue: centsToDollars(monthlyValueCents(recurring, org.currency)),
    },
    byDay: days,
    failed: { count: failed.count, recent: showPayments ? failed.recent.map(attentionItem) : [] },
    disputed: { count: disputed.count, recent: showPayments ? disputed.recent.map(attentionItem) : [] },
  };
}

export function analyticsSummaryRoutes(deps: AppDeps): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/v1/analytics/summary",
      operationId: "getGivingSummary",
      permission: "analytics:read",
      tags: ["Analytics"],
      summary: "Summary of giving: totals, a day-by-day series, recurring gifts, payments to act on",
      description: `The dashboard's home page. Days are the organization's (its \`timeZone\`, default UTC): a gift at 23:30 there counts on that day. Sums are in the organization's \`currency\` (major units), of completed payments net of their refunds (a payment refunded in full counts for nothing and is not a gift), whenever the refund was made; payments in another currency (taken before the organization changed its own) are left out. The lists of failed and disputed payments name donors: they are empty unless the caller may also read payments (\`donations:read\`); their counts are always given. \`from\` and \`to\` (YYYY-MM-DD, both included) default to the last ${SUMMARY_DEFAULT_DAYS} days ending today; \`raised\`, \`recurring\` and \`disputed\` do not depend on them.`,
      query: summaryQuerySchema,
      rules: [
        {
          fields: ["from", "to"],
          rule: "from not after to (to defaults to today, from to 89 days before to)",
        },
        { fields: ["from", "to"], rule: `at most ${SUMMARY_MAX_DAYS} days from from to to, both included` },
      ],
      responses: {
        200: { description: "The summary", schema: summarySchema },
        ...standardErrors,
      },
      handler: async (c, { query }) => {
        const auth = c.get("auth");
        const org = await loadCallerOrganization(deps, auth.organizationId);
        const showPayments = auth.permissions.has("donations:read");
        return c.json(await buildSummary(deps.store.db, org, query, deps.now(), showPayments));
      },
    }),
  ];
}

import { sql } from "kysely";
import { centsToDollars } from "../../shared/money.js";
import type { DonorPrefill } from "../../shared/prefill.js";
import { type AnyCustomInput, customInputsOf } from "../../shared/prefill.js";
import { type Availability, remainingProducts, remainingTickets } from "../../shared/pricing/availability.js";
import type { PaymentOptions, PublicFormView } from "../../shared/schemas/publicForm.js";
import { wireTime } from "../../shared/time.js";
import type { Db } from "../store/database.js";
import type { FormRecord } from "../store/forms.js";
import type { Organization } from "../store/organizations.js";

/**
 * What a donor may see of a form: the form's own donor-facing settings, stock left, the
 * fundraising bar and donor list when enabled, and the prefill of a checkout link. Never other records'
 * ids, costs, promo codes, processor ids or the organization's email settings.
 */

const DONOR_LIST_SIZE = 20;

export function paymentOptions(
  org: Organization,
  processor: { name: string; livemode: boolean } | null,
  urls: { stripeModule: string; stripeJsUrl: string | undefined },
): PaymentOptions | null {
  if (!processor) return null;
  if (processor.name === "stripe" && org.processor)
    return {
      processor: "stripe",
      publishableKey: org.processor.publishableKey,
      livemode: processor.livemode,
      module: urls.stripeModule,
      // A stand-in Stripe.js (tests, development) only ever with test keys: live card details reach Stripe.
      ...(urls.stripeJsUrl && !processor.livemode ? { jsUrl: urls.stripeJsUrl } : {}),
    };
  // A (US) bank account pays in dollars only, as at Stripe: other currencies are offered cards.
  return { processor: "sandbox", methods: org.currency === "USD" ? ["card", "bank"] : ["card"] };
}

/*
 * The bar and the donor list count only gifts in the organization's current currency: gifts taken before a
 * change of currency keep theirs, and with no exchange rates a sum across currencies (or an amount shown
 * in the page's currency) would be wrong.
 */

async function raised(db: Db, formId: string, currency: string): Promise<{ cents: number; donors: number }> {
  const row = await db
    .selectFrom("payments")
    .select([
      sql<number | null>`sum(amount_cents - fee_cents - refunded_cents)`.as("net"),
      sql<number>`count(distinct email)`.as("donors"),
    ])
    .where("form_id", "=", formId)
    .where("status", "=", "COMPLETED")
    .where("currency", "=", currency)
    .executeTakeFirst();
  return { cents: Math.max(0, Number(row?.net ?? 0)), donors: Number(row?.donors ?? 0) };
}

/**
 * Recent supporters of gifts in `currency` (the page's): first name and last initial, or "Anonymous"; never
 * an email or an id.
 */
async function donorList(db: Db, formId: string, currency: string) {
  const rows = await db
    .selectFrom("payments")
    .select(["first_name", "last_name", "anonymous", "amount_cents", "fee_cents", "created_at"])
    .where("form_id", "=", formId)
    .where("status", "=", "COMPLETED")
    .where("currency", "=", currency)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(DONOR_LIST_SIZE)
    .execute();
  return rows.map((r) => ({
    // The last name's first character, whole (a letter beyond the BMP is two UTF-16 units).
    name: r.anonymous === 1 ? "Anonymous" : `${r.first_name} ${[...r.last_name.trim()][0] ?? ""}.`.trim(),
    anonymous: r.anonymous === 1,
    amount: centsToDollars(Number(r.amount_cents) - Number(r.fee_cents)),
    date: wireTime(r.created_at),
  }));
}

function presentInput(i: AnyCustomInput) {
  const inputType: PublicFormView["customInputs"][number]["inputType"] =
    i.kind === "single" ? "single_select" : i.kind === "multi" ? "multi_select" : "short_text";
  return { id: i.id, title: i.title, inputType, required: i.required, options: i.options };
}

export async function publicFormView(
  db: Db,
  loaded: { form: FormRecord; org: Organization },
  availability: Availability,
  prefill: DonorPrefill | null,
  payment: PaymentOptions | null,
): Promise<PublicFormView> {
  const { form, org } = loaded;
  const c = form.config;
  const d = (cents: number[]) => cents.map(centsToDollars);
  const tickets = remainingTickets(c, availability);
  const products = remainingProducts(c, availability);
  const longInputs = new Set(
    [...c.customInputs.filter((i) => i.inputType === "long_text").map((i) => i.id)].concat(
      org.globalCustomInputs.filter((g) => g.inputType === "LONG_TEXT_INPUT").map((g) => g.id),
    ),
  );
  const bar = c.enableFundraisingBar ? await raised(db, form.id, org.currency) : null;
  return {
    formID: form.id,
    formType: c.formType,
    title: c.title,
    description: c.description ?? "",
    color: c.color,
    headerImage: c.headerImage,
    active: c.active,
    organization: { name: org.name },
    currency: org.currency,
    funds: c.funds,
    frequencies: c.frequencies,
    defaultFrequency: c.defaultFrequency,
    amounts: {
      ONE_TIME: d(c.oneTimeAmounts),
      DAILY: d(c.dailyAmounts),
      WEEKLY: d(c.weeklyAmounts),
      MONTHLY: d(c.monthlyAmounts),
      ANNUALLY: d(c.annuallyAmounts),
    },
    // The form's default amount is its default frequency's: a link that opens the form at another one
    // (and names no amount) starts the donor at that frequency's presets instead.
    defaultAmount:
      c.defaultAmount === null ||
      (prefill?.frequency !== undefined &&
        prefill.amount === undefined &&
        prefill.frequency !== c.defaultFrequency &&
        c.frequencies.includes(prefill.frequency))
        ? null
        : centsToDollars(c.defaultAmount),
    allowCustomAmount: c.allowCustomAmount,
    minAmount: 1,
    maxAmount: 1_000_000,
    givingLevels: c.givingLevels.map((l) => ({
      title: l.title,
      amount: centsToDollars(l.amount),
      description: l.description,
    })),
    productGroups: c.sponsorshipGroups.map((g) => ({
      productGroupName: g.groupTitle,
      description: g.description,
      products: g.options.map((o) => {
        const remaining = products[g.groupTitle]?.[o.optionTitle] ?? null;
        return {
          productName: o.optionTitle,
          price: centsToDollars(o.amount),
          description: o.description ?? "",
          remaining,
          soldOut: remaining === 0,
        };
      }),
    })),
    tickets: c.tickets.map((t) => {
      const remaining = tickets[t.name] ?? null;
      return {
        name: t.name,
        price: centsToDollars(t.price),
        ticketType: t.ticketType,
        groupSize: t.groupSize,
        description: t.description ?? "",
        maxPerOrder: t.maxPerOrder,
        remaining,
        soldOut: remaining === 0,
      };
    }),
    hasPromoCodes: c.promoCodes.length > 0,
    customInputs: customInputsOf(c, org.globalCustomInputs).map((i) => ({
      ...presentInput(i),
      ...(longInputs.has(i.id) ? { inputType: "long_text" as const } : {}),
    })),
    faqs: c.faqs,
    event: c.enableTimeAndLocation
      ? {
          date: c.eventDate,
          startTime: c.startTime,
          endTime: c.endTime,
          timeZone: c.timeZone,
          location: c.location,
          details: c.eventDetails,
        }
      : null,
    fundraisingBar:
      bar && c.goal !== null
        ? { goal: centsToDollars(c.goal), raised: centsToDollars(bar.cents), donors: bar.donors }
        : null,
    donorList: c.enableDonorList ? await donorList(db, form.id, org.currency) : null,
    options: {
      coverFees: c.enableCoverFees,
      anonymous: c.enableAnonymous,
      organizationName: c.enableOrganizationName,
      billingAddress: c.enableBillingAddress,
      country: c.enableCountryDropdown,
      phone: c.enablePhone,
      tribute: c.enableTribute === true,
      monthlyUpsell:
        c.enableMonthlyUpsell === true &&
        c.frequencies.includes("MONTHLY") &&
        c.frequencies.includes("ONE_TIME")
          ? { ratio: c.monthlyUpsellRatio ?? 0.3, minimum: centsToDollars(c.monthlyUpsellMinimum ?? 0) }
          : null,
    },
    feeRate: { percent: org.feeRate.percentBps / 100, fixed: centsToDollars(org.feeRate.fixedCents) },
    payment,
    prefill:
      prefill && prefill.amount !== undefined
        ? { ...prefill, amount: centsToDollars(prefill.amount) }
        : prefill,
  };
}

export type { PaymentOptions, PublicFormView } from "../../shared/schemas/publicForm.js";

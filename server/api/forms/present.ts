import type { z } from "zod";
import { inputFormType } from "../../../shared/enums.js";
import { escapeHtml } from "../../../shared/html.js";
import { EMBED_ID_PARAM } from "../../../shared/messages.js";
import { centsToDollars } from "../../../shared/money.js";
import { extend } from "../../../shared/objects.js";
import { promoKey, sold } from "../../../shared/pricing/availability.js";
import type { FormConfig } from "../../../shared/schemas/form.js";
import { formRecordSchema } from "../../../shared/schemas/formRecord.js";
import { wireTime } from "../../../shared/time.js";
import type { FormRecord } from "../../store/forms.js";

/** How forms look on the wire: the zod schemas that document them, and the functions that build them. */

/** The full form, as reads and webhooks give it. */
export const formFullSchema = formRecordSchema;

/** A form in a list: its main settings; the event's time and place on event forms only. */
export const formSummarySchema = formRecordSchema
  .pick({
    formID: true,
    formUrl: true,
    title: true,
    description: true,
    formType: true,
    funds: true,
    frequencies: true,
    color: true,
    headerImage: true,
    active: true,
    goal: true,
    eventDate: true,
    startTime: true,
    endTime: true,
    location: true,
    createdAt: true,
    updatedAt: true,
  })
  .partial({ eventDate: true, startTime: true, endTime: true, location: true });

export type FormSummary = z.infer<typeof formSummarySchema>;
export type FormFull = z.infer<typeof formFullSchema>;

export function hostedPath(config: Pick<FormConfig, "formType">): "donate" | "attend" {
  return config.formType === "EVENT" ? "attend" : "donate";
}

export function formUrl(publicUrl: string, formId: string): string {
  return `${publicUrl}/donate/${formId}`;
}

/** Rendered heights (px) of the checkout's parts at 640 px wide, measured in Chromium on the demo forms. */
const HEIGHTS = {
  base: 1100,
  presets: 230,
  level: 100,
  group: 40,
  option: 72,
  eventDetails: 100,
  ticket: 72,
  promo: 80,
  extraDonation: 80,
  choiceRow: 75,
  headerImage: 220,
  descriptionLine: 22,
  bar: 90,
  donorList: 60,
  input: 90,
  longInput: 150,
  faq: 56,
  address: 280,
  field: 90,
} as const;

/**
 * The height the embed snippet reserves for a form: an estimate of the checkout's rendered height at
 * its full width, so the host page barely moves when the loader sets the exact height (narrower frames
 * grow a little more).
 */
export function reservedHeight(c: FormConfig): number {
  const h = HEIGHTS;
  let px = h.base;
  if (c.formType === "EVENT") {
    if (c.enableTimeAndLocation) px += h.eventDetails;
    px += c.tickets.length * h.ticket + (c.promoCodes.length ? h.promo : 0) + h.extraDonation;
  } else if (c.givingLevels.length) px += c.givingLevels.length * h.level;
  else if (c.sponsorshipGroups.length)
    px += c.sponsorshipGroups.reduce((n, g) => n + h.group + g.options.length * h.option, 0);
  else px += h.presets;
  if (c.funds.length > 1) px += h.choiceRow;
  if (c.frequencies.length > 1) px += h.choiceRow;
  if (c.headerImage) px += h.headerImage;
  px += Math.max(0, Math.ceil((c.description ?? "").length / 70) - 1) * h.descriptionLine;
  if (c.enableFundraisingBar) px += h.bar;
  if (c.enableDonorList) px += h.donorList;
  for (const input of c.customInputs) px += input.inputType === "long_text" ? h.longInput : h.input;
  px += c.faqs.length * h.faq;
  if (c.enableBillingAddress) px += h.address;
  else if (c.enableCountryDropdown) px += h.field;
  if (c.enablePhone) px += h.field;
  if (c.enableOrganizationName) px += h.field;
  return Math.min(6000, Math.ceil(px / 10) * 10);
}

/**
 * The iframe snippet organizations paste into their site: the hosted form in embed mode with a reserved
 * height, and the loader script that resizes it from the form's height messages. Its src names the embed
 * already (the form's id), so the loader has no id to add and the lazy iframe loads once, as pasted; a
 * second copy of it on one page is given an id of its own by the loader.
 */
export function embedHtml(publicUrl: string, form: FormRecord): string {
  const src = `${publicUrl}/${hostedPath(form.config)}/${form.id}?embed=1&${EMBED_ID_PARAM}=${form.id}`;
  const title = `${form.config.formType === "EVENT" ? "Register" : "Donate"}: ${form.config.title}`;
  return (
    `<iframe src="${escapeHtml(src)}" title="${escapeHtml(title)}" allow="payment" ` +
    `data-almoner-form="${escapeHtml(form.id)}" style="width:100%;max-width:640px;height:${reservedHeight(form.config)}px;border:0" ` +
    `loading="lazy"></iframe>\n<script async src="${escapeHtml(`${publicUrl}/embed.js`)}"></script>`
  );
}

export function toSummary(publicUrl: string, form: FormRecord): FormSummary {
  const c = form.config;
  const summary: FormSummary = {
    formID: form.id,
    formUrl: formUrl(publicUrl, form.id),
    title: c.title,
    description: c.description,
    formType: c.formType,
    funds: c.funds,
    frequencies: c.frequencies,
    color: c.color,
    headerImage: c.headerImage,
    active: c.active,
    goal: c.enableFundraisingBar && c.goal !== null ? centsToDollars(c.goal) : null,
    createdAt: wireTime(form.createdAt),
    updatedAt: wireTime(form.updatedAt),
  };
  if (c.formType === "EVENT") {
    summary.eventDate = c.eventDate;
    summary.startTime = c.startTime;
    summary.endTime = c.endTime;
    summary.location = c.location;
  }
  return summary;
}

/** Sales figures that reads add to tickets and promo codes; zero until the checkout records sales. */
export interface FormSales {
  ticketsSold: Record<string, number>;
  promoRedemptions: Record<string, number>;
}

const NO_SALES: FormSales = { ticketsSold: {}, promoRedemptions: {} };

/**
 * The JSON bodies of GET /v1/forms/{id} for forms without sales figures (no tickets or promo codes), whose
 * answer depends on the record alone: serialized once per record and kept with it (the read cache shares a
 * record until the form changes), so that a read sends it without serializing it again. One per app (its
 * routes make it), for the app's public URL, read when a body is made: a server started with PORT=0 learns its
 * URL only once it listens, after the app is made.
 */
export class FormAnswers {
  private readonly answers = new WeakMap<FormRecord, string>();

  constructor(private readonly config: { readonly publicUrl: string }) {}

  json(form: FormRecord): string {
    let json = this.answers.get(form);
    if (json === undefined) {
      json = JSON.stringify(toFull(this.config.publicUrl, form));
      this.answers.set(form, json);
    }
    return json;
  }
}

export function toFull(publicUrl: string, form: FormRecord, sales: FormSales = NO_SALES): FormFull {
  const c = form.config;
  const d = (cents: number[]) => cents.map(centsToDollars);
  // Object.assign onto the fresh summary, not `{ ...summary, ... }`: see shared/objects.ts.
  const full: FormFull = Object.assign(toSummary(publicUrl, form), {
    goal: c.goal === null ? null : centsToDollars(c.goal),
    embedHTML: embedHtml(publicUrl, form),
    eventDate: c.eventDate,
    startTime: c.startTime,
    endTime: c.endTime,
    location: c.location,
    defaultFrequency: c.defaultFrequency,
    oneTimeAmounts: d(c.oneTimeAmounts),
    dailyAmounts: d(c.dailyAmounts),
    weeklyAmounts: d(c.weeklyAmounts),
    monthlyAmounts: d(c.monthlyAmounts),
    annuallyAmounts: d(c.annuallyAmounts),
    defaultAmount: c.defaultAmount === null ? null : centsToDollars(c.defaultAmount),
    allowCustomAmount: c.allowCustomAmount,
    givingLevels: c.givingLevels.map((l) => extend(l, { amount: centsToDollars(l.amount) })),
    sponsorshipGroups: c.sponsorshipGroups.map((g) =>
      extend(g, { options: g.options.map((o) => extend(o, { amount: centsToDollars(o.amount) })) }),
    ),
    tickets: c.tickets.map((t) =>
      extend(t, {
        price: centsToDollars(t.price),
        // Forms saved before the field existed have none.
        fairMarketValue: t.fairMarketValue == null ? null : centsToDollars(t.fairMarketValue),
        quantitySold: sold(sales.ticketsSold, t.name),
      }),
    ),
    promoCodes: c.promoCodes.map((p) =>
      extend(p, {
        discountValue: p.discountType === "amount" ? centsToDollars(p.discountValue) : p.discountValue,
        timesRedeemed: sold(sales.promoRedemptions, promoKey(p.code)),
      }),
    ),
    customInputs: c.customInputs.map((i) => extend(i, { question: i.title })),
    faqs: c.faqs,
    enableFundraisingBar: c.enableFundraisingBar,
    enableDonorList: c.enableDonorList,
    enableCoverFees: c.enableCoverFees,
    enableAnonymous: c.enableAnonymous,
    enableOrganizationName: c.enableOrganizationName,
    enableBillingAddress: c.enableBillingAddress,
    enableCountryDropdown: c.enableCountryDropdown,
    enablePhone: c.enablePhone,
    // Forms stored before the setting existed have none: off.
    enableTribute: c.enableTribute === true,
    // Forms saved before the upsell existed have none of its settings.
    enableMonthlyUpsell: c.enableMonthlyUpsell === true,
    monthlyUpsellRatio: c.monthlyUpsellRatio ?? 0.3,
    monthlyUpsellMinimum: c.monthlyUpsellMinimum ? centsToDollars(c.monthlyUpsellMinimum) : null,
    enableCustomEmail: c.enableCustomEmail,
    replyToAddress: c.replyToAddress,
    emailSubject: c.emailSubject,
    customMessage: c.customMessage,
    enableTimeAndLocation: c.enableTimeAndLocation,
    eventDetails: c.eventDetails,
    timeZone: c.timeZone,
  });
  if (c.formType === "PRODUCT") {
    full.productGroups = c.sponsorshipGroups.map((g) => ({
      productGroupName: g.groupTitle,
      description: g.description,
      products: g.options.map((o) => ({
        productName: o.optionTitle,
        price: centsToDollars(o.amount),
        description: o.description,
        quantity: o.quantity,
      })),
    }));
  }
  return full;
}

/** The stored form as create input (dollars, input names), the base that a partial update merges onto. */
export function toInput(form: FormRecord): Record<string, unknown> {
  const full = toFull("", form);
  const { formID, formUrl, embedHTML, createdAt, updatedAt, productGroups, formType, ...rest } = full;
  return {
    ...rest,
    ...inputFormType(formType),
    tickets: full.tickets.map(({ quantitySold, ...t }) => t),
    promoCodes: full.promoCodes.map(({ timesRedeemed, ...p }) => p),
    customInputs: full.customInputs.map(({ question, ...i }) => i),
    sponsorshipGroups: full.sponsorshipGroups,
  };
}

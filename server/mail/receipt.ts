import { formatMoney } from "../../shared/currency.js";
import type { Frequency } from "../../shared/enums.js";
import { clock, longDate, zoneName } from "../../shared/eventTime.js";
import { escapeHtml } from "../../shared/html.js";
import type { MessageKey } from "../../shared/i18n/catalogs/en.js";
import type { MessageValues } from "../../shared/i18n/format.js";
import { lineLabel } from "../../shared/i18n/lineLabel.js";
import { directionOf, type Language } from "../../shared/languages.js";
import type { QuoteLine } from "../../shared/pricing/quote.js";
import { isolate } from "../documents/textLayout.js";
import { messageIfAny, translator } from "../i18n.js";
import { htmlParagraphs } from "./letter.js";
import { qrContentId } from "./qrImages.js";

/**
 * The donor's receipt e-mail: one pure function from what was paid to a subject, a plain-text part and
 * an HTML part. Every value comes from donors or organizations, so every value is escaped in the HTML.
 */

export interface ReceiptInput {
  organizationName: string;
  formTitle: string;
  /** The form's custom e-mail settings; used when `enabled` (the form's enableCustomEmail) is true. */
  customEmail: { enabled: boolean; replyToAddress?: string; emailSubject?: string; customMessage?: string };
  donor: { firstName: string; lastName: string; email: string };
  paymentId: string;
  status: "COMPLETED" | "PENDING";
  /** What was charged, covered fee included. */
  amountCents: number;
  /** The processing fee the donor chose to cover, inside amountCents (0 if none). */
  feeCents: number;
  frequency: Frequency;
  fund: string;
  /** ISO 8601. */
  date: string;
  /** The organization's IANA time zone (default UTC): the dates are the days there. */
  timeZone?: string;
  /** What was bought or given. `kind` "ticket" makes the receipt an event order's. */
  lines: { label: string; quantity: number; amountCents: number; kind?: QuoteLine["kind"] }[];
  discountCents: number;
  promoCode: string | null;
  /** How it was paid; null when nothing was charged (a free order), and the receipt names no method. */
  paymentMethod: { type: "card" | "bank"; brand?: string; last4: string } | null;
  /** Recurring gifts: when the next charge is due (ISO), or null. */
  nextBillingDate: string | null;
  /** A later charge of a subscription rather than the checkout that started it. */
  recurringCharge: boolean;
  /** ISO 4217 of the amounts (default USD). */
  currency?: string;
  /** The donor's language (the page's when they gave); default English. */
  language?: Language;
  /** The organization's logo (https) above the receipt and its colour (#RRGGBB) as its accent. */
  branding?: { logoUrl?: string | null; color?: string | null };
  /** A sample sent from the settings: marked as a test in the subject and at the top of the body. */
  test?: boolean;
  /** The gift's dedication, when it has one. */
  tribute?: { kind: "HONOR" | "MEMORY"; honoreeName: string };
  /** The donor portal of the organization, where the donor finds their gifts and receipts. */
  portalUrl?: string;
  /** An event order's tickets (not voided): each listed with its code and the code's QR image. */
  tickets?: { code: string; ticketType: string; admits: number }[];
  /** An event order's when and where, as its form states them (the form's time and location, when shown). */
  event?: EventWhenWhere;
  /**
   * An organization that states a tax id receipts gifts for tax: its legal name and id, the deductible part
   * of the payment (less the fair-market value of what was bought, its tickets') and the note that says so.
   */
  tax?: { taxId: string; legalName: string | null; fairMarketCents: number; deductibleCents: number };
}

/** An event's day (YYYY-MM-DD), times (HH:MM, 24-hour) in its time zone (IANA), and place. */
export interface EventWhenWhere {
  date: string | null;
  startTime: string | null;
  endTime: string | null;
  timeZone: string | null;
  location: string | null;
}

export interface RenderedReceipt {
  subject: string;
  text: string;
  html: string;
  /** The custom reply-to address, when custom e-mail is enabled and one is set. */
  replyTo?: string;
}

const CARD_BRANDS: Record<string, string> = {
  visa: "Visa",
  mastercard: "Mastercard",
  amex: "American Express",
  american_express: "American Express",
  discover: "Discover",
  diners: "Diners Club",
  jcb: "JCB",
  unionpay: "UnionPay",
};

const nonEmpty = (value: string | undefined): string | undefined =>
  value?.trim() ? value.trim() : undefined;

/** The Intl locale a language's dates and times are written in (English: the United States'). */
const locale = (language: Language) => (language === "en" ? "en-US" : language);

/** Built once per language and zone: constructing an Intl formatter costs far more than formatting with it. */
const LONG_DATES = new Map<string, Intl.DateTimeFormat>();

/**
 * The day an instant falls on in the organization's time zone, as the language writes it in full
 * (`July 3, 2026`, `3 de julio de 2026`): a gift at 23:30 on December 31 in New York is of December 31.
 */
export function formatDate(iso: string, language: Language, timeZone = "UTC"): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const key = `${language} ${timeZone}`;
  let format = LONG_DATES.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(locale(language), { dateStyle: "long", timeZone });
    LONG_DATES.set(key, format);
  }
  return format.format(d);
}

/** The rows an event order's receipt tells its when and where in: the day, the times, the place. */
function eventRows(event: EventWhenWhere, language: Language, tr: Translate, data: (text: string) => string) {
  const rows: [string, string][] = [];
  // "Event date", not the checkout's "Date": the receipt's own date is a row above it.
  if (event.date) rows.push([tr("mail.receipt.eventDate"), longDate(event.date, language)]);
  if (event.startTime) {
    const end = event.endTime ? ` – ${clock(event.endTime, language)}` : "";
    const zone = event.timeZone ? ` (${zoneName(event.timeZone, language)})` : "";
    rows.push([tr("checkout.event.time"), `${clock(event.startTime, language)}${end}${zone}`]);
  }
  if (event.location?.trim()) rows.push([tr("checkout.event.location"), data(event.location.trim())]);
  return rows;
}

/** Brand and last four digits only: whatever the processor stored, no more digits than four get out. */
function paymentMethodLabel(pm: NonNullable<ReceiptInput["paymentMethod"]>, tr: Translate): string {
  const last4 = pm.last4.replace(/\D/g, "").slice(-4);
  let name = tr("mail.receipt.bank");
  if (pm.type === "card") {
    const brand = (pm.brand ?? "").trim().toLowerCase();
    name =
      CARD_BRANDS[brand] ??
      (brand
        ? brand.replace(/[^a-z ]/g, " ").replace(/\b[a-z]/g, (c) => c.toUpperCase())
        : tr("mail.receipt.card"));
  }
  return last4.length === 4 ? tr("mail.receipt.ending", { method: name, last4 }) : name;
}

type Translate = (key: MessageKey, values?: MessageValues) => string;

/** The receipt as labelled rows and sentences, shared by the text and HTML parts so they never disagree. */
function compose(input: ReceiptInput) {
  const language = input.language ?? "en";
  const tr = translator(language);
  const say = messageIfAny(language);
  const money = (cents: number) => formatMoney(cents, input.currency ?? "USD", language);
  const organization = input.organizationName;
  const event = input.formTitle;
  const isEvent = input.lines.some((l) => l.kind === "ticket");
  const recurring = input.frequency !== "ONE_TIME";
  const frequency = tr(`mail.frequency.${input.frequency}`);
  const custom = input.customEmail.enabled ? input.customEmail : undefined;

  let subject = tr("mail.receipt.subject.gift", { organization });
  if (isEvent) subject = tr("mail.receipt.subject.event", { event });
  else if (recurring) subject = tr("mail.receipt.subject.recurring", { frequency, organization });
  subject = (nonEmpty(custom?.emailSubject) ?? subject).replace(/\s+/g, " ");

  if (input.test) subject = tr("mail.receipt.test.subject", { subject });

  // In a right-to-left e-mail, names and titles (often in Latin letters) are bidirectional isolates in the
  // body, so that their own punctuation stays with them ("Friends of the Library Inc.", not ".Friends …").
  const data = directionOf(language) === "rtl" ? isolate : (text: string) => text;
  const inBody = { organization: data(organization), event: data(event) };

  let thanks = tr("mail.receipt.thanks.gift", { organization: inBody.organization });
  if (isEvent) thanks = tr("mail.receipt.thanks.event", { event: inBody.event });
  else if (input.recurringCharge)
    thanks = tr("mail.receipt.thanks.charge", { frequency, organization: inBody.organization });
  else if (recurring)
    thanks = tr("mail.receipt.thanks.recurring", { frequency, organization: inBody.organization });

  // A name that ends a sentence with its own full stop ("Verein Hilfe e.V.") takes no second one.
  // (In a right-to-left e-mail the name's isolate closes between the two.)
  thanks = thanks.replace(/(?<!\.)\.(\u2069?)\.(?=\s|$)/g, ".$1");

  const notes: string[] = [];
  if (input.status === "PENDING")
    notes.push(
      input.paymentMethod?.type === "bank" ? tr("mail.receipt.pending.bank") : tr("mail.receipt.pending"),
    );

  const summary: [string, string][] = [
    [tr("mail.receipt.number"), input.paymentId],
    [tr("mail.receipt.date"), formatDate(input.date, language, input.timeZone)],
    [tr("mail.receipt.amount"), money(input.amountCents)],
  ];
  if (!isEvent) summary.push([tr("mail.receipt.frequency"), tr(`mail.receipt.frequency.${input.frequency}`)]);
  summary.push(
    [tr("mail.receipt.fund"), data(input.fund)],
    [isEvent ? tr("mail.receipt.event") : tr("mail.receipt.form"), data(input.formTitle)],
  );
  if (isEvent && input.event) summary.push(...eventRows(input.event, language, tr, data));
  if (input.paymentMethod)
    summary.push([tr("mail.receipt.method"), paymentMethodLabel(input.paymentMethod, tr)]);
  if (input.status === "PENDING") summary.push([tr("mail.receipt.status"), tr("mail.receipt.processing")]);
  if (recurring && input.nextBillingDate)
    summary.push([tr("mail.receipt.next"), formatDate(input.nextBillingDate, language, input.timeZone)]);
  if (input.tax) {
    if (input.tax.fairMarketCents > 0) summary.push([tr("doc.fmv"), money(-input.tax.fairMarketCents)]);
    summary.push([tr("doc.deductible"), money(input.tax.deductibleCents)]);
  }

  const items: [string, string][] = input.lines.map((l) => [
    l.quantity > 1 ? `${lineLabel(l, say)} × ${l.quantity}` : lineLabel(l, say),
    money(l.amountCents),
  ]);
  if (input.discountCents > 0)
    items.push([
      input.promoCode
        ? tr("mail.receipt.discountCode", { code: input.promoCode })
        : tr("mail.receipt.discount"),
      money(-input.discountCents),
    ]);
  if (input.feeCents > 0) items.push([tr("mail.receipt.fee"), money(input.feeCents)]);
  if (items.length > 0) items.push([tr("mail.receipt.total"), money(input.amountCents)]);

  const closing = [tr("mail.receipt.forRecords")];
  if (input.tax) closing.push(input.tax.fairMarketCents > 0 ? tr("doc.note.fmv") : tr("doc.note.none"));
  const portal = input.portalUrl ? `${tr("mail.receipt.portal")} ${input.portalUrl}` : null;
  if (nonEmpty(custom?.replyToAddress)) closing.push(tr("mail.receipt.reply"));

  const firstName = input.donor.firstName.trim();
  return {
    subject,
    testNotice: input.test ? tr("mail.receipt.test.notice", { organization }) : null,
    customMessage: nonEmpty(custom?.customMessage),
    greeting: firstName ? tr("mail.receipt.dear", { name: data(firstName) }) : tr("mail.receipt.hello"),
    paragraphs: [
      thanks,
      ...(input.tribute
        ? [tr("mail.receipt.dedicated", { kind: input.tribute.kind, name: data(input.tribute.honoreeName) })]
        : []),
      ...notes,
    ],
    summary,
    items,
    closing: closing.join(" "),
    portal,
    signature: organization,
    // An organization that receipts for tax: its legal name (when it differs) and tax id under its name.
    legal: input.tax
      ? [
          ...(input.tax.legalName?.trim() && input.tax.legalName.trim() !== organization
            ? [data(input.tax.legalName.trim())]
            : []),
          tr("doc.taxId", { taxId: data(input.tax.taxId) }),
        ]
      : [],
    language,
    headings: { receipt: tr("mail.receipt.heading"), details: tr("mail.receipt.details") },
    portalHtml: input.portalUrl
      ? `${escapeHtml(tr("mail.receipt.portal"))} <a href="${escapeHtml(input.portalUrl)}">${escapeHtml(tr("mail.receipt.portalLink"))}</a>.`
      : null,
    replyTo: nonEmpty(custom?.replyToAddress),
    tickets: (input.tickets ?? []).map((t) => ({
      code: t.code,
      label:
        t.admits > 1 ? `${t.ticketType} (${tr("mail.receipt.admits", { count: t.admits })})` : t.ticketType,
    })),
    ticketHeadings: { title: tr("mail.receipt.tickets"), note: tr("mail.receipt.ticketsNote") },
  };
}

/** The tickets as text: one line each, the code first (what the door asks for). */
function textTickets(r: ReturnType<typeof compose>): string {
  const lines = r.tickets.map((t) => `  ${t.code}  ${t.label}`);
  return `${r.ticketHeadings.title}\n${r.ticketHeadings.note}\n${lines.join("\n")}`;
}

/** The tickets in HTML: each its QR image (an inline attachment, qrImages.ts), code and name. */
function htmlTickets(r: ReturnType<typeof compose>): string {
  const cards = r.tickets
    .map(
      (t) =>
        `<tr><td style="padding:8px 12px 8px 0;border-bottom:1px solid #eee;width:132px"><img src="cid:${qrContentId(t.code)}" width="132" height="132" alt="${escapeHtml(t.code)}" style="display:block;width:132px;height:132px"></td>` +
        `<td style="padding:8px 0;border-bottom:1px solid #eee;vertical-align:middle"><div style="font-family:Menlo,Consolas,monospace;font-size:20px;font-weight:bold;letter-spacing:1px">${escapeHtml(t.code)}</div><div style="color:#555">${escapeHtml(t.label)}</div></td></tr>`,
    )
    .join("");
  return `<h2 style="font-size:16px;margin:20px 0 8px">${escapeHtml(r.ticketHeadings.title)}</h2><p style="margin:0 0 8px;color:#555">${escapeHtml(r.ticketHeadings.note)}</p><table role="presentation" style="width:100%;border-collapse:collapse;margin:0 0 16px">${cards}</table>`;
}

function textTable(rows: [string, string][]): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`).join("\n");
}

/** A table of labels and amounts, the amounts at the end of the line (the left in a right-to-left e-mail). */
function htmlTable(rows: [string, string][], boldLast: boolean, direction: "ltr" | "rtl"): string {
  const end = direction === "rtl" ? "left" : "right";
  const cell = "padding:4px 0;border-bottom:1px solid #eee;vertical-align:top";
  const body = rows
    .map(([label, value], i) => {
      const weight = boldLast && i === rows.length - 1 ? "font-weight:bold;" : "";
      return `<tr><td style="${cell};${weight}color:#555">${escapeHtml(label)}</td><td style="${cell};${weight}text-align:${end}">${escapeHtml(value)}</td></tr>`;
    })
    .join("");
  return `<table role="presentation" style="width:100%;border-collapse:collapse;margin:0 0 16px">${body}</table>`;
}

/** The branding a receipt may show: an https logo and a #RRGGBB colour, anything else left out. */
function brandingOf(input: ReceiptInput): { logoUrl: string | null; color: string | null } {
  const logo = input.branding?.logoUrl?.trim() ?? "";
  const color = input.branding?.color?.trim() ?? "";
  return {
    logoUrl: /^https:\/\/[^\s"'<>]+$/.test(logo) ? logo : null,
    color: /^#[0-9A-Fa-f]{6}$/.test(color) ? color : null,
  };
}

export function renderReceipt(input: ReceiptInput): RenderedReceipt {
  const r = compose(input);
  const brand = brandingOf(input);
  const accent = brand.color ? `border-top:4px solid ${brand.color};` : "";

  const text = [
    ...(r.testNotice ? [r.testNotice, "=".repeat(60)] : []),
    ...(r.customMessage ? [r.customMessage, "-".repeat(60)] : []),
    r.greeting,
    ...r.paragraphs,
    `${r.headings.receipt}\n${textTable(r.summary)}`,
    ...(r.items.length > 0 ? [`${r.headings.details}\n${textTable(r.items)}`] : []),
    ...(r.tickets.length > 0 ? [textTickets(r)] : []),
    r.closing,
    ...(r.portal ? [r.portal] : []),
    [r.signature, ...r.legal].join("\n"),
  ].join("\n\n");

  const html = [
    `<!doctype html><html lang="${r.language}" dir="${directionOf(r.language)}"><head><meta charset="utf-8">`,
    '<meta name="viewport" content="width=device-width,initial-scale=1">',
    `<title>${escapeHtml(r.subject)}</title></head>`,
    '<body style="margin:0;padding:24px;background:#f6f6f6;font-family:Helvetica,Arial,sans-serif;color:#222;line-height:1.5">',
    `<div style="max-width:560px;margin:0 auto;background:#fff;padding:24px;border-radius:6px;${accent}">`,
    r.testNotice
      ? `<p style="margin:0 0 20px;padding:12px;background:#fff4ce;border:1px solid #e0b400;border-radius:4px;font-weight:bold">${escapeHtml(r.testNotice)}</p>`
      : "",
    brand.logoUrl
      ? `<p style="margin:0 0 20px"><img src="${escapeHtml(brand.logoUrl)}" alt="${escapeHtml(r.signature)}" style="max-height:64px;max-width:240px;border:0"></p>`
      : "",
    r.customMessage
      ? `<div style="margin:0 0 20px;padding:0 0 8px;border-bottom:1px solid #ddd">${htmlParagraphs(r.customMessage)}</div>`
      : "",
    htmlParagraphs([r.greeting, ...r.paragraphs].join("\n\n")),
    `<h2 style="font-size:16px;margin:20px 0 8px">${escapeHtml(r.headings.receipt)}</h2>`,
    htmlTable(r.summary, false, directionOf(r.language)),
    r.items.length > 0
      ? `<h2 style="font-size:16px;margin:20px 0 8px">${escapeHtml(r.headings.details)}</h2>${htmlTable(r.items, true, directionOf(r.language))}`
      : "",
    ...(r.tickets.length > 0 ? [htmlTickets(r)] : []),
    htmlParagraphs(r.closing),
    r.portalHtml ? `<p style="margin:0 0 12px">${r.portalHtml}</p>` : "",
    `<p style="margin:0">${[r.signature, ...r.legal].map(escapeHtml).join("<br>")}</p>`,
    "</div></body></html>",
  ].join("\n");

  return { subject: r.subject, text, html, ...(r.replyTo ? { replyTo: r.replyTo } : {}) };
}

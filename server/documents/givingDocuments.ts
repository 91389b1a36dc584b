import { formatMoney } from "../../shared/currency.js";
import type { MessageKey } from "../../shared/i18n/catalogs/en.js";
import { lineLabel } from "../../shared/i18n/lineLabel.js";
import { DEFAULT_LANGUAGE, directionOf, type Language } from "../../shared/languages.js";
import { messageIfAny, translator } from "../i18n.js";
import type { Organization } from "../store/organizations.js";
import { paymentDetails } from "../store/payments.js";
import type { PaymentsTable } from "../store/schema.js";
import { type Doc, gap, isolate, renderPdf, row, rule, text } from "./pdf.js";

/**
 * The documents a donor downloads from the portal: the receipt of one payment and the year-end statement
 * of their gifts. Each names the organization by its legal name, address and tax id, and states what is
 * deductible: what was kept (the amount less refunds and disputes lost) less the fair-market value of the tickets bought
 * (what the buyer received in return; the ticket's `fairMarketValue`).
 */

type Translate = ReturnType<typeof translator>;

/** The amount a dispute (or bank return) has taken back from the organization and not given back. */
function withdrawnCents(p: PaymentsTable): number {
  if (!p.dispute) return 0;
  const dispute = JSON.parse(p.dispute) as { fundsWithdrawn?: boolean; amountCents?: number };
  return dispute.fundsWithdrawn ? Math.max(0, Number(dispute.amountCents ?? 0)) : 0;
}

/**
 * What the payment kept: the amount less what was refunded and less what a dispute took back (a lost
 * chargeback, a returned bank debit): money the donor has back is no gift on their statement.
 */
export const keptCents = (p: PaymentsTable): number =>
  Math.max(0, Number(p.amount_cents) - Number(p.refunded_cents) - withdrawnCents(p));

/** The fair-market value of what the payment bought (its tickets'), in cents. */
export function fairMarketCents(p: PaymentsTable): number {
  return paymentDetails(p).lines.reduce((sum, line) => sum + (line.fairMarketCents ?? 0), 0);
}

/** The deductible part: kept less the fair-market value received, never below 0. */
export const deductibleCents = (p: PaymentsTable): number => Math.max(0, keptCents(p) - fairMarketCents(p));

/** Built once per language and zone: constructing an Intl formatter costs far more than formatting. */
const DAY_FORMATS = new Map<string, Intl.DateTimeFormat>();

/**
 * How a document writes the day of a time kept as `created_at`: the date it fell on in the organization's
 * time zone (a gift at 23:30 on December 31 in New York is one of December 31 there, whatever the UTC
 * date), written as the document's language writes dates ("Dec 31, 2025", "31.12.2025", "31 déc. 2025").
 */
export function dayWriter(language: Language, timeZone: string): (iso: string) => string {
  const key = `${language} ${timeZone}`;
  let format = DAY_FORMATS.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(language, { dateStyle: "medium", timeZone });
    DAY_FORMATS.set(key, format);
  }
  const formatter = format;
  return (iso) => formatter.format(Date.parse(iso));
}

function donorName(p: PaymentsTable): string {
  return `${p.first_name} ${p.last_name}`.trim() || p.email;
}

/** The form's title and the fund, as data inside a line. */
const giftOf = (p: PaymentsTable) => `${isolate(p.form_title)}${p.fund ? ` (${isolate(p.fund)})` : ""}`;

function header(doc: Doc, org: Organization, title: string, tr: Translate): void {
  text(doc, isolate(org.legal.name ?? org.name), { size: 16, bold: true });
  if (org.legal.address) text(doc, isolate(org.legal.address));
  if (org.legal.taxId) text(doc, tr("doc.taxId", { taxId: isolate(org.legal.taxId) }));
  gap(doc, 1, {});
  text(doc, title, { size: 14, bold: true });
  gap(doc, 0.5);
}

function donorBlock(doc: Doc, p: PaymentsTable): void {
  const address = paymentDetails(p).donor.address;
  text(doc, isolate(donorName(p)));
  if (address) {
    const cityLine = [address.city, address.region, address.postal].filter(Boolean).join(" ");
    for (const line of [address.line1, address.line2, cityLine, address.country])
      if (line) text(doc, isolate(line));
  }
  text(doc, isolate(p.email));
  gap(doc, 0.8);
}

/** The receipt of one payment, as a PDF. */
export function receiptPdf(
  org: Organization,
  p: PaymentsTable,
  nowMs: number,
  language: Language = DEFAULT_LANGUAGE,
): Promise<Buffer> {
  const tr = translator(language);
  const say = messageIfAny(language);
  const day = dayWriter(language, org.timeZone);
  return renderPdf(
    {
      title: `${tr("doc.receipt")} ${p.id}`,
      author: org.legal.name ?? org.name,
      createdAt: new Date(nowMs),
      direction: directionOf(language),
    },
    (doc) => {
      const money = (cents: number) => formatMoney(cents, p.currency, language);
      header(doc, org, tr("doc.receipt"), tr);
      donorBlock(doc, p);
      const details = paymentDetails(p);
      row(doc, tr("doc.receiptNumber"), isolate(p.id));
      row(doc, tr("doc.date"), isolate(day(p.created_at)));
      row(doc, tr("doc.for"), `${tr(`doc.gift.${p.frequency}` as MessageKey)}: ${giftOf(p)}`);
      const method = p.payment_method_type === "bank" ? tr("doc.bank") : (p.card_brand ?? tr("doc.card"));
      if (p.last4)
        row(doc, tr("doc.paidWith"), tr("doc.ending", { method: isolate(method), last4: isolate(p.last4) }));
      rule(doc);
      for (const line of details.lines)
        row(
          doc,
          line.quantity > 1
            ? `${isolate(lineLabel(line, say))} x ${line.quantity}`
            : isolate(lineLabel(line, say)),
          money(line.amountCents),
        );
      if (details.discountCents > 0)
        row(
          doc,
          `${tr("doc.discount")}${details.promoCode ? ` (${isolate(details.promoCode)})` : ""}`,
          money(-details.discountCents),
        );
      if (Number(p.fee_cents) > 0) row(doc, tr("doc.fee"), money(Number(p.fee_cents)));
      rule(doc);
      row(doc, tr("doc.totalPaid"), money(Number(p.amount_cents)), { bold: true });
      if (Number(p.refunded_cents) > 0) row(doc, tr("doc.refunded"), money(-Number(p.refunded_cents)));
      const fmv = fairMarketCents(p);
      if (fmv > 0) row(doc, tr("doc.fmv"), money(-fmv));
      row(doc, tr("doc.deductible"), money(deductibleCents(p)), { bold: true });
      gap(doc, 1.5);
      text(doc, fmv > 0 ? tr("doc.note.fmv") : tr("doc.note.none"), { size: 9 });
      if (p.status === "PENDING") text(doc, tr("doc.pending"), { size: 9 });
    },
  );
}

/**
 * The year-end statement of a donor's gifts (completed payments of that year in the organization's time
 * zone, refunds deducted).
 */
export function statementPdf(
  org: Organization,
  year: number,
  payments: PaymentsTable[],
  donor: { email: string },
  nowMs: number,
  language: Language = DEFAULT_LANGUAGE,
): Promise<Buffer> {
  const tr = translator(language);
  const day = dayWriter(language, org.timeZone);
  const kept = payments
    .filter((p) => keptCents(p) > 0)
    .sort((a, b) => a.created_at.localeCompare(b.created_at));
  return renderPdf(
    {
      title: tr("doc.statement", { year }),
      author: org.legal.name ?? org.name,
      createdAt: new Date(nowMs),
      direction: directionOf(language),
    },
    (doc) => {
      header(doc, org, tr("doc.statement", { year }), tr);
      const latest = kept.at(-1);
      if (latest) donorBlock(doc, latest);
      else {
        text(doc, isolate(donor.email));
        gap(doc, 0.8);
      }
      if (kept.length === 0) {
        text(doc, tr("doc.noGifts", { year }));
        return;
      }
      row(doc, tr("doc.columns"), tr("doc.columns.amounts"), { bold: true });
      rule(doc);
      for (const p of kept)
        row(
          doc,
          `${isolate(day(p.created_at))}  ${isolate(p.id)}  ${giftOf(p)}`,
          `${formatMoney(keptCents(p), p.currency, language)} / ${formatMoney(deductibleCents(p), p.currency, language)}`,
        );
      rule(doc);
      // Totals per currency (an organization that changed its currency in the year has two).
      const currencies = [...new Set(kept.map((p) => p.currency))];
      for (const currency of currencies) {
        const mine = kept.filter((p) => p.currency === currency);
        const total = mine.reduce((sum, p) => sum + keptCents(p), 0);
        const deductible = mine.reduce((sum, p) => sum + deductibleCents(p), 0);
        const period = isolate(currencies.length > 1 ? `${year}, ${currency}` : String(year));
        row(
          doc,
          tr("doc.totalGiven", { period, count: mine.length }),
          formatMoney(total, currency, language),
          {
            bold: true,
          },
        );
        row(doc, tr("doc.totalDeductible"), formatMoney(deductible, currency, language), { bold: true });
      }
      gap(doc, 1.5);
      text(doc, tr("doc.note.statement"), { size: 9 });
    },
  );
}

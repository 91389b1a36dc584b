import { formatMoney } from "../../shared/currency.js";
import type { Organization } from "../store/organizations.js";
import { paymentDetails } from "../store/payments.js";
import type { PaymentsTable } from "../store/schema.js";
import { type Doc, renderPdf, row, rule } from "./pdf.js";

/**
 * The documents a donor downloads from the portal: the receipt of one payment and the year-end statement
 * of their gifts. Each names the organization by its legal name, address and tax id, and states what is
 * deductible: what was kept (the amount less refunds) less the fair-market value of the tickets bought
 * (what the buyer received in return; the ticket's `fairMarketValue`).
 */

const FREQUENCY_WORD: Record<string, string> = {
  ONE_TIME: "One-time gift",
  DAILY: "Daily gift",
  WEEKLY: "Weekly gift",
  MONTHLY: "Monthly gift",
  ANNUALLY: "Yearly gift",
};

/** What the payment kept: the amount less what was refunded. */
export const keptCents = (p: PaymentsTable): number =>
  Math.max(0, Number(p.amount_cents) - Number(p.refunded_cents));

/** The fair-market value of what the payment bought (its tickets'), in cents. */
export function fairMarketCents(p: PaymentsTable): number {
  return paymentDetails(p).lines.reduce((sum, line) => sum + (line.fairMarketCents ?? 0), 0);
}

/** The deductible part: kept less the fair-market value received, never below 0. */
export const deductibleCents = (p: PaymentsTable): number => Math.max(0, keptCents(p) - fairMarketCents(p));

const day = (iso: string) => iso.slice(0, 10);

function donorName(p: PaymentsTable): string {
  return `${p.first_name} ${p.last_name}`.trim() || p.email;
}

function header(doc: Doc, org: Organization, title: string): void {
  doc
    .font("Helvetica-Bold")
    .fontSize(16)
    .text(org.legal.name ?? org.name);
  doc.font("Helvetica").fontSize(10);
  if (org.legal.address) doc.text(org.legal.address);
  if (org.legal.taxId) doc.text(`Tax id: ${org.legal.taxId}`);
  doc.moveDown(1);
  doc.font("Helvetica-Bold").fontSize(14).text(title);
  doc.moveDown(0.5);
}

function donorBlock(doc: Doc, p: PaymentsTable): void {
  const address = paymentDetails(p).donor.address;
  doc.font("Helvetica").fontSize(10).text(donorName(p));
  if (address) {
    const cityLine = [address.city, address.region, address.postal].filter(Boolean).join(" ");
    for (const line of [address.line1, address.line2, cityLine, address.country]) if (line) doc.text(line);
  }
  doc.text(p.email);
  doc.moveDown(0.8);
}

/** The receipt of one payment, as a PDF. */
export function receiptPdf(org: Organization, p: PaymentsTable, nowMs: number): Promise<Buffer> {
  return renderPdf(
    { title: `Receipt ${p.id}`, author: org.legal.name ?? org.name, createdAt: new Date(nowMs) },
    (doc) => {
      const money = (cents: number) => formatMoney(cents, p.currency);
      header(doc, org, "Receipt");
      donorBlock(doc, p);
      const details = paymentDetails(p);
      row(doc, "Receipt number", p.id);
      row(doc, "Date", day(p.created_at));
      row(
        doc,
        "For",
        `${FREQUENCY_WORD[p.frequency] ?? "Gift"}: ${p.form_title}${p.fund ? ` (${p.fund})` : ""}`,
      );
      const method = p.payment_method_type === "bank" ? "Bank account" : (p.card_brand ?? "Card");
      if (p.last4) row(doc, "Paid with", `${method} ending ${p.last4}`);
      rule(doc);
      for (const line of details.lines)
        row(
          doc,
          line.quantity > 1 ? `${line.label} x ${line.quantity}` : line.label,
          money(line.amountCents),
        );
      if (details.discountCents > 0)
        row(
          doc,
          `Discount${details.promoCode ? ` (${details.promoCode})` : ""}`,
          `-${money(details.discountCents)}`,
        );
      if (Number(p.fee_cents) > 0) row(doc, "Processing fee covered", money(Number(p.fee_cents)));
      rule(doc);
      row(doc, "Total paid", money(Number(p.amount_cents)), { bold: true });
      if (Number(p.refunded_cents) > 0) row(doc, "Refunded", `-${money(Number(p.refunded_cents))}`);
      const fmv = fairMarketCents(p);
      if (fmv > 0) row(doc, "Fair-market value of goods and services received", `-${money(fmv)}`);
      row(doc, "Deductible amount", money(deductibleCents(p)), { bold: true });
      doc.moveDown(1.5);
      doc
        .font("Helvetica")
        .fontSize(9)
        .text(
          fmv > 0
            ? "The deductible amount is what you paid less the fair-market value of what you received in return."
            : "No goods or services were provided in return for this gift.",
        );
      if (p.status === "PENDING") doc.text("This payment is still being processed by the bank.");
    },
  );
}

/** The year-end statement of a donor's gifts (completed payments of that year, refunds deducted). */
export function statementPdf(
  org: Organization,
  year: number,
  payments: PaymentsTable[],
  donor: { email: string },
  nowMs: number,
): Promise<Buffer> {
  const kept = payments
    .filter((p) => keptCents(p) > 0)
    .sort((a, b) => a.created_at.localeCompare(b.created_at));
  return renderPdf(
    { title: `Giving statement ${year}`, author: org.legal.name ?? org.name, createdAt: new Date(nowMs) },
    (doc) => {
      header(doc, org, `Giving statement ${year}`);
      const latest = kept.at(-1);
      if (latest) donorBlock(doc, latest);
      else doc.font("Helvetica").fontSize(10).text(donor.email).moveDown(0.8);
      if (kept.length === 0) {
        doc.text(`No gifts were received from you in ${year}.`);
        return;
      }
      row(doc, "Date / receipt / gift", "Amount / deductible", { bold: true });
      rule(doc);
      for (const p of kept)
        row(
          doc,
          `${day(p.created_at)}  ${p.id}  ${p.form_title}${p.fund ? ` (${p.fund})` : ""}`,
          `${formatMoney(keptCents(p), p.currency)} / ${formatMoney(deductibleCents(p), p.currency)}`,
        );
      rule(doc);
      // Totals per currency (an organization that changed its currency in the year has two).
      const currencies = [...new Set(kept.map((p) => p.currency))];
      for (const currency of currencies) {
        const mine = kept.filter((p) => p.currency === currency);
        const total = mine.reduce((sum, p) => sum + keptCents(p), 0);
        const deductible = mine.reduce((sum, p) => sum + deductibleCents(p), 0);
        const gifts = `${mine.length} ${mine.length === 1 ? "gift" : "gifts"}`;
        const label = currencies.length > 1 ? `${year}, ${currency}` : year;
        row(doc, `Total given in ${label} (${gifts})`, formatMoney(total, currency), { bold: true });
        row(doc, "Total deductible", formatMoney(deductible, currency), { bold: true });
      }
      doc.moveDown(1.5);
      doc
        .font("Helvetica")
        .fontSize(9)
        .text(
          "Amounts are what you gave less any refunds. The deductible amount excludes the fair-market value of goods and services received (event tickets).",
        );
    },
  );
}

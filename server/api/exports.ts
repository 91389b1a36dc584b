import type { Context } from "hono";
import { type CsvColumn, csvMoney } from "../../shared/csv.js";
import { keptCents } from "../documents/givingDocuments.js";
import { type AuditLogFilter, listAuditLog } from "../store/auditLog.js";
import { contactTotals, listContacts } from "../store/contacts.js";
import type { ContactFilters, PaymentFilters, SubscriptionFilters } from "../store/listFilters.js";
import { listPayments, paymentDetails } from "../store/payments.js";
import type { AuditLogTable, ContactsTable, PaymentsTable, SubscriptionsTable } from "../store/schema.js";
import { listSubscriptions } from "../store/subscriptions.js";
import { presentContact } from "../wire/contact.js";
import { presentPayment } from "../wire/payment.js";
import { presentSubscription } from "../wire/subscription.js";
import { csvTime, exportList, timeHeader } from "./csvExport.js";
import type { AppDeps } from "./env.js";

/**
 * The CSV exports of the payments, contacts and subscriptions lists: their columns, and the batches of
 * rows the list's own store query (with the same filters as a page) reads. Each list route calls these
 * when the request asks for `text/csv`.
 */

type Payment = { row: PaymentsTable; view: ReturnType<typeof presentPayment> };

function paymentColumns(timeZone: string): CsvColumn<Payment>[] {
  const money = (cents: number | bigint, p: Payment) => csvMoney(Number(cents), p.row.currency);
  return [
    { header: "Payment ID", value: (p) => p.view.paymentID },
    { header: timeHeader("Date", timeZone), value: (p) => csvTime(p.row.created_at, timeZone) },
    { header: "Status", value: (p) => p.view.status },
    { header: "Amount", value: (p) => money(p.row.amount_cents, p) },
    { header: "Refunded", value: (p) => money(p.row.refunded_cents, p) },
    // What the organization keeps of it, less refunds and what a dispute took back: only a payment that
    // collected money has any (a declined card, a bank debit still clearing, one in flight: empty), so that
    // the column sums to what was raised, as the dashboard and the donor's statement count it.
    {
      header: "Net",
      value: (p) =>
        p.row.status === "COMPLETED" || p.row.status === "REFUNDED" ? money(keptCents(p.row), p) : "",
    },
    { header: "Covered fee", value: (p) => money(p.row.fee_cents, p) },
    { header: "Currency", value: (p) => p.view.currency },
    { header: "First name", value: (p) => p.view.firstName },
    { header: "Last name", value: (p) => p.view.lastName },
    { header: "Email", value: (p) => p.view.email },
    { header: "Anonymous", value: (p) => p.view.anonymous },
    { header: "Fund", value: (p) => p.view.fund },
    { header: "Form", value: (p) => p.view.form },
    { header: "Form ID", value: (p) => p.view.formID },
    { header: "Frequency", value: (p) => p.view.frequency },
    { header: "Payment method", value: (p) => p.view.paymentMethod },
    { header: "Card brand", value: (p) => p.view.card?.brand },
    { header: "Last 4", value: (p) => p.view.card?.last4 ?? p.view.bankLast4 },
    { header: "Subscription ID", value: (p) => p.view.subscriptionId },
    { header: "Contact ID", value: (p) => p.view.contactId },
    {
      header: "Tickets",
      value: (p) => p.view.tickets.map((t) => `${t.quantity} × ${t.name}`).join("; "),
    },
    { header: "Promo code", value: (p) => p.view.promoCode },
    { header: "Discount", value: (p) => money(paymentDetails(p.row).discountCents ?? 0, p) },
    { header: "Tribute", value: (p) => p.view.tribute?.kind },
    { header: "Honoree", value: (p) => p.view.tribute?.honoreeName },
    {
      header: "Custom answers",
      value: (p) =>
        p.view.customInputs
          .map((a) => `${a.title}: ${Array.isArray(a.value) ? a.value.join(", ") : a.value}`)
          .join("; "),
    },
    { header: "UTM source", value: (p) => p.view.utm.source },
    { header: "UTM medium", value: (p) => p.view.utm.medium },
    { header: "UTM campaign", value: (p) => p.view.utm.campaign },
    { header: "Failure message", value: (p) => p.view.failureMessage },
    { header: "Dispute status", value: (p) => p.view.dispute?.status },
  ];
}

/** Every payment matching `filters`, as CSV. */
export function exportPayments(
  c: Context,
  deps: AppDeps,
  organizationId: string,
  filters: PaymentFilters,
): Promise<Response> {
  return exportList(c, deps, organizationId, {
    name: "payments",
    fetch: (after, limit) => listPayments(deps.store.db, organizationId, filters, limit, after),
    present: (rows) => rows.map((row) => ({ row, view: presentPayment(row) })),
    columns: (org) => paymentColumns(org.timeZone),
  });
}

type Contact = { row: ContactsTable; view: ReturnType<typeof presentContact>; valueCents: number };

function contactColumns(timeZone: string, currency: string): CsvColumn<Contact>[] {
  const primary = <T extends { isPrimary: boolean }>(list: T[]) => list.find((x) => x.isPrimary) ?? list[0];
  return [
    { header: "Contact ID", value: (k) => k.view.id },
    { header: "First name", value: (k) => k.view.firstName },
    { header: "Last name", value: (k) => k.view.lastName },
    { header: "Organization", value: (k) => k.view.organizationName },
    { header: "Email", value: (k) => primary(k.view.emails)?.value },
    {
      header: "Other emails",
      value: (k) =>
        k.view.emails
          .filter((e) => e !== primary(k.view.emails))
          .map((e) => e.value)
          .join("; "),
    },
    { header: "Phone", value: (k) => primary(k.view.phones)?.value },
    { header: "Address line 1", value: (k) => primary(k.view.addresses)?.line1 },
    { header: "Address line 2", value: (k) => primary(k.view.addresses)?.line2 },
    { header: "City", value: (k) => primary(k.view.addresses)?.city },
    { header: "Region", value: (k) => primary(k.view.addresses)?.region },
    { header: "Postal code", value: (k) => primary(k.view.addresses)?.postal },
    { header: "Country", value: (k) => primary(k.view.addresses)?.country },
    { header: "Gifts", value: (k) => k.view.totalTransactionCount },
    { header: "Total given", value: (k) => csvMoney(k.valueCents, currency) },
    { header: "Currency", value: () => currency },
    { header: "Active recurring gift", value: (k) => k.view.hasActiveSubscription },
    { header: "Email consent", value: (k) => k.view.emailConsent },
    { header: "SMS consent", value: (k) => k.view.smsConsent },
    { header: "Communication consent", value: (k) => k.view.communicationConsent },
    {
      header: timeHeader("First gift", timeZone),
      value: (k) => csvTime(k.view.firstDonationAt, timeZone),
    },
    { header: timeHeader("Last gift", timeZone), value: (k) => csvTime(k.view.lastDonationAt, timeZone) },
    { header: timeHeader("Created", timeZone), value: (k) => csvTime(k.row.created_at, timeZone) },
  ];
}

/** Every live contact matching `filters`, as CSV, with their totals. */
export function exportContacts(
  c: Context,
  deps: AppDeps,
  organizationId: string,
  filters: ContactFilters,
): Promise<Response> {
  const db = deps.store.db;
  const empty = { count: 0, valueCents: 0, first: null, last: null, activeSubscription: false };
  return exportList(c, deps, organizationId, {
    name: "contacts",
    fetch: (after, limit) => listContacts(db, organizationId, filters, limit, after),
    present: async (rows) => {
      const totals = await contactTotals(
        db,
        rows.map((r) => r.id),
      );
      return rows.map((row) => {
        const t = totals.get(row.id) ?? empty;
        return { row, view: presentContact(row, t), valueCents: t.valueCents };
      });
    },
    columns: (org) => contactColumns(org.timeZone, org.currency),
  });
}

type Subscription = { row: SubscriptionsTable; view: ReturnType<typeof presentSubscription> };

function subscriptionColumns(timeZone: string): CsvColumn<Subscription>[] {
  const time = (iso: string | null) => csvTime(iso, timeZone);
  return [
    { header: "Subscription ID", value: (s) => s.view.id },
    { header: "Status", value: (s) => s.view.status },
    { header: "Amount", value: (s) => csvMoney(Number(s.row.amount_cents), s.row.currency) },
    { header: "Currency", value: (s) => s.view.currency },
    { header: "Frequency", value: (s) => s.view.frequency },
    { header: "Covered fee", value: (s) => s.view.coveredFee },
    { header: "First name", value: (s) => s.row.first_name },
    { header: "Last name", value: (s) => s.row.last_name },
    { header: "Email", value: (s) => s.view.email },
    { header: "Fund", value: (s) => s.view.fund },
    { header: "Form ID", value: (s) => s.view.formID },
    { header: "Contact ID", value: (s) => s.view.contactId },
    { header: "Payment method", value: (s) => s.view.paymentMethod.type },
    { header: "Card brand", value: (s) => s.view.paymentMethod.brand },
    { header: "Last 4", value: (s) => s.view.paymentMethod.last4 },
    { header: timeHeader("Next charge", timeZone), value: (s) => time(s.view.nextBillingDate) },
    { header: timeHeader("Last charge", timeZone), value: (s) => time(s.view.lastBillingDate) },
    { header: timeHeader("Ends", timeZone), value: (s) => time(s.view.endBillingDate) },
    { header: timeHeader("Created", timeZone), value: (s) => time(s.row.created_at) },
    { header: timeHeader("Cancelled", timeZone), value: (s) => time(s.view.cancelledAt) },
  ];
}

/** Every recurring gift matching `filters`, as CSV. */
export function exportSubscriptions(
  c: Context,
  deps: AppDeps,
  organizationId: string,
  filters: SubscriptionFilters,
): Promise<Response> {
  return exportList(c, deps, organizationId, {
    name: "subscriptions",
    fetch: (after, limit) => listSubscriptions(deps.store.db, organizationId, filters, limit, after),
    present: (rows) => rows.map((row) => ({ row, view: presentSubscription(row) })),
    columns: (org) => subscriptionColumns(org.timeZone),
  });
}

function auditLogColumns(timeZone: string): CsvColumn<AuditLogTable>[] {
  return [
    { header: "Entry ID", value: (e) => e.id },
    { header: timeHeader("Time", timeZone), value: (e) => csvTime(e.created_at, timeZone) },
    { header: "Actor type", value: (e) => e.actor_type },
    { header: "Actor ID", value: (e) => e.actor },
    // As the JSON list shows it: a staff member's address then, a donor's address; empty for keys.
    { header: "Actor", value: (e) => e.actor_label ?? (e.actor_type === "donor" ? e.actor : null) },
    { header: "Action", value: (e) => e.action },
    { header: "Subject type", value: (e) => e.subject_type },
    { header: "Subject ID", value: (e) => e.subject_id },
    { header: "Before (JSON)", value: (e) => e.old_values },
    { header: "After (JSON)", value: (e) => e.new_values },
  ];
}

/** Every audit-log entry matching `filter` (its `after` is ignored), as CSV. */
export function exportAuditLog(
  c: Context,
  deps: AppDeps,
  organizationId: string,
  filter: AuditLogFilter,
): Promise<Response> {
  return exportList(c, deps, organizationId, {
    name: "audit-log",
    fetch: (after, limit) => listAuditLog(deps.store.db, organizationId, limit, { ...filter, after }),
    present: (rows) => rows,
    columns: (org) => auditLogColumns(org.timeZone),
  });
}

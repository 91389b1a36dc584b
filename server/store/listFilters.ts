import { type Expression, type ExpressionBuilder, type SqlBool, sql } from "kysely";
import type { Db } from "./database.js";
import { isPostgres } from "./dialect.js";
import type { Database } from "./schema.js";

/**
 * The filters of the payments, subscriptions and contacts lists, as SQL conditions. The same filter object
 * serves a page of a list and its CSV export, so both show the same rows. Every condition sits beside the
 * organization and the keyset position, on the (organization, created_at, id) index each table has.
 */

/** What a search matches, lower-cased: a name or e-mail containing it, and for payments an id or last 4. */
export interface PaymentFilters {
  search?: string;
  /** Recorded at or after this instant (ISO 8601 UTC, as `created_at` is kept). */
  fromIso?: string;
  /** Recorded before this instant. */
  beforeIso?: string;
  formId?: string;
  status?: string;
  paymentMethod?: string;
  frequency?: string;
  /** What the donor was charged (amount_cents), at least / at most, in minor units. */
  minCents?: number;
  maxCents?: number;
  subscriptionId?: string;
  contactId?: string;
}

export interface SubscriptionFilters {
  search?: string;
  status?: string;
  frequency?: string;
  contactId?: string;
}

export interface ContactFilters {
  /** An e-mail address: the contact whose e-mails include it (compared lower-cased). */
  email?: string;
  /** Part of a name, an organization's name or an e-mail address, any case. */
  search?: string;
}

/** A payment's id (`pay_` and 26 lower-case letters and digits) and a subscription's. */
const PAYMENT_ID = /^pay_[0-9a-z]{26}$/;
const SUBSCRIPTION_ID = /^sub_[0-9a-z]{26}$/;
const LAST4 = /^\d{4}$/;

/** A LIKE pattern matching `text` anywhere, with `%`, `_` and `\` in it matched as themselves. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Lower-cases a text column in SQL as JavaScript's toLowerCase does the search text: PostgreSQL's lower()
 * follows the database's locale (all of Unicode under UTF-8); SQLite's lower() knows only ASCII, so the store
 * gives SQLite the function `unicode_lower` (dialect.ts).
 */
type Fold = (e: Expression<string>) => Expression<string>;

export function foldFor(db: Db): Fold {
  const name = isPostgres(db) ? sql.raw("lower") : sql.raw("unicode_lower");
  return (e) => sql<string>`${name}(${e})`;
}

export function likeContains(folded: Expression<string>, search: string) {
  return sql<SqlBool>`${folded} like ${containsPattern(search)} escape '\\'`;
}

/** Condition builders bound to the database's way of folding case. */
export function filterConditions(db: Db) {
  const fold = foldFor(db);

  function payments(eb: ExpressionBuilder<Database, "payments">, f: PaymentFilters) {
    const all: Expression<SqlBool>[] = [];
    if (f.search !== undefined) all.push(paymentSearch(eb, f.search.toLowerCase()));
    if (f.fromIso !== undefined) all.push(eb("created_at", ">=", f.fromIso));
    if (f.beforeIso !== undefined) all.push(eb("created_at", "<", f.beforeIso));
    if (f.formId !== undefined) all.push(eb("form_id", "=", f.formId));
    if (f.status !== undefined) all.push(eb("status", "=", f.status));
    if (f.paymentMethod !== undefined) all.push(eb("payment_method_type", "=", f.paymentMethod));
    if (f.frequency !== undefined) all.push(eb("frequency", "=", f.frequency));
    if (f.minCents !== undefined) all.push(eb("amount_cents", ">=", f.minCents));
    if (f.maxCents !== undefined) all.push(eb("amount_cents", "<=", f.maxCents));
    if (f.subscriptionId !== undefined) all.push(eb("subscription_id", "=", f.subscriptionId));
    if (f.contactId !== undefined) all.push(eb("contact_id", "=", f.contactId));
    return eb.and(all);
  }

  function paymentSearch(eb: ExpressionBuilder<Database, "payments">, search: string) {
    const any: Expression<SqlBool>[] = [
      likeContains(fold(sql<string>`${eb.ref("first_name")} || ' ' || ${eb.ref("last_name")}`), search),
      likeContains(fold(eb.ref("email")), search),
    ];
    if (PAYMENT_ID.test(search)) any.push(eb("id", "=", search));
    if (LAST4.test(search)) any.push(eb("last4", "=", search));
    return eb.or(any);
  }

  function subscriptions(eb: ExpressionBuilder<Database, "subscriptions">, f: SubscriptionFilters) {
    const all: Expression<SqlBool>[] = [];
    if (f.search !== undefined) {
      const search = f.search.toLowerCase();
      const any: Expression<SqlBool>[] = [
        likeContains(fold(sql<string>`${eb.ref("first_name")} || ' ' || ${eb.ref("last_name")}`), search),
        likeContains(fold(eb.ref("email")), search),
      ];
      if (SUBSCRIPTION_ID.test(search)) any.push(eb("id", "=", search));
      all.push(eb.or(any));
    }
    if (f.status !== undefined) all.push(eb("status", "=", f.status));
    if (f.frequency !== undefined) all.push(eb("frequency", "=", f.frequency));
    if (f.contactId !== undefined) all.push(eb("contact_id", "=", f.contactId));
    return eb.and(all);
  }

  /** The search part of the contacts list (the exact `email` is contacts.ts's own). */
  function contactSearch(eb: ExpressionBuilder<Database, "contacts">, organizationId: string, text: string) {
    const search = text.toLowerCase();
    return eb.or([
      likeContains(fold(sql<string>`${eb.ref("first_name")} || ' ' || ${eb.ref("last_name")}`), search),
      likeContains(fold(sql<string>`coalesce(${eb.ref("organization_name")}, '')`), search),
      // E-mail keys are kept lower-cased (contacts.ts), one row per address of a live contact.
      eb.exists(
        eb
          .selectFrom("contact_keys")
          .select("contact_keys.contact_id")
          .where("contact_keys.organization_id", "=", organizationId)
          .where("contact_keys.kind", "=", "email")
          .whereRef("contact_keys.contact_id", "=", "contacts.id")
          .where(likeContains(sql.ref<string>("contact_keys.value_key"), search)),
      ),
    ]);
  }

  return { payments, subscriptions, contactSearch };
}

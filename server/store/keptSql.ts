import { type RawBuilder, sql } from "kysely";
import type { Db } from "./database.js";
import { isPostgres } from "./dialect.js";

/**
 * What a payment kept, in SQL, as the donor's documents count it in JavaScript (documents/givingDocuments.ts
 * `keptCents`): the amount, less what was refunded, less what a dispute took back and did not give back (a
 * lost chargeback, a returned bank debit: `fundsWithdrawn` in the payment's dispute JSON). The dashboard's
 * sums, a contact's lifetime value and the exports' Net count the same money the statements do.
 */

/** The payments table's columns, bare (`payments`) or under an alias (`p`). */
type Prefix = "" | "p.";

/** What the payment's dispute took back: its amount while `fundsWithdrawn`, else 0. */
export function withdrawnCents(db: Db, prefix: Prefix = ""): RawBuilder<number> {
  const dispute = sql.ref(`${prefix}dispute`);
  const amount = isPostgres(db)
    ? sql<number>`cast(cast(${dispute} as json)->>'amountCents' as bigint)`
    : sql<number>`cast(json_extract(${dispute}, '$.amountCents') as integer)`;
  // The dispute is JSON.stringify's output: `"fundsWithdrawn":true`, with no space, when it took money back.
  return sql<number>`(case when ${dispute} like '%"fundsWithdrawn":true%' then coalesce(${amount}, 0) else 0 end)`;
}

/** The payment's kept amount: amount − refunded − withdrawn. */
export function keptCentsSql(db: Db, prefix: Prefix = ""): RawBuilder<number> {
  return sql<number>`(${sql.ref(`${prefix}amount_cents`)} - ${sql.ref(`${prefix}refunded_cents`)} - ${withdrawnCents(db, prefix)})`;
}

/**
 * Whether a payment counts as a gift: it collected money (COMPLETED, or REFUNDED in part) and some of it is
 * kept; a paid payment refunded or taken back in full is none. A free order (0) that completed counts; one
 * cancelled (REFUNDED, with nothing kept) does not.
 */
export function isKeptSql(db: Db, prefix: Prefix = ""): RawBuilder<boolean> {
  const status = sql.ref(`${prefix}status`);
  const amount = sql.ref(`${prefix}amount_cents`);
  const kept = keptCentsSql(db, prefix);
  return sql<boolean>`((${status} = 'COMPLETED' and not (${amount} > 0 and ${kept} <= 0)) or (${status} = 'REFUNDED' and ${kept} > 0))`;
}

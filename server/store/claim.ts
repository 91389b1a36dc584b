import crypto from "node:crypto";
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from "kysely";
import { isoAt } from "../../shared/time.js";
import type { Store } from "./database.js";
import type { Database, ProcessesTable } from "./schema.js";

/**
 * The one claim mechanism of the background work (receipts, subscriptions to bill, webhook deliveries;
 * interrupted checkouts name their process the same way): a worker writes its token, a lease and its
 * process's id into the rows it takes (`Lease`), works on them outside any transaction, and settles each
 * row only while its token is still on it.
 *
 * A row is free (`unclaimed`) when it was never claimed or was released, when its lease has ended, or as
 * soon as the process that claimed it is no longer alive: its heartbeat row (processes.ts) is gone or has
 * lapsed. The last is the normal way a dead process's work is taken over, within the liveness window
 * (30 s); the lease is the backstop, for claims made by processes that keep no heartbeat (tests,
 * scripts) and for a live process whose work hangs. A slow but live process keeps its rows until its lease
 * ends, whatever the others do.
 *
 * `claimRows` claims a batch safely when several processes run the same worker: the rows matching
 * `where` (and, with a lease, free), first by `orderBy` then id, at most `limit`, are updated and returned.
 * SQLite runs the claim as one statement (one write; nothing interleaves; the subquery runs once).
 * PostgreSQL first locks the candidates `FOR UPDATE SKIP LOCKED` (skipping rows other workers hold), then
 * updates exactly those ids, `where` checked again. Not one `UPDATE … WHERE id IN (SELECT … LIMIT n FOR
 * UPDATE SKIP LOCKED)`: PostgreSQL may rescan that subquery per row, each rescan skipping the rows it just
 * updated, so the LIMIT would not hold.
 */

/** The tables whose rows are claimed with a token, a lease and the claiming process. */
export type LeasedTable = "subscriptions" | "email_outbox" | "webhook_deliveries";
export type ClaimableTable = LeasedTable | "payments";

/** What a claim writes into its rows. */
export interface Lease {
  token: string;
  /** When the claim ends even though its process lives on (ms, on the clock of `now`). */
  until: number;
  /** The claiming process's id (processes.ts), or null for one without a heartbeat. */
  by: string | null;
  /** Now, as the worker's clock has it: leases end and heartbeats lapse on it. */
  now: number;
}

/** Makes a lease of `leaseMs` from `now` with a fresh token. */
export function newLease(by: string | null | undefined, now: number, leaseMs: number): Lease {
  return { token: crypto.randomUUID(), until: now + leaseMs, by: by ?? null, now };
}

/** The claim columns of a lease, to `set` on the rows it takes. */
export function leaseColumns(lease: Lease) {
  return { claim_token: lease.token, claimed_until: isoAt(lease.until), claimed_by: lease.by };
}

/** The claim columns of a row given back (settled or released). */
export const RELEASED = { claim_token: null, claimed_until: null, claimed_by: null } as const;

interface LeasedRow {
  claimed_until: string | null;
  claimed_by: string | null;
}
type LeaseDb = { leased: LeasedRow; processes: ProcessesTable };

/** The ids of the processes alive at `nowIso` (their heartbeat has not lapsed), as a subquery. */
export function liveProcesses<DB extends Database, TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  nowIso: string,
) {
  return live(eb as unknown as ExpressionBuilder<LeaseDb, "leased">, nowIso);
}

function live(e: ExpressionBuilder<LeaseDb, "leased">, nowIso: string) {
  return e.selectFrom("processes").select("processes.id").where("processes.alive_until", ">", nowIso);
}

/**
 * Not held by a live claim at `nowIso`: never claimed or released, its lease over, or its process dead
 * (its heartbeat row lapsed or gone).
 */
export function unclaimed<T extends LeasedTable>(
  eb: ExpressionBuilder<Database, T>,
  nowIso: string,
): Expression<SqlBool> {
  const e = eb as unknown as ExpressionBuilder<LeaseDb, "leased">;
  return e.or([
    e("claimed_until", "is", null),
    e("claimed_until", "<=", nowIso),
    e.and([e("claimed_by", "is not", null), e("claimed_by", "not in", live(e, nowIso))]),
  ]);
}

export interface ClaimQuery<T extends ClaimableTable> {
  table: T;
  where: (eb: ExpressionBuilder<Database, T>) => Expression<SqlBool>;
  orderBy: keyof Database[T] & string;
  limit: number;
  /** Written into the claimed rows (besides the lease's columns). */
  set?: Partial<Database[T]>;
  /** Claims with a token and a lease (tables that have them): only free rows are taken. */
  lease?: T extends LeasedTable ? Lease : never;
}

/** The tables above share an `id` primary key; this view lets one implementation serve them all. */
interface AnyRow {
  id: string;
  [column: string]: unknown;
}
type AnyDb = { claimable: AnyRow };

export async function claimRows<T extends ClaimableTable>(
  store: Store,
  q: ClaimQuery<T>,
): Promise<Database[T][]> {
  const db = store.db as unknown as Kysely<AnyDb>;
  const table = q.table as unknown as "claimable";
  const given = q.where as unknown as (eb: ExpressionBuilder<AnyDb, "claimable">) => Expression<SqlBool>;
  const lease = q.lease as Lease | undefined;
  const nowIso = lease ? isoAt(lease.now) : "";
  const where = (eb: ExpressionBuilder<AnyDb, "claimable">) =>
    lease
      ? eb.and([given(eb), unclaimed(eb as unknown as ExpressionBuilder<Database, LeasedTable>, nowIso)])
      : given(eb);
  const orderBy = q.orderBy as "id";
  const set = { ...q.set, ...(lease ? leaseColumns(lease) : {}) } as Partial<AnyRow>;
  let rows: Record<string, unknown>[];
  if (store.dialect === "postgres") {
    rows = await db.transaction().execute(async (trx) => {
      const picked = await trx
        .selectFrom(table)
        .select("id")
        .where(where)
        .orderBy(orderBy)
        .orderBy("id")
        .limit(q.limit)
        .forUpdate()
        .skipLocked()
        .execute();
      if (picked.length === 0) return [];
      return trx
        .updateTable(table)
        .set(set)
        .where(
          "id",
          "in",
          picked.map((r) => String(r.id)),
        )
        .where(where)
        .returningAll()
        .execute();
    });
  } else {
    // No second `where` outside the subquery: nothing can change the rows between the two (one statement),
    // and with it SQLite walks every due row instead of looking the ids up (docs/benchmarks.md).
    rows = await db
      .updateTable(table)
      .set(set)
      .where("id", "in", (eb) =>
        eb.selectFrom(table).select("id").where(where).orderBy(orderBy).orderBy("id").limit(q.limit),
      )
      .returningAll()
      .execute();
  }
  // RETURNING gives no order: hand the batch over in claim order.
  const key = q.orderBy;
  rows.sort(
    (a, b) => String(a[key]).localeCompare(String(b[key])) || String(a.id).localeCompare(String(b.id)),
  );
  return rows as unknown as Database[T][];
}

/**
 * Gives back the rows `ids` of `table` that the claim `token` still holds (a row claimed again since, by
 * another process, keeps its new claim).
 */
export async function releaseClaims(
  store: Store,
  table: LeasedTable,
  ids: string[],
  token: string,
): Promise<void> {
  if (ids.length === 0) return;
  const db = store.db as unknown as Kysely<AnyDb>;
  await db
    .updateTable(table as unknown as "claimable")
    .set(RELEASED)
    .where("id", "in", ids)
    .where("claim_token", "=", token)
    .execute();
}

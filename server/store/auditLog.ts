import type { AuditAction, AuditSubjectType } from "../../shared/schemas/auditLog.js";
import { isoAt } from "../../shared/time.js";
import { ulid } from "../ids.js";
import type { Db } from "./database.js";
import { afterPosition } from "./keyset.js";
import type { AuditLogTable } from "./schema.js";

/** The audit log: who changed what, with the changed fields' values before and after. */

/**
 * Who made a change: a signed-in staff member (their user id, and their address as it was then, so the
 * log reads well after they are removed), an API key (its id), a donor in the portal (their address), or
 * the system (the billing worker, the command line).
 */
export type AuditActor =
  | { type: "staff"; userId: string; email: string }
  | { type: "key"; id: string }
  | { type: "donor"; email: string }
  | { type: "system" };

/** The billing worker and the command line (whoever runs it on the server). */
export const SYSTEM_ACTOR: AuditActor = { type: "system" };

export interface AuditEntry {
  organizationId: string;
  actor: AuditActor;
  action: AuditAction;
  subjectType: AuditSubjectType;
  subjectId: string;
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}

function actorColumns(actor: AuditActor): { actor: string; actor_label: string | null } {
  switch (actor.type) {
    case "staff":
      return { actor: actor.userId, actor_label: actor.email };
    case "key":
      return { actor: actor.id, actor_label: null };
    case "donor":
      return { actor: actor.email, actor_label: actor.email };
    case "system":
      return { actor: "system", actor_label: null };
  }
}

/** Writes one entry, in the caller's transaction (so it is kept if and only if the change is). */
export async function recordAudit(trx: Db, entry: AuditEntry, nowMs: number): Promise<void> {
  await trx
    .insertInto("audit_log")
    .values({
      id: `aud_${ulid(nowMs)}`,
      organization_id: entry.organizationId,
      actor_type: entry.actor.type,
      ...actorColumns(entry.actor),
      action: entry.action,
      subject_type: entry.subjectType,
      subject_id: entry.subjectId,
      old_values: JSON.stringify(entry.before),
      new_values: JSON.stringify(entry.after),
      created_at: isoAt(nowMs),
    })
    .execute();
}

/**
 * True when the payment's audit trail already records the processor's refund `refundId`: the same refund
 * answered to several identical requests (its key derived from the payment) is audited once.
 */
export async function refundAudited(trx: Db, organizationId: string, paymentId: string, refundId: string) {
  const rows = await trx
    .selectFrom("audit_log")
    .select("new_values")
    .where("organization_id", "=", organizationId)
    .where("subject_type", "=", "payment")
    .where("subject_id", "=", paymentId)
    .where("action", "=", "payment.refunded")
    .execute();
  return rows.some((r) => (JSON.parse(r.new_values) as { refundId?: unknown }).refundId === refundId);
}

const same = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b);

/**
 * The top-level fields whose values differ between two views of a record, each side holding only those
 * (a field missing on one side is shown as null there).
 */
export function changedFields(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): { before: Record<string, unknown>; after: Record<string, unknown> } {
  const old: Record<string, unknown> = {};
  const now: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)]))
    if (!same(before[key], after[key])) {
      old[key] = before[key] ?? null;
      now[key] = after[key] ?? null;
    }
  return { before: old, after: now };
}

/** A field's value longer than this, as JSON, is kept as a note of its size instead of itself. */
export const AUDIT_VALUE_MAX_CHARS = 1000;

/** The fields of a view, each large value (a long description, a list of tickets) kept as its size only. */
function compact(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    const size = JSON.stringify(value)?.length ?? 0;
    out[key] = size > AUDIT_VALUE_MAX_CHARS ? `(${size} characters, not kept)` : value;
  }
  return out;
}

/**
 * Records a change of a record from its view `before` to its view `after`, keeping only the top-level
 * fields that changed (large values as their size); nothing is written when none did. In the caller's
 * transaction.
 */
export async function recordChange(trx: Db, entry: AuditEntry, nowMs: number): Promise<void> {
  const diff = changedFields(entry.before, entry.after);
  if (Object.keys(diff.after).length === 0) return;
  await recordAudit(trx, { ...entry, before: compact(diff.before), after: compact(diff.after) }, nowMs);
}

/** A record's entries, oldest first. */
export async function auditTrail(
  db: Db,
  organizationId: string,
  subjectType: string,
  subjectId: string,
): Promise<AuditLogTable[]> {
  return db
    .selectFrom("audit_log")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("subject_type", "=", subjectType)
    .where("subject_id", "=", subjectId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

export interface AuditLogFilter {
  actorType?: string;
  actor?: string;
  action?: string;
  subjectType?: string;
  subjectId?: string;
  /** ISO instants as the log keeps them: from inclusive, to exclusive. */
  from?: string;
  to?: string;
  after?: { sort: string; id: string };
}

/** The organization's entries, newest first, `limit` of them after a position. */
export async function listAuditLog(
  db: Db,
  organizationId: string,
  limit: number,
  filter: AuditLogFilter,
): Promise<AuditLogTable[]> {
  let query = db.selectFrom("audit_log").selectAll().where("organization_id", "=", organizationId);
  if (filter.actorType !== undefined) query = query.where("actor_type", "=", filter.actorType);
  if (filter.actor !== undefined) query = query.where("actor", "=", filter.actor);
  if (filter.action !== undefined) query = query.where("action", "=", filter.action);
  if (filter.subjectType !== undefined) query = query.where("subject_type", "=", filter.subjectType);
  if (filter.subjectId !== undefined) query = query.where("subject_id", "=", filter.subjectId);
  if (filter.from !== undefined) query = query.where("created_at", ">=", filter.from);
  if (filter.to !== undefined) query = query.where("created_at", "<", filter.to);
  const after = filter.after;
  if (after) query = query.where((eb) => afterPosition(eb, "created_at", after));
  return query.orderBy("created_at", "desc").orderBy("id", "desc").limit(limit).execute();
}

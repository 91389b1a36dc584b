import { isoAt } from "../../shared/time.js";
import { ulid } from "../ids.js";
import type { Db } from "./database.js";
import type { AuditLogTable } from "./schema.js";

/** The audit log: who changed what, with the changed fields' values before and after. */

export type AuditActor = { type: "key"; id: string } | { type: "donor"; email: string } | { type: "system" };

export interface AuditEntry {
  organizationId: string;
  actor: AuditActor;
  action: string;
  subjectType: string;
  subjectId: string;
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}

/** Writes one entry, in the caller's transaction (so it is kept if and only if the change is). */
export async function recordAudit(trx: Db, entry: AuditEntry, nowMs: number): Promise<void> {
  const actor = entry.actor;
  await trx
    .insertInto("audit_log")
    .values({
      id: `aud_${ulid(nowMs)}`,
      organization_id: entry.organizationId,
      actor_type: actor.type,
      actor: actor.type === "key" ? actor.id : actor.type === "donor" ? actor.email : "system",
      action: entry.action,
      subject_type: entry.subjectType,
      subject_id: entry.subjectId,
      old_values: JSON.stringify(entry.before),
      new_values: JSON.stringify(entry.after),
      created_at: isoAt(nowMs),
    })
    .execute();
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

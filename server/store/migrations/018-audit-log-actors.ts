import type { AnyTrx, Migration } from "./shared.js";

/**
 * The audit log: a display label for its actor (a staff member's or a donor's e-mail address
 * as it was then), so the log still reads well after a person is removed, and the organization's whole log
 * read newest first, a page at a time.
 */
export const auditLogActors: Migration = {
  version: 18,
  name: "audit log: actor labels, the organization's log by time",
  async up(trx: AnyTrx) {
    await trx.schema.alterTable("audit_log").addColumn("actor_label", "text").execute();
    await trx.schema
      .createIndex("audit_log_organization_time")
      .on("audit_log")
      .columns(["organization_id", "created_at", "id"])
      .execute();
  },
};

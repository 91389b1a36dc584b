import type { ExpressionBuilder } from "kysely";
import { STAFF_ROLES, type StaffRole } from "../../shared/schemas/staff.js";
import type { Db } from "../store/database.js";
import type { Database } from "../store/schema.js";

/**
 * A person's memberships of organizations' staff, one role in each. A member has joined once they have a
 * password and have had a session in the organization since they were added (opened by its set-up link,
 * a sign-in or a reset link; ended sessions are kept). Until then the invitation is pending: a person who
 * already has a password for another organization joins by signing in with the link.
 */

export const joinedHere = (eb: ExpressionBuilder<Database, "staff_memberships" | "staff_users">) =>
  eb.and([
    eb("staff_users.password_hash", "is not", null),
    eb.exists(
      eb
        .selectFrom("staff_sessions as s")
        .select("s.token_hash")
        .whereRef("s.user_id", "=", "staff_memberships.user_id")
        .whereRef("s.organization_id", "=", "staff_memberships.organization_id")
        .whereRef("s.created_at", ">=", "staff_memberships.created_at"),
    ),
  ]);

export interface JoinedOrganization {
  id: string;
  name: string;
  role: StaffRole;
}

/**
 * The organizations the person has joined, in the order they joined them (pending invitations left out:
 * those are accepted with their link); with `organizationId`, that one alone when they have joined it.
 */
export async function joinedOrganizations(
  db: Db,
  userId: string,
  organizationId?: string,
): Promise<JoinedOrganization[]> {
  let query = db
    .selectFrom("staff_memberships")
    .innerJoin("staff_users", "staff_users.id", "staff_memberships.user_id")
    .innerJoin("organizations", "organizations.id", "staff_memberships.organization_id")
    .select(["organizations.id", "organizations.name", "staff_memberships.role"])
    .where("staff_memberships.user_id", "=", userId)
    .where((eb) => joinedHere(eb));
  if (organizationId !== undefined)
    query = query.where("staff_memberships.organization_id", "=", organizationId);
  const rows = await query.orderBy("staff_memberships.created_at").orderBy("organizations.id").execute();
  return rows
    .filter((row) => (STAFF_ROLES as readonly string[]).includes(row.role))
    .map((row) => ({ id: row.id, name: row.name, role: row.role as StaffRole }));
}

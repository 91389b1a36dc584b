import type { Permission } from "../../shared/enums.js";
import type { StaffRole } from "../../shared/schemas/staff.js";
import type { AuditActor } from "../store/auditLog.js";

export type { AppDeps } from "../deps.js";

export interface AuthContext {
  organizationId: string;
  /** The API key's id; for a staff session, the person's user id. */
  keyId: string;
  permissions: ReadonlySet<Permission>;
  /** Who is asking, as the audit log names them: the key, or the signed-in staff member. */
  actor: AuditActor;
  /** A staff session's role; undefined for an API key. */
  role?: StaffRole;
}

export interface AppEnv {
  Variables: {
    requestId: string;
    auth: AuthContext;
  };
}

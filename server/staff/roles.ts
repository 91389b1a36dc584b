import { PERMISSIONS, type Permission } from "../../shared/enums.js";
import type { StaffRole } from "../../shared/schemas/staff.js";

/**
 * A staff member's role is a fixed set of the permissions an API key carries, so a session is refused
 * exactly what a key with those permissions would be refused:
 * - OWNER: everything, the team and the keys;
 * - FINANCE: payments, refunds, recurring gifts, contacts, exports and reports; reads forms and tickets;
 * - STAFF: forms, contacts and the door (tickets and their check-in); reads payments and recurring gifts.
 */
export const ROLE_PERMISSIONS: Record<StaffRole, readonly Permission[]> = {
  OWNER: PERMISSIONS,
  FINANCE: [
    "donations:read",
    "donations:write",
    "subscriptions:read",
    "subscriptions:write",
    "contacts:read",
    "contacts:write",
    "analytics:read",
    "forms:read",
    "organization:read",
    "tickets:read",
  ],
  STAFF: [
    "forms:read",
    "forms:write",
    "contacts:read",
    "contacts:write",
    "donations:read",
    "subscriptions:read",
    "organization:read",
    "tickets:read",
    "tickets:write",
  ],
};

import type { Context } from "hono";
import { ApiError } from "../errors.js";
import type { AppEnv } from "./env.js";

/**
 * For routes that a role's permissions alone would open too widely: a staff session reaches them only
 * with the Owner's role, whatever permissions its role carries; an API key is judged by its permissions
 * as everywhere else. Used as a route's `before` (after authentication, before the permission check).
 */
export function ownersOnly(c: Context<AppEnv>): void {
  const role = c.get("auth").role;
  if (role !== undefined && role !== "OWNER") throw new ApiError(403, "Only an Owner may see this");
}

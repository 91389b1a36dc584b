import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { findStaffSession, type StaffSession } from "../staff/accounts.js";
import type { AppDeps } from "./env.js";

/** The dashboard's session cookie, as requests carry it to `/api/staff/` and to `/v1`. */

/** The cookie's name: `__Host-` (Secure, whole site, this host only) whenever PUBLIC_URL is https. */
export function staffCookieName(publicUrl: string): string {
  return publicUrl.startsWith("https:") ? "__Host-almoner_staff" : "almoner_staff";
}

/** The signed-in person of a request's session cookie, or undefined. */
export function staffSessionOf(c: Context, deps: AppDeps): Promise<StaffSession | undefined> {
  const token = getCookie(c, staffCookieName(deps.config.publicUrl));
  return token ? findStaffSession(deps.store, token, deps.now()) : Promise.resolve(undefined);
}

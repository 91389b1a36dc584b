import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { findStaffSession, SESSION_MAX_DAYS, type StaffSession } from "../staff/accounts.js";
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

/** The session cookie's token of a request, if it carries one. */
export function staffTokenOf(c: Context, deps: AppDeps): string | undefined {
  return getCookie(c, staffCookieName(deps.config.publicUrl));
}

/** Sets the session cookie of a new session (as sign-in does). */
export function setStaffCookie(c: Context, deps: AppDeps, token: string): void {
  setCookie(c, staffCookieName(deps.config.publicUrl), token, {
    httpOnly: true,
    secure: deps.config.publicUrl.startsWith("https:"),
    sameSite: "Lax",
    path: "/",
    maxAge: SESSION_MAX_DAYS * 24 * 3600,
  });
}

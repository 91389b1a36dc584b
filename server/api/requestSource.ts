import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context } from "hono";
import { ApiError } from "../errors.js";

/** Where a request comes from, as the HTTP layer reads it: the donor's address and the sending site. */

/**
 * The donor's address: the socket's peer, or behind `hops` trusted proxies the X-Forwarded-For entry the
 * outermost of them added. Each proxy appends the address it saw on the right, and the client writes
 * anything it likes on the left: only the right-most `hops` entries are the proxies' own.
 */
export function clientIp(c: Context, hops: number): string {
  if (hops > 0) {
    const entries = (c.req.header("X-Forwarded-For") ?? "")
      .split(",")
      .map((e) => e.trim())
      .filter(Boolean);
    const seen = entries[entries.length - hops];
    if (seen) return seen;
  }
  try {
    return getConnInfo(c).remote.address ?? "unknown";
  } catch {
    return "unknown"; // in-process requests (tests) have no socket
  }
}

type PublicUrl = { publicUrl: string; publicUrlSet: boolean };

/**
 * Whether `origin` is this instance's own: PUBLIC_URL's; only when it is not set does the address a
 * request was sent to (its Host header, which the sender writes) stand for it.
 */
function isOwnOrigin(c: Context, config: PublicUrl, origin: string): boolean {
  if (origin === new URL(config.publicUrl).origin) return true;
  return !config.publicUrlSet && origin === new URL(c.req.url).origin;
}

/** The refusal of a checkout (or its quote) sent from another site. */
export const CHECKOUT_FROM_ELSEWHERE = "Checkouts are accepted only from the form's own pages";
/** The refusal of any other submission from another site: a staff sign-in, a reset link, a donor's link. */
export const REQUEST_FROM_ELSEWHERE = "Requests are accepted only from this site's own pages";

/**
 * Submissions come from the form host's own pages (hosted page, iframe, overlay iframe) or from no browser.
 * `refusal` is what a request from another site is told: a checkout's words by default; the staff's and
 * donors' sign-in routes pass REQUEST_FROM_ELSEWHERE.
 */
export function checkSubmissionOrigin(
  c: Context,
  config: PublicUrl,
  refusal: string = CHECKOUT_FROM_ELSEWHERE,
): void {
  const origin = c.req.header("Origin");
  const site = c.req.header("Sec-Fetch-Site");
  if (site === "cross-site") throw new ApiError(403, refusal);
  if (!origin) return;
  if (isOwnOrigin(c, config, origin)) return;
  throw new ApiError(403, refusal);
}

/**
 * A change made with a session cookie must say it comes from this instance's own pages: its `Origin` is
 * PUBLIC_URL's. With a SameSite=Strict cookie, that is the defence against another site's page posting
 * with the visitor's cookie (CSRF).
 */
export function checkOwnOrigin(c: Context, config: PublicUrl): void {
  const origin = c.req.header("Origin");
  if (origin && isOwnOrigin(c, config, origin) && c.req.header("Sec-Fetch-Site") !== "cross-site") return;
  throw new ApiError(
    403,
    `Changes are accepted only from this site's own pages: the request's Origin must be ${new URL(config.publicUrl).origin}`,
  );
}

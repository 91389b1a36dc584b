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

/**
 * Submissions come from the form host's own pages (hosted page, iframe, overlay iframe) or from no browser.
 * The host is PUBLIC_URL; only when it is not set does the address a request was sent to (its Host header,
 * which the sender writes) stand for it.
 */
export function checkSubmissionOrigin(
  c: Context,
  config: { publicUrl: string; publicUrlSet: boolean },
): void {
  const origin = c.req.header("Origin");
  const site = c.req.header("Sec-Fetch-Site");
  if (site === "cross-site") throw new ApiError(403, "Checkouts are accepted only from the form's own pages");
  if (!origin) return;
  if (origin === new URL(config.publicUrl).origin) return;
  if (!config.publicUrlSet && origin === new URL(c.req.url).origin) return;
  throw new ApiError(403, "Checkouts are accepted only from the form's own pages");
}

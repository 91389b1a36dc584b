import { ApiError } from "../errors.js";
import type { AppDeps } from "./env.js";

/**
 * Counts one more request under `key` in the store's rolling-hour limits; past `max` an hour, the 429
 * `message` with Retry-After. For the limits of routes beside the API key's own (sign-in, portal links,
 * invitations).
 */
export async function countAgainstLimit(
  deps: AppDeps,
  key: string,
  max: number,
  message: string,
): Promise<void> {
  const r = await deps.store.rateLimits.hit(key, max, deps.now());
  if (!r.allowed) throw new ApiError(429, message, undefined, { "Retry-After": String(r.retryAfterSeconds) });
}

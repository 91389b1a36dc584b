import type { AppDeps } from "./deps.js";
import { ApiError } from "./errors.js";

/**
 * Counts one more request under `key` in the store's rolling-hour limits; past `max` an hour, the 429
 * `message` with Retry-After. For the limits beside the API key's own (sign-in, portal links,
 * invitations, test receipts, checkout attempts and quotes).
 */
export async function countAgainstLimit(
  deps: AppDeps,
  key: string,
  max: number,
  message: string,
): Promise<void> {
  const r = await deps.store.rateLimits.hit(key, max, deps.now());
  if (!r.allowed) throw ApiError.tooMany(message, r.retryAfterSeconds);
}

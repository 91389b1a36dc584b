import crypto from "node:crypto";

/**
 * Webhook signatures: `X-Webhook-Signature: sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>`
 * with `X-Webhook-Timestamp` in Unix seconds. The key is the whole secret string as registration returned it
 * (`whsec_...`, UTF-8). Receivers refuse timestamps more than five minutes off, which limits replays.
 */

export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** A new signing secret: `whsec_` + 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString("base64")}`;
}

export function signWebhook(secret: string, timestamp: number | string, body: string | Buffer): string {
  const hmac = crypto.createHmac("sha256", secret);
  hmac.update(`${timestamp}.`);
  hmac.update(body);
  return `sha256=${hmac.digest("hex")}`;
}

export interface VerifyInput {
  secret: string;
  /** The raw request body, exactly as received (not re-serialised JSON). */
  body: string | Buffer;
  /** The X-Webhook-Timestamp header. */
  timestamp: string | null | undefined;
  /** The X-Webhook-Signature header. */
  signature: string | null | undefined;
  toleranceSeconds?: number;
  /** The receiver's clock, Unix seconds; default now. */
  nowSeconds?: number;
}

/** True when the signature matches and the timestamp is within the tolerance; compares in constant time. */
export function verifyWebhookSignature(input: VerifyInput): boolean {
  const { secret, body, timestamp, signature } = input;
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return false;
  const now = input.nowSeconds ?? Date.now() / 1000;
  if (Math.abs(now - Number(timestamp)) > (input.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS))
    return false;
  const expected = Buffer.from(signWebhook(secret, timestamp, body));
  const given = Buffer.from(signature);
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

import crypto from "node:crypto";

/**
 * Webhook signatures: `X-Webhook-Signature: sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>`
 * with `X-Webhook-Timestamp` in Unix seconds. The key is the whole secret string as registration returned it
 * (`whsec_...`, UTF-8). Receivers refuse timestamps more than five minutes off, which limits replays.
 *
 * While a rotated-out secret is still valid (24 hours after a rotation), the header holds one signature per
 * valid secret, comma-separated, the current secret's first: `sha256=<new>,sha256=<old>`. A receiver
 * accepts the delivery when any of them matches the signature it computes with the secret it holds.
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

/** The X-Webhook-Signature header: one signature per secret in `secrets` (the current one first). */
export function signatureHeader(
  secrets: readonly string[],
  timestamp: number | string,
  body: string,
): string {
  return secrets.map((secret) => signWebhook(secret, timestamp, body)).join(",");
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
  /** The receiver's clock, Unix seconds. */
  nowSeconds: number;
}

/**
 * True when one of the header's signatures (comma-separated) matches and the timestamp is within the
 * tolerance; compares in constant time.
 */
export function verifyWebhookSignature(input: VerifyInput): boolean {
  const { secret, body, timestamp, signature } = input;
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return false;
  if (
    Math.abs(input.nowSeconds - Number(timestamp)) > (input.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS)
  )
    return false;
  const expected = Buffer.from(signWebhook(secret, timestamp, body));
  return signature.split(",").some((one) => {
    const given = Buffer.from(one.trim());
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
}

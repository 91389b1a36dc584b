import crypto from "node:crypto";

const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz";

// One call to the system's random source per 256 ids instead of one per id (ids are made on every request).
let pool = Buffer.alloc(0);
let poolOffset = 0;
function randomChunk(size: number): Buffer {
  if (poolOffset + size > pool.length) {
    pool = crypto.randomBytes(4096);
    poolOffset = 0;
  }
  const chunk = pool.subarray(poolOffset, poolOffset + size);
  poolOffset += size;
  return chunk;
}

let lastMs = -1;
let lastTime = "";

/** `size` random bytes from the shared pool: the system's random source is slow (docs/benchmarks.md). */
export function randomBytesPooled(size: number): Buffer {
  return Buffer.from(randomChunk(size));
}

/**
 * A 26-character, lower-case, time-sortable id (ULID layout: 48-bit milliseconds, 80 random bits), dated
 * `now`: the caller's injected clock (`deps.now()`, or the `nowMs` passed down), never the wall clock read here.
 */
export function ulid(now: number): string {
  if (now !== lastMs) {
    lastMs = now;
    lastTime = "";
    let t = now;
    for (let i = 0; i < 10; i++) {
      lastTime = CROCKFORD[t % 32] + lastTime;
      t = Math.floor(t / 32);
    }
  }
  const time = lastTime;
  const bytes = randomChunk(16);
  let rand = "";
  for (let i = 0; i < 16; i++) rand += CROCKFORD[bytes[i] % 32];
  return time + rand;
}

/** `prefix_` and a ulid dated `nowMs` (the injected clock, as for ulid). */
export function prefixedId(
  prefix: "pay" | "sub" | "wh" | "log" | "met" | "evt" | "key" | "org",
  nowMs: number,
): string {
  return `${prefix}_${ulid(nowMs)}`;
}

/**
 * `prefix_` and 26 random characters in the ulid's alphabet, without its time: for records whose id other
 * parties see, and whose age is not theirs to know (a person's account, shown to each organization that
 * invites them).
 */
export function undatedId(prefix: "usr"): string {
  const bytes = randomChunk(26);
  let rand = "";
  for (let i = 0; i < 26; i++) rand += CROCKFORD[bytes[i] % 32];
  return `${prefix}_${rand}`;
}

export const uuid = (): string => crypto.randomUUID();

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` uniformly random base62 characters (rejection sampling keeps the distribution even). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** One-shot hashing, cheaper than createHash for short inputs (docs/benchmarks.md); on hot API paths. */
export function sha256Hex(value: string): string {
  return crypto.hash("sha256", value, "hex");
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Form, link and contact ids are UUIDs; anything else cannot name one (and is a 404, not a query). */
export const isUuid = (value: string): boolean => UUID.test(value);

const SECRET_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * A new secret token for a link or a session (set-up, reset and sign-in links, sessions, payment-method
 * update links): 32 random bytes as base64url, 43 characters. Only its hash (sha256Hex) is kept.
 */
export const newSecretToken = (): string => crypto.randomBytes(32).toString("base64url");

/** Whether `text` has the form of a secret token, checked before it is hashed and looked up. */
export const isSecretToken = (text: string): boolean => SECRET_TOKEN.test(text);

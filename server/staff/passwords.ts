import crypto from "node:crypto";
import { promisify } from "node:util";

/**
 * Staff passwords, hashed with scrypt from node:crypto (memory-hard; no native add-on to build). A hash
 * keeps its parameters and salt beside it (`scrypt$N$r$p$salt$hash`, base64url), so they can be raised
 * without locking anyone out: a hash made with weaker ones is still checked with its own, and replaced at
 * the next successful sign-in (`needsRehash`).
 *
 * N = 2^14, r = 8, p = 5: one of the equivalent scrypt settings OWASP's password storage guidance lists
 * (2^17/8/1 down to 2^13/8/10), with 16 MiB per hash, so that the four hashes the thread pool may run at
 * once stay at 64 MiB on a small server. About 140 ms per hash on the 2-core development machine.
 */

const scrypt = promisify(crypto.scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: crypto.ScryptOptions,
) => Promise<Buffer>;

const N = 16384;
const R = 8;
const P = 5;
const KEY_LENGTH = 32;

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const key = await scrypt(password, salt, KEY_LENGTH, { N, r: R, p: P });
  return ["scrypt", N, R, P, salt.toString("base64url"), key.toString("base64url")].join("$");
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const key = await scrypt(password, Buffer.from(salt, "base64url"), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return crypto.timingSafeEqual(key, expected);
}

/** Whether a stored hash was made with other parameters than today's (it is replaced at a sign-in). */
export function needsRehash(stored: string): boolean {
  const [scheme, n, r, p] = stored.split("$");
  return scheme !== "scrypt" || Number(n) !== N || Number(r) !== R || Number(p) !== P;
}

/** A hash of no one's password: an unknown address costs what a wrong password does. */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(crypto.randomBytes(24).toString("base64url"));
  return decoy;
}

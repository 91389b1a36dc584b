import crypto from "node:crypto";
import type { Db } from "./database.js";

/**
 * Values an installation makes once and every process then shares, such as the sandbox processor's secret.
 * The first writer wins: processes racing on a fresh database all end up with the same value.
 */

/** A setting's value, or undefined while none is stored. */
async function readSetting(db: Db, key: string): Promise<string | undefined> {
  return (await db.selectFrom("instance_settings").select("value").where("key", "=", key).executeTakeFirst())
    ?.value;
}

export async function getOrCreateSetting(db: Db, key: string, create: () => string): Promise<string> {
  const read = () => readSetting(db, key);
  const existing = await read();
  if (existing !== undefined) return existing;
  await db
    .insertInto("instance_settings")
    .values({ key, value: create() })
    .onConflict((oc) => oc.column("key").doNothing())
    .execute();
  const stored = await read();
  if (stored === undefined) throw new Error(`Instance setting ${key} vanished as it was created`);
  return stored;
}

/** What the sandbox processor signs its tokens and payment ids with: 32 random bytes, base64url. */
export function sandboxSecret(db: Db): Promise<string> {
  return getOrCreateSetting(db, "sandbox_secret", () => crypto.randomBytes(32).toString("base64url"));
}

const PUBLIC_URL_KEY = "public_url";

/**
 * The address donors and staff reach this installation at, as the last server started was told (its
 * PUBLIC_URL, or its own address): the command line, started without PUBLIC_URL, writes its links with it.
 */
export async function recordPublicUrl(db: Db, url: string): Promise<void> {
  await db
    .insertInto("instance_settings")
    .values({ key: PUBLIC_URL_KEY, value: url })
    .onConflict((oc) => oc.column("key").doUpdateSet({ value: url }))
    .execute();
}

/** The address recorded by recordPublicUrl, or undefined before any server has started. */
export function recordedPublicUrl(db: Db): Promise<string | undefined> {
  return readSetting(db, PUBLIC_URL_KEY);
}

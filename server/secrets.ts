import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { StartupError } from "./errors.js";

/**
 * Secrets kept in the database (an organization's Stripe keys and webhook secret) are sealed with
 * AES-256-GCM under the instance key: `SECRETS_KEY`, or outside production a key generated into
 * `DATA_DIR/secrets.key` the first time one is needed. A sealed value is `v1.<iv>.<ciphertext>.<tag>`
 * (base64url); the organization's id is bound in as associated data, so a sealed value copied to another
 * organization does not open.
 */

const KEY_FILE = "secrets.key";

export interface SecretBox {
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
}

export class SecretsError extends Error {}

/** A box over a 32-byte key. */
export function secretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new SecretsError("The secrets key must be 32 bytes");
  return {
    seal(plaintext, context) {
      const iv = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(context, "utf8"));
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      const parts = [iv, body, cipher.getAuthTag()].map((b) => b.toString("base64url"));
      return `v1.${parts.join(".")}`;
    },
    open(sealed, context) {
      const [version, iv, body, tag] = sealed.split(".");
      if (version !== "v1" || !iv || body === undefined || !tag)
        throw new SecretsError("A stored secret is not in a known format");
      try {
        const decipher = crypto.createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
        decipher.setAAD(Buffer.from(context, "utf8"));
        decipher.setAuthTag(Buffer.from(tag, "base64url"));
        return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString(
          "utf8",
        );
      } catch {
        throw new SecretsError(
          "A stored secret cannot be opened with this SECRETS_KEY (was it changed? set the key the secrets were sealed with)",
        );
      }
    },
  };
}

/**
 * The instance's box: from `SECRETS_KEY`; without it, outside production, from the key file in the data
 * folder (made on first use, readable by its owner only); in production, none (sealing refuses).
 */
export function instanceSecretBox(opts: {
  key: Buffer | undefined;
  dataDir: string;
  production: boolean;
}): SecretBox {
  if (opts.key) return secretBox(opts.key);
  let box: SecretBox | undefined;
  const lazy = (): SecretBox => {
    if (box) return box;
    if (opts.production)
      throw new SecretsError(
        "Set SECRETS_KEY (32 random bytes: openssl rand -hex 32) to store processor keys",
      );
    box = secretBox(readOrCreateKeyFile(opts.dataDir));
    return box;
  };
  return {
    seal: (plaintext, context) => lazy().seal(plaintext, context),
    open: (sealed, context) => lazy().open(sealed, context),
  };
}

function readOrCreateKeyFile(dataDir: string): Buffer {
  const file = path.join(dataDir, KEY_FILE);
  try {
    return decodeKeyFile(fs.readFileSync(file, "utf8"), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    // "wx": of two processes creating it at once, one writes and the other reads what it wrote.
    fs.writeFileSync(file, `${crypto.randomBytes(32).toString("hex")}\n`, { flag: "wx", mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  return decodeKeyFile(fs.readFileSync(file, "utf8"), file);
}

function decodeKeyFile(text: string, file: string): Buffer {
  const hex = text.trim();
  if (!/^[0-9a-f]{64}$/i.test(hex)) throw new StartupError(`${file} does not hold a 64-digit hex key`);
  return Buffer.from(hex, "hex");
}

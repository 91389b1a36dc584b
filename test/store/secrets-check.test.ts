import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StartupError } from "../../server/errors.js";
import { sealStripeSecrets } from "../../server/processors/stripe/connection.js";
import { secretBox } from "../../server/secrets.js";
import { checkSealedSecrets } from "../../server/secretsCheck.js";
import { createStaffMember } from "../../server/staff/accounts.js";
import type { Store } from "../../server/store/database.js";
import { createOrganization } from "../../server/store/organizations.js";
import { dialect, freshDatabase, type TestDatabase } from "../support/testApp.js";

/**
 * The start's check of SECRETS_KEY against the processor keys stored with it: a key that opens them all
 * starts quietly; one that opens only some starts, naming the organizations it does not open (they take
 * no payments until reconnected); one that opens none, or none at all in production, stops the start.
 */
describe(`SECRETS_KEY checked against the stored processor keys at start (${dialect})`, () => {
  let database: TestDatabase;
  let store: Store;
  const oldKey = Buffer.alloc(32, 1);
  const newKey = Buffer.alloc(32, 2);
  const otherKey = Buffer.alloc(32, 3);
  let sealedWithOld: string;
  let sealedWithNew: string;
  const config = (secretsKey: Buffer | undefined) => ({
    production: true,
    secretsKey,
    dataDir: "/nonexistent-almoner-data",
  });

  beforeAll(async () => {
    database = await freshDatabase();
    store = await database.open();
    const now = Date.now();
    const seal = async (name: string, key: Buffer) => {
      const org = await createOrganization(store.db, { name }, now);
      const sealed = sealStripeSecrets(secretBox(key), org.id, {
        secretKey: "sk_test_abcdefghijkl1234",
        webhookSecret: "whsec_abcdefghijkl",
      });
      await store.db
        .updateTable("organizations")
        .set({ processor_secrets: sealed })
        .where("id", "=", org.id)
        .execute();
      return org.id;
    };
    sealedWithOld = await seal("Sealed before the key changed", oldKey);
    sealedWithNew = await seal("Reconnected since", newKey);
    // An organization with no processor keys is not checked.
    await createOrganization(store.db, { name: "Sandbox only" }, now);
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it("starts with a key that opens some stored keys, naming only the organizations it does not open", async () => {
    expect(await checkSealedSecrets(store.db, config(newKey))).toEqual({ unopened: [sealedWithOld] });
    expect(await checkSealedSecrets(store.db, config(oldKey))).toEqual({ unopened: [sealedWithNew] });
  });

  it("stops the start with one message when the key opens none of them, or no key is set in production", async () => {
    await expect(checkSealedSecrets(store.db, config(otherKey))).rejects.toThrow(
      new StartupError(
        "SECRETS_KEY does not open the payment processor keys stored in the database: set the key they were sealed with",
      ),
    );
    await expect(checkSealedSecrets(store.db, config(undefined))).rejects.toThrow(/SECRETS_KEY is not set/);
  });

  it("outside production without SECRETS_KEY, names the key file beside the database (a restore without it)", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-secrets-"));
    try {
      // The instance's key file is made afresh there: it opens none of the stored keys.
      const error = await checkSealedSecrets(store.db, {
        production: false,
        secretsKey: undefined,
        dataDir,
      }).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(StartupError);
      expect((error as Error).message).toBe(
        `SECRETS_KEY does not open the payment processor keys stored in the database: SECRETS_KEY is not set, so the key is ${path.join(dataDir, "secrets.key")}, which is not the one they were sealed with (restore that file with the database, or set SECRETS_KEY to the key they were sealed with)`,
      );
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("starts quietly when every stored key opens", async () => {
    await store.db
      .updateTable("organizations")
      .set({ processor_secrets: null })
      .where("id", "=", sealedWithOld)
      .execute();
    expect(await checkSealedSecrets(store.db, config(newKey))).toEqual({ unopened: [] });
  });

  it("stops a production start without SECRETS_KEY while a staff member's two-factor secret is sealed with it", async () => {
    const { userId } = await createStaffMember(store, {
      organizationId: sealedWithNew,
      email: "owner@example.org",
      role: "OWNER",
      publicUrl: "https://give.example.org",
      nowMs: Date.now(),
    });
    await store.db
      .updateTable("organizations")
      .set({ processor_secrets: null })
      .where("id", "in", [sealedWithOld, sealedWithNew])
      .execute();
    expect(await checkSealedSecrets(store.db, config(undefined))).toEqual({ unopened: [] });
    await store.db
      .updateTable("staff_users")
      .set({ totp_secret: "sealed" })
      .where("id", "=", userId)
      .execute();
    await expect(checkSealedSecrets(store.db, config(undefined))).rejects.toThrow(
      /two-factor secrets are sealed with it/,
    );
  });
});

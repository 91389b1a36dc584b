import path from "node:path";
import type { Config } from "./config.js";
import { StartupError } from "./errors.js";
import { openStripeSecrets } from "./processors/stripe/connection.js";
import { instanceSecretBox, SecretsError } from "./secrets.js";
import { countTwoFactorSecrets } from "./staff/twoFactor.js";
import type { Db } from "./store/database.js";
import { sealedProcessorSecrets } from "./store/organizations.js";

/** What the start-up check found: the organizations whose processor keys SECRETS_KEY does not open. */
export interface SealedSecretsCheck {
  unopened: string[];
}

/**
 * Start-up's check that the instance's key opens what was sealed with it: a production start without
 * SECRETS_KEY while processor keys or two-factor secrets are stored, or with a key that opens none of the
 * stored processor keys, would fail every payment (or sign-in) as "misconfigured"; it is stopped now with
 * one line instead. Some keys not opening (sealed before the key was changed, not reconnected since) is
 * not a reason to stop the others: those organizations are returned, for the log.
 */
export async function checkSealedSecrets(
  db: Db,
  config: Pick<Config, "production" | "secretsKey" | "dataDir">,
): Promise<SealedSecretsCheck> {
  const sealed = await sealedProcessorSecrets(db);
  if (config.production && !config.secretsKey) {
    if (sealed.length > 0)
      throw new StartupError(
        "SECRETS_KEY is not set, but organizations have payment processor keys sealed with it: set SECRETS_KEY (the key they were sealed with)",
      );
    if ((await countTwoFactorSecrets(db)) > 0)
      throw new StartupError(
        "SECRETS_KEY is not set, but staff members' two-factor secrets are sealed with it: set SECRETS_KEY (the key they were sealed with)",
      );
    return { unopened: [] };
  }
  const box = instanceSecretBox({
    key: config.secretsKey,
    dataDir: config.dataDir,
    production: config.production,
  });
  const unopened = sealed.filter(({ organizationId, secrets }) => {
    try {
      openStripeSecrets(box, organizationId, secrets);
      return false;
    } catch (err) {
      if (err instanceof SecretsError) return true;
      throw err;
    }
  });
  if (sealed.length > 0 && unopened.length === sealed.length)
    throw new StartupError(
      config.secretsKey
        ? "SECRETS_KEY does not open the payment processor keys stored in the database: set the key they were sealed with"
        : // Outside production without SECRETS_KEY the key is the file beside the database: a restored
          // database without its file (or with another instance's) meets a new one.
          `SECRETS_KEY does not open the payment processor keys stored in the database: SECRETS_KEY is not set, so the key is ${path.join(config.dataDir, "secrets.key")}, which is not the one they were sealed with (restore that file with the database, or set SECRETS_KEY to the key they were sealed with)`,
    );
  return { unopened: unopened.map((u) => u.organizationId) };
}

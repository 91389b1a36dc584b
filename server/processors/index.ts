import type { Config } from "../config.js";
import { type SecretBox, SecretsError } from "../secrets.js";
import type { Store } from "../store/database.js";
import type { Organization, StripeConnection } from "../store/organizations.js";
import { DatabaseLedger } from "../store/processorLedger.js";
import { sandboxSecret } from "../store/settings.js";
import { type PaymentProcessor, ProcessorError, type ProcessorName } from "./port.js";
import { SandboxProcessor } from "./sandbox/processor.js";
import { openStripeSecrets, type StripeSecrets } from "./stripe/connection.js";
import { StripeProcessor } from "./stripe/processor.js";

/**
 * The processors, registered by name, and which one serves an organization:
 * - an organization that connected its own Stripe account pays through it;
 * - a sandbox organization (`org create --sandbox`), and any other outside production, pays through the
 *   instance's sandbox;
 * - in production an organization without a processor takes no payments (`forOrganization` is null).
 * A stored payment or subscription names the processor that made it (`named`): refunds, settlement and
 * billing go back to that one.
 */

export interface StripeOptions {
  /** STRIPE_API_URL: the package's requests go there instead of Stripe (tests), test keys only. */
  apiUrl: string | undefined;
  now: () => number;
}

export type StripeFactory = (
  connection: StripeConnection,
  secrets: StripeSecrets,
  opts: StripeOptions,
) => PaymentProcessor;

const FACTORIES: { stripe: StripeFactory } = {
  stripe: (connection, secrets, opts) => new StripeProcessor(connection, secrets, opts),
};

export class Processors {
  private readonly stripeCache = new Map<string, { key: string; processor: PaymentProcessor }>();

  constructor(
    /** The instance's sandbox: tests may wrap or replace it (`withSandbox`). */
    readonly sandbox: PaymentProcessor,
    private readonly opts: {
      production: boolean;
      secrets: SecretBox;
      stripe: StripeOptions;
      factories?: Partial<typeof FACTORIES>;
    },
  ) {}

  /** The same registry with another sandbox (tests: a processor that fails or hangs on purpose). */
  withSandbox(sandbox: PaymentProcessor): Processors {
    return new Processors(sandbox, this.opts);
  }

  /** What takes this organization's new payments, or null when nothing does (production, not connected). */
  forOrganization(org: Organization): PaymentProcessor | null {
    if (org.processor) return this.stripeFor(org);
    if (org.sandbox || !this.opts.production) return this.sandbox;
    return null;
  }

  /** The name of `forOrganization`'s processor, without building it. */
  nameFor(org: Organization): ProcessorName | null {
    if (org.processor) return "stripe";
    return org.sandbox || !this.opts.production ? "sandbox" : null;
  }

  /** The processor that made a stored payment or holds a stored method. */
  named(name: string, org: Organization): PaymentProcessor {
    if (name === "sandbox") return this.sandbox;
    if (name === "stripe") {
      if (!org.processor)
        throw new ProcessorError(
          "misconfigured",
          "This payment was made through Stripe, which is no longer connected to the organization",
        );
      return this.stripeFor(org);
    }
    throw new ProcessorError("misconfigured", `Unknown payment processor: ${name}`);
  }

  private stripeFor(org: Organization): PaymentProcessor {
    const connection = org.processor as StripeConnection;
    const sealed = org.processorSecrets ?? "";
    // Rebuilt when the connection changes (new keys, new webhook secret).
    const key = `${connection.accountId}:${connection.connectedAt}:${sealed}`;
    const cached = this.stripeCache.get(org.id);
    if (cached?.key === key) return cached.processor;
    let secrets: StripeSecrets;
    try {
      secrets = openStripeSecrets(this.opts.secrets, org.id, sealed);
    } catch (err) {
      if (err instanceof SecretsError) throw new ProcessorError("misconfigured", err.message);
      throw err;
    }
    const factory = this.opts.factories?.stripe ?? FACTORIES.stripe;
    const processor = factory(connection, secrets, this.opts.stripe);
    this.stripeCache.set(org.id, { key, processor });
    return processor;
  }
}

/** The registry a server (or the command line) uses; the sandbox remembers its charges in the database. */
export async function openProcessors(
  store: Store,
  config: Config,
  secrets: SecretBox,
  now: () => number,
): Promise<Processors> {
  const sandbox = new SandboxProcessor({
    secret: await sandboxSecret(store.db),
    now,
    ledger: new DatabaseLedger(store, now),
    bankSettleMs: config.sandboxBankSettleMs,
  });
  return new Processors(sandbox, {
    production: config.production,
    secrets,
    stripe: { apiUrl: config.stripeApiUrl, now },
  });
}

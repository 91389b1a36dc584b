import type { Config } from "./config.js";
import type { Processors } from "./processors/index.js";
import type { SecretBox } from "./secrets.js";
import type { Store } from "./store/database.js";
import type { MetricsRecorder } from "./store/metrics.js";

/**
 * What the app, the workers and the command line are built from (the composition root makes it:
 * index.ts, cli.ts); tests pass their own (a temporary database, a fixed clock, a processor that fails).
 */
export interface AppDeps {
  config: Config;
  store: Store;
  metrics: MetricsRecorder;
  /** Which payment processor serves which organization (processors/index.ts). */
  processors: Processors;
  /** Seals and opens the secrets kept in the database. */
  secrets: SecretBox;
  now: () => number;
  /**
   * This process's heartbeat row (store/processes.ts), named on what it claims and on the checkouts it
   * charges, so that others take them over as soon as it dies; unset in processes without one (the command
   * line, most tests), whose claims end with their leases.
   */
  processId?: string;
}

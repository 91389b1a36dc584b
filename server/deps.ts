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
}

import type { Config } from "./config.js";
import type { AppDeps } from "./deps.js";
import { openProcessors } from "./processors/index.js";
import { instanceSecretBox } from "./secrets.js";
import type { Store } from "./store/database.js";
import { MetricsRecorder } from "./store/metrics.js";

/** Builds the app's dependencies on an open store: the server, the command line and tests share this. */
export async function composeDeps(
  store: Store,
  config: Config,
  now: () => number = Date.now,
): Promise<AppDeps> {
  const secrets = instanceSecretBox({
    key: config.secretsKey,
    dataDir: config.dataDir,
    production: config.production,
  });
  const metrics = new MetricsRecorder(store);
  const processors = await openProcessors(store, config, secrets, now);
  return { config, store, metrics, processors, secrets, now };
}

import type { Permission } from "../../shared/enums.js";
import type { PaymentProcessor } from "../checkout/processor.js";
import type { Config } from "../config.js";
import type { Store } from "../store/database.js";
import type { MetricsRecorder } from "../store/metrics.js";

/** What the app is built from; tests pass their own (a temporary database, a fixed clock). */
export interface AppDeps {
  config: Config;
  store: Store;
  metrics: MetricsRecorder;
  processor: PaymentProcessor;
  now: () => number;
}

export interface AuthContext {
  organizationId: string;
  keyId: string;
  permissions: ReadonlySet<Permission>;
}

export interface AppEnv {
  Variables: {
    requestId: string;
    auth: AuthContext;
  };
}

import type { Permission } from "../../shared/enums.js";

export type { AppDeps } from "../deps.js";

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

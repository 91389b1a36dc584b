import path from "node:path";
import { z } from "zod";
import { StartupError } from "./errors.js";

const port = z.coerce.number().int().min(0).max(65535);

const envSchema = z.object({
  PORT: port.default(3000),
  HOST: z.string().min(1).default("0.0.0.0"),
  DATA_DIR: z.string().min(1).default("./data"),
  DATABASE_URL: z.string().min(1).optional(),
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  NODE_ENV: z.string().default("development"),
  RATE_LIMIT_PER_HOUR: z.coerce.number().int().min(1).max(10_000_000).default(1000),
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(50_000_000).default(262_144),
  LEGACY_DONATIONS_API: z.enum(["on", "off"]).default("on"),
});

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** `sqlite:<file>` or a postgres:// URL. */
  databaseUrl: string;
  publicUrl: string;
  production: boolean;
  rateLimitPerHour: number;
  maxBodyBytes: number;
  legacyDonationsApi: boolean;
}

/** Every setting, parsed once from the environment. A bad one throws a StartupError naming it. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue.path[0]);
    throw new StartupError(`Invalid setting ${name}=${JSON.stringify(env[name] ?? "")}: ${describe(name)}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.DATA_DIR);
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, "");
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    databaseUrl: e.DATABASE_URL ?? `sqlite:${path.join(dataDir, "almoner.db")}`,
    publicUrl,
    production: e.NODE_ENV === "production",
    rateLimitPerHour: e.RATE_LIMIT_PER_HOUR,
    maxBodyBytes: e.MAX_BODY_BYTES,
    legacyDonationsApi: e.LEGACY_DONATIONS_API === "on",
  };
}

function describe(name: string): string {
  switch (name) {
    case "PORT":
      return "must be a port number from 0 to 65535";
    case "PUBLIC_URL":
      return "must be an absolute http(s) URL such as https://give.example.org";
    case "RATE_LIMIT_PER_HOUR":
      return "must be a whole number of requests per hour, at least 1";
    case "MAX_BODY_BYTES":
      return "must be a whole number of bytes from 1024 to 50000000";
    case "LEGACY_DONATIONS_API":
      return "must be on or off";
    default:
      return "must not be empty";
  }
}

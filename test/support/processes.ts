import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { TestDatabase } from "./testApp.js";

/**
 * Real processes for the process tests: the server (`server/index.ts`) and the CLI (`server/cli.ts`),
 * run through tsx from the repository root, with a clean environment so that nothing of the test
 * runner's own settings leaks in. Every child is remembered so that a test file can kill leftovers.
 */

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The settings the server and CLI read; removed from the inherited environment before each spawn. */
const ALMONER_SETTINGS = [
  "PORT",
  "HOST",
  "DATA_DIR",
  "DATABASE_URL",
  "PUBLIC_URL",
  "NODE_ENV",
  "RATE_LIMIT_PER_HOUR",
  "MAX_BODY_BYTES",
  "LEGACY_DONATIONS_API",
  "WEBHOOK_RETRY_SCHEDULE",
  "WEBHOOK_TARGET_GUARD",
  "SMTP_URL",
  "SECRETS_KEY",
  "STRIPE_API_URL",
  "STRIPE_JS_URL",
  "APPLE_PAY_DOMAIN_ASSOCIATION",
];

export type Env = Record<string, string | undefined>;

function childEnv(overrides: Env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ALMONER_SETTINGS) delete env[name];
  // Vitest marks its own process; the children are ordinary programs.
  delete env.VITEST;
  delete env.VITEST_POOL_ID;
  delete env.VITEST_WORKER_ID;
  env.NO_COLOR = "1";
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

const live = new Set<ChildProcess>();

function spawnTsx(script: string, args: string[], env: Env): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: repoRoot,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  child.on("exit", () => live.delete(child));
  return child;
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

/** Kills every child this module started that is still running (afterAll/afterEach). */
export async function killAll(): Promise<void> {
  const waits = [...live].map(async (child) => {
    const done = exited(child);
    child.kill("SIGKILL");
    await done;
  });
  await Promise.all(waits);
}

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a script to completion (killed after `timeoutMs`). */
export async function runScript(
  script: string,
  args: string[],
  env: Env,
  timeoutMs = 30_000,
): Promise<ProcessResult> {
  const child = spawnTsx(script, args, env);
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const { code, signal } = await exited(child);
  await closed;
  clearTimeout(timer);
  return { code, signal, stdout, stderr };
}

/** Starts the server expecting it to fail, and returns how it ended. */
export function runServerToExit(env: Env, timeoutMs = 30_000): Promise<ProcessResult> {
  return runScript("server/index.ts", [], { HOST: "127.0.0.1", PORT: "0", ...env }, timeoutMs);
}

export interface CliResult extends ProcessResult {
  /** stdout parsed as JSON when it is JSON, else undefined. */
  json: unknown;
}

/** `npm run --silent cli -- ...args` with the given settings. */
export async function runCli(args: string[], env: Env): Promise<CliResult> {
  const result = await runScript("server/cli.ts", args, env);
  let json: unknown;
  try {
    json = JSON.parse(result.stdout);
  } catch {
    json = undefined;
  }
  return { ...result, json };
}

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  /** http://127.0.0.1:PORT */
  url: string;
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  fetch(pathname: string, init?: RequestInit & { key?: string }): Promise<Response>;
  json<T = Record<string, unknown>>(
    method: string,
    pathname: string,
    opts?: { key?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: T }>;
}

const LISTENING = /Almoner listening on http:\/\/([^\s:]+|\[[^\]]+\]):(\d+)/;

/** Starts the server on 127.0.0.1 with PORT=0 and resolves once it logs where it listens. */
export async function startServer(env: Env, timeoutMs = 30_000): Promise<ServerProcess> {
  const child = spawnTsx("server/index.ts", [], { HOST: "127.0.0.1", PORT: "0", ...env });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(`server did not start within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`),
      );
    }, timeoutMs);
    child.stdout?.on("data", (d: string) => {
      stdout += d;
      const m = LISTENING.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[2]));
      }
    });
    child.stderr?.on("data", (d: string) => {
      stderr += d;
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(
        new Error(
          `server exited (${code ?? signal}) before listening\nstdout:\n${stdout}\nstderr:\n${stderr}`,
        ),
      );
    });
  });
  const url = `http://127.0.0.1:${port}`;

  const doFetch = (pathname: string, init: RequestInit & { key?: string } = {}) => {
    const { key, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (key !== undefined) headers.set("Authorization", `Bearer ${key}`);
    return fetch(`${url}${pathname}`, { ...rest, headers });
  };

  return {
    child,
    port,
    url,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop(graceMs = 8000) {
      const done = exited(child);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
        const result = await done;
        clearTimeout(timer);
        return result;
      }
      return done;
    },
    fetch: doFetch,
    async json<T>(
      method: string,
      pathname: string,
      opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
    ) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.body !== undefined) headers["Content-Type"] ??= "application/json";
      const res = await doFetch(pathname, {
        method,
        key: opts.key,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      return { status: res.status, headers: res.headers, body: body as T };
    },
  };
}

export interface TempDir {
  dir: string;
  remove(): void;
}

/** A temporary directory, removed by the returned function. */
export function tempDir(prefix = "almoner-proc-"): TempDir {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** The DATABASE_URL a child process needs for a test database (PostgreSQL: `?schema=NAME`). */
export function databaseUrlOf(db: Pick<TestDatabase, "url" | "pgSchema">): string {
  if (!db.pgSchema) return db.url;
  const url = new URL(db.url);
  url.searchParams.set("schema", db.pgSchema);
  return url.toString();
}

/** The non-empty lines of some output. */
export function lines(text: string): string[] {
  return text.split(/\r?\n/).filter((l) => l.trim() !== "");
}

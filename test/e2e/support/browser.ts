import fs from "node:fs";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { type HttpBindings, type ServerType, serve } from "@hono/node-server";
import { type BrowserContext, chromium } from "playwright-core";
import { setupTestApp, type TestApp } from "../../support/testApp.js";

/**
 * Browser and server helpers for the e2e suite. The browser is always Debian's Chromium
 * (`apt-get install -y chromium`), never a downloaded one.
 */

export const CHROMIUM_PATH = "/usr/bin/chromium";

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-quic",
];

const isCI = !!process.env.CI && process.env.CI !== "false";

/**
 * Whether the browser tests should run. Without Chromium they are skipped with a clear line, except
 * under CI, where they run and fail loudly in launchBrowser().
 */
export const browserAvailable: boolean = (() => {
  if (fs.existsSync(CHROMIUM_PATH)) return true;
  if (isCI) return true;
  console.warn(
    `\n[almoner e2e] ${CHROMIUM_PATH} not found: SKIPPING the browser tests. Install it with: apt-get update && apt-get install -y chromium\n`,
  );
  return false;
})();

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launches Chromium headless on a fresh, throw-away profile. */
export async function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH))
    throw new Error(
      `${CHROMIUM_PATH} not found: the e2e tests need Debian's Chromium (apt-get update && apt-get install -y chromium)`,
    );
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-chromium-"));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 800 },
    });
  } catch (err) {
    fs.rmSync(profile, { recursive: true, force: true });
    throw err;
  }
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface ServedApp {
  /** e.g. `http://127.0.0.1:41234`, also the app's PUBLIC_URL. */
  baseUrl: string;
  t: TestApp;
  close(): Promise<void>;
}

export interface ServeOptions {
  /** Sees every request the app receives (a copy: its body can be read) before the app answers it. */
  onRequest?: (req: Request) => void | Promise<void>;
}

/**
 * Serves the whole app (fresh SQLite database, one org + key) on 127.0.0.1 at a free port. The socket
 * is opened first so the app can be built with PUBLIC_URL set to the real address.
 */
export async function serveTestApp(
  env: Record<string, string> = {},
  opts: ServeOptions = {},
): Promise<ServedApp> {
  let handler: ((req: Request, bindings: HttpBindings) => Response | Promise<Response>) | undefined;
  let server: ServerType | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    server = serve(
      {
        hostname: "127.0.0.1",
        port: 0,
        fetch: (req, bindings) =>
          handler ? handler(req, bindings as HttpBindings) : new Response("starting", { status: 503 }),
      },
      (info: AddressInfo) => resolve(info.port),
    );
    server.once("error", reject);
  });
  const http = server as import("node:http").Server;
  const baseUrl = `http://127.0.0.1:${port}`;
  let t: TestApp;
  try {
    t = await setupTestApp({ env: { PUBLIC_URL: baseUrl, ...env } });
  } catch (err) {
    http.close();
    throw err;
  }
  const { onRequest } = opts;
  handler = onRequest
    ? async (req, bindings) => {
        await onRequest(req.clone());
        return t.app.fetch(req, bindings);
      }
    : (req, bindings) => t.app.fetch(req, bindings);
  return {
    baseUrl,
    t,
    async close() {
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      await t.close();
    },
  };
}

import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An organization's own site for the embed and overlay tests: pages served from a second server on
 * 127.0.0.1, reached as http://localhost:<port>, so it is another origin and another site than the app.
 */

export interface HostSite {
  origin: string;
  /** Serves `html` at `path` (exact pathname) from now on, with extra response headers. */
  page(path: string, html: string, headers?: Record<string, string>): void;
  close(): Promise<void>;
}

export async function startHostSite(): Promise<HostSite> {
  const pages = new Map<string, { html: string; headers: Record<string, string> }>();
  const server = http.createServer((req, res) => {
    const page = pages.get(new URL(req.url ?? "/", "http://x").pathname);
    res.writeHead(page === undefined ? 404 : 200, {
      "Content-Type": "text/html; charset=utf-8",
      ...page?.headers,
    });
    res.end(page?.html ?? "not found");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://localhost:${port}`,
    page: (path, html, headers = {}) => pages.set(path, { html, headers }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export const hostPage = (body: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Friends of the Park</title></head><body>${body}</body></html>`;

import fs from "node:fs";
import { serve } from "@hono/node-server";
import { Hono } from "hono";

/**
 * The benchmark's baseline: a bare Hono route answering a fixed JSON object, served the way Almoner is
 * (@hono/node-server), and a second one answering a fixed object the size and shape of a full form (what
 * `GET /v1/forms/{id}` returns), to show what serializing and sending that much costs by itself.
 */

const body = {
  status: "ok",
  service: "almoner-bench-baseline",
  formID: "00000000-0000-4000-8000-000000000000",
  title: "Fixed response",
  funds: ["General"],
  active: true,
};

const form: unknown = JSON.parse(fs.readFileSync(new URL("./form-response.json", import.meta.url), "utf8"));

/** Serves the bare routes on `host` (port 0: the OS picks) and calls `listening` with the port. */
export function serveBare(host: string, port: number, listening: (port: number) => void) {
  const app = new Hono();
  app.get("/json", (c) => c.json(body));
  app.get("/form", (c) => c.json(form));
  return serve({ fetch: app.fetch, port, hostname: host }, (info) => listening(info.port));
}

/** The line a process serving the bare routes beside Almoner prints; the bench reads the port from it. */
export const BARE_BESIDE_LINE = "Bare Hono routes (same process) answering on";

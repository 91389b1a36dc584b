import fs from "node:fs";
import { serve } from "@hono/node-server";
import Database from "better-sqlite3";
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

/**
 * Serves the bare routes on `host` (port 0: the OS picks) and calls `listening` with the port. Given a
 * SQLite file, also `GET /row/:id`: a plain Hono route reading one row of its `forms` table (a prepared
 * statement on a read-only connection) and answering it as JSON, the yardstick issue 20 gives for the
 * single-form GET (no key, rate limit, metrics or presentation: what reading one row and answering costs).
 */
export function serveBare(
  host: string,
  port: number,
  listening: (port: number) => void,
  opts: { sqliteFile?: string } = {},
) {
  const app = new Hono();
  app.get("/json", (c) => c.json(body));
  app.get("/form", (c) => c.json(form));
  if (opts.sqliteFile) {
    const db = new Database(opts.sqliteFile, { readonly: true, fileMustExist: true });
    const row = db.prepare<[string], Record<string, unknown>>("SELECT * FROM forms WHERE id = ?");
    app.get("/row/:id", (c) => {
      const found = row.get(c.req.param("id"));
      return found ? c.json(found) : c.json({ error: "Form not found" }, 404);
    });
  }
  return serve({ fetch: app.fetch, port, hostname: host }, (info) => listening(info.port));
}

/** The SQLite file of a DATABASE_URL (`sqlite:<file>` or a bare path), or undefined for PostgreSQL. */
export function sqliteFileOf(databaseUrl: string | undefined): string | undefined {
  if (!databaseUrl || /^postgres(ql)?:/i.test(databaseUrl)) return undefined;
  return databaseUrl.replace(/^sqlite:/i, "");
}

/** The line a process serving the bare routes beside Almoner prints; the bench reads the port from it. */
export const BARE_BESIDE_LINE = "Bare Hono routes (same process) answering on";

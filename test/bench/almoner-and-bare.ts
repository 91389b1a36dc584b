import { BARE_BESIDE_LINE, serveBare, sqliteFileOf } from "./bareApp.js";

/**
 * Almoner as `npm start` runs it (server/index.ts, unchanged), with the bench's bare routes served by the
 * same process on a port of their own: the single-form target compares `GET /v1/forms/{id}` through the
 * whole app with a bare Hono route answering a constant from the same process, so that both share one
 * heap, one event loop and one set of background timers, and only the pipeline differs. The bare routes
 * are not part of the app: the app's port answers exactly what it answers without them. On SQLite the bare
 * side also reads the app's database file (read-only) for the plain one-row route.
 */

const host = process.env.HOST ?? "127.0.0.1";
serveBare(host, 0, (port) => console.log(`${BARE_BESIDE_LINE} http://${host}:${port}`), {
  sqliteFile: sqliteFileOf(process.env.DATABASE_URL),
});
await import("../../server/index.js");

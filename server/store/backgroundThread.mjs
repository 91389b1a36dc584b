// @ts-check
/**
 * The SQLite background thread (BackgroundConnection in dialect.ts): a connection of its own to the
 * database file in workerData.file. Plain JavaScript, because worker threads are loaded by Node itself,
 * without the TypeScript loader the server runs under.
 *
 * Messages: "close" closes the connection and ends the thread; null asks for one PASSIVE checkpoint,
 * answered with { checkpointed: null } (done, or busy: the next round catches up) or
 * { checkpointed: message } (it failed); { id, statements } runs write statements, each in a transaction
 * of its own, and answers { id, error: null }, or { id, error: message } when one failed (the ones before
 * it stay committed).
 */
import { parentPort, workerData } from "node:worker_threads";
import SQLite from "better-sqlite3";

/** Prepared statements kept at most (the metrics' inserts come in a few shapes). */
const MAX_STATEMENTS = 100;

/** Write statements as [SQL text with ? placeholders, parameters]. */
/** @typedef {[string, unknown[]][]} Statements */
/** @typedef {"close" | null | { id: number, statements: Statements }} Message */

/**
 * @param {import("node:worker_threads").MessagePort} port
 * @param {string} file
 */
function serve(port, file) {
  const db = new SQLite(file);
  db.pragma("busy_timeout = 5000");
  db.pragma("synchronous = NORMAL");
  /** @type {Map<string, import("better-sqlite3").Statement>} */
  const prepared = new Map();

  /** @param {string} text */
  const statement = (text) => {
    let found = prepared.get(text);
    if (!found) {
      found = db.prepare(text);
      if (prepared.size >= MAX_STATEMENTS) prepared.clear();
      prepared.set(text, found);
    }
    return found;
  };

  port.on("message", (/** @type {Message} */ message) => {
    if (message === "close") {
      db.close();
      process.exit(0);
    }
    if (message === null) {
      try {
        db.pragma("wal_checkpoint(PASSIVE)");
        port.postMessage({ checkpointed: null });
      } catch (err) {
        const failure = /** @type {{ code?: string, message?: string }} */ (err);
        port.postMessage({ checkpointed: failure?.code === "SQLITE_BUSY" ? null : String(failure?.message) });
      }
      return;
    }
    try {
      for (const [text, params] of message.statements) statement(text).run(params);
      port.postMessage({ id: message.id, error: null });
    } catch (err) {
      port.postMessage({ id: message.id, error: String(/** @type {Error} */ (err)?.message || err) });
    }
  });
}

if (!parentPort) throw new Error("backgroundThread.mjs runs as a worker thread");
serve(parentPort, workerData.file);

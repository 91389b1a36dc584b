import { signal } from "@preact/signals";
import type * as LaterParts from "./laterParts.js";

/**
 * The parts of the checkout the first paint does not need (laterParts.ts) are a chunk of their own, kept out
 * of app.js so that the page draws and hydrates sooner. They load once the page is up and the browser is
 * idle, at once for forms whose payment fields need them (Stripe's), and at the latest when the donor
 * sends: sending waits for them, so the answer's screens are always there when the answer comes. Never
 * in the server's HTML: the server renders the page as it is before the donor acts.
 */

export type Later = typeof LaterParts;

/** The chunk once loaded; components that read it draw again when it arrives. */
export const later = signal<Later | null>(null);
let loading: Promise<Later> | undefined;

/** Loads the chunk (once; again after a failure). */
export function loadLater(): Promise<Later> {
  loading ??= import("./laterParts.js").then(
    (parts) => (later.value = parts),
    (err: unknown) => {
      loading = undefined;
      throw err;
    },
  );
  return loading;
}

/**
 * In a page (never on the server) the chunk loads once the app has started and the browser is idle: after
 * the page has hydrated, since that is the same task as this module's evaluation.
 */
if (typeof document !== "undefined") {
  const load = () => void loadLater().catch(() => {});
  if (typeof requestIdleCallback === "function") requestIdleCallback(load, { timeout: 2000 });
  else setTimeout(load, 0);
}

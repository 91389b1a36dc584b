import {
  type AlmonerMessage,
  MAX_EMBED_HEIGHT,
  MESSAGE_SOURCE,
  MESSAGE_VERSION,
} from "../../shared/messages.js";

/**
 * The checkout's side of the page ↔ iframe messages (table in shared/messages.ts). Every message goes to
 * one explicit origin: `parentOrigin` (the framing page's origin as the server found it, which survives the
 * checkout reloading itself in another language), by default the origin of `document.referrer` (the page
 * that framed the checkout); without either nothing is sent, since a message must never go to "*". Nothing
 * is sent either when the page is not framed.
 */

/** A message of the table without its envelope, which the messenger adds. */
type Outgoing<M = AlmonerMessage> = M extends AlmonerMessage
  ? Omit<M, "source" | "version" | "embedId">
  : never;

/** A sender of this embed's messages to the framing page, or undefined when there is nobody to tell. */
export function hostMessenger(embedId: string, parentOrigin?: string): ((m: Outgoing) => void) | undefined {
  const target = parentOrigin ?? originOf(document.referrer);
  if (!target || window.parent === window) return undefined;
  return (m) =>
    window.parent.postMessage({ source: MESSAGE_SOURCE, version: MESSAGE_VERSION, embedId, ...m }, target);
}

/**
 * Tells the host page how tall the checkout is whenever that changes, so the loader can size the iframe
 * and the donor never scrolls inside it. The height measured is the root element's, so the page must let
 * <html> take its content's height (no `height: 100%`). Returns a function that stops reporting.
 */
export function startHeightReporting(embedId: string, parentOrigin?: string): () => void {
  const send = hostMessenger(embedId, parentOrigin);
  if (!send) return () => {};
  let last = -1;
  const observer = new ResizeObserver(() => {
    const height = Math.min(
      Math.ceil(document.documentElement.getBoundingClientRect().height),
      MAX_EMBED_HEIGHT,
    );
    if (height === last) return;
    last = height;
    send({ type: "resize", height });
  });
  observer.observe(document.documentElement);
  return () => observer.disconnect();
}

/**
 * Everything an embedded checkout does for its host page: height reporting, and Escape pressed inside
 * the iframe (where the page cannot hear it) sent as `close`, so the overlay closes as it does for Escape
 * on its own controls; an inline embed ignores `close`. An Escape a control already handled
 * (defaultPrevented, e.g. a listbox closing) is not forwarded. Returns a function that stops both.
 */
export function connectToHost(embedId: string, parentOrigin?: string): () => void {
  const send = hostMessenger(embedId, parentOrigin);
  if (!send) return () => {};
  const stopHeight = startHeightReporting(embedId, parentOrigin);
  const onKey = (event: KeyboardEvent) => {
    if (event.key === "Escape" && !event.defaultPrevented) send({ type: "close" });
  };
  document.addEventListener("keydown", onKey);
  return () => {
    stopHeight();
    document.removeEventListener("keydown", onKey);
  };
}

function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin;
    return origin === "null" ? undefined : origin;
  } catch {
    return undefined;
  }
}

import {
  MAX_EMBED_HEIGHT,
  MESSAGE_SOURCE,
  MESSAGE_VERSION,
  type ResizeMessage,
} from "../../shared/messages.js";

/**
 * Inside the iframe: tells the host page how tall the checkout is whenever that changes, so the loader can
 * size the iframe and the donor never scrolls inside it. `parentOrigin` defaults to the origin of
 * `document.referrer`; without either nothing is sent, since a message must never go to "*".
 * The height measured is the root element's, so the page must let <html> take its content's height (no
 * `height: 100%`). Returns a function that stops reporting.
 */
export function startHeightReporting(embedId: string, parentOrigin?: string): () => void {
  const target = parentOrigin ?? originOf(document.referrer);
  if (!target || window.parent === window) return () => {};
  let last = -1;
  const observer = new ResizeObserver(() => {
    const height = Math.min(
      Math.ceil(document.documentElement.getBoundingClientRect().height),
      MAX_EMBED_HEIGHT,
    );
    if (height === last) return;
    last = height;
    const message: ResizeMessage = {
      source: MESSAGE_SOURCE,
      version: MESSAGE_VERSION,
      type: "resize",
      embedId,
      height,
    };
    window.parent.postMessage(message, target);
  });
  observer.observe(document.documentElement);
  return () => observer.disconnect();
}

function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin;
    return origin === "null" ? undefined : origin;
  } catch {
    return undefined;
  }
}

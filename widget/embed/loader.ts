import { EMBED_ID_PARAM, EMBED_ID_PATTERN, isAlmonerMessage } from "../../shared/messages.js";

/**
 * The embed loader (embed.js) that follows the iframe snippet organizations paste. It gives every
 * `<iframe data-almoner-form>` an embed instance id, sizes the iframe from the checkout's `resize`
 * messages, and re-dispatches each accepted message on the iframe as a bubbling `almoner:<type>`
 * CustomEvent (detail: the message) so the host page can react to `almoner:checkout-complete`.
 * It runs once per page however often it is included, and adopts iframes that appear later (SPAs).
 */

export interface EmbedHandle {
  id: string;
  iframe: HTMLIFrameElement;
  /** Stops listening to this iframe's messages and forgets it. */
  unmount(): void;
}

declare global {
  interface AlmonerGlobal {
    embeds?: EmbedHandle[];
  }
  interface Window {
    Almoner?: AlmonerGlobal;
  }
}

const ID_ATTR = "data-almoner-embed-id";
// Iframes already given an id are never adopted twice; one the page unmounted keeps its id and stays alone.
const UNADOPTED = `iframe[data-almoner-form]:not([${ID_ATTR}])`;

window.Almoner ??= {};
const almoner = window.Almoner;
if (!almoner.embeds) {
  const embeds: EmbedHandle[] = [];
  almoner.embeds = embeds;
  // The form host: the origin this script was served from. Only its iframes are adopted, so only its
  // messages are acted on (where the script's own address is not known, each iframe's origin is used).
  const scriptSrc = (document.currentScript as HTMLScriptElement | null)?.src;
  const formHost = scriptSrc ? new URL(scriptSrc).origin : null;

  const adopt = (iframe: HTMLIFrameElement) => {
    const src = iframe.getAttribute("src");
    if (!src) return;
    let url: URL;
    try {
      url = new URL(src, document.baseURI);
    } catch {
      return;
    }
    if ((url.protocol !== "https:" && url.protocol !== "http:") || (formHost && url.origin !== formHost))
      return;
    let id = url.searchParams.get(EMBED_ID_PARAM);
    // The snippet names its embed. Setting src reloads the iframe, so only when the id is missing, not
    // valid or already another embed's on this page (the snippet pasted twice); the id is put in place
    // of the one there, and the rest of the query stays byte for byte.
    if (!id || !EMBED_ID_PATTERN.test(id) || embeds.some((e) => e.id === id)) {
      id = Date.now().toString(36) + Math.random().toString(36).slice(2, 8);
      const param = new RegExp(`([?&]${EMBED_ID_PARAM}=)[^&]*`);
      url.search = param.test(url.search)
        ? url.search.replace(param, `$1${id}`)
        : `${url.search ? `${url.search}&` : ""}${EMBED_ID_PARAM}=${id}`;
      iframe.src = url.href;
    }
    iframe.setAttribute(ID_ATTR, id);
    const origin = url.origin;
    const onMessage = (event: MessageEvent) => {
      const message = event.data;
      if (
        event.origin !== origin ||
        !event.source ||
        event.source !== iframe.contentWindow ||
        !isAlmonerMessage(message) ||
        message.embedId !== id
      )
        return;
      if (message.type === "resize") {
        iframe.style.height = `${message.height}px`;
        // The checkout now sizes its iframe itself, so the frame never needs a scrollbar of its own (one
        // appearing while the frame catches up would narrow the content and make it reflow).
        iframe.setAttribute("scrolling", "no");
      }
      iframe.dispatchEvent(new CustomEvent(`almoner:${message.type}`, { bubbles: true, detail: message }));
    };
    window.addEventListener("message", onMessage);
    const handle: EmbedHandle = {
      id,
      iframe,
      unmount() {
        window.removeEventListener("message", onMessage);
        const i = embeds.indexOf(handle);
        if (i >= 0) embeds.splice(i, 1);
      },
    };
    embeds.push(handle);
  };

  const scan = () => {
    for (const iframe of document.querySelectorAll<HTMLIFrameElement>(UNADOPTED)) adopt(iframe);
  };

  new MutationObserver(() => {
    // An iframe the page removed is forgotten, and adopted again (same id, no reload) if it comes back.
    for (const handle of embeds.slice()) {
      if (!handle.iframe.isConnected) {
        handle.unmount();
        handle.iframe.removeAttribute(ID_ATTR);
      }
    }
    scan();
  }).observe(document, { childList: true, subtree: true });
  scan();
}

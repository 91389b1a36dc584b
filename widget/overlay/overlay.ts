import {
  type AlmonerMessage,
  EMBED_ID_PARAM,
  EMBED_ID_PATTERN as ID,
  MAX_EMBED_HEIGHT,
  MESSAGE_SOURCE,
  MESSAGE_VERSION,
} from "../../shared/messages.js";

/**
 * The overlay script (overlay.js). An organization includes it on its own pages; it opens the hosted
 * checkout (embed mode) in a modal dialog when:
 *  - the page URL has `?donate&formid=<formID>[&elementid=<linkID>]` (or `?attend…`) at load, or after
 *    in-page navigation (history.pushState / replaceState, popstate);
 *  - the donor clicks a same-origin link carrying those parameters;
 *  - the page calls `Almoner.open({ formId, elementId?, kind? })`; `Almoner.close()` closes it.
 * Closing removes those parameters from the page URL (history.replaceState; other parameters stay byte
 * for byte). The page's utm_* parameters and its `lang` (or `open`'s) are passed on to the checkout.
 *
 * The dialog (role=dialog, aria-modal, labelled) traps focus with a sentinel on each side (the checkout
 * is a cross-origin iframe, so Tab leaves it into the page), makes the rest of the page inert, focuses its
 * close button, restores focus on close, closes on Escape, on its close button and on the checkout's
 * `close` message, locks page scroll, and is full-screen on narrow screens. Messages are those of
 * shared/messages.ts, accepted only from the overlay's own iframe window on the form host's origin.
 *
 * It opens only forms of an organization whose organizationBaseURLs include this page's origin (the
 * checkout page refuses other framers with CSP frame-ancestors): for another site's form it closes again
 * and says why in the console. It asks GET /api/forms/{formID}/overlay (so a page's CSP should allow the
 * form host in connect-src; without it the modal just shows what the browser allows).
 */

export type OverlayKind = "donate" | "attend";

export interface OverlayOptions {
  formId: string;
  /** A checkout link's linkID: its prefill is applied. */
  elementId?: string;
  /** "donate" (default) or "attend" (event forms). */
  kind?: OverlayKind;
  /** The checkout's language (`es`, `ar`…); default: the page's own `?lang=`, else the donor's browser's. */
  lang?: string;
}

declare global {
  interface AlmonerGlobal {
    /** Opens the checkout of a form in the overlay (replacing one already open). */
    open?: (options: OverlayOptions) => void;
    /** Closes the overlay, restores focus and removes the overlay parameters from the page URL. */
    close?: () => void;
  }
  interface Window {
    Almoner?: AlmonerGlobal;
  }
}

/** The page URL parameters the overlay reads, and removes on close. */
const OVERLAY_PARAMS = ["donate", "attend", "formid", "elementid"];
/** The overlay's children: the focus sentinels are spans, so `>div` is the dialog and `div div` its body. */
const CSS =
  ".almoner-overlay{position:fixed;inset:0;z-index:2147483647;display:flex;background:#0009}" +
  ".almoner-overlay>div{margin:auto;display:flex;flex-direction:column;width:100%;max-width:640px;max-height:calc(100% - 32px);background:#fff;border-radius:12px}" +
  ".almoner-overlay button{align-self:flex-end;width:44px;height:44px;border:0;background:#fff;color:#000;font:28px a}" +
  ".almoner-overlay div div{overflow:auto}" +
  ".almoner-overlay iframe{display:block;width:100%;height:720px;border:0}" +
  "@media(max-width:640px){.almoner-overlay>div{min-height:100%;border-radius:0}}";

const isId = (id: unknown): id is string => typeof id === "string" && ID.test(id);

/** What a page query string asks the overlay to open, if anything. */
export function overlayRequest(search: string): OverlayOptions | undefined {
  const q = new URLSearchParams(search);
  const kind = (["donate", "attend"] as const).find((k) => q.has(k));
  const formId = q.get("formid");
  const elementId = q.get("elementid");
  if (!kind || !isId(formId)) return undefined;
  return { kind, formId, elementId: isId(elementId) ? elementId : undefined };
}

/** The query string without the overlay's parameters; every other parameter is kept as written. */
export function withoutOverlayParams(search: string): string {
  const kept = search
    .slice(1)
    .split("&")
    .filter((part) => part && !OVERLAY_PARAMS.includes(part.split("=")[0].toLowerCase()));
  return kept.length ? `?${kept.join("&")}` : "";
}

interface Open {
  root: HTMLElement;
  frame: HTMLIFrameElement;
  embedId: string;
  key: string;
  /** Opened because of the page URL: navigating to a URL without the parameters closes it. */
  fromUrl?: boolean;
}

/** Installs the overlay once per page; `formOrigin` is the origin of the hosted checkout pages. */
export function installOverlay(formOrigin: string): void {
  const w = window;
  const d = document;
  w.Almoner ??= {};
  const almoner = w.Almoner;
  if (almoner.open) return;

  let current: Open | undefined;
  let returnFocus: Element | null = null;
  let inerted: HTMLElement[] = [];
  let overflow = "";
  const history = w.history;
  const html = d.documentElement;
  const replaceState = history.replaceState;

  const el = <K extends keyof HTMLElementTagNameMap>(tag: K) => d.createElement(tag);

  const open = (options: OverlayOptions, fromUrl?: boolean, search = location.search) => {
    const { formId, elementId } = options;
    const kind = options.kind === "attend" ? "attend" : "donate";
    // Ids are strings (RegExp.test would read undefined as "undefined" and 5 as "5"); no elementId is none.
    if (!isId(formId) || !isId(elementId ?? formId)) throw TypeError("Almoner: bad id");
    // Joined, a missing elementId is empty; ids hold no comma.
    const key = String([kind, formId, elementId]);
    if (current?.key === key) return;

    if (current) current.root.remove();
    else {
      returnFocus = d.activeElement;
      overflow = html.style.overflow;
      html.style.overflow = "hidden";
      inerted = [...(d.body.children as HTMLCollectionOf<HTMLElement>)].filter((child) => !child.inert);
      for (const child of inerted) child.inert = true;
    }

    const embedId = String(Math.random()).slice(2);
    let query = `?embed=1&overlay=1&${EMBED_ID_PARAM}=${embedId}`;
    if (elementId) query += `&elementid=${elementId}`;
    const params = new URLSearchParams(search);
    if (options.lang) params.set("lang", options.lang);
    for (const [name, value] of params)
      if (/^(utm_\w+|lang)$/.test(name)) query += `&${name}=${encodeURIComponent(value)}`;
    const label = kind === "attend" ? "Event registration" : "Donation form";

    const root = el("div");
    root.className = "almoner-overlay";
    const dialog = el("div");
    dialog.role = "dialog";
    dialog.setAttribute("aria-modal", "true");
    dialog.setAttribute("aria-label", label);
    const closeButton = el("button");
    closeButton.setAttribute("aria-label", "Close");
    closeButton.append("×");
    closeButton.onclick = () => close();
    const body = el("div");
    const frame = el("iframe");
    frame.title = label;
    frame.allow = "payment";
    frame.src = `${formOrigin}/${kind}/${formId}${query}`;
    body.append(frame);
    dialog.append(closeButton, body);
    // Tab out of the iframe lands on a sentinel, which sends focus round to the other end of the dialog.
    const sentinel = (target: HTMLElement) => {
      const s = el("span");
      s.tabIndex = 0;
      s.onfocus = () => target.focus();
      return s;
    };
    const style = el("style");
    // A page whose CSP allows its scripts by nonce usually allows its styles by the same nonce.
    style.nonce = d.querySelector<HTMLScriptElement>("script[nonce]")?.nonce ?? "";
    style.textContent = CSS;
    root.append(style, sentinel(frame), dialog, sentinel(closeButton));
    d.body.append(root);
    current = { root, frame, embedId, key, fromUrl };
    closeButton.focus();
    // The checkout refuses to be framed outside its organization's sites (403), and there is nothing to show
    // of a form that does not exist (404, 410; the check answers nothing else from 403 to 410): say why
    // instead of leaving a blank modal.
    fetch(`${formOrigin}/api/forms/${formId}/overlay`).then(({ status }) => {
      if (status > 402 && status < 411 && current?.embedId === embedId) {
        close();
        console.error(
          `Almoner: form ${formId} ${status > 403 ? "does not exist" : "is not for this site (organizationBaseURLs)"}`,
        );
      }
    });
  };

  const close = (keepUrl = false) => {
    if (!current) return;
    current.root.remove();
    current = undefined;
    // `inerted` and `returnFocus` are set afresh by the next open.
    for (const child of inerted) child.inert = false;
    html.style.overflow = overflow;
    if (!keepUrl) {
      const search = withoutOverlayParams(location.search);
      if (search !== location.search)
        replaceState.call(history, history.state, "", location.pathname + search + location.hash);
    }
    (returnFocus as HTMLElement | null)?.focus?.();
  };

  const sync = () => {
    const request = overlayRequest(location.search);
    if (request) open(request, true);
    else if (current?.fromUrl) close(true);
  };

  almoner.open = (options) => open(options);
  almoner.close = () => close();

  w.addEventListener("message", (event) => {
    const message: AlmonerMessage = event.data;
    // The checks of isAlmonerMessage, cut to what this script needs: the embedId must be the one it made.
    if (
      !current ||
      event.origin !== formOrigin ||
      !event.source ||
      event.source !== current.frame.contentWindow ||
      message?.source !== MESSAGE_SOURCE ||
      message.version !== MESSAGE_VERSION ||
      message.embedId !== current.embedId ||
      (message.type === "resize" &&
        !(typeof message.height === "number" && message.height >= 0 && message.height <= MAX_EMBED_HEIGHT))
    )
      return;
    if (message.type === "resize") current.frame.style.height = `${message.height}px`;
    current.frame.dispatchEvent(
      new CustomEvent(`almoner:${message.type}`, { bubbles: true, detail: message }),
    );
    if (message.type === "close") close();
  });

  d.addEventListener("keydown", (event) => {
    if (current && event.key === "Escape") {
      event.preventDefault();
      close();
    }
  });

  d.addEventListener("click", (event) => {
    const link = (event.target as Element).closest?.<HTMLAnchorElement>("a[href]");
    if (
      !link ||
      event.defaultPrevented ||
      event.button ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey ||
      (link.target && link.target !== "_self")
    )
      return;
    const url = new URL(link.href);
    const request = url.origin === location.origin && overlayRequest(url.search);
    if (!request) return;
    event.preventDefault();
    // A link to this very page goes into the history, so Back closes the overlay again.
    if (url.pathname === location.pathname) history.pushState(history.state, "", url.href);
    else open(request, false, url.search);
  });

  for (const method of ["pushState", "replaceState"] as const) {
    const original = history[method];
    history[method] = function (this: History, ...args: Parameters<History["pushState"]>) {
      original.apply(this, args);
      sync();
    };
  }
  w.addEventListener("popstate", sync);
  if (d.readyState === "loading") d.addEventListener("DOMContentLoaded", sync);
  else sync();
}

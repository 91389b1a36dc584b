// @vitest-environment happy-dom
import nodeConsole from "node:console";
import { describe, expect, it, vi } from "vitest";
import type { EmbedHandle } from "../../widget/embed/loader.js";

/**
 * The embed loader run as the form host's `<script src=".../embed.js">` (happy-dom at
 * http://localhost:3000): it acts only on iframes, and so on messages, of the origin it was served from.
 * A file of its own: a loader once run keeps observing the page, so it must be this page's first.
 */

const FORM_ORIGIN = "https://forms.example";

function makeIframe(src: string, form: string): { iframe: HTMLIFrameElement; frameWindow: Window } {
  const iframe = document.createElement("iframe");
  iframe.setAttribute("data-almoner-form", form);
  iframe.setAttribute("src", src);
  const frameWindow = { name: `frame of ${form}` } as unknown as Window;
  Object.defineProperty(iframe, "contentWindow", { configurable: true, get: () => frameWindow });
  return { iframe, frameWindow };
}

function post(data: unknown, origin: string, source: Window | null): void {
  window.dispatchEvent(new MessageEvent("message", { data, origin, source }));
}

const embeds = (): EmbedHandle[] => window.Almoner?.embeds ?? [];

describe("embed loader served from the form host", () => {
  it("adopts only iframes on the origin it was served from: an iframe of another site is left alone", async () => {
    // happy-dom reports each iframe page it does not load on Node's console: expected here.
    const error = nodeConsole.error;
    const spy = vi.spyOn(nodeConsole, "error").mockImplementation((...args: unknown[]) => {
      if (!String(args[0]).includes("Iframe page loading is disabled")) error.apply(nodeConsole, args);
    });
    const own = makeIframe(`${FORM_ORIGIN}/donate/f9?embed=1`, "f9");
    const foreign = makeIframe("https://evil.example/donate/f9?embed=1&embedId=abc", "f9");
    document.body.append(own.iframe, foreign.iframe);
    // The loader, run as the <script src> of the form host's embed.js.
    Object.defineProperty(document, "currentScript", {
      configurable: true,
      get: () => ({ src: `${FORM_ORIGIN}/embed.js` }),
    });
    try {
      await import("../../widget/embed/loader.js");
    } finally {
      Reflect.deleteProperty(document, "currentScript");
      spy.mockRestore();
    }
    expect(own.iframe.getAttribute("data-almoner-embed-id")).toMatch(/^[\w-]{1,64}$/);
    expect(foreign.iframe.hasAttribute("data-almoner-embed-id")).toBe(false);
    expect(embeds().map((e) => e.iframe)).toEqual([own.iframe]);
    let completed = 0;
    foreign.iframe.addEventListener("almoner:checkout-complete", () => completed++);
    post(
      { source: "almoner", version: 1, type: "checkout-complete", embedId: "abc" },
      "https://evil.example",
      foreign.frameWindow,
    );
    expect(completed).toBe(0);
  });
});

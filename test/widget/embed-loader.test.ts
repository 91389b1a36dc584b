// @vitest-environment happy-dom
import nodeConsole from "node:console";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { EmbedHandle } from "../../widget/embed/loader.js";

/**
 * The embed loader on a host page (happy-dom at http://localhost:3000) holding the pasted snippet, whose
 * iframe shows a form on another origin. happy-dom does not load iframe pages, so each iframe gets a
 * stand-in contentWindow: the loader only compares it with event.source.
 */

// happy-dom reports each iframe page it does not load as an error on the console it was set up with
// (Node's own, which vitest's test console replaces); here those reports are expected.
function silenceIframeLoadErrors(): () => void {
  const error = nodeConsole.error;
  const spy = vi.spyOn(nodeConsole, "error").mockImplementation((...args: unknown[]) => {
    if (!String(args[0]).includes("Iframe page loading is disabled")) error.apply(nodeConsole, args);
  });
  return () => spy.mockRestore();
}

const FORM_ORIGIN = "https://forms.example";
const SNIPPET_SRC = `${FORM_ORIGIN}/donate/f1?embed=1&ref=a%20b#top`;

const loadLoader = async () => {
  vi.resetModules();
  await import("../../widget/embed/loader.js");
};

function makeIframe(src: string, form = "f1"): { iframe: HTMLIFrameElement; frameWindow: Window } {
  const iframe = document.createElement("iframe");
  iframe.setAttribute("data-almoner-form", form);
  iframe.setAttribute("src", src);
  iframe.style.height = "720px";
  const frameWindow = { name: `frame of ${form}` } as unknown as Window;
  Object.defineProperty(iframe, "contentWindow", { configurable: true, get: () => frameWindow });
  return { iframe, frameWindow };
}

function post(data: unknown, origin: string, source: Window | null): void {
  window.dispatchEvent(new MessageEvent("message", { data, origin, source }));
}

const resize = (embedId: string, height: unknown) => ({
  source: "almoner",
  version: 1,
  type: "resize",
  embedId,
  height,
});

const embeds = (): EmbedHandle[] => window.Almoner?.embeds ?? [];
const mutationsSettled = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("embed loader", () => {
  let first: { iframe: HTMLIFrameElement; frameWindow: Window };
  let id: string;

  let restoreConsole: () => void;

  beforeAll(async () => {
    restoreConsole = silenceIframeLoadErrors();
    first = makeIframe(SNIPPET_SRC);
    document.body.append(first.iframe);
    await loadLoader();
    id = first.iframe.getAttribute("data-almoner-embed-id") ?? "";
  });

  afterAll(() => restoreConsole());

  afterEach(async () => {
    first.iframe.style.height = "720px";
    for (const iframe of document.querySelectorAll("iframe")) if (iframe !== first.iframe) iframe.remove();
    await mutationsSettled();
  });

  it("gives the pasted iframe an embed id, in an attribute and in its src query", () => {
    expect(id).toMatch(/^[\w-]{1,64}$/);
    expect(first.iframe.getAttribute("src")).toBe(
      `${FORM_ORIGIN}/donate/f1?embed=1&ref=a%20b&embedId=${id}#top`,
    );
    expect(embeds()).toHaveLength(1);
    expect(embeds()[0]).toMatchObject({ id, iframe: first.iframe });
  });

  it("sizes the iframe from a resize message sent by its own window on its own origin", () => {
    // Until the checkout sizes it, the frame keeps its own scrollbar (a page that never reports stays usable).
    expect(first.iframe.hasAttribute("scrolling")).toBe(false);
    post(resize(id, 1234), FORM_ORIGIN, first.frameWindow);
    expect(first.iframe.style.height).toBe("1234px");
    expect(first.iframe.getAttribute("scrolling")).toBe("no");
  });

  it("re-dispatches accepted messages on the iframe for the host page", () => {
    const seen: unknown[] = [];
    const listener = (e: Event) => seen.push((e as CustomEvent).detail);
    document.addEventListener("almoner:checkout-complete", listener);
    const done = { source: "almoner", version: 1, type: "checkout-complete", embedId: id };
    post(done, FORM_ORIGIN, first.frameWindow);
    document.removeEventListener("almoner:checkout-complete", listener);
    expect(seen).toEqual([done]);
  });

  it("ignores a resize from another origin", () => {
    post(resize(id, 500), "https://evil.example", first.frameWindow);
    post(resize(id, 500), "http://forms.example", first.frameWindow);
    expect(first.iframe.style.height).toBe("720px");
  });

  it("ignores a resize from another window, or from no window, on the right origin", () => {
    post(resize(id, 500), FORM_ORIGIN, window);
    post(resize(id, 500), FORM_ORIGIN, { name: "another frame" } as unknown as Window);
    post(resize(id, 500), FORM_ORIGIN, null);
    expect(first.iframe.style.height).toBe("720px");
  });

  it("ignores malformed messages", () => {
    const { version, ...noVersion } = resize(id, 500);
    const malformed: unknown[] = [
      resize(id, "abc"),
      resize(id, "500"),
      resize(id, -1),
      resize(id, 100_001),
      resize(id, 1e300),
      resize(id, Number.NaN),
      resize(id, Number.POSITIVE_INFINITY),
      resize(id, undefined),
      noVersion,
      { ...resize(id, 500), version: 2 },
      { ...resize(id, 500), source: "other" },
      { ...resize(id, 500), type: "grow" },
      resize("x".repeat(65), 500),
      resize("other-embed", 500),
      "resize 500",
      JSON.stringify(resize(id, 500)),
      null,
      [resize(id, 500)],
    ];
    for (const data of malformed) post(data, FORM_ORIGIN, first.frameWindow);
    expect(first.iframe.style.height).toBe("720px");
  });

  it("does nothing more when loaded a second time", async () => {
    const before = embeds();
    const src = first.iframe.getAttribute("src");
    const added = vi.spyOn(window, "addEventListener");
    await loadLoader();
    expect(added).not.toHaveBeenCalled();
    added.mockRestore();
    expect(embeds()).toBe(before);
    expect(embeds()).toHaveLength(1);
    expect(first.iframe.getAttribute("src")).toBe(src);

    let resizes = 0;
    const count = () => resizes++;
    first.iframe.addEventListener("almoner:resize", count);
    post(resize(id, 900), FORM_ORIGIN, first.frameWindow);
    first.iframe.removeEventListener("almoner:resize", count);
    expect(resizes).toBe(1);
    expect(first.iframe.style.height).toBe("900px");
  });

  it("adopts iframes added later, and leaves an embed id already in the src alone", async () => {
    const later = makeIframe(`${FORM_ORIGIN}/attend/f2?embed=1`, "f2");
    const kept = makeIframe(`${FORM_ORIGIN}/donate/f3?embed=1&embedId=kept_1`, "f3");
    const wrapper = document.createElement("div");
    wrapper.append(later.iframe);
    document.body.append(wrapper, kept.iframe);
    await mutationsSettled();

    const laterId = later.iframe.getAttribute("data-almoner-embed-id") ?? "";
    expect(laterId).toMatch(/^[\w-]{1,64}$/);
    expect(laterId).not.toBe(id);
    expect(later.iframe.getAttribute("src")).toBe(`${FORM_ORIGIN}/attend/f2?embed=1&embedId=${laterId}`);
    expect(kept.iframe.getAttribute("src")).toBe(`${FORM_ORIGIN}/donate/f3?embed=1&embedId=kept_1`);
    expect(kept.iframe.getAttribute("data-almoner-embed-id")).toBe("kept_1");
    expect(embeds().map((e) => e.id)).toEqual([id, laterId, "kept_1"]);

    post(resize(laterId, 640), FORM_ORIGIN, later.frameWindow);
    post(resize("kept_1", 480), FORM_ORIGIN, kept.frameWindow);
    expect(later.iframe.style.height).toBe("640px");
    expect(kept.iframe.style.height).toBe("480px");
    // Each iframe answers only to its own window: one frame cannot resize another.
    post(resize(laterId, 10), FORM_ORIGIN, kept.frameWindow);
    expect(later.iframe.style.height).toBe("640px");

    wrapper.remove();
    kept.iframe.remove();
    await mutationsSettled();
    expect(embeds().map((e) => e.id)).toEqual([id]);
  });

  it("gives a copy of a snippet already on the page an id of its own, in place of the copied one", async () => {
    const pasted = `${FORM_ORIGIN}/donate/f9?embed=1&embedId=form-f9&ref=x`;
    const one = makeIframe(pasted, "f9");
    const two = makeIframe(pasted, "f9");
    const odd = makeIframe(`${FORM_ORIGIN}/donate/f9?embed=1&embedId=not%20valid`, "f9");
    document.body.append(one.iframe, two.iframe, odd.iframe);
    await mutationsSettled();
    // The first keeps its src as pasted (no reload); the copy and the bad id get fresh ids, the query kept.
    expect(one.iframe.getAttribute("src")).toBe(pasted);
    expect(one.iframe.getAttribute("data-almoner-embed-id")).toBe("form-f9");
    const twoId = two.iframe.getAttribute("data-almoner-embed-id") ?? "";
    expect(twoId).toMatch(/^[\w-]{1,64}$/);
    expect(twoId).not.toBe("form-f9");
    expect(two.iframe.getAttribute("src")).toBe(`${FORM_ORIGIN}/donate/f9?embed=1&embedId=${twoId}&ref=x`);
    const oddId = odd.iframe.getAttribute("data-almoner-embed-id") ?? "";
    expect(odd.iframe.getAttribute("src")).toBe(`${FORM_ORIGIN}/donate/f9?embed=1&embedId=${oddId}`);

    // Each answers to its own window and id only.
    post(resize(twoId, 410), FORM_ORIGIN, two.frameWindow);
    post(resize("form-f9", 420), FORM_ORIGIN, two.frameWindow);
    expect(two.iframe.style.height).toBe("410px");
    expect(one.iframe.style.height).toBe("720px");
    post(resize("form-f9", 430), FORM_ORIGIN, one.frameWindow);
    expect(one.iframe.style.height).toBe("430px");
  });

  it("stops listening to an iframe once its handle is unmounted, and does not adopt it again", async () => {
    const other = makeIframe(`${FORM_ORIGIN}/donate/f4?embed=1`, "f4");
    document.body.append(other.iframe);
    await mutationsSettled();
    const handle = embeds().find((e) => e.iframe === other.iframe);
    expect(handle).toBeDefined();

    handle?.unmount();
    expect(embeds().map((e) => e.iframe)).not.toContain(other.iframe);
    post(resize(handle?.id ?? "", 300), FORM_ORIGIN, other.frameWindow);
    expect(other.iframe.style.height).toBe("720px");

    document.body.append(document.createElement("p"));
    await mutationsSettled();
    expect(embeds().map((e) => e.iframe)).not.toContain(other.iframe);
  });

  it("adopts an iframe the page removed and put back, with the same id and without reloading it", async () => {
    const moved = makeIframe(`${FORM_ORIGIN}/donate/f7?embed=1`, "f7");
    document.body.append(moved.iframe);
    await mutationsSettled();
    const movedId = moved.iframe.getAttribute("data-almoner-embed-id") ?? "";
    const src = moved.iframe.getAttribute("src");
    moved.iframe.remove();
    await mutationsSettled();
    expect(embeds().map((e) => e.iframe)).not.toContain(moved.iframe);

    document.body.append(moved.iframe);
    await mutationsSettled();
    expect(moved.iframe.getAttribute("src")).toBe(src);
    expect(embeds().find((e) => e.iframe === moved.iframe)?.id).toBe(movedId);
    post(resize(movedId, 333), FORM_ORIGIN, moved.frameWindow);
    expect(moved.iframe.style.height).toBe("333px");
  });

  it("ignores messages without a source window while the iframe has no window", async () => {
    const unloaded = makeIframe(`${FORM_ORIGIN}/donate/f8?embed=1`, "f8");
    Object.defineProperty(unloaded.iframe, "contentWindow", { configurable: true, get: () => null });
    document.body.append(unloaded.iframe);
    await mutationsSettled();
    const unloadedId = unloaded.iframe.getAttribute("data-almoner-embed-id") ?? "";
    post(resize(unloadedId, 300), FORM_ORIGIN, null);
    expect(unloaded.iframe.style.height).toBe("720px");
  });

  it("leaves iframes without an http(s) src alone", async () => {
    const blank = makeIframe("about:blank", "f5");
    const none = makeIframe("", "f6");
    none.iframe.removeAttribute("src");
    document.body.append(blank.iframe, none.iframe);
    await mutationsSettled();
    expect(blank.iframe.getAttribute("src")).toBe("about:blank");
    expect(none.iframe.hasAttribute("src")).toBe(false);
    expect(embeds()).toHaveLength(1);
  });
});

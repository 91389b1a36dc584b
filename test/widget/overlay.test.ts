// @vitest-environment happy-dom
import nodeConsole from "node:console";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { installOverlay, overlayRequest, withoutOverlayParams } from "../../widget/overlay/overlay.js";

/**
 * The overlay script on an organization's page (happy-dom at http://localhost:3000/giving) whose checkout
 * pages live on another origin. happy-dom does not load iframe pages, so each overlay iframe gets a
 * stand-in contentWindow: the overlay only compares it with event.source.
 */

const FORM_ORIGIN = "https://forms.example";
const FORM = "6f1c2a9e-3b4d-4c8e-9f00-112233445566";
const LINK = "0a1b2c3d-4e5f-4a6b-8c7d-8e9f00112233";

describe("overlay URL parameters", () => {
  it("reads ?donate / ?attend with formid and an optional elementid", () => {
    expect(overlayRequest(`?donate&formid=${FORM}&elementid=${LINK}`)).toEqual({
      kind: "donate",
      formId: FORM,
      elementId: LINK,
    });
    expect(overlayRequest(`?attend&formid=${FORM}`)).toEqual({ kind: "attend", formId: FORM });
    expect(overlayRequest(`?x=1&donate=&formid=${FORM}&utm_source=mail`)).toEqual({
      kind: "donate",
      formId: FORM,
    });
  });

  it("asks for nothing without a kind or a well-formed formid, and drops a malformed elementid", () => {
    expect(overlayRequest(`?formid=${FORM}`)).toBeUndefined();
    expect(overlayRequest("?donate")).toBeUndefined();
    expect(overlayRequest("?donate&formid=")).toBeUndefined();
    expect(overlayRequest("?donate&formid=../../v1/forms")).toBeUndefined();
    expect(overlayRequest(`?donate&formid=${"a".repeat(65)}`)).toBeUndefined();
    expect(overlayRequest("")).toBeUndefined();
    expect(overlayRequest(`?donate&formid=${FORM}&elementid=%3Cx%3E`)).toEqual({
      kind: "donate",
      formId: FORM,
    });
  });

  it("removes only the overlay's parameters and keeps the others as written", () => {
    expect(withoutOverlayParams(`?donate&formid=${FORM}&elementid=${LINK}`)).toBe("");
    expect(withoutOverlayParams(`?a=1&attend&formid=${FORM}&flag&b=x%20y&utm_source=mail`)).toBe(
      "?a=1&flag&b=x%20y&utm_source=mail",
    );
    expect(withoutOverlayParams("?Donate=&FormId=x&keep=1")).toBe("?keep=1");
    expect(withoutOverlayParams("")).toBe("");
    expect(withoutOverlayParams("?")).toBe("");
  });
});

// happy-dom reports each iframe page it does not load as an error on Node's console; expected here.
function silenceIframeLoadErrors(): () => void {
  const error = nodeConsole.error;
  const spy = vi.spyOn(nodeConsole, "error").mockImplementation((...args: unknown[]) => {
    if (!String(args[0]).includes("Iframe page loading is disabled")) error.apply(nodeConsole, args);
  });
  return () => spy.mockRestore();
}

const overlay = () => document.querySelector<HTMLElement>(".almoner-overlay");
const dialog = () => document.querySelector<HTMLElement>('[role="dialog"]');
const frame = () => dialog()?.querySelector("iframe") ?? null;
const closeButton = () => dialog()?.querySelector("button") ?? null;
const url = () => location.pathname + location.search + location.hash;

/** Gives the open overlay's iframe a stand-in window and returns it with the embed id of its src. */
function frameWindow(): { win: Window; embedId: string } {
  const iframe = frame();
  if (!iframe) throw new Error("the overlay is not open");
  const win = { name: "checkout frame" } as unknown as Window;
  Object.defineProperty(iframe, "contentWindow", { configurable: true, get: () => win });
  const embedId = new URL(iframe.src).searchParams.get("embedId") ?? "";
  return { win, embedId };
}

function post(data: unknown, origin: string, source: Window | null): void {
  window.dispatchEvent(new MessageEvent("message", { data, origin, source }));
}

const message = (type: string, embedId: string, extra: Record<string, unknown> = {}) => ({
  source: "almoner",
  version: 1,
  type,
  embedId,
  ...extra,
});

function press(key: string, target: EventTarget = document.activeElement ?? document.body): KeyboardEvent {
  const event = new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true });
  target.dispatchEvent(event);
  return event;
}

describe("overlay script", () => {
  let restoreConsole: () => void;
  let opener: HTMLButtonElement;
  let main: HTMLElement;

  /** What the form host answers overlay.js's question "may this site open the form?". */
  let siteCheck = 204;
  const asked: string[] = [];

  beforeAll(() => {
    restoreConsole = silenceIframeLoadErrors();
    vi.stubGlobal("fetch", async (input: string) => {
      asked.push(String(input));
      return new Response(null, { status: siteCheck });
    });
    document.body.innerHTML =
      '<main><h1>Our work</h1><button id="opener">Give</button>' +
      `<a id="same" href="/giving?donate&formid=${FORM}&elementid=${LINK}">Give now</a>` +
      `<a id="other-page" href="/events?attend&formid=${FORM}&utm_campaign=gala">Tickets</a>` +
      `<a id="foreign" href="https://elsewhere.example/x?donate&formid=${FORM}">Elsewhere</a>` +
      `<a id="new-tab" target="_blank" href="/giving?donate&formid=${FORM}">New tab</a>` +
      '<a id="plain" href="/about">About</a></main>';
    main = document.querySelector("main") as HTMLElement;
    opener = document.getElementById("opener") as HTMLButtonElement;
    opener.focus();
    history.replaceState(
      null,
      "",
      `/giving?ref=home&donate&formid=${FORM}&elementid=${LINK}&utm_source=news#top`,
    );
    installOverlay(FORM_ORIGIN);
  });

  afterAll(() => {
    restoreConsole();
    vi.unstubAllGlobals();
  });

  afterEach(() => {
    window.Almoner?.close?.();
    history.replaceState(null, "", "/giving");
    opener.focus();
  });

  it("opens on load for ?donate&formid&elementid as a labelled modal dialog, and closes on Escape", () => {
    const iframe = frame();
    expect(iframe).not.toBeNull();
    const src = new URL(iframe?.src ?? "");
    expect(src.origin + src.pathname).toBe(`${FORM_ORIGIN}/donate/${FORM}`);
    expect(src.searchParams.get("embed")).toBe("1");
    expect(src.searchParams.get("elementid")).toBe(LINK);
    expect(src.searchParams.get("utm_source")).toBe("news");
    expect(src.searchParams.get("ref")).toBeNull();
    expect(src.searchParams.get("embedId")).toMatch(/^[\w-]{1,64}$/);
    expect(iframe?.title).toBe("Donation form");
    expect(iframe?.getAttribute("allow")).toBe("payment");

    // A labelled modal dialog that takes focus, makes the page inert and locks its scroll.
    const d = dialog();
    expect(d?.getAttribute("aria-modal")).toBe("true");
    expect(d?.getAttribute("aria-label")).toBe("Donation form");
    expect(closeButton()?.getAttribute("aria-label")).toBe("Close");
    expect(document.activeElement).toBe(closeButton());
    expect(main.inert).toBe(true);
    expect(overlay()?.inert).toBe(false);
    expect(document.documentElement.style.overflow).toBe("hidden");

    // Escape closes it: focus, page and scroll come back, and only its parameters leave the URL.
    const event = press("Escape");
    expect(event.defaultPrevented).toBe(true);
    expect(overlay()).toBeNull();
    expect(document.activeElement).toBe(opener);
    expect(main.inert).toBe(false);
    expect(document.documentElement.style.overflow).toBe("");
    expect(url()).toBe("/giving?ref=home&utm_source=news#top");
    // Escape with nothing open is left to the page.
    expect(press("Escape").defaultPrevented).toBe(false);
  });

  it("asks the form host whether this site may open the form, and closes with a console message when not", async () => {
    asked.length = 0;
    siteCheck = 403;
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      window.Almoner?.open?.({ formId: FORM });
      expect(asked).toEqual([`${FORM_ORIGIN}/api/forms/${FORM}/overlay`]);
      await vi.waitFor(() => expect(overlay()).toBeNull());
      expect(error).toHaveBeenCalledWith(expect.stringContaining(`form ${FORM} is not for this site`));
      expect(error.mock.calls[0]?.[0]).toContain("organizationBaseURLs");
    } finally {
      siteCheck = 204;
      error.mockRestore();
    }
    window.Almoner?.open?.({ formId: FORM });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(overlay()).not.toBeNull();
  });

  it("closes with a console message when the form does not exist (404) or was deleted (410)", async () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      for (const status of [404, 410]) {
        siteCheck = status;
        error.mockClear();
        window.Almoner?.open?.({ formId: FORM });
        expect(overlay()).not.toBeNull();
        await vi.waitFor(() => expect(overlay()).toBeNull());
        expect(error).toHaveBeenCalledWith(`Almoner: form ${FORM} does not exist`);
        expect(main.inert).toBe(false);
      }
    } finally {
      siteCheck = 204;
      error.mockRestore();
    }
  });

  it("opens on pushState and replaceState to a URL with the parameters", () => {
    history.pushState(null, "", `/giving?attend&formid=${FORM}`);
    expect(dialog()?.getAttribute("aria-label")).toBe("Event registration");
    expect(new URL(frame()?.src ?? "").pathname).toBe(`/attend/${FORM}`);
    window.Almoner?.close?.();
    expect(overlay()).toBeNull();
    expect(url()).toBe("/giving");

    history.replaceState(null, "", `/giving?donate&formid=${FORM}`);
    expect(new URL(frame()?.src ?? "").pathname).toBe(`/donate/${FORM}`);
  });

  it("keeps the open checkout when the URL is set again to the same request", () => {
    history.pushState(null, "", `/giving?donate&formid=${FORM}&elementid=${LINK}`);
    const first = frame();
    history.replaceState({ step: 2 }, "", `/giving?donate&formid=${FORM}&elementid=${LINK}&x=1`);
    expect(frame()).toBe(first);
    expect(document.querySelectorAll(".almoner-overlay")).toHaveLength(1);
  });

  it("opens on popstate to a URL with the parameters, and closes on popstate to one without", async () => {
    history.pushState(null, "", "/giving?page=2");
    expect(overlay()).toBeNull();
    history.pushState(null, "", `/giving?donate&formid=${FORM}`);
    expect(overlay()).not.toBeNull();
    const popped = new Promise((resolve) => window.addEventListener("popstate", resolve, { once: true }));
    history.back();
    await popped;
    expect(url()).toBe("/giving?page=2");
    expect(overlay()).toBeNull();
    expect(document.activeElement).toBe(opener);

    const again = new Promise((resolve) => window.addEventListener("popstate", resolve, { once: true }));
    history.forward();
    await again;
    expect(new URL(frame()?.src ?? "").pathname).toBe(`/donate/${FORM}`);
  });

  it("opens for a click on a link to this page with the parameters, and puts it in the history", () => {
    const link = document.getElementById("same") as HTMLAnchorElement;
    const length = history.length;
    const click = new MouseEvent("click", { bubbles: true, cancelable: true });
    link.dispatchEvent(click);
    expect(click.defaultPrevented).toBe(true);
    expect(url()).toBe(`/giving?donate&formid=${FORM}&elementid=${LINK}`);
    expect(history.length).toBe(length + 1);
    expect(new URL(frame()?.src ?? "").searchParams.get("elementid")).toBe(LINK);
  });

  it("opens for a link to another page of the site without navigating, with the link's UTM parameters", () => {
    const link = document.getElementById("other-page") as HTMLAnchorElement;
    const click = new MouseEvent("click", { bubbles: true, cancelable: true });
    link.dispatchEvent(click);
    expect(click.defaultPrevented).toBe(true);
    expect(url()).toBe("/giving");
    const src = new URL(frame()?.src ?? "");
    expect(src.pathname).toBe(`/attend/${FORM}`);
    expect(src.searchParams.get("utm_campaign")).toBe("gala");
  });

  it("passes only UTM parameters with plain names: a name carrying its own '&' or '=' adds nothing to the checkout", () => {
    const smuggled = encodeURIComponent(
      "utm_x=1&elementid=eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee&parentOrigin=https://evil.example#",
    );
    history.pushState(null, "", `/giving?donate&formid=${FORM}&utm_medium=mail&${smuggled}=2`);
    const src = new URL(frame()?.src ?? "");
    expect(src.searchParams.get("utm_medium")).toBe("mail");
    expect(src.searchParams.get("elementid")).toBeNull();
    expect(src.searchParams.get("parentOrigin")).toBeNull();
    expect(src.searchParams.get("utm_x")).toBeNull();
    expect(src.hash).toBe("");
  });

  it("leaves other clicks to the browser: other origins, new tabs, modified clicks, plain links", () => {
    const clicks: [string, MouseEventInit][] = [
      ["foreign", {}],
      ["new-tab", {}],
      ["same", { ctrlKey: true }],
      ["same", { metaKey: true }],
      ["same", { shiftKey: true }],
      ["same", { button: 1 }],
      ["plain", {}],
    ];
    for (const [id, init] of clicks) {
      const click = new MouseEvent("click", { bubbles: true, cancelable: true, ...init });
      // Keeps happy-dom from following the link.
      const stop = (e: Event) => {
        if (e === click) e.preventDefault();
      };
      window.addEventListener("click", stop);
      const before = click.defaultPrevented;
      document.getElementById(id)?.dispatchEvent(click);
      window.removeEventListener("click", stop);
      expect(before, id).toBe(false);
      expect(overlay(), `${id} ${JSON.stringify(init)}`).toBeNull();
    }
  });

  it("opens the checkout in the page's ?lang= language, or the one Almoner.open names", () => {
    history.replaceState(null, "", `/giving?lang=es&donate&formid=${FORM}`);
    expect(new URL(frame()?.src ?? "").searchParams.get("lang")).toBe("es");
    window.Almoner?.close?.();
    window.Almoner?.open?.({ formId: FORM, lang: "ar" });
    expect(new URL(frame()?.src ?? "").searchParams.get("lang")).toBe("ar");
    window.Almoner?.close?.();
    expect(url()).toBe("/giving?lang=es");
    history.replaceState(null, "", "/giving");
    window.Almoner?.open?.({ formId: FORM });
    expect(new URL(frame()?.src ?? "").searchParams.has("lang")).toBe(false);
  });

  it("opens and closes through Almoner.open and Almoner.close, replacing a checkout already open", () => {
    history.replaceState(null, "", "/giving?utm_medium=email");
    window.Almoner?.open?.({ formId: FORM });
    const first = frame();
    expect(new URL(first?.src ?? "").pathname).toBe(`/donate/${FORM}`);
    expect(new URL(first?.src ?? "").searchParams.get("utm_medium")).toBe("email");
    expect(new URL(first?.src ?? "").searchParams.has("elementid")).toBe(false);

    window.Almoner?.open?.({ formId: FORM, elementId: LINK, kind: "attend" });
    expect(document.querySelectorAll(".almoner-overlay")).toHaveLength(1);
    expect(first?.isConnected).toBe(false);
    expect(new URL(frame()?.src ?? "").pathname).toBe(`/attend/${FORM}`);
    expect(main.inert).toBe(true);

    window.Almoner?.close?.();
    expect(overlay()).toBeNull();
    expect(main.inert).toBe(false);
    expect(document.activeElement).toBe(opener);
    expect(document.documentElement.style.overflow).toBe("");
    expect(url()).toBe("/giving?utm_medium=email");
  });

  it("refuses ids that are not ids", () => {
    const open = window.Almoner?.open;
    expect(() => open?.({ formId: "../x" })).toThrow(TypeError);
    expect(() => open?.({ formId: FORM, elementId: "a b" })).toThrow(TypeError);
    // Only strings: not a missing formId (RegExp.test would read "undefined") nor a number.
    expect(() => open?.({} as never)).toThrow(TypeError);
    expect(() => open?.({ formId: undefined } as never)).toThrow(TypeError);
    expect(() => open?.({ formId: 12345 } as never)).toThrow(TypeError);
    expect(() => open?.({ formId: FORM, elementId: 7 } as never)).toThrow(TypeError);
    expect(() => open?.({ formId: FORM, elementId: "" })).toThrow(TypeError);
    expect(overlay()).toBeNull();
  });

  it("closes on its close button", () => {
    history.pushState(null, "", `/giving?donate&formid=${FORM}`);
    closeButton()?.click();
    expect(overlay()).toBeNull();
    expect(url()).toBe("/giving");
    expect(document.activeElement).toBe(opener);
  });

  it("traps focus: Tab out of either end of the dialog comes back in at the other end", () => {
    window.Almoner?.open?.({ formId: FORM });
    const root = overlay() as HTMLElement;
    const sentinels = [...root.children].filter((el) => el.getAttribute("tabindex") === "0") as HTMLElement[];
    expect(sentinels).toHaveLength(2);
    // Order: sentinel, dialog, sentinel.
    expect(sentinels[0].nextElementSibling).toBe(dialog());
    expect(dialog()?.nextElementSibling).toBe(sentinels[1]);
    // Tab past the iframe's last control lands on the closing sentinel: focus goes to the close button.
    sentinels[1].focus();
    expect(document.activeElement).toBe(closeButton());
    // Shift+Tab before the close button lands on the opening sentinel: focus goes into the checkout.
    sentinels[0].focus();
    expect(document.activeElement).toBe(frame());
  });

  it("sizes its iframe from resize messages of its own checkout on the form origin only", () => {
    window.Almoner?.open?.({ formId: FORM });
    const { win, embedId } = frameWindow();
    const iframe = frame() as HTMLIFrameElement;
    const before = iframe.style.height;
    post(message("resize", embedId, { height: 900 }), "https://evil.example", win);
    post(message("resize", embedId, { height: 900 }), "http://forms.example", win);
    post(message("resize", embedId, { height: 900 }), FORM_ORIGIN, window);
    post(message("resize", embedId, { height: 900 }), FORM_ORIGIN, null);
    post(message("resize", "another-embed", { height: 900 }), FORM_ORIGIN, win);
    post({ ...message("resize", embedId, { height: 900 }), version: 2 }, FORM_ORIGIN, win);
    post({ ...message("resize", embedId, { height: 900 }), source: "other" }, FORM_ORIGIN, win);
    for (const height of ["900", -1, 100_001, Number.NaN, Number.POSITIVE_INFINITY, undefined])
      post(message("resize", embedId, { height }), FORM_ORIGIN, win);
    post(null, FORM_ORIGIN, win);
    post("resize", FORM_ORIGIN, win);
    expect(iframe.style.height).toBe(before);

    post(message("resize", embedId, { height: 1234 }), FORM_ORIGIN, win);
    expect(iframe.style.height).toBe("1234px");
  });

  it("closes on the checkout's close message, and only from its own checkout", () => {
    history.pushState(null, "", `/giving?donate&formid=${FORM}&elementid=${LINK}`);
    const { win, embedId } = frameWindow();
    post(message("close", embedId), "https://evil.example", win);
    post(message("close", "someone-else"), FORM_ORIGIN, win);
    post(message("close", embedId), FORM_ORIGIN, { name: "another frame" } as unknown as Window);
    expect(overlay()).not.toBeNull();
    post(message("close", embedId), FORM_ORIGIN, win);
    expect(overlay()).toBeNull();
    expect(url()).toBe("/giving");
    expect(document.activeElement).toBe(opener);
  });

  it("tells the page about a completed checkout with a bubbling almoner:checkout-complete event", () => {
    window.Almoner?.open?.({ formId: FORM });
    const { win, embedId } = frameWindow();
    const seen: unknown[] = [];
    const listener = (e: Event) => seen.push((e as CustomEvent).detail);
    document.addEventListener("almoner:checkout-complete", listener);
    post(message("checkout-complete", embedId), "https://evil.example", win);
    post(message("checkout-complete", embedId), FORM_ORIGIN, win);
    document.removeEventListener("almoner:checkout-complete", listener);
    expect(seen).toEqual([message("checkout-complete", embedId)]);
    expect(overlay()).not.toBeNull();
  });

  it("installs once however often the script runs", () => {
    const open = window.Almoner?.open;
    const pushState = history.pushState;
    installOverlay(FORM_ORIGIN);
    expect(window.Almoner?.open).toBe(open);
    expect(history.pushState).toBe(pushState);
    history.pushState(null, "", `/giving?donate&formid=${FORM}`);
    expect(document.querySelectorAll(".almoner-overlay")).toHaveLength(1);
    press("Escape");
    expect(overlay()).toBeNull();
  });
});

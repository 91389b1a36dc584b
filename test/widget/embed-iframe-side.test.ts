// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { connectToHost, startHeightReporting } from "../../widget/embed/iframe-side.js";

/**
 * The checkout's side of the messages, in a page framed by a host page on another origin. happy-dom has
 * no parent frame and no working ResizeObserver, so both are stand-ins: a parent whose postMessage is
 * recorded, and an observer whose callback the test runs after setting the page's height.
 */

const HOST = "https://host.example";

let posted: [unknown, string][];
let observers: (() => void)[];
let height: number;

beforeEach(() => {
  posted = [];
  observers = [];
  height = 800;
  const parent = { postMessage: (data: unknown, origin: string) => posted.push([data, origin]) };
  Object.defineProperty(window, "parent", { configurable: true, get: () => parent });
  vi.stubGlobal(
    "ResizeObserver",
    class {
      constructor(private readonly callback: () => void) {}
      observe() {
        observers.push(this.callback);
      }
      disconnect() {
        observers = observers.filter((cb) => cb !== this.callback);
      }
    },
  );
  vi.spyOn(document.documentElement, "getBoundingClientRect").mockImplementation(
    () => ({ height }) as DOMRect,
  );
});

afterEach(() => {
  Object.defineProperty(window, "parent", { configurable: true, get: () => window });
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

const resized = () => {
  for (const cb of observers) cb();
};
const pressEscape = (cancelled = false) => {
  const event = new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true });
  if (cancelled) event.preventDefault();
  document.body.dispatchEvent(event);
};

describe("iframe side", () => {
  it("reports the page height, rounded up, to the host's origin only, and only when it changes", () => {
    const stop = startHeightReporting("e1", HOST);
    height = 800.2;
    resized();
    resized();
    height = 1200;
    resized();
    expect(posted).toEqual([
      [{ source: "almoner", version: 1, embedId: "e1", type: "resize", height: 801 }, HOST],
      [{ source: "almoner", version: 1, embedId: "e1", type: "resize", height: 1200 }, HOST],
    ]);
    stop();
    height = 10;
    resized();
    expect(posted).toHaveLength(2);
  });

  it("caps the reported height at the table's maximum", () => {
    startHeightReporting("e1", HOST)();
    const stop = startHeightReporting("e2", HOST);
    height = 5_000_000;
    resized();
    expect(posted).toEqual([
      [{ source: "almoner", version: 1, embedId: "e2", type: "resize", height: 100_000 }, HOST],
    ]);
    stop();
  });

  it("sends nothing without a known parent origin, and nothing when not framed", () => {
    // happy-dom's document.referrer is empty: no origin to send to, and never "*".
    startHeightReporting("e1");
    connectToHost("e1");
    resized();
    pressEscape();
    Object.defineProperty(window, "parent", { configurable: true, get: () => window });
    const stop = connectToHost("e1", HOST);
    resized();
    pressEscape();
    stop();
    expect(posted).toEqual([]);
  });

  it("sends Escape pressed inside the checkout as close, unless a control already handled it", () => {
    const stop = connectToHost("e9", HOST);
    pressEscape(true);
    expect(posted).toEqual([]);
    pressEscape();
    expect(posted).toEqual([[{ source: "almoner", version: 1, embedId: "e9", type: "close" }, HOST]]);
    resized();
    expect(posted[1]).toEqual([
      { source: "almoner", version: 1, embedId: "e9", type: "resize", height: 800 },
      HOST,
    ]);
    stop();
    pressEscape();
    resized();
    expect(posted).toHaveLength(2);
  });
});

import { hydrate } from "preact";
import { App } from "./App.js";
import { loadLater } from "./later.js";
import type { Checkout } from "./store.js";

/**
 * Takes over the server-rendered checkout in `root`: hydrates it, catches up with anything the donor did
 * before the script arrived, enables the button and starts quoting. Returns a function that stops quoting.
 */
export function takeOver(root: HTMLElement, c: Checkout, embedded: boolean): () => void {
  // What only sending needs is a second chunk (later.ts), loaded when the browser is idle; Stripe's fields
  // need it at once, so for them it is on its way while the page hydrates.
  if (c.view.payment?.processor === "stripe") void loadLater().catch(() => {});
  hydrate(<App c={c} embedded={embedded} />, root);
  const replay = () => replayEarlyInput(root);
  replay();
  // Coming Back to the page, the browser puts the donor's choices back after the load event, then says
  // `pageshow`: they are replayed then too, so what is shown is what is priced and sent.
  addEventListener("pageshow", replay);
  c.ready.value = true;
  // For `npm run bench` (test/bench/widget.ts): the moment the checkout became usable.
  performance.mark("almoner:hydrated");
  return c.start();
}

/**
 * What the donor typed or chose before the app took over (hydration leaves the DOM's values alone) is
 * replayed as the events it would have sent, so the state matches what the page shows.
 */
function replayEarlyInput(root: HTMLElement): void {
  for (const el of root.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>(
    "input,select,textarea",
  )) {
    let changed: string | null = null;
    if (el instanceof HTMLInputElement && el.type === "radio")
      changed = el.checked && !el.defaultChecked ? "change" : null;
    else if (el instanceof HTMLInputElement && el.type === "checkbox")
      changed = el.checked !== el.defaultChecked ? "change" : null;
    else if (el instanceof HTMLSelectElement)
      changed = [...el.options].some((o) => o.selected !== o.defaultSelected) ? "change" : null;
    else changed = el.value !== el.defaultValue ? "input" : null;
    if (changed) el.dispatchEvent(new Event(changed, { bubbles: true }));
  }
}

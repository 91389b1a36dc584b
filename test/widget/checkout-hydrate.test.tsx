// @vitest-environment happy-dom
import { fireEvent, screen, waitFor } from "@testing-library/preact";
import { hydrate, render } from "preact";
import { renderToString } from "preact-render-to-string";
import { afterEach, describe, expect, it } from "vitest";
import { App } from "../../widget/app/App.js";
import { createCheckout } from "../../widget/app/store.js";
import { fakeApi, formView, quote } from "./support/checkout.js";

/**
 * The hosted page's HTML is the checkout's own components rendered on the server; in the browser the app
 * takes over that very DOM (hydration) rather than drawing it again, and starts from the server's quote.
 */

let root: HTMLElement;
afterEach(() => {
  render(null, root);
  root.remove();
});

describe("server-rendered checkout", () => {
  it("hydrates the server's HTML in place and becomes interactive without asking for the initial quote again", async () => {
    const view = formView({ frequencies: ["ONE_TIME", "MONTHLY"], defaultAmount: 50 });
    const order = JSON.stringify({ frequency: "ONE_TIME", fund: "General", amount: 50 });
    const initial = quote(
      {},
      {
        total: 50,
        subtotal: 50,
        lines: [{ kind: "donation", label: "Donation", unitPrice: 50, quantity: 1, amount: 50 }],
      },
    );
    const boot = { view, quote: { order, quote: initial } };

    const html = renderToString(<App c={createCheckout(boot)} />);
    root = document.createElement("main");
    root.innerHTML = html;
    document.body.append(root);
    const before = root.innerHTML;
    const heading = root.querySelector("h1");
    const amountRadio = root.querySelector('input[value="50"]');
    expect(root.querySelector("button[type=submit]")?.textContent).toBe("Donate $50");

    const api = fakeApi();
    const c = createCheckout(boot, { fetch: api.fetch, quoteDelayMs: 0 });
    hydrate(<App c={c} />, root);
    c.start();
    expect(root.innerHTML).toBe(before);
    expect(root.querySelector("h1")).toBe(heading);
    expect(root.querySelector('input[value="50"]')).toBe(amountRadio);
    await new Promise((r) => setTimeout(r, 20));
    expect(api.quotes()).toHaveLength(0);

    fireEvent.click(screen.getByRole("radio", { name: "Monthly" }));
    fireEvent.click(screen.getByRole("radio", { name: /^\$20/ }));
    await waitFor(() => expect(screen.getByRole("button", { name: "Donate $20 monthly" })).toBeTruthy());
    await waitFor(() => expect(api.quotes()).toHaveLength(1));
  });
});

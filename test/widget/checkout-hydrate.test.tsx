// @vitest-environment happy-dom
import { fireEvent, screen, waitFor } from "@testing-library/preact";
import { render } from "preact";
import { renderToString } from "preact-render-to-string";
import { afterEach, describe, expect, it } from "vitest";
import { App } from "../../widget/app/App.js";
import { takeOver } from "../../widget/app/hydrate.js";
import { createCheckout } from "../../widget/app/store.js";
import { fakeApi, formView, quote } from "./support/checkout.js";

/**
 * The hosted page's HTML is the checkout's own components rendered on the server; in the browser the app
 * takes over that very DOM (hydration) rather than drawing it again, and starts from the server's quote.
 */

let root: HTMLElement;
const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
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
    const button = root.querySelector("button[type=submit]") as HTMLButtonElement;
    expect(button.textContent).toBe("Donate $50");
    // Until the app takes over, the bare form cannot be submitted.
    expect(button.disabled).toBe(true);

    const api = fakeApi();
    const c = createCheckout(boot, { fetch: api.fetch, quoteDelayMs: 0 });
    const stop = takeOver(root, c, false);
    stops.push(stop);
    expect(root.innerHTML).toBe(before);
    await waitFor(() => expect(button.disabled).toBe(false));
    expect(root.querySelector("h1")).toBe(heading);
    expect(root.querySelector('input[value="50"]')).toBe(amountRadio);
    await new Promise((r) => setTimeout(r, 20));
    expect(api.quotes()).toHaveLength(0);

    fireEvent.click(screen.getByRole("radio", { name: "Monthly" }));
    fireEvent.click(screen.getByRole("radio", { name: /^\$20/ }));
    await waitFor(() => expect(screen.getByRole("button", { name: "Donate $20 monthly" })).toBeTruthy());
    await waitFor(() => expect(api.quotes()).toHaveLength(1));
  });

  it("keeps what the donor typed and chose before the app took over", async () => {
    const view = formView({ frequencies: ["ONE_TIME", "MONTHLY"], defaultAmount: 50 });
    root = document.createElement("main");
    root.innerHTML = renderToString(<App c={createCheckout({ view })} />);
    document.body.append(root);
    // The donor, on the server's HTML: Monthly, $20, a first name, a fund-free form, a card number.
    const monthly = root.querySelector('input[value="MONTHLY"]') as HTMLInputElement;
    monthly.checked = true;
    (root.querySelector("#alm-firstName") as HTMLInputElement).value = "Ada";
    (root.querySelector("#alm-cardNumber") as HTMLInputElement).value = "4242424242424242";

    const api = fakeApi();
    const c = createCheckout({ view }, { fetch: api.fetch, quoteDelayMs: 0 });
    stops.push(takeOver(root, c, false));
    expect(c.frequency.value).toBe("MONTHLY");
    expect(c.text.firstName.value).toBe("Ada");
    expect(c.text.cardNumber.value).toBe("4242424242424242");
    // The monthly presets replaced the one-time ones, as a click would have.
    await waitFor(() => expect(screen.getByRole("radio", { name: /^\$10/ })).toBeTruthy());
    expect(c.text.lastName.value).toBe("");
  });
});

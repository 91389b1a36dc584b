// @vitest-environment happy-dom
import { cleanup, fireEvent, render, screen, within } from "@testing-library/preact";
import { afterEach, describe, expect, it, vi } from "vitest";
import { messagesFor, translator } from "../../server/i18n.js";
import type { Language } from "../../shared/languages.js";
import type { Gifts, Subscription } from "../../widget/portal/api.js";
import { setPortalLocale } from "../../widget/portal/i18n.js";
import { Portal } from "../../widget/portal/Portal.js";

/**
 * A recurring gift's frequency choice in the portal is what the server says its form takes (the gifts
 * answer's `frequencies`), and a refused change shows the server's reasons (`details`) in any language.
 */

function speak(language: Language) {
  setPortalLocale({
    language,
    messages: { ...messagesFor(language, "portal."), ...messagesFor(language, "checkout.frequency.") },
  });
}

const sub = (id: string, frequencies: string[], frequency = "MONTHLY"): Subscription => ({
  id,
  status: "ACTIVE",
  amount: 25,
  currency: "USD",
  frequency,
  nextBillingDate: "2026-02-28T10:00:00.000Z",
  fund: "",
  email: "ada@example.org",
  paymentMethod: { type: "card", brand: "Visa", last4: "4242" },
  frequencies,
});

/** Renders the portal signed in with `subscriptions`; a PUT is answered with `change`. */
async function portalWith(subscriptions: Subscription[], change?: { status: number; body: unknown }) {
  const gifts: Gifts = {
    payments: [],
    subscriptions,
    statementYears: [],
    timeZone: "UTC",
    currentYear: 2026,
  };
  const fetch = vi.fn(async (_url: string, init?: RequestInit) => {
    const answer = init?.method === "PUT" && change ? change : { status: 200, body: gifts };
    return new Response(JSON.stringify(answer.body), {
      status: answer.status,
      headers: { "Content-Type": "application/json" },
    });
  });
  vi.stubGlobal("fetch", fetch);
  render(<Portal organizationId="org_1" />);
  await screen.findAllByRole("article");
  return fetch;
}

const options = (select: HTMLElement) =>
  within(select)
    .getAllByRole("option")
    .map((o) => (o as HTMLOptionElement).value);

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  speak("en");
});

describe("the portal's frequency choice", () => {
  it("offers only the frequencies the server says the gift may change to, and none when there is no other", async () => {
    speak("en");
    await portalWith([
      sub("sub_a", ["MONTHLY", "ANNUALLY"]),
      sub("sub_b", ["MONTHLY"]),
      sub("sub_c", ["ANNUALLY"], "WEEKLY"),
    ]);
    const [a, b, c] = screen.getAllByRole("article");
    expect(options(within(a).getByLabelText("Frequency"))).toEqual(["MONTHLY", "ANNUALLY"]);
    expect(within(b).queryByLabelText("Frequency")).toBeNull();
    // A gift's own frequency stays shown, selected, though its form no longer takes it.
    const own = within(c).getByLabelText("Frequency") as HTMLSelectElement;
    expect(options(own)).toEqual(["WEEKLY", "ANNUALLY"]);
    expect(own.value).toBe("WEEKLY");
  });

  it("shows the server's reasons for a refused change on a page in another language", async () => {
    speak("de");
    const details = ["frequency ANNUALLY is not enabled on this form; choose one of: ONE_TIME, MONTHLY"];
    const fetch = await portalWith([sub("sub_a", ["MONTHLY", "ANNUALLY"])], {
      status: 400,
      body: { error: "Validation failed", details },
    });
    const article = screen.getByRole("article");
    const de = translator("de");
    fireEvent.change(within(article).getByLabelText(de("portal.frequency")), {
      target: { value: "ANNUALLY" },
    });
    fireEvent.click(within(article).getByRole("button", { name: de("portal.changeFrequency") }));
    const alert = await within(article).findByRole("alert");
    expect(alert.textContent).toBe(`${de("portal.error.400")} ${details[0]}`);
    const put = fetch.mock.calls.find(([, init]) => init?.method === "PUT");
    expect(JSON.parse(String(put?.[1]?.body))).toEqual({ frequency: "ANNUALLY" });
  });
  it("sends nothing and says so when the amount or frequency asked for is the gift's own", async () => {
    speak("de");
    const fetch = await portalWith([sub("sub_a", ["MONTHLY", "ANNUALLY"])], { status: 200, body: {} });
    const article = screen.getByRole("article");
    const de = translator("de");
    const submit = (name: string) =>
      fireEvent.submit(within(article).getByRole("button", { name }).closest("form") as HTMLFormElement);
    submit(de("portal.changeAmount"));
    expect((await within(article).findByText(de("portal.unchanged"))).textContent).toBe(
      de("portal.unchanged"),
    );
    expect(within(article).queryByText(de("portal.done.amount"))).toBeNull();
    submit(de("portal.changeFrequency"));
    expect(fetch.mock.calls.filter(([, init]) => init?.method === "PUT")).toEqual([]);
    // A real change is sent.
    fireEvent.input(within(article).getByLabelText(de("portal.amount")), { target: { value: "30" } });
    submit(de("portal.changeAmount"));
    await within(article).findByText(de("portal.done.amount"));
    const put = fetch.mock.calls.find(([, init]) => init?.method === "PUT");
    expect(JSON.parse(String(put?.[1]?.body))).toEqual({ amount: 30 });
  });

  it("asks before cancelling with the gift's amount and frequency once, in the page's language", async () => {
    for (const language of ["en", "fr"] as const) {
      speak(language);
      const asked: string[] = [];
      vi.stubGlobal("confirm", (question: string) => {
        asked.push(question);
        return false;
      });
      const fetch = await portalWith([sub("sub_a", ["MONTHLY"])], { status: 200, body: {} });
      const tr = translator(language);
      fireEvent.click(screen.getByRole("button", { name: tr("portal.cancel") }));
      const expected = {
        en: "Cancel your recurring gift of $25.00 monthly? This cannot be undone.",
        fr: "Annuler votre don régulier de 25,00 $US mensuel ? C’est définitif.",
      }[language];
      expect(asked.map((q) => q.replace(/\u00a0|\u202f/g, " "))).toEqual([expected]);
      // Answered no: nothing is sent.
      expect(fetch.mock.calls.filter(([, init]) => init?.method === "PUT")).toEqual([]);
      cleanup();
    }
  });
});

// @vitest-environment happy-dom
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/preact";
import { afterEach, describe, expect, it } from "vitest";
import { translator } from "../../server/i18n.js";
import type { Language } from "../../shared/languages.js";
import { attachPaymentFields, type PaymentHost } from "../../widget/app/paymentFields.js";
import { createCheckout } from "../../widget/app/store.js";
import type { FormView } from "../../widget/app/view.js";
import { fakeApi, formView, renderCheckout, useLocale } from "./support/checkout.js";

/**
 * A checkout page in another language says the server's refusals in its own words: the server writes the
 * thanks and a decline in the checkout's `language`, but its refusals (400, 429) in English, the API's
 * language; the page puts its own catalog's message at each field the server names, and its own words for
 * limits and stock. Stripe's fields
 * are set up in the form's currency and its minor units.
 */

afterEach(() => {
  cleanup();
  useLocale();
});

function fillAndSend(c: ReturnType<typeof renderCheckout>["c"]) {
  c.text.firstName.value = "Ada";
  c.text.lastName.value = "Lovelace";
  c.text.email.value = "ada@example.org";
  c.text.cardNumber.value = "4242 4242 4242 4242";
  c.text.cardExp.value = "12/34";
  c.text.cardCvc.value = "123";
  fireEvent.submit(document.querySelector("form") as HTMLFormElement);
}

function renderIn(language: Language, answer: { status: number; body: unknown }) {
  useLocale(language);
  const api = fakeApi({ checkout: [answer] });
  const rendered = renderCheckout(formView({ defaultAmount: 25 }), { api });
  return rendered;
}

describe("a checkout page not in English", () => {
  it("gives the server the page's language, and shows the thanks it wrote in it", async () => {
    const { c, api } = renderIn("es", {
      status: 201,
      body: {
        payment: {
          paymentID: "pay_1",
          status: "COMPLETED",
          total: 25,
          frequency: "ONE_TIME",
          paymentMethod: { type: "card", brand: "visa", last4: "4242" },
          subscription: null,
        },
        message: "¡Gracias, Ada!",
      },
    });
    fillAndSend(c);
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body.language).toBe("es");
    await waitFor(() => expect(screen.getByText("¡Gracias, Ada!")).toBeTruthy());
  });

  it("an English page says so too: the receipt follows the page, not the donor's browser", async () => {
    const { c, api } = renderIn("en", {
      status: 201,
      body: {
        payment: {
          paymentID: "pay_1",
          status: "COMPLETED",
          total: 25,
          frequency: "MONTHLY",
          paymentMethod: { type: "card", brand: "visa", last4: "4242" },
          // 19:30 on February 28 in Los Angeles: the organization's day is the 28th, UTC's the 1st.
          subscription: {
            id: "sub_1",
            amount: 25,
            frequency: "MONTHLY",
            nextBillingDate: "2026-03-01T03:30:00Z",
            nextBillingDay: "2026-02-28",
          },
        },
        message: "Thank you, Ada!",
      },
    });
    fillAndSend(c);
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body.language).toBe("en");
    // The next gift's day is the organization's, as the receipt tells it.
    await waitFor(() => expect(screen.getByText("Saturday, February 28, 2026")).toBeTruthy());
  });

  it("reads a typed amount with the page's decimal comma: 25,50 on a German page gives 25.50, not 2,550", async () => {
    useLocale("de", "EUR");
    const api = fakeApi({
      checkout: [
        {
          status: 201,
          body: {
            payment: {
              paymentID: "pay_1",
              status: "COMPLETED",
              total: 25.5,
              frequency: "ONE_TIME",
              paymentMethod: { type: "card", brand: "visa", last4: "4242" },
              subscription: null,
            },
            message: "Danke",
          },
        },
      ],
    });
    const { c } = renderCheckout(formView({ currency: "EUR", allowCustomAmount: true }), { api });
    c.useCustom.value = true;
    c.text.customAmount.value = "25,50";
    fillAndSend(c);
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body.amount).toBe(25.5);
  });

  it("refuses ¥1,500.5 at the amount field, naming the range of whole yen, and prices or sends nothing of it", async () => {
    useLocale("en", "JPY");
    const api = fakeApi();
    const { c } = renderCheckout(
      formView({ currency: "JPY", allowCustomAmount: true, minAmount: 100, maxAmount: 100000 }),
      { api },
    );
    c.useCustom.value = true;
    c.text.customAmount.value = "1,500.5";
    fillAndSend(c);
    await waitFor(() => expect(c.errors.value.customAmount).toBe("Enter an amount from ¥100 to ¥100,000."));
    expect(api.checkouts()).toHaveLength(0);
    expect(api.quotes().some((q) => q.body.amount === 1500.5)).toBe(false);
    // A whole amount goes through.
    c.text.customAmount.value = "1,500";
    fillAndSend(c);
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body.amount).toBe(1500);
  });

  it("offers to cover the fee in whole yen, rounded up as the server charges it (¥1,500: ¥46, not ¥45)", async () => {
    useLocale("en", "JPY");
    const { c } = renderCheckout(
      formView({
        currency: "JPY",
        allowCustomAmount: true,
        minAmount: 100,
        options: { ...formView().options, coverFees: true },
      }),
    );
    c.useCustom.value = true;
    c.text.customAmount.value = "1500";
    // 2.9% + ¥0.3 on ¥1,500 is ¥45.11: the server charges ¥46.
    await waitFor(() => expect(screen.getByLabelText(/so all of my gift goes to/)).toBeTruthy());
    await waitFor(() =>
      expect(document.querySelector('label[for="alm-coverFees"]')?.textContent).toMatch(/¥46\b/),
    );
  });

  it("names the gift line of the summary in its own words, and a giving level as the organization wrote it", async () => {
    renderIn("es", { status: 201, body: {} });
    await waitFor(() => expect(document.querySelector(".alm-summary dt")?.textContent).toBe("Donación"));
    cleanup();
    useLocale("es");
    const api = fakeApi({
      price: (order) => ({
        total: Number(order.amount ?? 25),
        lines: [{ kind: "donation", label: "Gold patron", unitPrice: 25, quantity: 1, amount: 25 }],
      }),
    });
    renderCheckout(formView({ defaultAmount: 25 }), { api });
    await waitFor(() => expect(document.querySelector(".alm-summary dt")?.textContent).toBe("Gold patron"));
  });

  it("says an order the server cannot price in its own words, and stops saying it is calculating", async () => {
    useLocale("es");
    const say = translator("es");
    const api = fakeApi({
      price: () => ({
        status: 400,
        body: { error: "Validation failed", details: ["amount must be from $1 to $1,000,000"] },
      }),
    });
    renderCheckout(formView({ defaultAmount: 25 }), { api });
    await waitFor(() => expect(screen.getByText(say("checkout.error.quote"))).toBeTruthy());
    expect(screen.queryByText(/\$1,000,000/)).toBeNull();
    expect(screen.queryByText(say("checkout.summary.calculating"))).toBeNull();
  });

  it("says a required question left unanswered in the page's language", async () => {
    useLocale("es");
    const { c, api } = renderCheckout(
      formView({
        defaultAmount: 25,
        customInputs: [
          { id: "size", title: "Talla de camiseta", inputType: "short_text", required: true, options: [] },
        ],
      }),
    );
    fillAndSend(c);
    await waitFor(() => expect(screen.getByText("«Talla de camiseta» es obligatorio.")).toBeTruthy());
    expect(api.checkouts()).toHaveLength(0);
  });

  it("puts its own message at a field the server refused, and its own words in the alert", async () => {
    const say = translator("es");
    const { c } = renderIn("es", {
      status: 400,
      body: { error: "Validation failed", details: ["donor.email must be an email address"] },
    });
    fillAndSend(c);
    await waitFor(() => expect(c.errors.value.email).toBe(say("checkout.error.email")));
    const alert = c.formError.value ?? "";
    expect(alert).toBe(say("checkout.error.fix", { count: 1 }));
    expect(alert).not.toContain("donor.email");
  });

  it("says too many attempts (429) and sold out in its own words", async () => {
    const say = translator("de");
    const limited = renderIn("de", { status: 429, body: { error: "Too many checkout attempts" } });
    fillAndSend(limited.c);
    await waitFor(() => expect(limited.c.formError.value).toBe(say("checkout.error.tooMany")));
    cleanup();

    const soldOut = renderIn("de", { status: 400, body: { error: "Adult is sold out" } });
    fillAndSend(soldOut.c);
    await waitFor(() => expect(soldOut.c.formError.value).toBe(say("checkout.error.soldOut")));
  });

  it("keeps the server's words when they say what happened to the money (503, 409)", async () => {
    const words =
      "We could not hear back from the payment processor. Please do not pay again: if the payment went through, a receipt will reach you by email within a few minutes.";
    const { c } = renderIn("es", { status: 503, body: { error: words } });
    fillAndSend(c);
    await waitFor(() => expect(c.formError.value).toContain(words));
  });

  it("names a refused promo code in its own words", async () => {
    const say = translator("fr");
    const { c } = renderIn("fr", {
      status: 400,
      body: { error: "Validation failed", details: ["Promo code NOPE is not valid"] },
    });
    fillAndSend(c);
    await waitFor(() => expect(c.errors.value.promoCode).toBe(say("checkout.error.promoInvalid")));
  });

  it("says nothing was charged in its own words after a decline", async () => {
    const say = translator("fr");
    const { c } = renderIn("fr", {
      status: 402,
      body: { error: say("answer.decline.card"), code: "card_declined", paymentID: "pay_x" },
    });
    fillAndSend(c);
    await waitFor(() => expect(c.status.value).toBe("declined"));
    expect(screen.getByRole("alert").textContent).toContain(say("checkout.declined.nothingCharged"));
    const { retry } = await import("../../widget/app/submissionModel.js");
    retry(c);
    expect(c.formError.value).toBe(
      `${say("answer.decline.card")} ${say("checkout.declined.nothingCharged")}`,
    );
  });

  it("keeps the server's English words on an English page, without the API's name of the field", async () => {
    const { c } = renderIn("en", {
      status: 400,
      body: { error: "Validation failed", details: ["donor.email must be an email address"] },
    });
    fillAndSend(c);
    await waitFor(() => expect(c.errors.value.email).toBe("Must be an email address"));
  });
});

describe("a right-to-left page", () => {
  it("keeps addresses, card numbers, codes and phone numbers left to right; names follow the page", () => {
    useLocale("ar");
    renderCheckout(formView({ options: { ...formView().options, phone: true, tribute: true } }));
    const input = (name: string) => document.querySelector(`input[name="${name}"]`);
    for (const name of ["email", "phone", "cardNumber", "cardExp", "cardCvc"])
      expect(input(name)?.getAttribute("dir"), name).toBe("ltr");
    for (const name of ["firstName", "lastName"]) expect(input(name)?.getAttribute("dir"), name).toBeNull();
  });

  it("isolates each amount as left-to-right text, so that 25 US$ is not drawn as $US 25", () => {
    useLocale("ar");
    renderCheckout(formView({ defaultAmount: 25 }));
    const amounts = [...document.querySelectorAll("label, dd, button")]
      .map((el) => el.textContent ?? "")
      .filter((text) => text.includes("US$"));
    expect(amounts.length).toBeGreaterThan(2);
    for (const text of amounts) expect(text).toMatch(/\u2066[^\u2069]*US\$\u2069/);
    cleanup();
    useLocale("es");
    renderCheckout(formView({ defaultAmount: 25 }));
    expect(document.body.textContent).not.toContain("\u2066");
  });
});

describe("Stripe's fields", () => {
  /** Mounts the payment fields with a stand-in module that hands back the host it was given. */
  async function hostFor(view: FormView): Promise<PaymentHost> {
    const module = `data:text/javascript,${encodeURIComponent(
      "export function mountStripe(host) { globalThis.__almonerHost = host; return () => {}; }",
    )}`;
    const stripeView = {
      ...view,
      payment: { processor: "stripe", publishableKey: "pk_test_x", livemode: false, module },
    } as FormView;
    const c = createCheckout({ view: stripeView }, { fetch: fakeApi().fetch, quoteDelayMs: 0 });
    c.start();
    const holder = globalThis as { __almonerHost?: PaymentHost };
    holder.__almonerHost = undefined;
    const div = () => document.createElement("div");
    attachPaymentFields(c, { express: div(), payment: div() });
    await waitFor(() => expect(holder.__almonerHost).toBeDefined());
    c.useCustom.value = true;
    c.text.customAmount.value = view.currency === "JPY" ? "1000" : "25.50";
    return holder.__almonerHost as unknown as PaymentHost;
  }

  it("are set up in the form's currency, the amount in its minor units: whole yen, cents", async () => {
    useLocale("en", "JPY");
    const yen = await hostFor(formView({ currency: "JPY", minAmount: 100 }));
    expect(yen.currency).toBe("jpy");
    await waitFor(() => expect(yen.order()).toEqual({ amount: 1000, recurring: false }));

    useLocale("en", "EUR");
    const euro = await hostFor(formView({ currency: "EUR" }));
    expect(euro.currency).toBe("eur");
    await waitFor(() => expect(euro.order()).toEqual({ amount: 2550, recurring: false }));
  });
});

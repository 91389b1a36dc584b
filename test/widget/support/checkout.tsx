import { render } from "@testing-library/preact";
import { messagesFor } from "../../../server/i18n.js";
import type { Language } from "../../../shared/languages.js";
import { App } from "../../../widget/app/App.js";
import type { CheckoutEnv } from "../../../widget/app/checkoutEnv.js";
import { setLocale } from "../../../widget/app/locale.js";
import { createCheckout } from "../../../widget/app/store.js";
import type { Boot, FormView, Quote } from "../../../widget/app/view.js";

/** The checkout speaks English in US dollars unless a test sets another locale (`useLocale`). */
export function useLocale(language: Language = "en", currency = "USD"): void {
  setLocale({ language, currency, messages: messagesFor(language, "checkout.") });
}
useLocale();

/** A public form view as GET /api/forms/{id} returns it (amounts in dollars), with overrides per test. */
export function formView(overrides: Partial<FormView> = {}): FormView {
  return {
    formID: "0b6f6a4e-6f3c-4d53-9a86-2f1c1d1b9d11",
    formType: "EMBED_FORM",
    title: "Plant a tree",
    description: "Every tree counts.",
    color: "#3B82F6",
    headerImage: "",
    active: true,
    organization: { name: "Green Org" },
    currency: "USD",
    funds: ["General"],
    frequencies: ["ONE_TIME"],
    defaultFrequency: "ONE_TIME",
    amounts: {
      ONE_TIME: [25, 50, 100],
      DAILY: [],
      WEEKLY: [],
      MONTHLY: [10, 20, 30],
      ANNUALLY: [100, 200],
    },
    defaultAmount: null,
    allowCustomAmount: true,
    minAmount: 1,
    maxAmount: 1_000_000,
    givingLevels: [],
    productGroups: [],
    tickets: [],
    hasPromoCodes: false,
    customInputs: [],
    faqs: [],
    event: null,
    fundraisingBar: null,
    donorList: null,
    options: {
      coverFees: false,
      anonymous: false,
      organizationName: false,
      billingAddress: false,
      country: false,
      phone: false,
      tribute: false,
      monthlyUpsell: null,
    },
    feeRate: { percent: 2.9, fixed: 0.3 },
    payment: { tokenization: "server", methods: ["card", "bank"] },
    prefill: null,
    ...overrides,
  } as FormView;
}

export interface Call {
  path: string;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

type Answer = { status: number; body: unknown };

/**
 * A stand-in for the public API: records every call; quotes are priced by `price` (the test's own
 * arithmetic), checkouts answered by `checkout` in turn (201 by default).
 */
export function fakeApi(
  opts: { price?: (order: Record<string, unknown>) => Partial<Quote> | Answer; checkout?: Answer[] } = {},
) {
  const calls: Call[] = [];
  const answers = [...(opts.checkout ?? [])];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const path = String(input);
    const body = JSON.parse(String(init?.body ?? "{}")) as Record<string, unknown>;
    calls.push({ path, body, headers: (init?.headers ?? {}) as Record<string, string> });
    let answer: Answer;
    if (path.endsWith("/quote")) {
      const priced = opts.price ? opts.price(body) : defaultPrice(body);
      answer =
        "status" in priced && "body" in priced
          ? (priced as Answer)
          : { status: 200, body: quote(body, priced as Partial<Quote>) };
    } else
      answer = answers.shift() ?? {
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
          message: "Thank you, Ada!",
        },
      };
    return new Response(JSON.stringify(answer.body), {
      status: answer.status,
      headers: { "Content-Type": "application/json" },
    });
  }) as typeof globalThis.fetch;
  return {
    calls,
    fetch,
    quotes: () => calls.filter((c) => c.path.endsWith("/quote")),
    checkouts: () => calls.filter((c) => c.path.endsWith("/checkout")),
  };
}

function defaultPrice(order: Record<string, unknown>): Partial<Quote> {
  const amount = typeof order.amount === "number" ? order.amount : 0;
  return {
    subtotal: amount,
    total: amount,
    lines: [{ kind: "donation", label: "Donation", unitPrice: amount, quantity: 1, amount }],
  };
}

export function quote(order: Record<string, unknown>, q: Partial<Quote>): Quote {
  return {
    frequency: String(order.frequency ?? "ONE_TIME"),
    fund: String(order.fund ?? "General"),
    lines: [],
    subtotal: 0,
    discount: 0,
    promoCode: null,
    coverFees: order.coverFees === true,
    fee: 0,
    total: 0,
    attendees: 0,
    ...q,
  };
}

/** Renders the checkout for a view against a fake API (its own unless given); the quote runs without delay. */
export function renderCheckout(
  view: FormView,
  opts: {
    api?: ReturnType<typeof fakeApi>;
    env?: CheckoutEnv;
    boot?: Partial<Boot>;
    embedded?: boolean;
  } = {},
) {
  const api = opts.api ?? fakeApi();
  const c = createCheckout({ view, ...opts.boot }, { fetch: api.fetch, quoteDelayMs: 0, ...opts.env });
  const stop = c.start();
  c.ready.value = true;
  const result = render(<App c={c} embedded={opts.embedded} />);
  return { ...result, c, api, stop };
}

// @vitest-environment happy-dom
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/preact";
import { afterEach, describe, expect, it } from "vitest";
import { fieldErrors, submit as submitCheckout } from "../../widget/app/submissionModel.js";
import { fakeApi, formView, renderCheckout, useLocale } from "./support/checkout.js";

/**
 * The checkout app's components (widget/app) in happy-dom, against a stand-in for the public API that
 * records what the app sends. Each feature of the issue has a test here; the real API and browser are
 * covered by test/e2e/hosted.e2e.test.ts.
 */

afterEach(() => cleanup());

/** A control by its label; required labels end in a mark hidden from assistive technology. */
const byLabel = (label: string | RegExp) =>
  screen.getByLabelText(
    typeof label === "string"
      ? new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}( \\*)?$`)
      : label,
  );
const type = (label: string | RegExp, value: string) =>
  fireEvent.input(byLabel(label), { target: { value } });

function fillDonor() {
  type("First name", "Ada");
  type("Last name", "Lovelace");
  type("Email", "ada@example.org");
}

function fillCard(number = "4242 4242 4242 4242") {
  type("Card number", number);
  type("Expiry (MM/YY)", "12/34");
  type("CVC", "123");
}

/** The error a field is marked with (aria-invalid) and described by, once it is marked. */
async function fieldError(label: string): Promise<string | null | undefined> {
  const field = byLabel(label);
  await waitFor(() => expect(field.getAttribute("aria-invalid")).toBe("true"));
  return document.getElementById(field.getAttribute("aria-describedby") ?? "")?.textContent;
}

const submit = () =>
  fireEvent.submit(
    screen.getByRole("button", { name: /^(Donate|Pay|Sponsor|Register)/ }).closest("form") as HTMLFormElement,
  );

describe("standard form", () => {
  it("shows title, description, header image and funds; presets follow the frequency; the button names amount and frequency", async () => {
    const { api, container } = renderCheckout(
      formView({
        headerImage: "https://img.example/tree.jpg",
        funds: ["General", "Scholarships"],
        frequencies: ["ONE_TIME", "MONTHLY"],
      }),
    );
    expect(screen.getByRole("heading", { level: 1, name: "Plant a tree" })).toBeTruthy();
    expect(screen.getByText("Every tree counts.")).toBeTruthy();
    expect(container.querySelector("img")?.getAttribute("src")).toBe("https://img.example/tree.jpg");
    expect(screen.getAllByRole("radio", { name: /^\$/ }).map((r) => r.getAttribute("value"))).toEqual([
      "25",
      "50",
      "100",
    ]);

    fireEvent.click(screen.getByRole("radio", { name: "Monthly" }));
    expect(screen.getAllByRole("radio", { name: /^\$/ }).map((r) => r.getAttribute("value"))).toEqual([
      "10",
      "20",
      "30",
    ]);
    fireEvent.click(screen.getByRole("radio", { name: /^\$30/ }));
    fireEvent.change(byLabel("Designate my gift to"), { target: { value: "Scholarships" } });
    await waitFor(() => expect(screen.getByRole("button", { name: "Donate $30 monthly" })).toBeTruthy());
    await waitFor(() =>
      expect(api.quotes().at(-1)?.body).toEqual({ frequency: "MONTHLY", fund: "Scholarships", amount: 30 }),
    );
    const summary = screen.getByRole("region", { name: "Summary" });
    await waitFor(() => expect(within(summary).getByText("$30/month")).toBeTruthy());
  });

  it("takes a custom amount and refuses one out of range, tied to the field", async () => {
    const { api } = renderCheckout(formView());
    type("Other amount", "37.5");
    await waitFor(() => expect(screen.getByRole("button", { name: "Donate $37.50" })).toBeTruthy());
    await waitFor(() => expect(api.quotes().at(-1)?.body.amount).toBe(37.5));
    type("Other amount", "0.5");
    fillDonor();
    fillCard();
    submit();
    expect(await fieldError("Other amount")).toMatch(/from \$1 to \$1,000,000/);
    expect(api.checkouts()).toHaveLength(0);
  });

  it("holds Escape while the payment is on its way (an overlay would close and lose the answer), not before or after", async () => {
    const api = fakeApi();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = (async (input: RequestInfo | URL, init?: RequestInit) => {
      if (String(input).endsWith("/checkout")) await held;
      return api.fetch(input, init);
    }) as typeof globalThis.fetch;
    renderCheckout(formView(), { api, env: { fetch: slow } });
    const pressEscape = () => {
      const event = new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true });
      document.body.dispatchEvent(event);
      return event.defaultPrevented;
    };
    expect(pressEscape()).toBe(false);
    fireEvent.click(screen.getByRole("radio", { name: "$25" }));
    fillDonor();
    fillCard();
    submit();
    await waitFor(() => expect(screen.getByRole("button", { name: /Processing/ })).toBeTruthy());
    // The button keeps the focus (a disabled one would drop it on the page) and says so aloud; pressing it
    // again sends nothing.
    const button = screen.getByRole("button", { name: /Processing/ });
    button.focus();
    expect(button.hasAttribute("disabled")).toBe(false);
    expect(button.getAttribute("aria-disabled")).toBe("true");
    expect(button.getAttribute("aria-live")).toBe("polite");
    expect(document.activeElement).toBe(button);
    fireEvent.submit(button.closest("form") as HTMLFormElement);
    expect(pressEscape()).toBe(true);
    release();
    await waitFor(() => expect(screen.getByRole("heading", { name: "Thank you!" })).toBeTruthy());
    expect(api.checkouts()).toHaveLength(1);
    expect(pressEscape()).toBe(false);
  });

  it("at a frequency without preset amounts, says 'choose an amount' at the amount field the donor types in", async () => {
    const { api } = renderCheckout(
      formView({
        frequencies: ["ONE_TIME", "ANNUALLY"],
        amounts: { ONE_TIME: [25, 50], DAILY: [], WEEKLY: [], MONTHLY: [], ANNUALLY: [] },
      }),
    );
    fireEvent.click(screen.getByRole("radio", { name: "Yearly" }));
    fillDonor();
    fillCard();
    submit();
    expect(await fieldError("Other amount")).toBe("Choose an amount.");
    expect(api.checkouts()).toHaveLength(0);
  });

  it("drops what was said of a typed amount once a preset is chosen instead", async () => {
    renderCheckout(formView());
    type("Other amount", "0");
    fillDonor();
    fillCard();
    submit();
    await waitFor(() => expect(byLabel("Other amount").getAttribute("aria-invalid")).toBe("true"));
    fireEvent.click(screen.getByRole("radio", { name: "$25" }));
    await waitFor(() => expect(byLabel("Other amount").getAttribute("aria-invalid")).toBe("false"));
    expect(document.getElementById("alm-customAmount-err")).toBeNull();
  });

  it("empties the typed amount once a preset or a level is chosen, so that only what counts is shown", async () => {
    renderCheckout(formView({ frequencies: ["ONE_TIME", "MONTHLY"] }));
    type("Other amount", "42");
    await waitFor(() => expect(screen.getByRole("button", { name: "Donate $42" })).toBeTruthy());
    fireEvent.click(screen.getByRole("radio", { name: "$25" }));
    await waitFor(() => expect(screen.getByRole("button", { name: "Donate $25" })).toBeTruthy());
    expect((byLabel("Other amount") as HTMLInputElement).value).toBe("");
    fireEvent.click(screen.getByRole("radio", { name: "Monthly" }));
    expect((byLabel("Other amount") as HTMLInputElement).value).toBe("");
    cleanup();
    renderCheckout(
      formView({
        formType: "CROWDFUNDING_FORM",
        givingLevels: [{ title: "Friend", amount: 50, description: "A week of supplies" }],
      }),
    );
    type("Or give another amount", "75");
    fireEvent.click(screen.getByRole("radio", { name: /Friend/ }));
    await waitFor(() => expect((byLabel("Or give another amount") as HTMLInputElement).value).toBe(""));
  });

  it("completes a one-time card gift: body, idempotency key, success screen", async () => {
    const { api } = renderCheckout(formView(), {
      env: { utm: { source: "newsletter", campaign: "spring" }, elementId: "link-1" },
    });
    fireEvent.click(screen.getByRole("radio", { name: "$25" }));
    fillDonor();
    fillCard();
    submit();
    await waitFor(() => expect(screen.getByRole("heading", { name: "Thank you!" })).toBeTruthy());
    expect(screen.getByText("Thank you, Ada!")).toBeTruthy();
    expect(screen.getByText("Visa ending 4242")).toBeTruthy();
    const [call] = api.checkouts();
    expect(call.headers["Idempotency-Key"]).toMatch(/.{16,}/);
    expect(call.body).toEqual({
      frequency: "ONE_TIME",
      fund: "General",
      amount: 25,
      donor: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.org" },
      paymentMethod: { type: "card", number: "4242 4242 4242 4242", expMonth: 12, expYear: 2034, cvc: "123" },
      emailOptIn: false,
      utm: { source: "newsletter", campaign: "spring" },
      elementId: "link-1",
      currency: "USD",
      language: "en",
    });
  });

  it("sends the address's utm and elementid with control characters (NUL too) as a space, so the server takes them", async () => {
    const { api } = renderCheckout(formView(), {
      env: { utm: { source: "spring\u0000mail", campaign: "a\u0001\u0002b" }, elementId: "link\u00001" },
    });
    fireEvent.click(screen.getByRole("radio", { name: "$25" }));
    fillDonor();
    fillCard();
    submit();
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    const [call] = api.checkouts();
    expect(call.body.utm).toEqual({ source: "spring mail", campaign: "a b" });
    expect(call.body.elementId).toBe("link 1");
  });

  it("shows a decline, then takes another card with a new idempotency key", async () => {
    const api = fakeApi({
      checkout: [
        {
          status: 402,
          body: { error: "Your card was declined.", code: "card_declined", paymentID: "pay_x" },
        },
      ],
    });
    renderCheckout(formView(), { api });
    fillDonor();
    fillCard("4000 0000 0000 0002");
    submit();
    await waitFor(() => expect(screen.getByRole("heading", { name: "Payment declined" })).toBeTruthy());
    expect(screen.getByRole("alert").textContent).toContain("Your card was declined. Nothing was charged.");
    fireEvent.click(screen.getByRole("button", { name: "Try another card" }));
    expect((byLabel("Card number") as HTMLInputElement).value).toBe("");
    expect((byLabel("Email") as HTMLInputElement).value).toBe("ada@example.org");
    fillCard();
    submit();
    await waitFor(() => expect(screen.getByRole("heading", { name: "Thank you!" })).toBeTruthy());
    const [first, second] = api.checkouts();
    expect(first.headers["Idempotency-Key"]).not.toBe(second.headers["Idempotency-Key"]);
    expect(second.body.paymentMethod).toMatchObject({ number: "4242 4242 4242 4242" });
  });

  /**
   * A checkout endpoint that keeps answers by Idempotency-Key as the server does (the same key and body
   * replays the answer; the same key with another body is a 422), charging a card once per new key, and
   * whose answers can be lost on the way back (the fetch rejects after the charge was made).
   */
  function idempotentServer(decide: (body: Record<string, unknown>) => { status: number; body: unknown }) {
    const api = fakeApi();
    const kept = new Map<string, { sent: string; status: number; body: unknown }>();
    const charges: Record<string, unknown>[] = [];
    let loseNext = 0;
    const quoteFetch = api.fetch;
    const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      if (!String(input).endsWith("/checkout")) return quoteFetch(input, init);
      api.calls.push({
        path: String(input),
        body: JSON.parse(String(init?.body)),
        headers: (init?.headers ?? {}) as Record<string, string>,
      });
      const key = ((init?.headers ?? {}) as Record<string, string>)["Idempotency-Key"] ?? "";
      const sent = String(init?.body);
      let answer = kept.get(key);
      if (answer && answer.sent !== sent)
        answer = { sent, status: 422, body: { error: "Idempotency-Key reused with a different request" } };
      else if (!answer) {
        const body = JSON.parse(sent) as Record<string, unknown>;
        const decided = decide(body);
        if (decided.status === 201) charges.push(body);
        answer = { sent, ...decided };
        kept.set(key, answer);
      }
      if (loseNext > 0) {
        loseNext--;
        throw new TypeError("Failed to fetch");
      }
      return new Response(JSON.stringify(answer.body), { status: answer.status });
    }) as typeof globalThis.fetch;
    return { api: { ...api, fetch }, charges, loseAnswers: (n: number) => (loseNext = n) };
  }
  const paid = (body: Record<string, unknown>) => ({
    status: 201,
    body: {
      payment: {
        paymentID: "pay_1",
        status: "COMPLETED",
        total: body.amount,
        frequency: "ONE_TIME",
        paymentMethod: { type: "card", brand: "visa", last4: "4242" },
        subscription: null,
      },
      message: `Thank you, ${(body.donor as { firstName: string }).firstName}!`,
    },
  });

  it("after an answer lost on the way back, says the outcome is not known, and an edited retry charges once: the earlier checkout is asked again first", async () => {
    const server = idempotentServer(paid);
    renderCheckout(formView(), { api: server.api });
    fireEvent.click(screen.getByRole("radio", { name: "$25" }));
    fillDonor();
    fillCard();
    server.loseAnswers(1);
    submit();
    await waitFor(() =>
      expect(screen.getByRole("alert").textContent).toContain(
        "we cannot tell yet whether your payment went through",
      ),
    );
    expect(screen.getByRole("alert").textContent).not.toContain("Nothing was charged");
    // The donor corrects a field and sends again: the first checkout, charged meanwhile, is the answer.
    type("Last name", "Byron");
    submit();
    await waitFor(() => expect(screen.getByRole("heading", { name: "Thank you!" })).toBeTruthy());
    expect(server.charges).toHaveLength(1);
    const [first, second] = server.api.checkouts();
    expect(second.headers["Idempotency-Key"]).toBe(first.headers["Idempotency-Key"]);
    expect(second.body).toEqual(first.body);
    expect(server.api.checkouts()).toHaveLength(2);
  });

  it("after a lost answer to a checkout the server refused, sends the edited one under a new key", async () => {
    // The first card is declined; its answer is lost on the way back.
    const server = idempotentServer((body) =>
      (body.paymentMethod as { number: string }).number.startsWith("4000")
        ? { status: 402, body: { error: "Your card was declined.", code: "card_declined" } }
        : paid(body),
    );
    renderCheckout(formView(), { api: server.api });
    fireEvent.click(screen.getByRole("radio", { name: "$25" }));
    fillDonor();
    fillCard("4000 0000 0000 0002");
    server.loseAnswers(1);
    submit();
    await waitFor(() => expect(screen.getByRole("alert").textContent).toContain("cannot tell yet"));
    fillCard();
    submit();
    await waitFor(() => expect(screen.getByRole("heading", { name: "Thank you!" })).toBeTruthy());
    const [first, again, fresh] = server.api.checkouts();
    // Asked again as it was: declined, nothing charged; then the new card, under a key of its own.
    expect(again.headers["Idempotency-Key"]).toBe(first.headers["Idempotency-Key"]);
    expect(again.body).toEqual(first.body);
    expect(fresh.headers["Idempotency-Key"]).not.toBe(first.headers["Idempotency-Key"]);
    expect(fresh.body.paymentMethod).toMatchObject({ number: "4242 4242 4242 4242" });
    expect(server.charges).toHaveLength(1);
  });

  it("keeps asking the earlier checkout while its answers keep being lost: one key, one charge, whatever the donor edits", async () => {
    const server = idempotentServer(paid);
    renderCheckout(formView(), { api: server.api });
    fireEvent.click(screen.getByRole("radio", { name: "$25" }));
    fillDonor();
    fillCard();
    server.loseAnswers(2);
    submit();
    await waitFor(() => expect(screen.getByRole("alert").textContent).toContain("cannot tell yet"));
    type("Last name", "Byron");
    submit();
    await waitFor(() => expect(server.api.checkouts()).toHaveLength(2));
    await waitFor(() => expect(screen.getByRole("alert").textContent).toContain("cannot tell yet"));
    type("Last name", "King");
    submit();
    await waitFor(() => expect(screen.getByRole("heading", { name: "Thank you!" })).toBeTruthy());
    const keys = new Set(server.api.checkouts().map((call) => call.headers["Idempotency-Key"]));
    expect(keys.size).toBe(1);
    expect(server.charges).toHaveLength(1);
  });

  it.each([
    ["Expiry (MM/YY)", "paymentMethod Your card's expiration date is invalid."],
    ["CVC", "paymentMethod Your card's security code is invalid."],
    ["Card number", "paymentMethod Your card number is invalid."],
  ])("ties the processor's refusal to its own field: %s", async (label, detail) => {
    const api = fakeApi({
      checkout: [{ status: 400, body: { error: "Validation failed", details: [detail] } }],
    });
    renderCheckout(formView({ defaultAmount: 25 }), { api });
    fillDonor();
    fillCard();
    submit();
    // Said as the donor reads it: without the API's name of the field, which the field itself shows.
    expect(await fieldError(label)).toBe(detail.replace("paymentMethod ", ""));
    expect(screen.getByRole("alert").textContent).toBe("Please fix 1 field: each one says what is missing.");
    for (const other of ["Expiry (MM/YY)", "CVC", "Card number"].filter((l) => l !== label))
      expect(byLabel(other).getAttribute("aria-invalid")).toBe("false");
  });

  it("places the sandbox's and Stripe's bank refusals at the bank fields (fieldErrors)", () => {
    expect(
      fieldErrors([
        "paymentMethod The routing number must be a valid 9-digit number.",
        "paymentMethod The account number is invalid.",
        "paymentMethod Enter the account holder's name.",
      ]),
    ).toEqual({
      routingNumber: "paymentMethod The routing number must be a valid 9-digit number.",
      accountNumber: "paymentMethod The account number is invalid.",
      accountHolder: "paymentMethod Enter the account holder's name.",
    });
  });

  it("pays by bank account", async () => {
    const { api } = renderCheckout(formView());
    fillDonor();
    fireEvent.click(screen.getByRole("radio", { name: "Bank account" }));
    expect(screen.queryByLabelText("Card number")).toBeNull();
    type("Account holder", "Ada Lovelace");
    type("Routing number", "110000000");
    type("Account number", "000123456789");
    submit();
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body.paymentMethod).toEqual({
      type: "bank",
      routingNumber: "110000000",
      accountNumber: "000123456789",
      accountHolder: "Ada Lovelace",
    });
  });

  it("announces missing details in an alert and ties each error to its field", async () => {
    const { api } = renderCheckout(
      formView({
        customInputs: [
          {
            id: "size",
            title: "T-shirt size",
            inputType: "single_select",
            required: true,
            options: ["S", "M"],
          },
        ],
      } as never),
    );
    // Untouched, nothing is invalid yet: not even a required choice still showing "Choose…".
    expect(byLabel("T-shirt size").getAttribute("aria-invalid")).toBe("false");
    expect(byLabel("First name").getAttribute("aria-invalid")).toBe("false");
    submit();
    await waitFor(() => expect(screen.getByRole("alert").textContent).toMatch(/Please fix \d+ fields/));
    for (const label of ["First name", "Last name", "Email", "Card number", "Expiry (MM/YY)", "CVC"]) {
      const field = byLabel(label);
      expect(field.getAttribute("aria-invalid"), label).toBe("true");
      const error = document.getElementById(field.getAttribute("aria-describedby") ?? "");
      expect(error?.textContent, label).toBeTruthy();
    }
    // The first problem in the page's order: the question comes before the donor's details.
    expect(document.activeElement).toBe(byLabel("T-shirt size"));
    expect(byLabel("T-shirt size").getAttribute("aria-invalid")).toBe("true");
    type("First name", "Ada");
    expect(byLabel("First name").getAttribute("aria-invalid")).toBe("false");
    expect(api.checkouts()).toHaveLength(0);
  });

  it("shows the server's 400 details in the alert and on the field they name", async () => {
    const api = fakeApi({
      checkout: [
        {
          status: 400,
          body: { error: "Validation failed", details: ["donor.email must be an email address"] },
        },
      ],
    });
    renderCheckout(formView(), { api });
    fillDonor();
    fillCard();
    submit();
    await waitFor(() =>
      expect(screen.getByRole("alert").textContent).toBe(
        "Please fix 1 field: each one says what is missing.",
      ),
    );
    expect(await fieldError("Email")).toBe("Must be an email address");
  });

  it("says in the alert what the server refused that no field shows, in the donor's words", async () => {
    const api = fakeApi({
      checkout: [
        {
          status: 400,
          body: {
            error: "Validation failed",
            details: ["donor.email must be an email address", "customInputs.T-shirt size is required"],
          },
        },
      ],
    });
    renderCheckout(formView(), { api });
    fillDonor();
    fillCard();
    submit();
    await waitFor(() =>
      expect(screen.getByRole("alert").textContent).toBe(
        "Please fix 1 field: each one says what is missing. T-shirt size is required",
      ),
    );
  });

  it("refuses an expired card before sending, and takes a four-digit year as typed", async () => {
    const { api } = renderCheckout(formView({ defaultAmount: 25 }));
    fillDonor();
    fillCard();
    type("Expiry (MM/YY)", "01/20");
    submit();
    expect(await fieldError("Expiry (MM/YY)")).toBe("This card has expired: check the expiry date.");
    expect(api.checkouts()).toHaveLength(0);
    type("Expiry (MM/YY)", "12 / 2030");
    expect(byLabel("Expiry (MM/YY)").getAttribute("maxlength")).toBe("9");
    submit();
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body.paymentMethod).toMatchObject({ expMonth: 12, expYear: 2030 });
  });
});

describe("prefill", () => {
  it("applies a checkout link's prefill: amount, frequency, fund, donor and answers; UTM of the link is sent", async () => {
    const { api } = renderCheckout(
      formView({
        funds: ["General", "Scholarships"],
        frequencies: ["ONE_TIME", "MONTHLY"],
        options: {
          coverFees: false,
          anonymous: false,
          organizationName: true,
          billingAddress: false,
          country: false,
          phone: false,
        },
        customInputs: [
          { id: "ci_1", title: "In honor of", inputType: "short_text", required: false, options: [] },
        ],
        prefill: {
          firstName: "Grace",
          email: "grace@example.org",
          organizationName: "Navy",
          amount: 20,
          frequency: "MONTHLY",
          fund: "Scholarships",
          customInputs: { ci_1: "Ada" },
          utm: { source: "mail" },
        },
      } as never),
    );
    expect((screen.getByRole("radio", { name: /^\$20/ }) as HTMLInputElement).checked).toBe(true);
    expect((byLabel("Designate my gift to") as HTMLSelectElement).value).toBe("Scholarships");
    expect((byLabel("First name") as HTMLInputElement).value).toBe("Grace");
    expect((byLabel("Organization name") as HTMLInputElement).value).toBe("Navy");
    expect((byLabel("In honor of") as HTMLInputElement).value).toBe("Ada");
    expect(screen.getByRole("button", { name: "Donate $20 monthly" })).toBeTruthy();
    type("Last name", "Hopper");
    fillCard();
    submit();
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body).toMatchObject({
      amount: 20,
      frequency: "MONTHLY",
      fund: "Scholarships",
      customInputs: { ci_1: "Ada" },
      utm: { source: "mail" },
      donor: { firstName: "Grace", lastName: "Hopper", organizationName: "Navy" },
    });
  });

  it("a custom prefilled amount lands in the other-amount field", () => {
    renderCheckout(formView({ prefill: { amount: 42, customInputs: {}, utm: {} } } as never));
    expect((byLabel("Other amount") as HTMLInputElement).value).toBe("42");
    expect(screen.getAllByRole("radio", { name: /^\$/ }).some((r) => (r as HTMLInputElement).checked)).toBe(
      false,
    );
  });
});

describe("giving levels", () => {
  it("lists levels with amounts and descriptions and sends the chosen level", async () => {
    const { api } = renderCheckout(
      formView({
        formType: "CROWDFUNDING_FORM",
        givingLevels: [
          { title: "Friend", amount: 50, description: "A week of supplies" },
          { title: "Champion", amount: 250, description: "A workshop" },
        ],
      }),
    );
    expect(screen.getByText("A week of supplies")).toBeTruthy();
    fireEvent.click(screen.getByRole("radio", { name: /Champion/ }));
    await waitFor(() => expect(screen.getByRole("button", { name: "Donate $250" })).toBeTruthy());
    await waitFor(() =>
      expect(api.quotes().at(-1)?.body).toEqual({
        frequency: "ONE_TIME",
        fund: "General",
        givingLevel: "Champion",
      }),
    );
  });
});

describe("sponsorship", () => {
  it("shows groups and products with stock; a sold-out product cannot be chosen", async () => {
    const { api } = renderCheckout(
      formView({
        formType: "PRODUCT",
        productGroups: [
          {
            productGroupName: "Booths",
            description: "Your name on a booth",
            products: [
              { productName: "Bronze", price: 250, description: "", remaining: 3, soldOut: false },
              { productName: "Gold", price: 1000, description: "Front row", remaining: 0, soldOut: true },
            ],
          },
        ],
      }),
    );
    expect(screen.getByRole("heading", { name: "Booths" })).toBeTruthy();
    expect((screen.getByRole("radio", { name: /Gold/ }) as HTMLInputElement).disabled).toBe(true);
    expect(screen.getByText("Sold out")).toBeTruthy();
    expect(screen.getByText("3 left")).toBeTruthy();
    fireEvent.click(screen.getByRole("radio", { name: /Bronze/ }));
    await waitFor(() => expect(screen.getByRole("button", { name: "Sponsor for $250" })).toBeTruthy());
    await waitFor(() =>
      expect(api.quotes().at(-1)?.body).toEqual({
        frequency: "ONE_TIME",
        fund: "General",
        product: { group: "Booths", name: "Bronze" },
      }),
    );
  });
});

describe("event", () => {
  const event = () =>
    formView({
      formType: "EVENT",
      title: "Annual gala",
      hasPromoCodes: true,
      event: {
        date: "2027-05-15",
        startTime: "18:30",
        endTime: "22:00",
        timeZone: "America/New_York",
        location: "Riverside Hall",
        details: "Black tie",
      },
      tickets: [
        {
          name: "General admission",
          price: 75,
          ticketType: "INDIVIDUAL",
          groupSize: null,
          description: "",
          maxPerOrder: 10,
          remaining: 200,
          soldOut: false,
        },
        {
          name: "Table for eight",
          price: 500,
          ticketType: "GROUP",
          groupSize: 8,
          description: "",
          maxPerOrder: null,
          remaining: 20,
          soldOut: false,
        },
        {
          name: "VIP",
          price: 900,
          ticketType: "INDIVIDUAL",
          groupSize: null,
          description: "",
          maxPerOrder: null,
          remaining: 0,
          soldOut: true,
        },
      ],
    } as never);

  it("says a ticket sold out meanwhile once, at the tickets", async () => {
    const api = fakeApi({
      checkout: [
        {
          status: 400,
          body: {
            error: 'Sold out: "General admission" tickets are sold out',
            details: ['"General admission" tickets are sold out'],
          },
        },
      ],
    });
    renderCheckout(event(), { api });
    fireEvent.input(byLabel("General admission"), { target: { value: "2" } });
    fillDonor();
    fillCard();
    submit();
    await waitFor(() =>
      expect(screen.getByRole("alert").textContent).toBe(
        'Sold out: "General admission" tickets are sold out',
      ),
    );
    expect(screen.getByRole("group", { name: "Tickets" }).getAttribute("aria-invalid")).toBe("true");
  });

  it("shows date, time, time zone and location, and tickets with prices, group size, stock and limits", () => {
    renderCheckout(event());
    const details = screen.getByRole("region", { name: "When and where" });
    expect(details.textContent).toContain("Saturday, May 15, 2027");
    // The zone by its name in the page's language, not its database id.
    expect(details.textContent).toContain("6:30 PM – 10:00 PM (Eastern Time)");
    cleanup();
    useLocale("es");
    renderCheckout(event());
    expect(document.querySelector(".alm-event")?.textContent).toContain("(hora oriental)");
    cleanup();
    useLocale();
    renderCheckout(event());
    expect(details.textContent).toContain("Riverside Hall");
    expect(screen.getByText(/\$500 · admits 8 · 20 left/)).toBeTruthy();
    expect(screen.getByText(/\$75 · 200 left · up to 10 per order/)).toBeTruthy();
    const general = byLabel("General admission") as HTMLInputElement;
    expect(general.max).toBe("10");
    expect((byLabel("VIP") as HTMLInputElement).disabled).toBe(true);
  });

  it("orders a group ticket with a promo code; the discount from the quote is shown", async () => {
    const api = fakeApi({
      price: (o) => {
        const tickets = o.tickets as { name: string; quantity: number }[];
        const subtotal = tickets.reduce(
          (s, t) => s + (t.name === "Table for eight" ? 500 : 75) * t.quantity,
          0,
        );
        const discount = o.promoCode ? 15 : 0;
        return {
          subtotal,
          discount,
          promoCode: o.promoCode ? "EARLYBIRD" : null,
          total: subtotal - discount,
          lines: tickets.map((t) => ({
            kind: "ticket",
            label: t.name,
            unitPrice: 0,
            quantity: t.quantity,
            amount: 0,
          })),
        };
      },
    });
    renderCheckout(event(), { api });
    fireEvent.input(byLabel("Table for eight"), { target: { value: "1" } });
    fireEvent.input(byLabel("General admission"), { target: { value: "1" } });
    await waitFor(() => expect(screen.getByRole("button", { name: "Pay $575" })).toBeTruthy());
    type("Promo code", "earlybird");
    fireEvent.click(screen.getByRole("button", { name: "Apply" }));
    await waitFor(() => expect(screen.getByText("Promo code EARLYBIRD applied: you save $15.")).toBeTruthy());
    expect(screen.getByRole("button", { name: "Pay $560" })).toBeTruthy();
    expect(within(screen.getByRole("region", { name: "Summary" })).getByText("−$15")).toBeTruthy();
    fillDonor();
    fillCard();
    submit();
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body).toMatchObject({
      tickets: [
        { name: "General admission", quantity: 1 },
        { name: "Table for eight", quantity: 1 },
      ],
      promoCode: "earlybird",
    });
    expect(api.checkouts()[0].body.amount).toBeUndefined();
  });

  /** One $75 ticket chosen and "earlybird" typed in the promo code's field, which takes $15 off once applied. */
  function oneTicketWithPromoTyped() {
    const api = fakeApi({
      price: (o) => ({
        subtotal: 75,
        discount: o.promoCode ? 15 : 0,
        promoCode: o.promoCode ? "EARLYBIRD" : null,
        total: o.promoCode ? 60 : 75,
      }),
    });
    renderCheckout(event(), { api });
    fireEvent.input(byLabel("General admission"), { target: { value: "1" } });
    type("Promo code", "earlybird");
    return api;
  }

  it("applies the promo code on Enter in its field, sending nothing, and keeps the focus there", async () => {
    const api = oneTicketWithPromoTyped();
    const promo = byLabel("Promo code") as HTMLInputElement;
    promo.focus();
    // Enter in a text field submits its form.
    fireEvent.submit(promo.closest("form") as HTMLFormElement);
    await waitFor(() => expect(screen.getByText("Promo code EARLYBIRD applied: you save $15.")).toBeTruthy());
    expect(api.checkouts()).toHaveLength(0);
    expect(screen.getByRole("alert").textContent).toBe("");
    await waitFor(() => expect(document.activeElement).toBe(promo));
  });

  it("takes off an applied promo code whose field was emptied, says so, and sends the order only on the next press", async () => {
    const api = oneTicketWithPromoTyped();
    fireEvent.click(screen.getByRole("button", { name: "Apply" }));
    await waitFor(() => expect(screen.getByRole("button", { name: "Pay $60" })).toBeTruthy());
    type("Promo code", "");
    fillDonor();
    fillCard();
    submit();
    await waitFor(() =>
      expect(screen.getByRole("alert").textContent).toBe(
        "The promo code is taken off, as its field is empty: check the new total, then press the button again.",
      ),
    );
    expect(api.checkouts()).toHaveLength(0);
    await waitFor(() => expect(screen.getByRole("button", { name: "Pay $75" })).toBeTruthy());
    submit();
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body.promoCode).toBeUndefined();
  });

  it("registers for free tickets without asking for payment", async () => {
    const api = fakeApi({ price: () => ({ total: 0, subtotal: 0 }) });
    renderCheckout(
      formView({
        formType: "EVENT",
        tickets: [
          {
            name: "Community night",
            price: 0,
            ticketType: "INDIVIDUAL",
            groupSize: null,
            description: "",
            maxPerOrder: 4,
            remaining: null,
            soldOut: false,
          },
        ],
      } as never),
      { api },
    );
    fireEvent.input(byLabel("Community night"), { target: { value: "2" } });
    await waitFor(() => expect(screen.getByRole("button", { name: "Register" })).toBeTruthy());
    expect(screen.queryByLabelText(/Card number/)).toBeNull();
    fillDonor();
    submit();
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body.paymentMethod).toBeUndefined();
    expect(api.checkouts()[0].body.tickets).toEqual([{ name: "Community night", quantity: 2 }]);
  });

  it("ties an unknown promo code's error to the promo code field", async () => {
    const api = fakeApi({
      price: (o) =>
        o.promoCode
          ? {
              status: 400,
              body: {
                error: "Validation failed",
                details: ['Promo code "NOPE" is not valid for this event'],
              },
            }
          : { total: 75, subtotal: 75 },
    });
    renderCheckout(event(), { api });
    fireEvent.input(byLabel("General admission"), { target: { value: "1" } });
    type("Promo code", "NOPE");
    fireEvent.click(screen.getByRole("button", { name: "Apply" }));
    const field = byLabel("Promo code");
    await waitFor(() => expect(field.getAttribute("aria-invalid")).toBe("true"));
    // In the page's own words (its catalog's), not the server's English.
    expect(document.getElementById(field.getAttribute("aria-describedby") ?? "")?.textContent).toBe(
      "This promo code is not valid.",
    );
    expect(screen.getByText("This order cannot be priced.")).toBeTruthy();
    expect(screen.queryByText(/Calculating/)).toBeNull();
  });

  it("refuses a checkout without tickets and clamps a quantity to the per-order limit", async () => {
    const { api } = renderCheckout(event());
    fireEvent.input(byLabel("General admission"), { target: { value: "25" } });
    expect((byLabel("General admission") as HTMLInputElement).value).toBe("10");
    fireEvent.input(byLabel("General admission"), { target: { value: "0" } });
    fillDonor();
    submit();
    await waitFor(() => expect(screen.getByText("Choose at least one ticket.")).toBeTruthy());
    expect(screen.getByRole("group", { name: "Tickets" }).getAttribute("aria-invalid")).toBe("true");
    expect(api.checkouts()).toHaveLength(0);
  });
});

describe("questions and choices", () => {
  it("renders short, long, single and multi custom inputs with required marks, and sends the answers", async () => {
    const { api } = renderCheckout(
      formView({
        customInputs: [
          { id: "a", title: "Dedication", inputType: "short_text", required: true, options: [] },
          { id: "b", title: "Message", inputType: "long_text", required: false, options: [] },
          {
            id: "c",
            title: "T-shirt size",
            inputType: "single_select",
            required: true,
            options: ["S", "M", "L"],
          },
          {
            id: "d",
            title: "Interests",
            inputType: "multi_select",
            required: false,
            options: ["Trees", "Rivers"],
          },
        ],
      }),
    );
    expect(byLabel(/Dedication/).tagName).toBe("INPUT");
    expect(byLabel("Message").tagName).toBe("TEXTAREA");
    expect(byLabel(/T-shirt size/).tagName).toBe("SELECT");
    expect(screen.getByRole("group", { name: "Interests" })).toBeTruthy();
    expect((byLabel(/Dedication/) as HTMLInputElement).required).toBe(true);
    expect(screen.getByText("Dedication").parentElement?.querySelector(".alm-req")).toBeTruthy();
    fillDonor();
    fillCard();
    submit();
    await waitFor(() => expect(screen.getByText("Dedication is required.")).toBeTruthy());
    expect(byLabel(/T-shirt size/).getAttribute("aria-invalid")).toBe("true");
    type(/Dedication/, "For Grandma");
    type("Message", "Love");
    fireEvent.change(byLabel(/T-shirt size/), { target: { value: "M" } });
    fireEvent.click(byLabel("Rivers"));
    fireEvent.click(byLabel("Trees"));
    submit();
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body.customInputs).toEqual({
      a: "For Grandma",
      b: "Love",
      c: "M",
      d: ["Rivers", "Trees"],
    });
  });

  it("names a required group of checkboxes '(required)' for screen readers, as its fields' required attribute does", async () => {
    renderCheckout(
      formView({
        customInputs: [
          {
            id: "d",
            title: "Interests",
            inputType: "multi_select",
            required: true,
            options: ["Trees", "Rivers"],
          },
          { id: "e", title: "Newsletters", inputType: "multi_select", required: false, options: ["Monthly"] },
        ],
      }),
    );
    const group = screen.getByRole("group", { name: "Interests (required)" });
    expect(group.querySelector(".alm-req")?.getAttribute("aria-hidden")).toBe("true");
    expect(screen.getByRole("group", { name: "Newsletters" })).toBeTruthy();
  });

  it("offers cover-fees (with the fee) and anonymous only when enabled, and sends them", async () => {
    const on = {
      coverFees: true,
      anonymous: true,
      organizationName: false,
      billingAddress: false,
      country: false,
      phone: false,
      tribute: false,
      monthlyUpsell: null,
    };
    const { api } = renderCheckout(formView({ options: on, defaultAmount: 100 }));
    expect(byLabel(/Add \$3\.30 so all of my gift goes to Green Org/)).toBeTruthy();
    fireEvent.click(byLabel(/Add \$3\.30/));
    fireEvent.click(byLabel(/anonymous/));
    await waitFor(() => expect(api.quotes().at(-1)?.body).toMatchObject({ amount: 100, coverFees: true }));
    fillDonor();
    fillCard();
    submit();
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body).toMatchObject({ coverFees: true, anonymous: true, emailOptIn: false });
    cleanup();
    renderCheckout(formView());
    expect(screen.queryByLabelText(/so all of my gift/)).toBeNull();
    expect(screen.queryByLabelText(/anonymous/)).toBeNull();
  });

  it("keeps drawing after an amount too large to price (a card number pasted in the amount): the button names each later choice", async () => {
    const options = { ...formView().options, coverFees: true };
    renderCheckout(formView({ options, frequencies: ["ONE_TIME", "MONTHLY"] }));
    type("Other amount", "4242424242424242");
    await waitFor(() =>
      expect(screen.getByRole("button", { name: /^Donate \$4,242,424,242,424,242/ })).toBeTruthy(),
    );
    type("Other amount", "30");
    await waitFor(() => expect(screen.getByRole("button", { name: "Donate $30" })).toBeTruthy());
    expect(byLabel(/Add \$1\.\d\d so all of my gift goes to Green Org/)).toBeTruthy();
    fireEvent.click(screen.getByRole("radio", { name: "Monthly" }));
    fireEvent.click(screen.getByRole("radio", { name: /^\$20/ }));
    await waitFor(() => expect(screen.getByRole("button", { name: "Donate $20 monthly" })).toBeTruthy());
  });

  it("offers a dedication only where the form takes one, needs the honoree's name, and sends the tribute", async () => {
    const options = { ...formView().options, tribute: true };
    const { api } = renderCheckout(formView({ options, defaultAmount: 50 }));
    expect(screen.queryByLabelText(/Their name/)).toBeNull();
    fireEvent.click(byLabel("Dedicate my gift to someone"));
    fireEvent.click(byLabel("In memory of"));
    fillDonor();
    fillCard();
    submit();
    const name = byLabel("Their name");
    await waitFor(() => expect(name.getAttribute("aria-invalid")).toBe("true"));
    expect(api.checkouts()).toHaveLength(0);

    type("Their name", "Grace Hopper");
    type(/Email someone about it/, "family@example.org");
    type(/Your message/, "For Grace.");
    submit();
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body.tribute).toEqual({
      kind: "MEMORY",
      honoreeName: "Grace Hopper",
      notifyEmail: "family@example.org",
      message: "For Grace.",
    });
    cleanup();

    const plain = renderCheckout(formView({ defaultAmount: 50 }));
    expect(screen.queryByLabelText("Dedicate my gift to someone")).toBeNull();
    fillDonor();
    fillCard();
    submit();
    await waitFor(() => expect(plain.api.checkouts()).toHaveLength(1));
    expect(plain.api.checkouts()[0].body.tribute).toBeUndefined();
  });

  it("offers a qualifying one-time gift, once, as a monthly one: yes switches to monthly, no sends it as it was", async () => {
    const options = { ...formView().options, monthlyUpsell: { ratio: 0.3, minimum: 50 } };
    const view = formView({ options, defaultAmount: 100, frequencies: ["ONE_TIME", "MONTHLY"] });
    const { api } = renderCheckout(view);
    // A first try with the fields empty says what to fix; once they are right, the offer says nothing of it.
    submit();
    await waitFor(() => expect(screen.getByRole("alert").textContent).toMatch(/Please fix/));
    fillDonor();
    fillCard();
    submit();
    const offer = await screen.findByRole("region", { name: "Make it monthly?" });
    expect(screen.queryByText(/Please fix/)).toBeNull();
    expect(document.querySelectorAll('[aria-invalid="true"]')).toHaveLength(0);
    expect(offer.textContent).toContain(
      "A monthly gift of $30 does more over the year than one gift of $100",
    );
    expect(api.checkouts()).toHaveLength(0);
    fireEvent.click(screen.getByRole("button", { name: "Yes, give $30 monthly" }));
    expect(screen.queryByRole("region", { name: "Make it monthly?" })).toBeNull();
    await waitFor(() => expect(screen.getByRole("button", { name: /^Donate \$30 monthly$/ })).toBeTruthy());
    submit();
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body).toMatchObject({ frequency: "MONTHLY", amount: 30 });
    cleanup();

    const declined = renderCheckout(view);
    fillDonor();
    fillCard();
    submit();
    fireEvent.click(await screen.findByRole("button", { name: "No, give $100 once" }));
    await waitFor(() => expect(declined.api.checkouts()).toHaveLength(1));
    expect(declined.api.checkouts()[0].body).toMatchObject({ frequency: "ONE_TIME", amount: 100 });
    cleanup();

    // Below the minimum, or on a form without the offer, the gift goes straight through.
    const small = renderCheckout(
      formView({ options, defaultAmount: 25, frequencies: ["ONE_TIME", "MONTHLY"] }),
    );
    fillDonor();
    fillCard();
    submit();
    await waitFor(() => expect(small.api.checkouts()).toHaveLength(1));
    expect(screen.queryByRole("region", { name: "Make it monthly?" })).toBeNull();
  });

  it("names in the offer what each answer gives now: the total with a covered fee, and the gift chosen after the offer showed", async () => {
    const options = { ...formView().options, coverFees: true, monthlyUpsell: { ratio: 0.3, minimum: 50 } };
    const view = formView({ options, defaultAmount: 100, frequencies: ["ONE_TIME", "MONTHLY"] });
    const api = fakeApi({
      price: (order) => {
        const amount = Number(order.amount ?? 0);
        const fee = order.coverFees ? Math.round(amount * 3.3) / 100 : 0;
        return { subtotal: amount, total: amount + fee };
      },
    });
    renderCheckout(view, { api });
    fireEvent.click(byLabel(/so all of my gift goes to/));
    fillDonor();
    fillCard();
    await waitFor(() => expect(screen.getByRole("button", { name: /^Donate \$103\.30/ })).toBeTruthy());
    submit();
    expect(await screen.findByRole("button", { name: "No, give $103.30 once" })).toBeTruthy();
    // Another amount chosen while the offer shows: both answers follow it.
    fireEvent.click(screen.getByRole("radio", { name: "$50" }));
    expect(await screen.findByRole("button", { name: "Yes, give $15 monthly" })).toBeTruthy();
    await waitFor(() => expect(screen.getByRole("button", { name: "No, give $51.65 once" })).toBeTruthy());
    // Below the offer's minimum, the offer goes and the form's own button is back.
    fireEvent.click(screen.getByRole("radio", { name: "$25" }));
    await waitFor(() => expect(screen.queryByRole("region", { name: "Make it monthly?" })).toBeNull());
    expect(api.checkouts()).toHaveLength(0);
  });

  it("does not send the one-time gift past the offer on a second press of the form's button", async () => {
    const options = { ...formView().options, monthlyUpsell: { ratio: 0.3, minimum: 50 } };
    const { api, c } = renderCheckout(
      formView({ options, defaultAmount: 100, frequencies: ["ONE_TIME", "MONTHLY"] }),
    );
    fillDonor();
    fillCard();
    const form = screen.getByRole("button", { name: /^Donate/ }).closest("form") as HTMLFormElement;
    fireEvent.submit(form);
    fireEvent.submit(form);
    await screen.findByRole("region", { name: "Make it monthly?" });
    // A press queued behind the first one, as while the sending code loads.
    await submitCheckout(c);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(api.checkouts()).toHaveLength(0);
    expect(screen.getByRole("region", { name: "Make it monthly?" })).toBeTruthy();
  });

  it("suggests a monthly amount the form takes: raised to its minimum, and no offer when that is not less", async () => {
    const options = { ...formView().options, monthlyUpsell: { ratio: 0.1, minimum: 50 } };
    const view = formView({
      options,
      defaultAmount: 100,
      minAmount: 20,
      frequencies: ["ONE_TIME", "MONTHLY"],
    });
    renderCheckout(view);
    fillDonor();
    fillCard();
    submit();
    // 10% of $100 is $10, below the form's $20 minimum: the suggestion is $20.
    expect(await screen.findByRole("button", { name: "Yes, give $20 monthly" })).toBeTruthy();
    cleanup();

    const high = renderCheckout(
      formView({ options, defaultAmount: 100, minAmount: 100, frequencies: ["ONE_TIME", "MONTHLY"] }),
    );
    fillDonor();
    fillCard();
    submit();
    await waitFor(() => expect(high.api.checkouts()).toHaveLength(1));
    expect(screen.queryByRole("region", { name: "Make it monthly?" })).toBeNull();
  });

  it("sends the donor's email opt-in", async () => {
    const { api } = renderCheckout(formView());
    fillDonor();
    fillCard();
    fireEvent.click(byLabel("Send me news and updates from Green Org"));
    submit();
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body.emailOptIn).toBe(true);
  });

  it("asks for organization name, address, country and phone only when the form enables them", async () => {
    renderCheckout(formView());
    for (const label of ["Organization name", "Street address", "Country", "Phone"])
      expect(screen.queryByLabelText(label)).toBeNull();
    cleanup();
    const { api } = renderCheckout(
      formView({
        options: {
          coverFees: false,
          anonymous: false,
          organizationName: true,
          billingAddress: true,
          country: true,
          phone: true,
          tribute: false,
          monthlyUpsell: null,
        },
      }),
    );
    fillDonor();
    type("Organization name", "Analytical Engines");
    type("Street address", "12 Main St");
    type("City", "London");
    type("Postal code", "N1");
    type("Phone", "+44 20 0000");
    fireEvent.change(byLabel("Country"), { target: { value: "GB" } });
    fillCard();
    submit();
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body.donor).toEqual({
      firstName: "Ada",
      lastName: "Lovelace",
      email: "ada@example.org",
      phone: "+44 20 0000",
      organizationName: "Analytical Engines",
      address: { line1: "12 Main St", city: "London", postal: "N1", country: "GB" },
    });
  });
});

describe("a prefilled country", () => {
  const withCountry = (country: string) =>
    formView({
      options: {
        coverFees: false,
        anonymous: false,
        organizationName: false,
        billingAddress: false,
        country: true,
        phone: false,
        tribute: false,
        monthlyUpsell: null,
      },
      prefill: { country, customInputs: {}, utm: {} },
    } as never);

  it("the select cannot show is not sent: the donor sees no choice and is sent none", async () => {
    const { api } = renderCheckout(withCountry("Deutschland"));
    expect((byLabel("Country") as HTMLSelectElement).value).toBe("");
    fillDonor();
    fillCard();
    submit();
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body.donor).toEqual({
      firstName: "Ada",
      lastName: "Lovelace",
      email: "ada@example.org",
    });
  });

  it("as the select's code is shown chosen and sent", async () => {
    const { api } = renderCheckout(withCountry("DE"));
    expect((byLabel("Country") as HTMLSelectElement).value).toBe("DE");
    fillDonor();
    fillCard();
    submit();
    await waitFor(() => expect(api.checkouts()).toHaveLength(1));
    expect(api.checkouts()[0].body.donor).toMatchObject({ address: { country: "DE" } });
  });
});

describe("around the form", () => {
  it("shows FAQs as an accordion, the fundraising bar and the donor list with anonymous donors", () => {
    renderCheckout(
      formView({
        faqs: [{ question: "Is it tax-deductible?", answer: "Yes." }],
        fundraisingBar: { goal: 1000, raised: 250, donors: 3 },
        donorList: [
          { name: "Ada L.", anonymous: false, amount: 50, date: "2026-01-02T00:00:00Z" },
          { name: "Anonymous", anonymous: true, amount: 25, date: "2026-01-01T00:00:00Z" },
        ],
      }),
    );
    const faq = screen.getByText("Is it tax-deductible?").closest("details") as HTMLDetailsElement;
    expect(faq.open).toBe(false);
    expect(faq.querySelector("summary")?.textContent).toBe("Is it tax-deductible?");
    const bar = screen.getByRole("progressbar");
    expect(bar.getAttribute("value")).toBe("25");
    expect(bar.getAttribute("aria-label")).toBe("25% of the $1,000 goal raised");
    expect(screen.getByText(/raised of \$1,000 goal · 3 donors/)).toBeTruthy();
    const list = within(screen.getByRole("region", { name: "Recent supporters" })).getAllByRole("listitem");
    expect(list.map((li) => li.textContent)).toEqual(["Ada L. $50", "Anonymous $25"]);
  });

  it("shows form text as text, never as HTML", () => {
    const { container } = renderCheckout(
      formView({ title: "<img src=x onerror=alert(1)>", description: "<b>bold</b>" }),
    );
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("<img src=x onerror=alert(1)>");
    expect(container.querySelector("b, img")).toBeNull();
  });
});

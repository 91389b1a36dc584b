// @vitest-environment happy-dom
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/preact";
import { describe, expect, it, vi } from "vitest";
import {
  type Call,
  type Handler,
  openDashboard,
  organization,
  payment,
  type Role,
  standInApi,
} from "../support/dashboardStandIn.js";

/**
 * The staff dashboard's pages (widget/dashboard) in happy-dom, against a stand-in for the API that records
 * each call. The real server and browser are covered by test/e2e/dashboard.e2e.test.ts.
 */

const { calls, on, signedIn: signedInAs } = standInApi();
const open = openDashboard;

const FINANCE = [
  "donations:read",
  "donations:write",
  "subscriptions:read",
  "contacts:read",
  "analytics:read",
];
const STAFF = ["forms:read", "forms:write", "contacts:read", "donations:read", "subscriptions:read"];

const signedIn = (role: Role, permissions: string[], more: Record<string, unknown> = {}) =>
  signedInAs(role, permissions, more);

describe("signing in", () => {
  it("shows the sign-in page without a session, and asks for the authenticator's code when the server does", async () => {
    on("GET", /^\/api\/staff\/me$/, () => ({ status: 401, body: { error: "Not signed in" } }));
    let attempts = 0;
    on("POST", /^\/api\/staff\/login$/, (call) => {
      attempts++;
      const body = call.body as { code?: string };
      if (!body.code) return { status: 401, body: { error: "Enter the code", twoFactorRequired: true } };
      return {
        body: {
          userId: "usr_1",
          email: "pat@charity.example",
          organizationId: "org_1",
          organizationName: "Tree Trust",
          role: "STAFF",
          permissions: STAFF,
        },
      };
    });
    open("/dashboard/payments");
    await screen.findByRole("heading", { name: /Sign in/ });
    fireEvent.input(screen.getByLabelText("E-mail address"), { target: { value: "pat@charity.example" } });
    fireEvent.input(screen.getByLabelText("Password"), { target: { value: "correct horse battery" } });
    fireEvent.submit(screen.getByRole("button", { name: "Sign in" }).closest("form") as HTMLFormElement);

    const code = await screen.findByLabelText("Code from your authenticator app");
    expect(screen.queryByRole("alert")).toBeNull();
    fireEvent.input(code, { target: { value: "123 456" } });
    fireEvent.submit(code.closest("form") as HTMLFormElement);
    // Signed in, the page the address named opens.
    await screen.findByRole("heading", { name: "Payments" });
    expect(attempts).toBe(2);
    expect(
      calls.find((c) => c.path === "/api/staff/login" && (c.body as { code?: string }).code)?.body,
    ).toEqual({
      email: "pat@charity.example",
      password: "correct horse battery",
      code: "123456",
    });
  });

  it("sets a password from a set-up link and refuses two that differ before sending anything", async () => {
    on("POST", /^\/api\/staff\/link$/, () => ({
      body: { email: "o@x.org", organizationName: "Tree Trust", signInRequired: false },
    }));
    on("POST", /^\/api\/staff\/setup$/, () => ({
      body: {
        userId: "u",
        email: "o@x.org",
        organizationId: "o",
        organizationName: "Tree Trust",
        role: "OWNER",
        permissions: [],
      },
    }));
    on("GET", /^\/api\/staff\/me$/, () => ({ status: 401, body: { error: "Not signed in" } }));
    open("/dashboard/setup?token=tok_abc");
    const password = await screen.findByLabelText("Password");
    // Whose account the link sets, said before anything is typed.
    expect(screen.getByText(/^For/).textContent).toBe(
      "For o@x.org at Tree Trust. Not you? Close this page: the link is someone else's.",
    );
    expect(calls.find((c) => c.path === "/api/staff/link")?.body).toEqual({
      token: "tok_abc",
      kind: "setup",
    });
    fireEvent.input(password, { target: { value: "a long passphrase here" } });
    fireEvent.input(screen.getByLabelText("The same password again"), {
      target: { value: "another one entirely" },
    });
    fireEvent.submit(password.closest("form") as HTMLFormElement);
    expect((await screen.findByRole("alert")).textContent).toMatch(/not the same/);
    expect(calls.some((c) => c.path === "/api/staff/setup")).toBe(false);

    fireEvent.input(screen.getByLabelText("The same password again"), {
      target: { value: "a long passphrase here" },
    });
    fireEvent.submit(password.closest("form") as HTMLFormElement);
    await waitFor(() => expect(window.location.pathname).toBe("/dashboard"));
    expect(calls.find((c) => c.path === "/api/staff/setup")?.body).toEqual({
      token: "tok_abc",
      password: "a long passphrase here",
    });
    // The token leaves the address once used.
    expect(window.location.search).toBe("");
  });

  it("says at once that a used or expired link is dead, asking for no password", async () => {
    on("POST", /^\/api\/staff\/link$/, () => ({
      status: 401,
      body: { error: "This reset link has been used or has expired: ask for a new one on the sign-in page" },
    }));
    on("GET", /^\/api\/staff\/me$/, () => ({ status: 401, body: { error: "Not signed in" } }));
    open("/dashboard/reset?token=tok_old");
    expect((await screen.findByRole("alert")).textContent).toMatch(/has been used or has expired/);
    expect(screen.queryByLabelText("Password")).toBeNull();
    expect(screen.getByRole("link", { name: "Sign in" })).toBeTruthy();
  });

  it("takes a person with a password straight to signing in with the set-up link, their address filled in", async () => {
    on("POST", /^\/api\/staff\/link$/, () => ({
      body: { email: "o@x.org", organizationName: "River Trust", signInRequired: true },
    }));
    on("GET", /^\/api\/staff\/me$/, () => ({ status: 401, body: { error: "Not signed in" } }));
    open("/dashboard/setup?token=tok_abc");
    await screen.findByRole("heading", { name: "Sign in to accept the invitation" });
    expect((screen.getByLabelText("E-mail address") as HTMLInputElement).value).toBe("o@x.org");
    expect(screen.queryByLabelText("The same password again")).toBeNull();
  });

  it("asks a person who already has a password to sign in with it and the set-up link, which opens the inviting organization", async () => {
    on("POST", /^\/api\/staff\/link$/, () => ({
      body: { email: "o@x.org", organizationName: "Tree Trust", signInRequired: false },
    }));
    on("POST", /^\/api\/staff\/setup$/, () => ({
      status: 409,
      body: { error: "This address already has a password here", signInRequired: true },
    }));
    on("POST", /^\/api\/staff\/login$/, (call) => {
      const body = call.body as { code?: string };
      if (!body.code) return { status: 401, body: { error: "Enter the code", twoFactorRequired: true } };
      return {
        body: {
          userId: "u",
          email: "o@x.org",
          organizationId: "org_b",
          organizationName: "River Trust",
          role: "FINANCE",
          permissions: [],
        },
      };
    });
    on("GET", /^\/api\/staff\/me$/, () => ({ status: 401, body: { error: "Not signed in" } }));
    open("/dashboard/setup?token=tok_abc");
    const password = await screen.findByLabelText("Password");
    fireEvent.input(password, { target: { value: "a long passphrase here" } });
    fireEvent.input(screen.getByLabelText("The same password again"), {
      target: { value: "a long passphrase here" },
    });
    fireEvent.submit(password.closest("form") as HTMLFormElement);

    await screen.findByRole("heading", { name: "Sign in to accept the invitation" });
    fireEvent.input(screen.getByLabelText("E-mail address"), { target: { value: "o@x.org" } });
    fireEvent.input(screen.getByLabelText("Password"), { target: { value: "my own passphrase" } });
    fireEvent.submit(screen.getByRole("button", { name: "Sign in" }).closest("form") as HTMLFormElement);
    const code = await screen.findByLabelText("Code from your authenticator app");
    // The field that appeared takes the focus: its label is read, and the code is typed at once.
    await waitFor(() => expect(document.activeElement).toBe(code));
    fireEvent.input(code, { target: { value: "123456" } });
    fireEvent.submit(code.closest("form") as HTMLFormElement);
    await waitFor(() => expect(window.location.pathname).toBe("/dashboard"));
    expect(calls.filter((c) => c.path === "/api/staff/login").map((c) => c.body)).toEqual([
      { email: "o@x.org", password: "my own passphrase", invitation: "tok_abc" },
      { email: "o@x.org", password: "my own passphrase", code: "123456", invitation: "tok_abc" },
    ]);
    expect(window.location.search).toBe("");
  });
  it("asks for the authenticator's code when a reset link's person has two-step sign-in on, says a refused code at its field, and takes a recovery code", async () => {
    on("POST", /^\/api\/staff\/link$/, () => ({
      body: { email: "o@x.org", organizationName: "Tree Trust", signInRequired: false },
    }));
    const codes: (string | undefined)[] = [];
    on("POST", /^\/api\/staff\/password-reset\/complete$/, (call) => {
      const { code } = call.body as { code?: string };
      codes.push(code);
      // As server/staff/passwordReset.ts answers: no code, or a wrong one, is a 401 and the link still works.
      if (code === undefined)
        return {
          status: 401,
          body: {
            error: "Enter the 6-digit code from your authenticator app, or a recovery code",
            twoFactorRequired: true,
          },
        };
      if (code !== "abcde-fghij")
        return {
          status: 401,
          body: { error: "The code is wrong or has already been used", twoFactorRequired: true },
        };
      return {
        body: {
          userId: "u",
          email: "o@x.org",
          organizationId: "o",
          organizationName: "Tree Trust",
          role: "OWNER",
          permissions: [],
        },
      };
    });
    on("GET", /^\/api\/staff\/me$/, () => ({ status: 401, body: { error: "Not signed in" } }));
    open("/dashboard/reset?token=tok_reset");
    const password = await screen.findByLabelText("Password");
    fireEvent.input(password, { target: { value: "a long passphrase here" } });
    fireEvent.input(screen.getByLabelText("The same password again"), {
      target: { value: "a long passphrase here" },
    });
    fireEvent.submit(password.closest("form") as HTMLFormElement);

    // Asked for a code: its field appears, with focus, and no error yet.
    const code = (await screen.findByLabelText("Code from your authenticator app")) as HTMLInputElement;
    await waitFor(() => expect(document.activeElement).toBe(code));
    expect(screen.queryByRole("alert")).toBeNull();
    expect(code.getAttribute("aria-describedby")).toBe(screen.getByText("Or one of your recovery codes.").id);

    fireEvent.input(code, { target: { value: "111 111" } });
    fireEvent.submit(code.closest("form") as HTMLFormElement);
    const refused = await screen.findByRole("alert");
    expect(refused.textContent).toBe("The code is wrong or has already been used");
    expect(code.getAttribute("aria-invalid")).toBe("true");
    expect(code.getAttribute("aria-describedby")?.split(" ")).toContain(refused.id);
    expect(window.location.pathname).toBe("/dashboard/reset");

    fireEvent.input(code, { target: { value: "abcde-fghij" } });
    fireEvent.submit(code.closest("form") as HTMLFormElement);
    await waitFor(() => expect(window.location.pathname).toBe("/dashboard"));
    expect(window.location.search).toBe("");
    expect(codes).toEqual([undefined, "111111", "abcde-fghij"]);
    expect(calls.filter((c) => c.path === "/api/staff/password-reset/complete").map((c) => c.body)).toEqual([
      { token: "tok_reset", password: "a long passphrase here" },
      { token: "tok_reset", password: "a long passphrase here", code: "111111" },
      { token: "tok_reset", password: "a long passphrase here", code: "abcde-fghij" },
    ]);
  });
});

describe("what a role is offered", () => {
  it("shows Finance a refund, which says it cannot be undone and is sent once with an Idempotency-Key", async () => {
    signedIn("FINANCE", FINANCE);
    on("GET", /^\/v1\/payments\/pay_01$/, () => ({ body: payment() }));
    on("POST", /^\/v1\/payments\/pay_01\/refund$/, () => ({
      body: { message: "Payment refunded in part", payment: payment({ refundedAmount: 20 }) },
    }));
    open("/dashboard/payments/pay_01");
    await screen.findByRole("heading", { name: /\$50\.00 from Ada Donor/ });
    const nav = screen.getByRole("navigation", { name: "Dashboard" });
    expect(within(nav).queryByRole("link", { name: "Team" })).toBeNull();
    expect(within(nav).queryByRole("link", { name: "Audit log" })).toBeNull();

    fireEvent.input(screen.getByLabelText("Amount (USD)"), { target: { value: "20" } });
    fireEvent.input(screen.getByLabelText("Reason (optional)"), { target: { value: "Asked by the donor" } });
    fireEvent.submit(screen.getByRole("button", { name: "Refund…" }).closest("form") as HTMLFormElement);
    const confirm = await screen.findByRole("alertdialog");
    expect(confirm.textContent).toMatch(/Refund \$20\.00 to ada@example\.org\? This cannot be undone\./);
    expect(calls.some((c) => c.path.endsWith("/refund"))).toBe(false);

    fireEvent.click(within(confirm).getByRole("button", { name: /Yes, refund/ }));
    await screen.findByText(/Payment refunded in part: \$20\.00/);
    const refund = calls.filter((c) => c.path.endsWith("/refund"));
    expect(refund).toHaveLength(1);
    expect(refund[0]?.body).toEqual({ amount: 20, reason: "Asked by the donor" });
    expect(refund[0]?.headers["Idempotency-Key"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each([
    ["a completed payment", { status: "COMPLETED" }, true],
    ["a bank payment settling", { status: "PENDING", paymentMethod: "bank" }, true],
    ["a failed payment", { status: "FAILED" }, false],
    ["a payment refunded in full", { status: "REFUNDED", refundedAmount: 50 }, false],
    ["a card charge waiting for the donor", { status: "PENDING", paymentMethod: "card" }, false],
  ])(
    "offers Finance to send the receipt again only for a payment that has one: %s",
    async (_, over, offered) => {
      signedIn("FINANCE", FINANCE);
      on("GET", /^\/v1\/payments\/pay_01$/, () => ({ body: payment(over) }));
      open("/dashboard/payments/pay_01");
      await screen.findByRole("heading", { name: /\$50\.00 from Ada Donor/ });
      expect(screen.queryByRole("button", { name: /Send the receipt again/ }) !== null).toBe(offered);
    },
  );

  it("offers Staff no refund and no receipt resend, and Owners the team and audit log", async () => {
    signedIn("STAFF", STAFF);
    on("GET", /^\/v1\/payments\/pay_01$/, () => ({ body: payment() }));
    open("/dashboard/payments/pay_01");
    await screen.findByRole("heading", { name: /\$50\.00 from Ada Donor/ });
    expect(screen.queryByRole("heading", { name: "Refund" })).toBeNull();
    expect(screen.queryByRole("button", { name: /Send the receipt again/ })).toBeNull();
    cleanup();

    signedIn("OWNER", [...FINANCE, "organization:read"]);
    open("/dashboard/payments/pay_01");
    const nav = await screen.findByRole("navigation", { name: "Dashboard" });
    // The page first shows the session it had (Staff's), then the one `/api/staff/me` answers now.
    expect(await within(nav).findByRole("link", { name: "Team" })).toBeTruthy();
    expect(within(nav).getByRole("link", { name: "Audit log" })).toBeTruthy();
  });
});

describe("pages a role reads, and pages that are not there", () => {
  it("tells Staff the settings are theirs to read, not change, with every field disabled", async () => {
    signedIn("STAFF", [...STAFF, "organization:read"]);
    on("GET", /^\/v1\/organization$/, () => ({ body: organization }));
    on("GET", /^\/v1\/organization\/payments$/, () => ({
      body: { processor: "sandbox", mode: "test", stripe: null },
    }));
    open("/dashboard/settings");
    const note = await screen.findByText(/Your role may read the organization's settings, not change them/);
    expect(note.textContent).toContain("ask an Owner");
    expect((screen.getByLabelText("Name") as HTMLInputElement).disabled).toBe(true);
  });

  it("moves the focus to the heading of a page that is not there, as every page does", async () => {
    signedIn("OWNER", [...FINANCE, "organization:read"]);
    open("/dashboard/audit");
    const heading = await screen.findByRole("heading", { name: "Page not found", level: 1 });
    await waitFor(() => expect(document.activeElement).toBe(heading));
    expect(document.title).toBe("Page not found · Almoner");
  });
});

/**
 * The refund endpoint as server/api/route.ts keeps answers by Idempotency-Key: an answer below 500 but 429
 * is kept and replayed to the same request, and another request with the key is a 422; a 5xx, a 429 or no
 * answer at all is not kept, nor the key store's own "still in progress" (`inProgress`). `run` is the
 * processor, called only when the request runs.
 */
type KeptAnswer = { status?: number; body?: unknown; inProgress?: true };
function keptByKey(run: (call: Call) => KeptAnswer): Handler {
  const kept = new Map<string, { request: string; answer: KeptAnswer }>();
  return (call) => {
    const key = call.headers["Idempotency-Key"] ?? "";
    const request = JSON.stringify(call.body);
    const prior = kept.get(key);
    if (prior)
      return prior.request === request
        ? prior.answer
        : { status: 422, body: { error: "Idempotency-Key reused with a different request" } };
    const answer = run(call);
    const status = answer.status ?? 200;
    if (status < 500 && status !== 429 && !answer.inProgress) kept.set(key, { request, answer });
    return answer;
  };
}

const REFUSED = { status: 409, body: { error: "The processor refused the refund: insufficient funds" } };
const refunded = (amount: number) => ({
  body: { message: "Payment refunded in part", payment: payment({ refundedAmount: amount }) },
});

async function askRefund(amount: string) {
  fireEvent.input(screen.getByLabelText("Amount (USD)"), { target: { value: amount } });
  fireEvent.submit(screen.getByRole("button", { name: "Refund…" }).closest("form") as HTMLFormElement);
  fireEvent.click(await screen.findByRole("button", { name: /Yes, refund/ }));
}

const refundKeys = () =>
  calls.filter((c) => c.path.endsWith("/refund")).map((c) => c.headers["Idempotency-Key"]);

describe("refunds", () => {
  it("asks again for a refund the processor refused with a new Idempotency-Key, so the retry runs instead of replaying the refusal", async () => {
    signedIn("FINANCE", FINANCE);
    on("GET", /^\/v1\/payments\/pay_01$/, () => ({ body: payment() }));
    let runs = 0;
    on(
      "POST",
      /^\/v1\/payments\/pay_01\/refund$/,
      keptByKey(() => (++runs === 1 ? REFUSED : refunded(20))),
    );
    open("/dashboard/payments/pay_01");
    await screen.findByRole("heading", { name: /\$50\.00 from Ada Donor/ });
    await askRefund("20");
    expect((await screen.findByRole("alert")).textContent).toMatch(/processor refused the refund/);

    fireEvent.click(screen.getByRole("button", { name: "Yes, refund $20.00" }));
    await screen.findByText(/Payment refunded in part: \$20\.00/);
    expect(runs).toBe(2);
    const keys = refundKeys();
    expect(keys).toHaveLength(2);
    expect(keys[1]).not.toBe(keys[0]);
  });

  it("refunds another amount or with another reason after a refusal, each with its own Idempotency-Key", async () => {
    signedIn("FINANCE", FINANCE);
    on("GET", /^\/v1\/payments\/pay_01$/, () => ({ body: payment() }));
    on(
      "POST",
      /^\/v1\/payments\/pay_01\/refund$/,
      keptByKey((call) => ((call.body as { reason?: string }).reason ? refunded(15) : REFUSED)),
    );
    open("/dashboard/payments/pay_01");
    await screen.findByRole("heading", { name: /\$50\.00 from Ada Donor/ });
    await askRefund("20");
    expect((await screen.findByRole("alert")).textContent).toMatch(/processor refused the refund/);

    // Another amount: refused by the processor again, not "Idempotency-Key reused".
    await askRefund("15");
    await waitFor(() => expect(refundKeys()).toHaveLength(2));
    expect((await screen.findByRole("alert")).textContent).toMatch(/processor refused the refund/);

    // Another reason: it runs, and is refunded.
    fireEvent.input(screen.getByLabelText("Reason (optional)"), { target: { value: "Asked by the donor" } });
    fireEvent.click(screen.getByRole("button", { name: "Yes, refund $15.00" }));
    await screen.findByText(/Payment refunded in part: \$15\.00/);
    expect(screen.queryByText(/Idempotency-Key/)).toBeNull();
    expect(calls.filter((c) => c.path.endsWith("/refund")).map((c) => c.body)).toEqual([
      { amount: 20 },
      { amount: 15 },
      { amount: 15, reason: "Asked by the donor" },
    ]);
    expect(new Set(refundKeys()).size).toBe(3);
  });

  it("retries a refund whose outcome is open (no answer, a 5xx, a 429, still in progress) with the same Idempotency-Key, so it is made once", async () => {
    signedIn("FINANCE", FINANCE);
    on("GET", /^\/v1\/payments\/pay_01$/, () => ({ body: payment() }));
    const unsettled: KeptAnswer[] = [
      { status: 503, body: { error: "The processor could not be reached" } },
      { status: 429, body: { error: "Too many requests" } },
      {
        status: 409,
        body: { error: "A request with this Idempotency-Key is still in progress; retry shortly" },
        inProgress: true,
      },
    ];
    let made = 0;
    let attempt = 0;
    on(
      "POST",
      /^\/v1\/payments\/pay_01\/refund$/,
      keptByKey(() => {
        attempt++;
        if (attempt === 1) throw new TypeError("Failed to fetch");
        const answer = unsettled.shift();
        if (answer) return answer;
        made++;
        return refunded(20);
      }),
    );
    open("/dashboard/payments/pay_01");
    await screen.findByRole("heading", { name: /\$50\.00 from Ada Donor/ });
    await askRefund("20");
    for (let i = 1; i <= 4; i++) {
      await waitFor(() => expect(refundKeys()).toHaveLength(i));
      await screen.findByRole("alert");
      // The amount changed and back is the same refund: still the same key.
      if (i === 2) {
        fireEvent.input(screen.getByLabelText("Amount (USD)"), { target: { value: "15" } });
        await askRefund("20");
      } else fireEvent.click(screen.getByRole("button", { name: "Yes, refund $20.00" }));
    }
    await screen.findByText(/Payment refunded in part: \$20\.00/);
    expect(made).toBe(1);
    expect(new Set(refundKeys()).size).toBe(1);
    expect(refundKeys()).toHaveLength(5);
  });
});

describe("forms", () => {
  it("shows Staff (who read every payment, without analytics:read) what each form raised", async () => {
    signedIn("STAFF", STAFF);
    const form = (formID: string, title: string, goal: number | null) => ({
      formID,
      formUrl: `https://forms.test/donate/${formID}`,
      title,
      formType: "EMBED_FORM",
      active: true,
      goal,
      funds: [],
      frequencies: ["ONE_TIME"],
      createdAt: "2026-11-01T10:00:00.000Z",
    });
    const a = "0b5b7d1e-2c1f-4a55-9a51-1d2e3f405a01";
    const b = "0b5b7d1e-2c1f-4a55-9a51-1d2e3f405a02";
    on("GET", /^\/v1\/forms(\?|$)/, () => ({
      body: { forms: [form(a, "Plant a tree", 1000), form(b, "Clean the river", null)], count: 2 },
    }));
    on("GET", /^\/v1\/analytics\/forms\?/, () => ({
      body: {
        currency: "USD",
        forms: [
          { formID: a, raised: 55, gifts: 3, otherCurrencies: [{ currency: "EUR", raised: 12, gifts: 1 }] },
          { formID: b, raised: 0, gifts: 0, otherCurrencies: [] },
        ],
      },
    }));
    open("/dashboard/forms");
    const row = (await screen.findByRole("link", { name: "Plant a tree" })).closest("tr") as HTMLElement;
    await waitFor(() => expect(within(row).getByText("$55.00")).toBeTruthy());
    expect(within(row).getByText("3")).toBeTruthy();
    // Gifts made before the organization changed its currency, beside the sum in their own currency.
    expect(within(row).getByText(/\+ €12\.00/)).toBeTruthy();
    const asked = calls.find((c) => c.path.startsWith("/v1/analytics/forms?"));
    expect(decodeURIComponent(asked?.path ?? "")).toContain(`formIDs=${a},${b}`);
  });
});

describe("forms list", () => {
  it("duplicates a form with the longest title: the copy's title fits, and a title taken gets a number", async () => {
    signedIn("STAFF", STAFF);
    const formID = "0b5b7d1e-2c1f-4a55-9a51-1d2e3f405a03";
    const title = "T".repeat(200);
    on("GET", /^\/v1\/forms(\?|$)/, () => ({
      body: {
        forms: [
          {
            formID,
            formUrl: `https://forms.test/donate/${formID}`,
            title,
            formType: "EMBED_FORM",
            active: true,
            goal: null,
            funds: [],
            frequencies: ["ONE_TIME"],
            createdAt: "2026-11-01T10:00:00.000Z",
          },
        ],
        count: 1,
      },
    }));
    on("GET", /^\/v1\/analytics\/forms\?/, () => ({ body: { currency: "USD", forms: [] } }));
    on("POST", /\/preview$/, () => ({ body: { input: { title, amounts: [10] } } }));
    let posts = 0;
    on("POST", /^\/v1\/forms$/, () =>
      ++posts === 1
        ? { status: 409, body: { error: "A form titled that already exists" } }
        : { status: 201, body: { formID: "copy-1" } },
    );
    open("/dashboard/forms");
    fireEvent.click(await screen.findByRole("button", { name: "Duplicate" }));
    await waitFor(() => expect(posts).toBe(2));
    const sent = calls.filter((c) => c.method === "POST" && c.path === "/v1/forms").map((c) => c.body);
    const [first, second] = sent as { title: string; active: boolean; amounts: number[] }[];
    expect(first.title.length).toBeLessThanOrEqual(200);
    expect(first.title).toMatch(/^T+ \(copy \d{4}-\d\d-\d\d \d\d:\d\d\)$/);
    expect(second.title.length).toBeLessThanOrEqual(200);
    expect(second.title).toMatch(/^T+ \(copy 2 \d{4}-\d\d-\d\d \d\d:\d\d\)$/);
    expect(second).toMatchObject({ active: false, amounts: [10] });
  });
});

describe("several organizations", () => {
  it("offers the person's organizations in the header and moves the session to the one chosen", async () => {
    signedIn("OWNER", FINANCE, {
      organizations: [
        { id: "org_1", name: "Tree Trust", role: "OWNER" },
        { id: "org_2", name: "River Fund", role: "FINANCE" },
      ],
    });
    on("POST", /^\/api\/staff\/organization$/, () => ({ body: {} }));
    const assign = vi.spyOn(window.location, "assign").mockImplementation(() => undefined);
    open("/dashboard/account");
    const choice = (await screen.findByRole("combobox", { name: "Organization" })) as HTMLSelectElement;
    expect([...choice.options].map((o) => o.textContent)).toEqual(["Tree Trust", "River Fund"]);
    expect(choice.value).toBe("org_1");
    fireEvent.change(choice, { target: { value: "org_2" } });
    await waitFor(() => expect(assign).toHaveBeenCalledWith("/dashboard"));
    assign.mockRestore();
    expect(calls.find((c) => c.path === "/api/staff/organization")?.body).toEqual({
      organizationId: "org_2",
    });
  });

  it("shows the organization's name alone to a person on one organization's staff", async () => {
    signedIn("OWNER", FINANCE);
    open("/dashboard/account");
    await screen.findByText("Tree Trust");
    expect(screen.queryByRole("combobox", { name: "Organization" })).toBeNull();
  });
});

describe("developers", () => {
  const hook = {
    webhookId: "wh_1",
    url: "https://crm.example/hooks",
    events: ["donation.created"],
    status: "ACTIVE",
    description: "CRM sync",
    lastDeliveryAt: null,
    successCount: 0,
    failureCount: 0,
  };

  it("edits a webhook's address, events and description, showing the API's problems at their fields", async () => {
    signedIn("OWNER", ["organization:read", "organization:write", "webhooks:read", "webhooks:write"]);
    on("GET", /^\/v1\/keys$/, () => ({ body: { keys: [] } }));
    let current = hook;
    on("GET", /^\/v1\/webhooks$/, () => ({ body: { webhooks: [current], count: 1 } }));
    let refuse = true;
    on("PUT", /^\/v1\/webhooks\/wh_1$/, (call) => {
      if (refuse)
        return {
          status: 400,
          body: {
            error: "Validation failed",
            details: [
              "url must be an https URL (http is taken only by a development server with WEBHOOK_TARGET_GUARD off)",
            ],
          },
        };
      current = { ...current, ...(call.body as object) };
      return { body: { message: "Webhook updated", webhook: current } };
    });
    open("/dashboard/developers");
    await screen.findByText("https://crm.example/hooks");
    fireEvent.click(screen.getByRole("button", { name: "Edit…" }));
    const form = screen.getByRole("form", { name: "Edit the webhook to https://crm.example/hooks" });
    const url = within(form).getByLabelText("Address (URL)") as HTMLInputElement;
    expect(url.value).toBe("https://crm.example/hooks");
    expect((within(form).getByLabelText("Description") as HTMLInputElement).value).toBe("CRM sync");
    expect((within(form).getByLabelText("donation.created") as HTMLInputElement).checked).toBe(true);

    fireEvent.input(url, { target: { value: "http://crm.example/new" } });
    fireEvent.click(within(form).getByLabelText("donation.updated"));
    fireEvent.input(within(form).getByLabelText("Description"), {
      target: { value: "CRM sync, updates too" },
    });
    fireEvent.submit(form);
    // The problem is at the address, and the address says so.
    const problem = await within(form).findByText(
      "url must be an https URL (http is taken only by a development server with WEBHOOK_TARGET_GUARD off)",
    );
    expect(url.getAttribute("aria-invalid")).toBe("true");
    expect(url.getAttribute("aria-describedby")).toContain(problem.parentElement?.id ?? "none");
    expect(calls.filter((c) => c.method === "PUT")[0].body).toEqual({
      url: "http://crm.example/new",
      events: ["donation.created", "donation.updated"],
      description: "CRM sync, updates too",
    });

    refuse = false;
    fireEvent.input(url, { target: { value: "https://crm.example/new" } });
    fireEvent.submit(form);
    await screen.findByText("The webhook is saved.");
    expect(calls.filter((c) => c.method === "PUT")[1].body).toEqual({
      url: "https://crm.example/new",
      events: ["donation.created", "donation.updated"],
      description: "CRM sync, updates too",
    });
    expect(screen.queryByRole("form", { name: /Edit the webhook/ })).toBeNull();
    await screen.findByText("https://crm.example/new");
  });

  it("deletes a webhook only after a confirmation", async () => {
    signedIn("OWNER", ["organization:read", "organization:write", "webhooks:read", "webhooks:write"]);
    on("GET", /^\/v1\/keys$/, () => ({ body: { keys: [] } }));
    let hooks = [hook];
    on("GET", /^\/v1\/webhooks$/, () => ({ body: { webhooks: hooks, count: hooks.length } }));
    on("DELETE", /^\/v1\/webhooks\/wh_1$/, () => {
      hooks = [];
      return { body: { message: "Webhook deleted successfully", webhookId: "wh_1", status: "DELETED" } };
    });
    open("/dashboard/developers");
    await screen.findByText("https://crm.example/hooks");
    fireEvent.click(screen.getByRole("button", { name: "Delete…" }));
    const question = screen.getByRole("alertdialog");
    expect(question.textContent).toContain("Delete the webhook to https://crm.example/hooks?");
    fireEvent.click(within(question).getByRole("button", { name: "Keep" }));
    expect(screen.queryByRole("alertdialog")).toBeNull();
    expect(calls.some((c) => c.method === "DELETE")).toBe(false);

    fireEvent.click(screen.getByRole("button", { name: "Delete…" }));
    fireEvent.click(within(screen.getByRole("alertdialog")).getByRole("button", { name: "Yes, delete" }));
    await screen.findByText("The webhook to https://crm.example/hooks is deleted.");
    expect(calls.filter((c) => c.method === "DELETE").map((c) => c.path)).toEqual(["/v1/webhooks/wh_1"]);
    await waitFor(() => expect(screen.queryByText("https://crm.example/hooks")).toBeNull());
  });
});

describe("payments", () => {
  it("searches with the filters in the address, and shows what donors typed as text", async () => {
    signedIn("FINANCE", FINANCE);
    on("GET", /^\/v1\/payments\?/, () => ({
      body: {
        payments: [payment({ firstName: '<img src=x onerror="alert(1)">', lastName: "" })],
        count: 1,
        hasMore: false,
      },
    }));
    const { container } = open("/dashboard/payments");
    await screen.findByRole("heading", { name: "Payments" });
    fireEvent.input(screen.getByLabelText("Search"), { target: { value: "ada@example.org" } });
    fireEvent.change(screen.getByLabelText("Status"), { target: { value: "COMPLETED" } });
    fireEvent.submit(screen.getByRole("button", { name: "Search" }).closest("form") as HTMLFormElement);
    await waitFor(() => expect(window.location.search).toBe("?search=ada%40example.org&status=COMPLETED"));
    await waitFor(() =>
      expect(
        calls.some((c) => c.path === "/v1/payments?search=ada%40example.org&status=COMPLETED&limit=25"),
      ).toBe(true),
    );
    await screen.findByText('<img src=x onerror="alert(1)">');
    expect(container.querySelector("img")).toBeNull();
  });

  it("asks for more rows with the cursor the last page gave, and never for the whole table", async () => {
    signedIn("FINANCE", FINANCE);
    on("GET", /^\/v1\/payments\?/, (call) =>
      call.path.includes("lastEvaluatedKey=c1")
        ? { body: { payments: [payment({ paymentID: "pay_02", firstName: "Bo" })], hasMore: false } }
        : { body: { payments: [payment()], hasMore: true, lastEvaluatedKey: "c1" } },
    );
    open("/dashboard/payments");
    fireEvent.click(await screen.findByRole("button", { name: "Show more" }));
    await screen.findByText("Bo Donor");
    expect(screen.getByText("Ada Donor")).toBeTruthy();
    expect(screen.queryByRole("button", { name: "Show more" })).toBeNull();
    expect(
      calls.filter((c) => c.path.startsWith("/v1/payments?")).every((c) => c.path.includes("limit=25")),
    ).toBe(true);
  });
});

describe("home", () => {
  it("shows the summary's figures and one bar per day", async () => {
    signedIn("FINANCE", FINANCE);
    on("GET", /^\/v1\/analytics\/summary$/, () => ({
      body: {
        currency: "usd",
        timeZone: "America/New_York",
        today: "2026-11-26",
        from: "2026-11-24",
        to: "2026-11-26",
        raised: { today: 75, last30Days: 1250.5, thisYear: 9000 },
        range: { raised: 100, gifts: 4, donors: 3 },
        recurring: { active: 2, monthlyValue: 30 },
        byDay: [
          { date: "2026-11-24", amount: 25, count: 1 },
          { date: "2026-11-25", amount: 0, count: 0 },
          { date: "2026-11-26", amount: 75, count: 3 },
        ],
        failed: { count: 1, recent: [{ ...payment({ status: "FAILED", failureMessage: "Card declined" }) }] },
        disputed: { count: 0, recent: [] },
      },
    }));
    const { container } = open("/dashboard");
    await screen.findByText("$1,250.50");
    expect(screen.getByText("Raised today").nextElementSibling?.textContent).toBe("$75.00");
    expect(screen.getByText("$30.00 a month")).toBeTruthy();
    expect(container.querySelectorAll(".chart rect")).toHaveLength(3);
    expect(screen.getByText(/Card declined/)).toBeTruthy();
  });
});

// @vitest-environment happy-dom
import { cleanup, render, screen, within } from "@testing-library/preact";
import { afterEach, describe, expect, it, vi } from "vitest";
import { messagesFor } from "../../server/i18n.js";
import type { Language } from "../../shared/languages.js";
import type { Gifts, Payment, Subscription } from "../../widget/portal/api.js";
import { setPortalLocale } from "../../widget/portal/i18n.js";
import { Portal } from "../../widget/portal/Portal.js";

/**
 * The portal's calendar is the organization's (the gifts answer's `timeZone`), as its statements count
 * it: a New York charity's gift at 23:30 on December 31 shows as of December 31, whatever the UTC date or
 * the browser's zone, and a donor without a statement is offered the year it is there.
 */

const LATE_ON_NEW_YEARS_EVE = "2026-01-01T04:30:00.000Z"; // 23:30 on December 31, 2025 in New York

function speak(language: Language) {
  setPortalLocale({ language, messages: messagesFor(language, "portal.") });
}

const payment = (extra: Partial<Payment> = {}): Payment => ({
  paymentID: "pay_01jabcdefghjkmnpqrstvwxyz0",
  amount: 30,
  currency: "USD",
  status: "COMPLETED",
  date: LATE_ON_NEW_YEARS_EVE,
  frequency: "MONTHLY",
  form: "Spring appeal",
  fund: "",
  email: "ada@example.org",
  refundedAmount: 0,
  ...extra,
});

const subscription: Subscription = {
  id: "sub_01jabcdefghjkmnpqrstvwxyz0",
  status: "ACTIVE",
  amount: 30,
  currency: "USD",
  frequency: "MONTHLY",
  nextBillingDate: "2026-02-01T04:30:00.000Z", // 23:30 on January 31 in New York
  fund: "",
  email: "ada@example.org",
  paymentMethod: { type: "card", brand: "Visa", last4: "4242" },
  frequencies: ["MONTHLY", "ANNUALLY"],
};

/** Renders the portal signed in, its gifts answer being `gifts`. */
async function portalShowing(gifts: Gifts) {
  vi.stubGlobal(
    "fetch",
    vi.fn(
      async () => new Response(JSON.stringify(gifts), { headers: { "Content-Type": "application/json" } }),
    ),
  );
  render(<Portal organizationId="org_1" />);
  return screen.findByRole("table").catch(() => screen.findByText("No gifts yet."));
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.useRealTimers();
  speak("en");
});

describe("the portal's dates", () => {
  it("are the days in the organization's time zone, as the page's language writes them", async () => {
    speak("en");
    const table = await portalShowing({
      payments: [payment()],
      subscriptions: [subscription],
      statementYears: [2025],
      timeZone: "America/New_York",
      currentYear: 2026,
    });
    const [, row] = within(table).getAllByRole("row");
    expect(within(row).getAllByRole("cell")[0].textContent).toBe("Dec 31, 2025");
    expect(within(row).getByRole("link").textContent).toContain("Dec 31, 2025");
    expect(screen.getByText(/^Next gift on Jan 31, 2026/)).toBeTruthy();
    expect(document.body.textContent).not.toContain("Jan 1, 2026");
    expect(document.body.textContent).not.toContain("Feb 1, 2026");
    // The statement offered is that of the gift's year there.
    expect((screen.getByLabelText("Year") as HTMLSelectElement).value).toBe("2025");

    cleanup();
    speak("de");
    const german = await portalShowing({
      payments: [payment({ date: "2026-01-30T15:30:00.000Z" })], // 00:30 on January 31 in Tokyo
      subscriptions: [],
      statementYears: [2026],
      timeZone: "Asia/Tokyo",
      currentYear: 2026,
    });
    expect(within(german).getAllByRole("cell")[0].textContent).toBe("31.01.2026");
  });

  it("offer the statement of the organization's current year when the donor has none, not the browser's", async () => {
    speak("en");
    // The browser's clock says 2026 (UTC); in New York it is still 2025, as the server answers.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2026-01-01T04:40:00.000Z") });
    await portalShowing({
      payments: [payment({ status: "REFUNDED", refundedAmount: 30 })],
      subscriptions: [],
      statementYears: [],
      timeZone: "America/New_York",
      currentYear: 2025,
    });
    const picker = screen.getByLabelText("Year") as HTMLSelectElement;
    expect([...picker.options].map((o) => o.value)).toEqual(["2025"]);
    expect(screen.getByRole("link", { name: "Download the 2025 statement (PDF)" })).toBeTruthy();
  });
});

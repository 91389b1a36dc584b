// @vitest-environment happy-dom
import { cleanup, render, screen } from "@testing-library/preact";
import { afterEach, describe, expect, it, vi } from "vitest";
import { portalMessages } from "../../server/pages/portal.js";
import type { Gifts, Subscription } from "../../widget/portal/api.js";
import { setPortalLocale } from "../../widget/portal/i18n.js";
import { Portal } from "../../widget/portal/Portal.js";

/**
 * A recurring gift's payment method in the portal, as the portal's page is sent its messages: a bank
 * account is called one (not a card), and a card by its brand's name as people write it.
 */

const sub = (id: string, paymentMethod: Subscription["paymentMethod"]): Subscription => ({
  id,
  status: "ACTIVE",
  amount: 25,
  currency: "USD",
  frequency: "MONTHLY",
  nextBillingDate: "2026-12-29T10:00:00.000Z",
  fund: "",
  email: "ada@example.org",
  paymentMethod,
  frequencies: ["MONTHLY"],
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("the portal's payment methods", () => {
  it("names a bank account as one and a card by its brand, in the page's language", async () => {
    for (const [language, bank, card] of [
      ["en", "Bank account ending 6789", "Visa ending 4242"],
      ["de", "Bankkonto", "Visa"],
    ] as const) {
      setPortalLocale({ language, messages: portalMessages(language) });
      const gifts: Gifts = {
        payments: [],
        subscriptions: [
          sub("sub_bank", { type: "bank", brand: null, last4: "6789" }),
          sub("sub_card", { type: "card", brand: "visa", last4: "4242" }),
          sub("sub_other", { type: "card", brand: "unknown", last4: "1111" }),
        ],
        statementYears: [],
        timeZone: "UTC",
        currentYear: 2026,
      };
      vi.stubGlobal(
        "fetch",
        vi.fn(
          async () =>
            new Response(JSON.stringify(gifts), { headers: { "Content-Type": "application/json" } }),
        ),
      );
      render(<Portal organizationId="org_1" />);
      const [bankGift, cardGift, otherGift] = await screen.findAllByRole("article");
      const described = (article: HTMLElement) => article.querySelector("p")?.textContent ?? "";
      expect(described(bankGift)).toContain(bank);
      expect(described(cardGift)).toContain(card);
      const cardWord = language === "en" ? "Card" : "Karte";
      expect(described(bankGift)).not.toContain(cardWord);
      expect(described(otherGift)).toContain(`${cardWord} `);
      cleanup();
    }
  });
});

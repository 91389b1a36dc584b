import { afterEach, describe, expect, it, vi } from "vitest";
import { messagesFor, translator } from "../../server/i18n.js";
import type { Language } from "../../shared/languages.js";
import { PortalError, portalApi } from "../../widget/portal/api.js";
import { setPortalLocale } from "../../widget/portal/i18n.js";

/**
 * The portal page's calls: a refusal carries the server's words on an English page, and the page's own
 * catalog's words, by the answer's status, followed by the server's reasons (`details`), on a page in
 * another language (the server writes English).
 */

function answering(status: number, body: unknown) {
  vi.stubGlobal(
    "fetch",
    vi.fn(
      async () =>
        new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } }),
    ),
  );
}

function speak(language: Language) {
  setPortalLocale({ language, messages: messagesFor(language, "portal.") });
}

async function refusal(call: () => Promise<unknown>): Promise<PortalError> {
  try {
    await call();
  } catch (err) {
    if (err instanceof PortalError) return err;
    throw err;
  }
  throw new Error("the call was not refused");
}

afterEach(() => {
  vi.unstubAllGlobals();
  speak("en");
});

describe("the portal's refusals", () => {
  const api = portalApi("org_1");

  it("are the server's words on an English page", async () => {
    speak("en");
    answering(409, { error: "A charge of this gift is in progress; try again in a few minutes" });
    const err = await refusal(() => api.change("sub_1", { skipNext: true }));
    expect(err.status).toBe(409);
    expect(err.message).toBe("A charge of this gift is in progress; try again in a few minutes");
  });

  it("are the page's own words in its language, by status", async () => {
    for (const [language, status, key] of [
      ["es", 409, "portal.error.409"],
      ["de", 401, "portal.error.401"],
      ["ar", 429, "portal.error.429"],
      ["fr", 400, "portal.error.400"],
      ["pt-BR", 500, "portal.error.other"],
    ] as const) {
      speak(language);
      answering(status, { error: "English words", details: ["amount must be at least 1"] });
      const err = await refusal(() => api.change("sub_1", { amount: 0 }));
      // The page's words, then the server's reasons (its details), never its English error.
      expect(err.message, language).toBe(`${translator(language)(key)} amount must be at least 1`);
      expect(err.message).not.toContain("English");
    }
  });
});

import { compileMessage } from "@lingui/message-utils/compileMessage";
import { describe, expect, it } from "vitest";
import { CATALOGS, chooseLanguage, translator } from "../../server/i18n.js";
import { formatMoney } from "../../shared/currency.js";
import { en } from "../../shared/i18n/catalogs/en.js";
import { formatMessage } from "../../shared/i18n/format.js";
import { fromAcceptLanguage, LANGUAGES, matchLanguage } from "../../shared/languages.js";

/** The catalogs, the message formatter, the choice of language and the formatting of amounts. */

/** The placeholder names a message uses (`{name}`, `{n, plural, …}`), in any order. */
function placeholders(source: string): string[] {
  const names = new Set<string>();
  const walk = (message: ReturnType<typeof compileMessage>) => {
    if (!Array.isArray(message)) return;
    for (const part of message) {
      if (typeof part === "string") continue;
      names.add(part[0]);
      const cases = part[2];
      if (cases && typeof cases === "object")
        for (const branch of Object.values(cases as Record<string, ReturnType<typeof compileMessage>>))
          walk(branch);
    }
  };
  walk(compileMessage(source));
  return [...names].sort();
}

describe("message catalogs", () => {
  for (const language of LANGUAGES) {
    it(`${language} has every key English has, and no other`, () => {
      expect(Object.keys(CATALOGS[language]).sort()).toEqual(Object.keys(en).sort());
    });
    it(`${language}'s messages compile and use the same placeholders as English`, () => {
      const catalog = CATALOGS[language] as Record<string, string>;
      const wrong = Object.keys(en).filter(
        (key) => placeholders(catalog[key]).join() !== placeholders(en[key as keyof typeof en]).join(),
      );
      expect(wrong).toEqual([]);
    });
  }
});

describe("formatMessage", () => {
  const format = (source: string, values: Record<string, string | number>, locale = "en") =>
    formatMessage(compileMessage(source), values, locale);

  it("inserts values, chooses plural and select cases, and writes # as the number", () => {
    expect(format("Hello {name}", { name: "Ada" })).toBe("Hello Ada");
    const plural = "{n, plural, =0 {none} one {# ticket} other {# tickets}}";
    expect([0, 1, 2, 1500].map((n) => format(plural, { n }))).toEqual([
      "none",
      "1 ticket",
      "2 tickets",
      "1,500 tickets",
    ]);
    expect(format("{kind, select, EVENT {Pay} other {Donate}}", { kind: "EVENT" })).toBe("Pay");
    expect(format("{kind, select, EVENT {Pay} other {Donate}}", { kind: "PRODUCT" })).toBe("Donate");
  });

  it("uses the language's own plural categories (Arabic has six)", () => {
    const message = en["checkout.error.fix"];
    const ar = translator("ar");
    expect(ar("checkout.error.fix", { count: 1 })).toContain("حقل واحد");
    expect(ar("checkout.error.fix", { count: 2 })).toContain("حقلين");
    expect(ar("checkout.error.fix", { count: 3 })).toMatch(/[3٣] حقول/);
    expect(ar("checkout.error.fix", { count: 11 })).toMatch(/(11|١١) حقلًا/);
    expect(translator("en")("checkout.error.fix", { count: 3 })).toBe(
      formatMessage(compileMessage(message), { count: 3 }, "en"),
    );
  });
});

describe("the page's language", () => {
  it("is ?lang= first, then Accept-Language by weight, then the organization's", () => {
    expect(chooseLanguage("es", "fr", "de")).toBe("es");
    expect(chooseLanguage(undefined, "fr-CA,fr;q=0.9,en;q=0.8", "de")).toBe("fr");
    expect(chooseLanguage(undefined, "da, pt;q=0.5, en;q=0.4", "de")).toBe("pt-BR");
    expect(chooseLanguage(undefined, "da", "de")).toBe("de");
    expect(chooseLanguage("xx", undefined, "ar")).toBe("ar");
    expect(chooseLanguage("PT-br", undefined, "en")).toBe("pt-BR");
  });

  it("reads Accept-Language's weights and ignores q=0 and *", () => {
    expect(fromAcceptLanguage("en;q=0.1, es;q=0.9")).toBe("es");
    expect(fromAcceptLanguage("es;q=0, *")).toBeUndefined();
    expect(matchLanguage("ar-EG")).toBe("ar");
  });
});

describe("formatMoney", () => {
  it("writes amounts as the language does, with the currency's decimals", () => {
    const nbsp = /\u00a0/g;
    expect(formatMoney(123450, "EUR", "de").replace(nbsp, " ")).toBe("1.234,50 €");
    expect(formatMoney(123450, "EUR", "en")).toBe("€1,234.50");
    expect(formatMoney(2500, "USD", "en")).toBe("$25");
    expect(formatMoney(100000, "JPY", "en")).toBe("¥1,000");
    expect(formatMoney(2550, "BRL", "pt-BR").replace(nbsp, " ")).toBe("R$ 25,50");
  });
});

describe("the Arabic catalog's numbers written in groups", () => {
  it("isolates each run of digit groups left to right (U+2066…U+2069), so 4000 0000 0000 0002 is not laid out as 0002 0000 0000 4000", () => {
    const grouped = /\d+(?: \d+)+/g;
    const loose: string[] = [];
    for (const [key, message] of Object.entries(CATALOGS.ar)) {
      for (const match of String(message).matchAll(grouped)) {
        const before = String(message)[(match.index ?? 0) - 1];
        const after = String(message)[(match.index ?? 0) + match[0].length];
        if (before !== "\u2066" || after !== "\u2069") loose.push(`${key}: ${match[0]}`);
      }
    }
    expect(loose).toEqual([]);
    expect(String(CATALOGS.ar["checkout.testMode.card"])).toContain("\u20664000 0000 0000 0002\u2069");
  });
});

import { describe, expect, it } from "vitest";
import { parseAmount } from "../../widget/app/amountText.js";

/**
 * A typed amount is read in the page's language, and a text that could mean two amounts is refused: a
 * donor who types "25,50" on a German page gives 25.50, never 2,550.
 */
describe("an amount typed by a donor", () => {
  it("takes the decimal comma of German, French, Spanish and Brazilian Portuguese pages", () => {
    for (const language of ["de", "fr", "es", "pt-BR"]) {
      expect(parseAmount("25,50", language)).toBe(25.5);
      expect(parseAmount("10,5", language)).toBe(10.5);
      expect(parseAmount("25,50 €", language)).toBe(25.5);
    }
  });

  it("reads thousands as the page's language groups them", () => {
    expect(parseAmount("1.234,50", "de")).toBe(1234.5);
    expect(parseAmount("1.000", "de")).toBe(1000);
    expect(parseAmount("1.234.567", "pt-BR")).toBe(1234567);
    expect(parseAmount("1 234,5", "fr")).toBe(1234.5);
    expect(parseAmount("1\u202f234,50\u00a0€", "fr")).toBe(1234.5);
    expect(parseAmount("$1,234.5", "en")).toBe(1234.5);
    expect(parseAmount("1,500", "en")).toBe(1500);
    expect(parseAmount("1,234,567.89", "en")).toBe(1234567.89);
  });

  it("takes the other convention's decimal mark when only one reading is possible", () => {
    expect(parseAmount("25.50", "de")).toBe(25.5);
    expect(parseAmount("25,50", "en")).toBe(25.5);
    expect(parseAmount("1,234.50", "de")).toBe(1234.5);
  });

  it("refuses a text that could mean two amounts rather than guess", () => {
    expect(parseAmount("1.500", "en")).toBeNull();
    expect(parseAmount("1,500", "de")).toBeNull();
  });

  it("reads Arabic-Indic digits and separators", () => {
    expect(parseAmount("٢٥٫٥٠", "ar")).toBe(25.5);
    expect(parseAmount("١٬٢٣٤", "ar")).toBe(1234);
    expect(parseAmount("۲۵", "ar")).toBe(25);
  });

  it("leaves out a currency symbol or code before or after the number", () => {
    expect(parseAmount("US$ 25", "en")).toBe(25);
    expect(parseAmount("EUR 25", "de")).toBe(25);
    expect(parseAmount("25 EUR", "de")).toBe(25);
    expect(parseAmount("R$ 25,90", "pt-BR")).toBe(25.9);
    expect(parseAmount("¥1,500", "en")).toBe(1500);
  });

  it("refuses what is no amount: signs, exponents, more than 2 decimals, misplaced groups, empty", () => {
    for (const text of [
      "",
      " ",
      "abc",
      "-5",
      "+5",
      "1e3",
      "25.",
      ".5",
      "25.505",
      "1,2.5",
      "12,34,567",
      "1.2.3",
      "25,5,0",
    ])
      expect(parseAmount(text, "en"), text).toBeNull();
    expect(parseAmount("25,505", "de")).toBeNull();
  });
});

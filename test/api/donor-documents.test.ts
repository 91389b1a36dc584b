import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { faces, standardFontWrites } from "../../server/documents/fonts.js";
import { dayWriter } from "../../server/documents/givingDocuments.js";
import { withoutBidiControls } from "../../server/documents/textLayout.js";
import { directionOf, LANGUAGES } from "../../shared/languages.js";
import { JAN_31 } from "../billing/support.js";
import { card, checkout, createForm } from "../support/checkout.js";
import { type Direction, type PdfLine, pdfFonts, pdfLines, pdfText } from "../support/pdfText.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * The portal's receipt and statement PDFs in Arabic (right to left, shaped, in an embedded font) and with
 * names in other scripts; and English documents of Latin text as they were, in the standard fonts.
 */

let t: TestApp;

beforeEach(async () => {
  t = await setupTestApp({
    now: () => JAN_31,
    env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" },
  });
});
afterEach(async () => {
  await t.close();
});

const base = () => `/api/manage/${t.org.id}`;

async function give(
  formId: string,
  donor: { firstName: string; lastName: string; email: string },
  body = {},
) {
  const res = await checkout(t, formId, {
    amount: 25,
    frequency: "ONE_TIME",
    donor,
    paymentMethod: card(),
    ...body,
  });
  expect(res.status, res.text).toBe(201);
  return (res.body.payment as { paymentID: string }).paymentID;
}

async function signIn(email: string): Promise<string> {
  const link = await t.request("POST", `${base()}/link`, { key: null, body: { email } });
  expect(link.status).toBe(202);
  const [mail] = await t.store.db
    .selectFrom("email_outbox")
    .selectAll()
    .where("to_address", "=", email)
    .where("subject", "like", "Your link%")
    .execute();
  const token = mail?.text_body.match(/\?token=([A-Za-z0-9_-]+)/)?.[1];
  const res = await t.request("POST", `${base()}/session`, { key: null, body: { token } });
  expect(res.status, res.text).toBe(200);
  return (res.headers.get("Set-Cookie") ?? "").split(";")[0];
}

async function download(path: string, cookie: string): Promise<Buffer> {
  const res = await t.app.request(`${base()}${path}`, { headers: { Cookie: cookie } });
  expect(res.status).toBe(200);
  expect(res.headers.get("Content-Type")).toBe("application/pdf");
  return Buffer.from(await res.arrayBuffer());
}

const lineOf = (lines: PdfLine[], text: string): PdfLine => {
  const line = lines.find((l) => l.text === text);
  if (!line) throw new Error(`no line "${text}" in:\n${lines.map((l) => l.text).join("\n")}`);
  return line;
};

/** A dinner for two (100 each, 40 of it fair-market value) bought by `donor`, with legal details set. */
async function dinner(donor: { firstName: string; lastName: string; email: string }): Promise<string> {
  const legal = await t.request("PUT", "/v1/organization", {
    body: {
      legalName: "Friends of the Library Inc.",
      legalAddress: "1 Main St\nSpringfield",
      taxId: "12-3456789",
    },
  });
  expect(legal.status, legal.text).toBe(200);
  const gala = await createForm(t, {
    ...validForms.event(),
    title: "Annual gala",
    tickets: [{ name: "Dinner", price: 100, fairMarketValue: 40 }],
  });
  const res = await checkout(t, gala, {
    tickets: [{ name: "Dinner", quantity: 2 }],
    donor,
    paymentMethod: card(),
  });
  expect(res.status, res.text).toBe(201);
  return (res.body.payment as { paymentID: string }).paymentID;
}

const ada = { firstName: "Ada", lastName: "Lovelace", email: "ada@example.org" };

/** Dollars as Arabic writes them (the reading order; the space is a no-break one). */
const usd = (amount: string) => `${amount}\u00a0US$`;

describe(`receipt and statement PDFs in Arabic and other scripts (${dialect})`, () => {
  it("writes an Arabic receipt in Arabic from the catalog, right to left, shaped, with its amounts", async () => {
    const id = await dinner(ada);
    const pdf = await download(`/receipts/${id}?lang=ar`, await signIn(ada.email));
    const lines = pdfLines(pdf, "rtl");
    const text = pdfText(pdf, "rtl");
    for (const words of ["إيصال", "رقم الإيصال", "التاريخ", "إجمالي المدفوع", "المبلغ القابل للخصم"])
      expect(lines.map((l) => l.text)).toContain(words);
    expect(text).toContain(`القيمة السوقية للسلع والخدمات المستلمة\n-${usd("80")}`);
    expect(text).toContain(`إجمالي المدفوع\n${usd("200")}`);
    expect(text).toContain(`المبلغ القابل للخصم\n${usd("120")}`);
    // Data keeps its own direction inside Arabic: the tax id and the address read left to right.
    expect(text).toContain("الرقم الضريبي: 12-3456789");
    expect(text).toContain("Friends of the Library Inc.\n1 Main St\nSpringfield");
    expect(text).toContain(`رقم الإيصال\n${id}`);
    // The date as Arabic writes it (day/month/year), the gift's day in the organization's time zone.
    expect(text).toContain("التاريخ\n31/01/2026");
    for (const english of ["Receipt", "Total paid", "Deductible amount", "Tax id"])
      expect(text).not.toContain(english);

    // Right to left: the title ends at the right margin; a row's label is on the right, its amount on the left.
    const right = 612 - 54;
    expect(lineOf(lines, "إيصال").end).toBeCloseTo(right, 0);
    const total = lines.findIndex((l) => l.text === "إجمالي المدفوع");
    expect(lines[total].end).toBeCloseTo(right, 0);
    expect(lines[total + 1]).toMatchObject({ text: usd("200"), x: 54 });
    expect(lines[total + 1].y).toBe(lines[total].y);
    // Drawn in visual order: the word's last letter leftmost, its first rightmost.
    const title = lineOf(lines, "إيصال").glyphs;
    expect([title[0], title.at(-1)]).toEqual(["ل", "إ"]);
    // Shaped: alef in two forms (alone, and joined at the end of a word), lam-alef as one glyph.
    const arabic = pdfFonts(pdf).filter((f) => f.baseFont.includes("Arabic"));
    expect(arabic.length).toBeGreaterThan(0);
    const glyphsOf = (letters: string) =>
      arabic.flatMap((f) => [...f.toUnicode].filter(([, unit]) => unit === letters));
    expect(glyphsOf("ا").length).toBeGreaterThanOrEqual(2);
    expect(glyphsOf("لإ").length + glyphsOf("لا").length).toBeGreaterThanOrEqual(1);
  });

  it("writes amounts whose format has a narrow no-break space or the baht sign with glyphs the PDF has", async () => {
    const euros = await t.request("PUT", "/v1/organization", { body: { currency: "EUR" } });
    expect(euros.status, euros.text).toBe(200);
    const formId = await createForm(t, validForms.standard());
    const id = await give(formId, ada, { amount: 1234.5 });
    const cookie = await signIn(ada.email);
    const french = pdfText(await download(`/receipts/${id}?lang=fr`, cookie), "ltr");
    // French groups thousands with U+202F, which the fonts lack: written as a no-break space.
    expect(french).toContain("1\u00a0234,50\u00a0");
    expect(french).not.toContain("\u202f");
    expect(french).not.toContain(String.fromCharCode(0));
    const baht = await t.request("PUT", "/v1/organization", { body: { currency: "THB" } });
    expect(baht.status, baht.text).toBe(200);
    const thai = await give(formId, ada, { amount: 100 });
    const german = pdfText(await download(`/receipts/${thai}?lang=de`, cookie), "ltr");
    expect(german).toContain("100\u00a0THB");
    expect(german).not.toContain("\u0e3f");
    expect(german).not.toContain(String.fromCharCode(0));
  });

  it("writes an Arabic statement in Arabic, with its totals and the Arabic plural", async () => {
    await dinner(ada);
    const gifts = await createForm(t, { ...validForms.standard(), title: "Support our work" });
    await give(gifts, ada, { amount: 50 });
    const pdf = await download("/statement?year=2026&lang=ar", await signIn(ada.email));
    const text = pdfText(pdf, "rtl");
    expect(text).toContain("كشف التبرعات لعام 2026");
    expect(text).toContain("التاريخ / الإيصال / التبرع\nالمبلغ / القابل للخصم");
    expect(text).toContain(`إجمالي التبرعات في 2026 (تبرعان)\n${usd("250")}`);
    expect(text).toContain(`إجمالي القابل للخصم\n${usd("170")}`);
    // A row: the date (as Arabic writes it: day, month, year), the receipt and the gift from the right; the
    // amount and the deductible part.
    expect(text).toMatch(
      /\n31\/01\/2026 {2}pay_\S+ {2}Annual gala \(Gala\)\n200\u00a0US\$ \/ 120\u00a0US\$\n/,
    );
    expect(text).toContain("المبالغ هي ما تبرعت به");
    expect(text).not.toContain("Giving statement");
    expect(text).not.toContain("Total given");
  });

  it("prints donor names in Cyrillic, Arabic and Greek, in English and Arabic documents", async () => {
    const gifts = await createForm(t, validForms.standard());
    const donors = [
      { firstName: "Иван", lastName: "Петров", email: "ivan@example.org" },
      { firstName: "محمد", lastName: "علي", email: "mohamed@example.org" },
      { firstName: "Ελένη", lastName: "Παπαδοπούλου", email: "eleni@example.org" },
    ];
    for (const donor of donors) {
      const id = await give(gifts, donor);
      const cookie = await signIn(donor.email);
      const name = `${donor.firstName} ${donor.lastName}`;
      for (const [lang, direction] of [
        ["en", "ltr"],
        ["ar", "rtl"],
      ] as [string, Direction][]) {
        const lines = pdfLines(await download(`/receipts/${id}?lang=${lang}`, cookie), direction);
        const line = lineOf(lines, name);
        // The glyphs drawn are the name's letters (through the font's ToUnicode map), not blanks; Arabic's
        // right to left (a glyph that joins letters keeps them in reading order).
        const drawn = donor.firstName === "محمد" ? line.glyphs.toReversed() : line.glyphs;
        expect(drawn.join(""), `${name} (${lang})`).toBe(name);
      }
      const statement = pdfText(await download("/statement?year=2026", cookie));
      expect(statement).toContain(name);
    }
  });

  it("prints an organization's name in another script at the head of an English receipt", async () => {
    const legal = await t.request("PUT", "/v1/organization", {
      body: { legalName: "Общество друзей библиотеки", taxId: "12-3456789" },
    });
    expect(legal.status, legal.text).toBe(200);
    const id = await give(await createForm(t, validForms.standard()), ada);
    const text = pdfText(await download(`/receipts/${id}`, await signIn(ada.email)));
    expect(text.split("\n").slice(0, 2)).toEqual(["Общество друзей библиотеки", "Tax id: 12-3456789"]);
  });

  it("writes every month's dates in every language with letters its fonts have", () => {
    const embedded = [...faces(400), ...faces(700)];
    for (const language of LANGUAGES) {
      const day = dayWriter(language, "America/New_York");
      for (let month = 1; month <= 12; month++) {
        const date = withoutBidiControls(day(`2025-${String(month).padStart(2, "0")}-15T12:00:00.000Z`));
        expect(date, language).toMatch(/2025/);
        if (directionOf(language) === "ltr" && standardFontWrites(date)) continue;
        for (const char of date) {
          const code = char.codePointAt(0) ?? 0;
          expect(
            embedded.some((face) => face.has(code)),
            `${language} ${date}: U+${code.toString(16)}`,
          ).toBe(true);
        }
      }
    }
  });

  it("writes an English receipt of Latin text as before: Helvetica only, nothing embedded", async () => {
    const id = await dinner(ada);
    const pdf = await download(`/receipts/${id}?lang=en`, await signIn(ada.email));
    expect(pdfFonts(pdf).map((f) => f.baseFont)).toEqual(["Helvetica-Bold", "Helvetica"]);
    expect(pdf.toString("latin1")).not.toContain("/FontFile2");
    expect(pdfText(pdf).split("\n")).toEqual([
      "Friends of the Library Inc.",
      "1 Main St",
      "Springfield",
      "Tax id: 12-3456789",
      "Receipt",
      "Ada Lovelace",
      "ada@example.org",
      "Receipt number",
      id,
      "Date",
      "Jan 31, 2026",
      "For",
      "One-time gift: Annual gala (Gala)",
      "Paid with",
      "visa ending 4242",
      "Dinner x 2",
      "$200",
      "Total paid",
      "$200",
      "Fair-market value of goods and services received",
      "-$80",
      "Deductible amount",
      "$120",
      "The deductible amount is what you paid less the fair-market value of what you received in return.",
    ]);
  });
});

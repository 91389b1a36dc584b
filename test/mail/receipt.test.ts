import { describe, expect, it } from "vitest";
import { type ReceiptInput, renderReceipt } from "../../server/mail/receipt.js";
import { formatMoney } from "../../shared/currency.js";

const base = (extra: Partial<ReceiptInput> = {}): ReceiptInput => ({
  organizationName: "Acme Food Bank",
  formTitle: "Spring appeal",
  customEmail: { enabled: false },
  donor: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.org" },
  paymentId: "pay_01jabcdefghjkmnpqrstvwxyz0",
  status: "COMPLETED",
  amountCents: 2550,
  feeCents: 0,
  frequency: "ONE_TIME",
  fund: "General",
  date: "2026-04-15T18:32:00.000Z",
  lines: [{ label: "Donation", quantity: 1, amountCents: 2550, kind: "donation" }],
  discountCents: 0,
  promoCode: null,
  paymentMethod: { type: "card", brand: "visa", last4: "4242" },
  nextBillingDate: null,
  recurringCharge: false,
  ...extra,
});

const HOSTILE = `<script>alert("x")</script> & 'Gala' <img src=x onerror=alert(1)>`;

describe("the receipt e-mail", () => {
  it("an event order's receipt tells the event's day, times and place in the donor's language, escaped", () => {
    const event = {
      date: "2027-05-15",
      startTime: "18:30",
      endTime: "22:00",
      timeZone: "America/New_York",
      location: `Stadthalle <b>"Nord"</b>`,
    };
    const order = base({
      formTitle: "Gala",
      lines: [{ label: "Adult", quantity: 2, amountCents: 10000, kind: "ticket" }],
      event,
    });
    const en = renderReceipt(order);
    // The event's day is named apart from the receipt's own date.
    expect(en.text).toMatch(/Event date\W+Saturday, May 15, 2027/);
    expect(en.text.match(/^\s*Date\b/gm) ?? []).toHaveLength(1);
    // Written as the checkout page writes it (one module, shared/eventTime.ts): a plain space before PM.
    expect(en.text).toContain("6:30 PM – 10:00 PM (Eastern Time)");
    expect(en.text).toContain(`Stadthalle <b>"Nord"</b>`);
    expect(en.html).toContain("Stadthalle &#60;b&#62;&#34;Nord&#34;&#60;/b&#62;");
    expect(en.html).not.toContain("<b>");
    const de = renderReceipt({ ...order, language: "de" });
    expect(de.text).toContain("Samstag, 15. Mai 2027");
    expect(de.text).toMatch(/18:30 – 22:00 \(\p{L}+/u);
    // A gift's receipt tells no event, even with one given; an event without a time tells the day alone.
    expect(renderReceipt(base({ event })).text).not.toContain("2027");
    const dayOnly = renderReceipt({ ...order, event: { ...event, startTime: null, location: null } });
    expect(dayOnly.text).toContain("Saturday, May 15, 2027");
    expect(dayOnly.text).not.toContain("Stadthalle");
    expect(dayOnly.text).not.toMatch(/PM/);
  });

  it("an organization that states a tax id gets receipts with its legal name, tax id, the deductible part and the note", () => {
    const tax = {
      taxId: "12-3456789",
      legalName: "Acme Food Bank Inc.",
      fairMarketCents: 0,
      deductibleCents: 2550,
    };
    const gift = renderReceipt(base({ tax }));
    for (const part of [gift.text, gift.html]) {
      expect(part).toContain("Acme Food Bank Inc.");
      expect(part).toContain("Tax id: 12-3456789");
      expect(part).toContain("Deductible amount");
      expect(part).toContain("No goods or services were provided in return for this gift.");
      expect(part).not.toContain("Fair-market value");
    }
    // Tickets are goods: their fair-market value is not deductible, and the note says what is.
    const order = renderReceipt(
      base({
        amountCents: 15000,
        lines: [{ label: "Gala seat", quantity: 1, amountCents: 15000, kind: "ticket" }],
        tax: { ...tax, fairMarketCents: 6000, deductibleCents: 9000 },
      }),
    );
    expect(order.text).toMatch(/Fair-market value of goods and services received\s+-\$60/);
    expect(order.text).toMatch(/Deductible amount\s+\$90/);
    expect(order.text).toContain("less the fair-market value of what you received");
    expect(order.text).not.toContain("No goods or services");
    // In the donor's language, from the same catalog as the portal's documents.
    expect(renderReceipt(base({ tax, language: "es" })).text).toContain("12-3456789");
    // Without a tax id: none of it.
    const plain = renderReceipt(base());
    expect(plain.text).not.toMatch(/Tax id|Deductible|No goods/);
  });

  it("thanks the donor with a clear summary in both parts", () => {
    const r = renderReceipt(base());
    expect(r.subject).toBe("Thank you for your gift to Acme Food Bank");
    expect(r.replyTo).toBeUndefined();
    for (const part of [r.text, r.html]) {
      expect(part).toContain("Dear Ada,");
      expect(part).toContain("$25.50");
      expect(part).toContain("General");
      expect(part).toContain("One-time");
      expect(part).toContain("April 15, 2026");
      expect(part).toContain("Visa ending in 4242");
      expect(part).toContain("pay_01jabcdefghjkmnpqrstvwxyz0");
      expect(part).toContain("This receipt is for your records.");
      expect(part).not.toContain("processing");
    }
    expect(r.html).toMatch(/^<!doctype html>/);
  });

  it("ends the thanks with one full stop when the organization's name ends with its own, in any direction", () => {
    for (const language of ["de", "en", "ar"] as const) {
      const r = renderReceipt(base({ organizationName: "Verein Hilfe e.V.", language }));
      for (const part of [r.text, r.html]) {
        expect(part, language).toContain("e.V.");
        expect(part, language).not.toMatch(/e\.V\.\u2069?\./);
      }
    }
    // An ellipsis is the organization's own, kept.
    expect(renderReceipt(base({ organizationName: "Wait..." })).text).toContain("Wait...");
  });

  it("escapes every donor- and organization-supplied value in the HTML part", () => {
    const r = renderReceipt(
      base({
        organizationName: HOSTILE,
        formTitle: HOSTILE,
        fund: HOSTILE,
        donor: { firstName: HOSTILE, lastName: HOSTILE, email: "ada@example.org" },
        lines: [{ label: HOSTILE, quantity: 2, amountCents: 2550, kind: "ticket" }],
        promoCode: HOSTILE,
        discountCents: 100,
        paymentMethod: { type: "card", brand: HOSTILE, last4: "4242" },
        customEmail: { enabled: true, customMessage: HOSTILE, emailSubject: HOSTILE },
      }),
    );
    expect(r.html).not.toMatch(/<script|<img|onerror=alert\(1\)>/i);
    expect(r.html).toContain("&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; &#39;Gala&#39;");
    // The plain-text part is plain text: shown as written, never interpreted.
    expect(r.text).toContain(HOSTILE);
    expect(r.subject).toBe(HOSTILE);
  });

  it("uses the form's custom subject, message and reply-to only when custom e-mail is enabled", () => {
    const customEmail = {
      replyToAddress: "events@acme.org",
      emailSubject: "You made spring happen!",
      customMessage: "Every dollar feeds a family.\n\nSee you at the market.",
    };
    const on = renderReceipt(base({ customEmail: { enabled: true, ...customEmail } }));
    expect(on.subject).toBe("You made spring happen!");
    expect(on.replyTo).toBe("events@acme.org");
    expect(on.text.startsWith("Every dollar feeds a family.\n\nSee you at the market.")).toBe(true);
    expect(on.text).toContain("reply to this e-mail");
    const html = on.html;
    expect(html.indexOf("Every dollar feeds a family.")).toBeLessThan(html.indexOf("Dear Ada,"));
    expect(html).toContain('<p style="margin:0 0 12px">See you at the market.</p>');

    const off = renderReceipt(base({ customEmail: { enabled: false, ...customEmail } }));
    expect(off.subject).toBe("Thank you for your gift to Acme Food Bank");
    expect(off.replyTo).toBeUndefined();
    expect(off.text).not.toContain("Every dollar");
    expect(off.html).not.toContain("Every dollar");

    const blank = renderReceipt(
      base({ customEmail: { enabled: true, emailSubject: "  ", customMessage: "" } }),
    );
    expect(blank.subject).toBe("Thank you for your gift to Acme Food Bank");
  });

  it("never lets a subject span lines", () => {
    const r = renderReceipt(
      base({ customEmail: { enabled: true, emailSubject: "Thanks\r\nBcc: x@evil.test" } }),
    );
    expect(r.subject).toBe("Thanks Bcc: x@evil.test");
  });

  it("words recurring gifts and their later charges", () => {
    const first = renderReceipt(base({ frequency: "MONTHLY", nextBillingDate: "2026-05-15T18:32:00.000Z" }));
    expect(first.subject).toBe("Thank you for your monthly gift to Acme Food Bank");
    expect(first.text).toContain("Thank you for your monthly gift to Acme Food Bank.");
    expect(first.text).toMatch(/Frequency\s+Monthly/);
    expect(first.text).toMatch(/Next payment\s+May 15, 2026/);
    expect(first.html).toContain("May 15, 2026");

    const later = renderReceipt(
      base({ frequency: "ANNUALLY", recurringCharge: true, nextBillingDate: "2027-04-15T00:00:00.000Z" }),
    );
    expect(later.text).toContain("latest charge of your yearly gift to Acme Food Bank");
    expect(later.text).toMatch(/Next payment\s+April 15, 2027/);

    const oneTime = renderReceipt(base({ nextBillingDate: "2026-05-15T18:32:00.000Z" }));
    expect(oneTime.text).not.toContain("Next payment");
  });

  it("says the lines pricing wrote in the donor's language, and the organization's own labels as written", () => {
    const r = renderReceipt(
      base({
        language: "de",
        currency: "EUR",
        frequency: "MONTHLY",
        lines: [
          { label: "Monthly donation", quantity: 1, amountCents: 2500, kind: "donation" },
          { label: "Additional donation", quantity: 1, amountCents: 500, kind: "extra_donation" },
          { label: "Donation", quantity: 2, amountCents: 1000, kind: "ticket" },
        ],
      }),
    );
    for (const part of [r.text, r.html]) {
      expect(part).toContain("Monatliche Spende");
      expect(part).toContain("Zusätzliche Spende");
      expect(part).not.toContain("Monthly donation");
      // A ticket the organization named "Donation" keeps its name.
      expect(part).toContain("Donation × 2");
    }
    const es = renderReceipt(base({ language: "es" }));
    expect(es.text).toContain("Donación");
    expect(renderReceipt(base()).text).toMatch(/Donation\s+\$25\.50/);
  });

  it("shows the card brand and last four digits only, never more", () => {
    const r = renderReceipt(
      base({ paymentMethod: { type: "card", brand: "mastercard", last4: "5555 5555 5555 4444" } }),
    );
    for (const part of [r.text, r.html]) {
      expect(part).toContain("Mastercard ending in 4444");
      expect(part).not.toContain("5555");
    }
    const unknown = renderReceipt(base({ paymentMethod: { type: "card", last4: "" } }));
    expect(unknown.text).toMatch(/Payment method\s+Card\n/);
  });

  it("says a bank payment is still processing", () => {
    const r = renderReceipt(
      base({ status: "PENDING", paymentMethod: { type: "bank", last4: "000123456789" } }),
    );
    for (const part of [r.text, r.html]) {
      expect(part).toContain("Your bank payment is processing");
      expect(part).toContain("Bank account ending in 6789");
      expect(part).toContain("Processing");
    }
  });

  it("itemises an event order: tickets, discount, covered fee and total", () => {
    const r = renderReceipt(
      base({
        formTitle: "Harvest Gala",
        fund: "Gala",
        amountCents: 47_332,
        feeCents: 1332,
        lines: [
          { label: "Adult", quantity: 2, amountCents: 10_000, kind: "ticket" },
          { label: "Table", quantity: 1, amountCents: 40_000, kind: "ticket" },
          { label: "Extra donation", quantity: 1, amountCents: 1000, kind: "extra_donation" },
        ],
        discountCents: 5000,
        promoCode: "EARLY",
      }),
    );
    expect(r.subject).toBe("Your tickets for Harvest Gala");
    expect(r.text).toContain("Your tickets for Harvest Gala are listed below.");
    expect(r.text).toMatch(/Adult × 2\s+\$100\n/);
    expect(r.text).toMatch(/Table\s+\$400\n/);
    expect(r.text).toMatch(/Discount \(EARLY\)\s+-\$50\n/);
    expect(r.text).toMatch(/Processing fee you covered\s+\$13\.32\n/);
    expect(r.text).toMatch(/Total\s+\$473\.32\n/);
    expect(r.text).not.toContain("Frequency");
    expect(r.html).toContain("Adult × 2");
    // A discount is a negative amount as the language writes one: in Arabic the sign stays with the number.
    const arabic = renderReceipt(
      base({ language: "ar", amountCents: 5000, discountCents: 5000, promoCode: "EARLY", lines: [] }),
    );
    expect(arabic.html).toContain(`>${formatMoney(-5000, "USD", "ar")}</td>`);
    expect(arabic.html).not.toContain(`-${formatMoney(5000, "USD", "ar")}`);
  });

  it("dates the gift and the next charge by the day they fall on in the organization's time zone", () => {
    // 23:30 on December 31 in New York (UTC already January 1); the next charge at 00:30 on January 31 in
    // Tokyo is still January 30 in UTC.
    const newYork = renderReceipt(
      base({
        date: "2026-01-01T04:30:00.000Z",
        frequency: "MONTHLY",
        nextBillingDate: "2026-02-01T04:30:00.000Z",
        timeZone: "America/New_York",
      }),
    );
    for (const part of [newYork.text, newYork.html]) {
      expect(part).toContain("December 31, 2025");
      expect(part).toContain("January 31, 2026");
      expect(part).not.toContain("January 1, 2026");
      expect(part).not.toContain("February 1, 2026");
    }
    const tokyo = renderReceipt(
      base({ date: "2026-01-30T15:30:00.000Z", language: "de", timeZone: "Asia/Tokyo" }),
    );
    expect(tokyo.text).toContain("31. Januar 2026");
    // Without a zone, UTC's day, as before.
    expect(renderReceipt(base({ date: "2026-01-01T04:30:00.000Z" })).text).toContain("January 1, 2026");
  });

  it("names the gift's frequency with a word that stands alone, not the adjective of its sentences", () => {
    // The Frequency row's value in each language: [label, one-time, monthly].
    const rows: Record<NonNullable<ReceiptInput["language"]>, [string, string, string]> = {
      en: ["Frequency", "One-time", "Monthly"],
      es: ["Frecuencia", "Una vez", "Mensual"],
      fr: ["Fréquence", "Ponctuel", "Mensuel"],
      de: ["Häufigkeit", "Einmalig", "Monatlich"],
      "pt-BR": ["Frequência", "Única", "Mensal"],
      ar: ["التكرار", "مرة واحدة", "شهريًا"],
    };
    // The value at the end of its line: the right, or the left in a right-to-left language.
    const row = (label: string, value: string, end = "right") =>
      `>${label}</td><td style="padding:4px 0;border-bottom:1px solid #eee;vertical-align:top;text-align:${end}">${value}</td>`;
    for (const [language, [label, once, monthly]] of Object.entries(rows) as [
      keyof typeof rows,
      [string, string, string],
    ][]) {
      for (const [frequency, word] of [
        ["ONE_TIME", once],
        ["MONTHLY", monthly],
      ] as const) {
        const r = renderReceipt(base({ language, frequency }));
        expect(r.text, `${language} ${frequency}`).toMatch(new RegExp(`^ +${label} +${word}$`, "m"));
        expect(r.html, `${language} ${frequency}`).toContain(
          row(label, word, language === "ar" ? "left" : "right"),
        );
      }
    }
    // The sentences keep their adjective: "Ihre monatliche Spende", "لتبرعك الشهري".
    expect(renderReceipt(base({ language: "de", frequency: "MONTHLY" })).subject).toContain(
      "Ihre monatliche Spende",
    );
    expect(renderReceipt(base({ language: "ar", frequency: "MONTHLY" })).text).toContain("لتبرعك الشهري");
  });
});

import { describe, expect, it } from "vitest";
import { renderConfirmationRequest } from "../../server/mail/confirmationRequest.js";

/** The e-mail asking a donor to confirm a held recurring charge speaks the donor's language. */
describe("the confirmation request e-mail", () => {
  const input = {
    organizationName: "Food Bank",
    firstName: "Ana",
    amountCents: 123450,
    frequency: "MONTHLY" as const,
    currency: "EUR",
    url: "https://give.example/update/upd_1",
    expiresAt: "2026-07-03T10:00:00.000Z",
  };
  const plain = (s: string) => s.replace(/[\u00a0\u202f]/g, " ");

  it("is in English by default, with the amount, the link and the date it ends", () => {
    const mail = renderConfirmationRequest(input);
    expect(mail.subject).toBe("Please confirm your monthly gift to Food Bank");
    expect(mail.text).toContain("Dear Ana,");
    expect(mail.text).toContain("this monthly gift of €1,234.50 to Food Bank");
    expect(mail.text).toContain("the link works until July 3, 2026");
    expect(mail.text).toContain(input.url);
    expect(mail.html).toContain('<html lang="en" dir="ltr">');
  });

  it("is in the donor's language: words, amounts and dates, right to left in Arabic", () => {
    const es = renderConfirmationRequest({ ...input, language: "es" });
    expect(es.subject).toBe("Confirma tu donación mensual a Food Bank");
    expect(plain(es.text)).toContain("esta donación mensual de 1234,50 €");
    expect(es.text).toContain("hasta el 3 de julio de 2026");
    expect(es.html).toContain('<html lang="es" dir="ltr">');
    const de = renderConfirmationRequest({ ...input, language: "de" });
    expect(de.subject).toBe("Bitte bestätigen Sie Ihre monatliche Spende an Food Bank");
    expect(plain(de.html)).toContain("Meine Spende von 1.234,50 € bestätigen");
    const ar = renderConfirmationRequest({ ...input, language: "ar" });
    expect(ar.html).toContain('<html lang="ar" dir="rtl">');
    expect(ar.subject).toContain("الشهري");
    expect(ar.text).toContain(input.url);
  });

  it("dates the link's end by the day it falls on in the organization's time zone", () => {
    // 02:00 on July 3 in UTC is still July 2 in Los Angeles.
    const la = renderConfirmationRequest({
      ...input,
      expiresAt: "2026-07-03T02:00:00.000Z",
      timeZone: "America/Los_Angeles",
    });
    expect(la.text).toContain("the link works until July 2, 2026");
    expect(la.html).toContain("July 2, 2026");
    expect(la.html).not.toContain("July 3, 2026");
  });

  it("escapes the organization's and donor's names in its HTML", () => {
    const mail = renderConfirmationRequest({
      ...input,
      organizationName: "<b>Org</b>",
      firstName: "<i>x</i>",
    });
    expect(mail.html).not.toContain("<b>Org</b>");
    expect(mail.html).not.toContain("<i>x</i>");
  });
});

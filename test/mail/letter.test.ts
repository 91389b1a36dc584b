import { describe, expect, it } from "vitest";
import { renderLetter } from "../../server/mail/letter.js";

/** The plain e-mail layout the link mails and the tribute notice share (server/mail/letter.ts). */
describe("a letter", () => {
  it("puts the link's address alone between the paragraphs of its text", () => {
    const { text } = renderLetter({
      language: "en",
      intro: ["Hello,", "Open this:"],
      link: { url: "https://example.org/a?b=1&c=2", label: "Open" },
      after: ["Bye", "Org"],
    });
    expect(text).toBe("Hello,\n\nOpen this:\n\nhttps://example.org/a?b=1&c=2\n\nBye\n\nOrg");
  });

  it("escapes every value in the HTML: paragraphs, the link's address and its words", () => {
    const { html } = renderLetter({
      language: "en",
      intro: ['<script>alert("x")</script>'],
      link: { url: 'https://example.org/?q="><img src=x>', label: "<b>Go</b>", showUrl: true },
      after: ["A & B"],
    });
    expect(html).not.toMatch(/<script|<img|<b>/);
    expect(html).toContain("&#60;script&#62;");
    expect(html).toContain("A &#38; B");
    // The address is shown under the button too when asked (mail programs that hide links).
    expect(html.match(/example\.org\/\?q=&#34;&#62;&#60;img src=x&#62;/g)).toHaveLength(2);
  });

  it("keeps a paragraph's single newlines as line breaks, and is written right to left in Arabic", () => {
    const { html } = renderLetter({ language: "ar", intro: ["one\ntwo", "three"] });
    expect(html).toContain('<html lang="ar" dir="rtl">');
    expect(html).toContain("one<br>two</p><p");
    expect(html).not.toContain("<a ");
  });
});

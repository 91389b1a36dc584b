import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inlineQrImages } from "../../server/mail/qrImages.js";
import { type ReceiptInput, renderReceipt } from "../../server/mail/receipt.js";
import { fileTransport } from "../../server/mail/transport.js";
import { newTicketCode } from "../../server/tickets/issue.js";
import { normalizeTicketCode, TICKET_CODE } from "../../shared/ticketCode.js";

/**
 * An event receipt's tickets: each code in the text part, each QR image referenced by cid: in the HTML
 * part and carried as an inline PNG; a message that shows no QR code is composed as before; codes are
 * well formed, random, and read leniently as typed.
 */

const order: ReceiptInput = {
  organizationName: "Acme Food Bank",
  formTitle: "Gala",
  customEmail: { enabled: false },
  donor: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.org" },
  paymentId: "pay_tickets",
  status: "COMPLETED",
  amountCents: 50000,
  feeCents: 0,
  frequency: "ONE_TIME",
  fund: "Gala",
  date: "2026-11-26T10:00:00.000Z",
  lines: [
    { label: "Adult", quantity: 2, amountCents: 10000, kind: "ticket" },
    { label: "Table", quantity: 1, amountCents: 40000, kind: "ticket" },
  ],
  discountCents: 0,
  promoCode: null,
  paymentMethod: { type: "card", brand: "visa", last4: "4242" },
  nextBillingDate: null,
  recurringCharge: false,
};
const tickets = [
  { code: "7QK3-M9XD-4R", ticketType: "Adult", admits: 1 },
  { code: "8ZT1-PQ2W-0B", ticketType: "Adult", admits: 1 },
  { code: "K4HC-V7NA-9S", ticketType: "<Table>", admits: 8 },
];

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-qr-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function eml(html: string): Promise<string> {
  const transport = fileTransport(dir, { publicUrl: "http://forms.test", now: () => 0 });
  await transport.send({
    id: `eml_${Math.random().toString(36).slice(2)}`,
    fromName: "Acme",
    to: "ada@example.org",
    subject: "Tickets",
    text: "x",
    html,
  });
  const [name] = fs.readdirSync(dir).filter((n) => n.endsWith(".eml"));
  const raw = fs.readFileSync(path.join(dir, name), "utf8");
  fs.rmSync(path.join(dir, name));
  return raw.replace(/\r\n/g, "\n");
}

describe("an event receipt's tickets", () => {
  it("lists each code in the text, and its QR image by cid: in the HTML, names escaped", () => {
    const mail = renderReceipt({ ...order, tickets });
    for (const t of tickets) {
      expect(mail.text).toContain(t.code);
      expect(mail.html).toContain(`<img src="cid:qr.${t.code}@almoner"`);
    }
    expect(mail.text).toContain("Show each ticket's code or its QR code at the door.");
    expect(mail.text).toContain("K4HC-V7NA-9S  <Table> (admits 8 people)");
    expect(mail.html).toContain("&#60;Table&#62; (admits 8 people)");
    expect(mail.html).not.toContain("<Table>");
  });

  it("is written in the donor's language", () => {
    const mail = renderReceipt({ ...order, tickets, language: "es" });
    expect(mail.text).toContain("Tus entradas");
    expect(mail.text).toContain("admite 8 personas");
  });

  it("a receipt without tickets is exactly what it was: no ticket section, no image", () => {
    const without = renderReceipt(order);
    expect(renderReceipt({ ...order, tickets: [] })).toEqual(without);
    expect(without.html).not.toContain("cid:");
    expect(without.text).not.toContain("Show each ticket");
  });

  it("the message carries one inline PNG per QR code the HTML shows, with its Content-ID", async () => {
    const mail = renderReceipt({ ...order, tickets });
    const raw = await eml(mail.html);
    expect(raw).toMatch(/Content-Type: multipart\/related/);
    for (const t of tickets) {
      const part = raw.split(/\n--[^\n]+\n/).find((s) => s.includes(`Content-ID: <qr.${t.code}@almoner>`));
      expect(part, t.code).toBeDefined();
      expect(part).toMatch(/Content-Type: image\/png/);
      expect(part).toMatch(/Content-Disposition: inline/);
      const png = Buffer.from((part ?? "").slice((part ?? "").indexOf("\n\n") + 2), "base64");
      expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
    }
  });

  it("a message with no QR reference has no attachment; donor text that mentions one draws none", async () => {
    const plain = await eml("<p>Thank you.</p>");
    expect(plain).not.toMatch(/multipart\/related|image\/png/);
    // Donors' words are escaped: a quote cannot open an attribute, so this is text, not a reference.
    const typed = await eml(`<p>src=&quot;cid:qr.7QK3-M9XD-4R@almoner&quot;</p>`);
    expect(typed).not.toMatch(/image\/png/);
    expect(await inlineQrImages('<img src="cid:qr.NOT-A-CODE@almoner">')).toEqual([]);
  });
});

describe("ticket codes", () => {
  it("are ABCD-EFGH-JK in Crockford's alphabet, and do not repeat", () => {
    const codes = Array.from({ length: 2000 }, newTicketCode);
    for (const code of codes) expect(code).toMatch(TICKET_CODE);
    expect(new Set(codes).size).toBe(codes.length);
    // Every character of the alphabet turns up: all 5 bits are random.
    expect(new Set(codes.join("").replace(/-/g, "")).size).toBe(32);
  });

  it("are read as typed: any case, without dashes, O for 0, I and L for 1", () => {
    expect(normalizeTicketCode("7qk3 m9xd 4r")).toBe("7QK3-M9XD-4R");
    expect(normalizeTicketCode("O1IL-ABCD-EF")).toBe("0111-ABCD-EF");
    expect(normalizeTicketCode("7QK3-M9XD-4")).toBeNull();
    expect(normalizeTicketCode("7QK3-M9XD-4U")).toBeNull();
  });
});

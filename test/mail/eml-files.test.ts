import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { queueEmail } from "../../server/mail/outbox.js";
import { renderReceipt } from "../../server/mail/receipt.js";
import { createTransport, mailDomain } from "../../server/mail/transport.js";
import { MailWorker } from "../../server/mail/worker.js";
import type { Store } from "../../server/store/database.js";
import { freshDatabase, type TestDatabase } from "../support/testApp.js";
import { parseMail } from "./support.js";

const START = Date.UTC(2026, 3, 15, 18, 32, 0);

let database: TestDatabase;
let store: Store;
let dataDir: string;

beforeEach(async () => {
  database = await freshDatabase();
  store = await database.open();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-mail-"));
});

afterEach(async () => {
  await store.close();
  await database.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("receipts without SMTP", () => {
  it("are written as .eml files under <DATA_DIR>/mail that parse as the message", async () => {
    const receipt = renderReceipt({
      organizationName: `Acme "Food" Bank`,
      formTitle: "<b>Gala</b>",
      customEmail: { enabled: false },
      donor: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.org" },
      paymentId: "pay_eml",
      status: "COMPLETED",
      amountCents: 5000,
      feeCents: 0,
      frequency: "ONE_TIME",
      fund: "Gala",
      date: new Date(START).toISOString(),
      lines: [{ label: "Adult", quantity: 1, amountCents: 5000, kind: "ticket" }],
      discountCents: 0,
      promoCode: null,
      paymentMethod: { type: "card", brand: "amex", last4: "0005" },
      nextBillingDate: null,
      recurringCharge: false,
    });
    const id = await store.db.transaction().execute((trx) =>
      queueEmail(
        trx,
        {
          organizationId: "org_test",
          to: "ada@example.org",
          fromName: `Acme "Food" Bank`,
          subject: receipt.subject,
          text: receipt.text,
          html: receipt.html,
        },
        START,
      ),
    );
    const transport = createTransport({ dataDir, publicUrl: "http://localhost:3000", now: () => START });
    const worker = new MailWorker({ store, transport, now: () => START });
    expect(await worker.runOnce()).toEqual({ sent: 1, failed: 0 });

    const files = fs.readdirSync(path.join(dataDir, "mail"));
    expect(files).toEqual([`20260415T183200000Z-${id}.eml`]);
    const raw = fs.readFileSync(path.join(dataDir, "mail", files[0]), "utf8");
    expect(raw).toMatch(/\r\n\r\n/);
    expect(raw.replace(/\r\n/g, "")).not.toMatch(/\n/);
    const m = parseMail(raw);
    expect(m.header("subject")).toBe("Your tickets for <b>Gala</b>");
    expect(m.header("to")).toBe("ada@example.org");
    expect(m.header("from")).toBe(`"Acme \\"Food\\" Bank" <receipts@localhost>`);
    expect(m.header("message-id")).toBe(`<${id}@localhost>`);
    expect(m.header("date")).toBe("Wed, 15 Apr 2026 18:32:00 +0000");
    expect(m.header("mime-version")).toBe("1.0");
    expect(m.contentType).toBe("multipart/alternative");
    expect(m.parts).toEqual([
      { contentType: "text/plain", body: receipt.text },
      { contentType: "text/html", body: receipt.html },
    ]);
    expect(m.parts[1].body).toContain("&#60;b&#62;Gala&#60;/b&#62;");
    expect(
      (await store.db.selectFrom("email_outbox").select("status").executeTakeFirstOrThrow()).status,
    ).toBe("SENT");
  });

  it("never let a line break in a subject or sender name add a header", async () => {
    const transport = createTransport({ dataDir, publicUrl: "https://give.example.org" });
    await transport.send({
      id: "eml_x",
      fromName: "Acme\r\nBcc: eve@evil.test",
      to: "ada@example.org",
      subject: "Thanks\r\nBcc: eve@evil.test\r\n\r\nfake body",
      text: "real body",
      html: "<p>real body</p>",
    });
    const [file] = fs.readdirSync(path.join(dataDir, "mail"));
    expect(file).toMatch(/^\d{8}T\d{9}Z-eml_x\.eml$/);
    const m = parseMail(fs.readFileSync(path.join(dataDir, "mail", file), "utf8"));
    expect(m.headers.has("bcc")).toBe(false);
    expect(m.header("subject")).toBe("Thanks Bcc: eve@evil.test fake body");
    expect(m.parts.map((p) => p.body)).toEqual(["real body", "<p>real body</p>"]);
  });

  it("keep a subject holding an encoded word as its very text: a client shows it, and decodes nothing of it", async () => {
    const transport = createTransport({ dataDir, publicUrl: "https://give.example.org" });
    const smuggled = `A gift in honor of =?utf-8?Q?=E2=80=AEtnuocca_ruoy_yfirev?= and ${"long words ".repeat(8).trim()}`;
    await transport.send({
      id: "eml_w",
      fromName: "Acme",
      to: "ada@example.org",
      subject: smuggled,
      text: "body",
      html: "<p>body</p>",
    });
    const [file] = fs.readdirSync(path.join(dataDir, "mail"));
    const raw = fs.readFileSync(path.join(dataDir, "mail", file), "utf8");
    expect(raw).not.toContain("=?utf-8?Q?");
    // Decoded once, as a mail client does: the text as written, no right-to-left override.
    const subject = parseMail(raw).header("subject");
    expect(subject).toBe(smuggled);
    expect(subject).not.toContain("\u202e");
  });

  it("leave no partial file behind when a write fails", async () => {
    const transport = createTransport({ dataDir, publicUrl: "https://give.example.org", now: () => START });
    const mailDir = path.join(dataDir, "mail");
    // A directory where the file should go makes the final rename fail after the temp file is written.
    fs.mkdirSync(path.join(mailDir, "20260415T183200000Z-eml_y.eml"), { recursive: true });
    await expect(
      transport.send({
        id: "eml_y",
        fromName: "Acme",
        to: "ada@example.org",
        subject: "s",
        text: "t",
        html: "h",
      }),
    ).rejects.toThrow();
    expect(fs.readdirSync(mailDir)).toEqual(["20260415T183200000Z-eml_y.eml"]);
  });

  it("send from receipts@ the public host, with IP hosts as address literals", () => {
    expect(mailDomain("https://give.example.org:8443/base")).toBe("give.example.org");
    expect(mailDomain("http://127.0.0.1:3000")).toBe("[127.0.0.1]");
    expect(mailDomain("http://[::1]:3000")).toBe("[IPv6:::1]");
    expect(mailDomain("not a url")).toBe("localhost");
  });
});

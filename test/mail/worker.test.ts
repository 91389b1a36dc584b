import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { renderReceipt } from "../../server/mail/receipt.js";
import { createTransport, type MailMessage, type MailTransport } from "../../server/mail/transport.js";
import { MailWorker } from "../../server/mail/worker.js";
import type { Store } from "../../server/store/database.js";
import { freshDatabase, type TestDatabase } from "../support/testApp.js";
import { queueTestEmail, startSmtp, type TestSmtp } from "./support.js";

const START = Date.UTC(2026, 3, 15, 18, 32, 0);
const PUBLIC_URL = "https://give.example.org";
const SCHEDULE = [60_000, 300_000];

let database: TestDatabase;
let store: Store;
let smtp: TestSmtp | undefined;
let clock = START;
const now = () => clock;
const cleanups: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  clock = START;
  database = await freshDatabase();
  store = await database.open();
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await smtp?.close();
  smtp = undefined;
  await store.close();
  await database.drop();
});

function smtpWorker(server: TestSmtp, s: Store = store, extra: { batchSize?: number } = {}) {
  const transport = createTransport({
    smtpUrl: server.url,
    dataDir: "/nonexistent",
    publicUrl: PUBLIC_URL,
    now,
  });
  cleanups.push(async () => transport.close?.());
  return new MailWorker({ store: s, transport, now, retryScheduleMs: SCHEDULE, ...extra });
}

function queue(
  to = "ada@example.org",
  extra: { replyTo?: string; subject?: string; text?: string; html?: string } = {},
): Promise<string> {
  return queueTestEmail(store.db, clock, {
    to,
    replyTo: extra.replyTo,
    subject: extra.subject ?? "Thank you for your gift to Acme Food Bank",
    text: extra.text,
    html: extra.html,
  });
}

const row = (id: string) =>
  store.db.selectFrom("email_outbox").selectAll().where("id", "=", id).executeTakeFirstOrThrow();

describe("the e-mail outbox and its worker", () => {
  it("delivers a queued receipt once, to the donor, with its subject and reply-to", async () => {
    smtp = await startSmtp();
    const receipt = renderReceipt({
      organizationName: "Acme Food Bank",
      formTitle: "Spring appeal",
      customEmail: {
        enabled: true,
        replyToAddress: "help@acme.org",
        emailSubject: "Thank you, Ada — ünïcode ✓",
      },
      donor: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.org" },
      paymentId: "pay_test",
      status: "COMPLETED",
      amountCents: 2500,
      feeCents: 0,
      frequency: "MONTHLY",
      fund: "General",
      date: new Date(START).toISOString(),
      lines: [{ label: "Donation", quantity: 1, amountCents: 2500 }],
      discountCents: 0,
      promoCode: null,
      paymentMethod: { type: "card", brand: "visa", last4: "4242" },
      nextBillingDate: null,
      recurringCharge: false,
    });
    const id = await queue("ada@example.org", { ...receipt });
    expect(id).toMatch(/^eml_[0-9a-z]{26}$/);
    const queued = await row(id);
    expect(queued).toMatchObject({
      status: "PENDING",
      attempts: 0,
      next_attempt_at: new Date(START).toISOString(),
    });

    const worker = smtpWorker(smtp);
    expect(await worker.runOnce()).toEqual({ sent: 1, failed: 0 });
    expect(await worker.runOnce()).toEqual({ sent: 0, failed: 0 });

    expect(smtp.received).toHaveLength(1);
    const [mail] = smtp.received;
    expect(mail.rcptTo).toEqual(["ada@example.org"]);
    expect(mail.mailFrom).toBe("receipts@give.example.org");
    const m = mail.message;
    expect(m.header("to")).toBe("ada@example.org");
    expect(m.header("subject")).toBe("Thank you, Ada — ünïcode ✓");
    expect(m.header("reply-to")).toBe("help@acme.org");
    expect(m.header("from")).toBe("Acme Food Bank <receipts@give.example.org>");
    expect(m.header("message-id")).toBe(`<${id}@give.example.org>`);
    expect(m.contentType).toBe("multipart/alternative");
    expect(m.parts.map((p) => p.contentType)).toEqual(["text/plain", "text/html"]);
    expect(m.parts[0].body).toBe(receipt.text);
    expect(m.parts[1].body).toBe(receipt.html);

    expect(await row(id)).toMatchObject({
      status: "SENT",
      attempts: 1,
      sent_at: new Date(START).toISOString(),
      claim_token: null,
      claimed_until: null,
      last_error: null,
    });
  });

  it("retries a message the SMTP server refused, after the backoff and not before", async () => {
    smtp = await startSmtp({ refuse: (attempt) => (attempt === 1 ? 451 : undefined) });
    const id = await queue();
    const worker = smtpWorker(smtp);

    expect(await worker.runOnce()).toEqual({ sent: 0, failed: 1 });
    const failed = await row(id);
    expect(failed).toMatchObject({ status: "PENDING", attempts: 1, claim_token: null });
    expect(failed.last_error).toContain("Try again later");
    expect(failed.next_attempt_at).toBe(new Date(START + SCHEDULE[0]).toISOString());

    clock += SCHEDULE[0] - 1;
    expect(await worker.runOnce()).toEqual({ sent: 0, failed: 0 });
    clock += 1;
    expect(await worker.runOnce()).toEqual({ sent: 1, failed: 0 });

    expect(smtp.attempts).toBe(2);
    expect(smtp.received).toHaveLength(1);
    expect(await row(id)).toMatchObject({ status: "SENT", attempts: 2, last_error: null });
  });

  it("gives up as FAILED once the retry schedule is exhausted", async () => {
    smtp = await startSmtp({ refuse: () => 451 });
    const id = await queue();
    const worker = smtpWorker(smtp);
    for (const wait of [...SCHEDULE, 0]) {
      expect(await worker.runOnce()).toEqual({ sent: 0, failed: 1 });
      clock += wait;
    }
    clock += 86_400_000;
    expect(await worker.runOnce()).toEqual({ sent: 0, failed: 0 });
    expect(smtp.attempts).toBe(SCHEDULE.length + 1);
    expect(await row(id)).toMatchObject({ status: "FAILED", attempts: SCHEDULE.length + 1 });
  });

  it("fails at once, without retrying, a message whose recipient address the server refuses for good", async () => {
    // The donor's address does not exist (5.1.1), a mailbox disabled (5.2.1), or a server that gives no
    // enhanced status answering 550: retrying the same address can never deliver it.
    const refusals: Record<string, string> = {
      "nobody@example.org": "550 5.1.1 No such user here",
      "closed@example.org": "550 5.2.1 Mailbox disabled",
      "plain@example.org": "550 Requested action not taken: mailbox unavailable",
      "syntax@example.org": "553 Mailbox name not allowed",
    };
    smtp = await startSmtp({ refuseRecipient: (address) => refusals[address] });
    const ids = await Promise.all(Object.keys(refusals).map((to) => queue(to)));
    const good = await queue("bob@example.org");
    const worker = smtpWorker(smtp);
    expect(await worker.runOnce()).toEqual({ sent: 1, failed: 4 });
    for (const [i, id] of ids.entries()) {
      const failed = await row(id);
      expect(failed).toMatchObject({ status: "FAILED", attempts: 1, claim_token: null });
      expect(failed.last_error).toContain("the receiving server refused the address");
      expect(failed.last_error).toContain(Object.values(refusals)[i]);
    }
    expect((await row(good)).status).toBe("SENT");

    // Not tried again, however long the schedule would have waited.
    const seen = smtp.recipientAttempts;
    clock += 86_400_000;
    expect(await worker.runOnce()).toEqual({ sent: 0, failed: 0 });
    expect(smtp.recipientAttempts).toBe(seen);
  });

  it("retries on the schedule a refusal that mending the mail set-up would cure (relay, policy, a full mailbox)", async () => {
    // 5.7.1: the server will not relay for us (credentials or sender set up wrong); 5.2.2: the mailbox is
    // full; 450: try later. Each is PENDING with a next attempt, not given up.
    // A bare 550 about relaying or authentication (Exim without enhanced statuses), and a sender refused at
    // RCPT TO (Postfix checks the sender there by default; 5.1.8: our domain has no mail DNS) are set-up too.
    const refusals: Record<string, string> = {
      "relay@example.org": "554 5.7.1 Relay access denied",
      "full@example.org": "552 5.2.2 Mailbox full",
      "busy@example.org": "450 4.2.1 Mailbox busy",
      "exim@example.org": "550 relay not permitted",
      "cpanel@example.org": "550 authentication is required for relay",
      "sender@example.org":
        "550 5.1.8 <receipts@give.example.org>: Sender address rejected: Domain not found",
      "unknown-sender@example.org":
        "550 5.1.0 <receipts@give.example.org>: Sender address rejected: User unknown",
    };
    let refusing = true;
    smtp = await startSmtp({ refuseRecipient: (address) => (refusing ? refusals[address] : undefined) });
    const ids = await Promise.all(Object.keys(refusals).map((to) => queue(to)));
    const worker = smtpWorker(smtp);
    expect(await worker.runOnce()).toEqual({ sent: 0, failed: ids.length });
    for (const id of ids)
      expect(await row(id)).toMatchObject({
        status: "PENDING",
        attempts: 1,
        next_attempt_at: new Date(START + SCHEDULE[0]).toISOString(),
      });

    // The set-up is mended: the next attempt delivers every one.
    refusing = false;
    clock += SCHEDULE[0];
    expect(await worker.runOnce()).toEqual({ sent: ids.length, failed: 0 });
    expect(smtp.received.map((m) => m.rcptTo[0]).sort()).toEqual(Object.keys(refusals).sort());
  });

  it("fails a message to more than one address at once, without sending it", async () => {
    smtp = await startSmtp();
    const bad = await queue("ada@example.org, eve@example.org");
    const good = await queue("bob@example.org");
    expect(await smtpWorker(smtp).runOnce()).toEqual({ sent: 1, failed: 1 });
    expect((await row(bad)).status).toBe("FAILED");
    expect((await row(bad)).last_error).toContain("not a single e-mail address");
    expect((await row(good)).status).toBe("SENT");
    expect(smtp.received.map((m) => m.rcptTo)).toEqual([["bob@example.org"]]);
  });

  it("keeps going past a message whose send throws, and reports no error out of the pass", async () => {
    const sent: string[] = [];
    const ids = [await queue("a@example.org"), await queue("b@example.org"), await queue("c@example.org")];
    const transport: MailTransport = {
      async send(message: MailMessage) {
        if (message.to === "b@example.org") throw new TypeError("boom");
        sent.push(message.to);
      },
    };
    const worker = new MailWorker({ store, transport, now, retryScheduleMs: SCHEDULE, batchSize: 2 });
    expect(await worker.runOnce()).toEqual({ sent: 2, failed: 1 });
    expect(sent.sort()).toEqual(["a@example.org", "c@example.org"]);
    expect((await row(ids[1])).last_error).toBe("boom");
  });

  it("leaves rows another worker holds alone until its claim expires", async () => {
    smtp = await startSmtp();
    const id = await queue();
    await store.db
      .updateTable("email_outbox")
      .set({ claim_token: "someone-else", claimed_until: new Date(START + 60_000).toISOString() })
      .execute();
    const worker = smtpWorker(smtp);
    expect(await worker.runOnce()).toEqual({ sent: 0, failed: 0 });
    clock += 60_000;
    expect(await worker.runOnce()).toEqual({ sent: 1, failed: 0 });
    expect((await row(id)).status).toBe("SENT");
  });

  it("sends each message exactly once with two workers on the same database at the same time", async () => {
    smtp = await startSmtp({ delayMs: 5 });
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(await queue(`donor${i}@example.org`));
    // A second connection pool on the same database stands in for a second process.
    const other = await database.open();
    cleanups.push(() => other.close());
    const a = smtpWorker(smtp, store, { batchSize: 3 });
    const b = smtpWorker(smtp, other, { batchSize: 3 });

    const [ra, rb] = await Promise.all([a.runOnce(), b.runOnce()]);
    expect(ra.sent + rb.sent).toBe(30);
    expect(ra.sent).toBeGreaterThan(0);
    expect(rb.sent).toBeGreaterThan(0);
    expect(ra.failed + rb.failed).toBe(0);

    const delivered = smtp.received.map((m) => m.message.header("message-id"));
    expect(delivered).toHaveLength(30);
    expect(new Set(delivered).size).toBe(30);
    expect(new Set(delivered)).toEqual(new Set(ids.map((id) => `<${id}@give.example.org>`)));
    const statuses = await store.db.selectFrom("email_outbox").select(["status", "attempts"]).execute();
    expect(statuses.every((s) => s.status === "SENT" && s.attempts === 1)).toBe(true);
  });

  it("runs on a timer, and stop() waits for the pass in flight", async () => {
    let release = () => {};
    const started: string[] = [];
    const transport: MailTransport = {
      send: (message) =>
        new Promise<void>((resolve) => {
          started.push(message.id);
          release = resolve;
        }),
    };
    const id = await queue();
    const worker = new MailWorker({ store, transport, now });
    worker.start(10);
    await expect.poll(() => started.length).toBe(1);
    let stopped = false;
    const stopping = worker.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect((await row(id)).status).toBe("SENT");
    expect(started).toEqual([id]);
  });

  it("abandons a send that outlasts its time limit and retries it later", async () => {
    const transport: MailTransport = {
      send: (_message, signal) =>
        new Promise<void>((_resolve, reject) => {
          signal?.addEventListener("abort", () => reject(signal.reason));
        }),
    };
    const id = await queue();
    const worker = new MailWorker({ store, transport, now, retryScheduleMs: SCHEDULE, sendTimeoutMs: 50 });
    expect(await worker.runOnce()).toEqual({ sent: 0, failed: 1 });
    expect(await row(id)).toMatchObject({ status: "PENDING", attempts: 1 });
    expect((await row(id)).last_error).toContain("timed out");
  });
});

import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { type OutgoingMail, queueEmail } from "../../server/mail/outbox.js";
import type { Db } from "../../server/store/schema.js";

/**
 * A real SMTP server on 127.0.0.1 (port 0) that records what it accepts, a small RFC 5322 reader, and a
 * message queued in the outbox.
 */

export interface ReceivedMail {
  mailFrom: string;
  rcptTo: string[];
  raw: string;
  message: ParsedMail;
}

export interface TestSmtp {
  /** smtp://user:secret@127.0.0.1:<port> */
  url: string;
  received: ReceivedMail[];
  /** DATA commands seen, accepted or not. */
  attempts: number;
  /** RCPT TO commands seen, accepted or not. */
  recipientAttempts: number;
  close(): Promise<void>;
}

export async function startSmtp(
  opts: {
    /** Return an SMTP reply code to refuse the n-th (1-based) DATA, e.g. 451. */
    refuse?: (attempt: number) => number | undefined;
    /** Hold each message this long before answering (lets concurrent workers interleave). */
    delayMs?: number;
    /** The whole reply refusing a recipient, e.g. "550 5.1.1 No such user"; undefined accepts it. */
    refuseRecipient?: (address: string) => string | undefined;
  } = {},
): Promise<TestSmtp> {
  const state: TestSmtp = { url: "", received: [], attempts: 0, recipientAttempts: 0, close: async () => {} };
  const server = new SMTPServer({
    logger: false,
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (auth.username === "user" && auth.password === "s3cret/pass")
        callback(null, { user: auth.username });
      else callback(new Error("Invalid username or password"));
    },
    onRcptTo(address, _session, callback) {
      state.recipientAttempts++;
      const reply = opts.refuseRecipient?.(address.address);
      if (!reply) return callback();
      const [code, ...text] = reply.split(" ");
      callback(Object.assign(new Error(text.join(" ")), { responseCode: Number(code) }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const attempt = ++state.attempts;
        setTimeout(() => {
          const code = opts.refuse?.(attempt);
          if (code) {
            callback(
              Object.assign(new Error(`Try again later (attempt ${attempt})`), { responseCode: code }),
            );
            return;
          }
          const raw = Buffer.concat(chunks).toString("utf8");
          const envelope = session.envelope;
          state.received.push({
            mailFrom: envelope.mailFrom ? envelope.mailFrom.address : "",
            rcptTo: envelope.rcptTo.map((r) => r.address),
            raw,
            message: parseMail(raw),
          });
          callback();
        }, opts.delayMs ?? 0);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  state.url = `smtp://user:${encodeURIComponent("s3cret/pass")}@127.0.0.1:${port}`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}

export interface ParsedMail {
  /** Lower-case header names; values unfolded and with encoded words decoded. */
  headers: Map<string, string[]>;
  header(name: string): string | undefined;
  contentType: string;
  /** Leaf parts (the message itself when it is not multipart), bodies decoded. */
  parts: { contentType: string; body: string }[];
}

function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, "?==?")
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_, _charset: string, enc: string, text: string) =>
      enc.toUpperCase() === "B"
        ? Buffer.from(text, "base64").toString("utf8")
        : decodeQuotedPrintable(text.replace(/_/g, " ")),
    );
}

function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = [];
  const src = text.replace(/=\r?\n/g, "");
  for (let i = 0; i < src.length; i++) {
    if (src[i] === "=" && /^[0-9A-F]{2}$/i.test(src.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(src.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(src[i], "utf8"));
  }
  return Buffer.from(bytes).toString("utf8");
}

function splitEntity(raw: string): { headers: Map<string, string[]>; body: string } {
  const text = raw.replace(/\r\n/g, "\n");
  const end = text.indexOf("\n\n");
  const head = end === -1 ? text : text.slice(0, end);
  const body = end === -1 ? "" : text.slice(end + 2);
  const headers = new Map<string, string[]>();
  for (const line of head.replace(/\n[ \t]+/g, " ").split("\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) throw new Error(`not a header line: ${JSON.stringify(line)}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), decodeWords(line.slice(colon + 1).trim())]);
  }
  return { headers, body };
}

export function parseMail(raw: string): ParsedMail {
  const { headers, body } = splitEntity(raw);
  const contentType = headers.get("content-type")?.[0] ?? "text/plain";
  const parts: ParsedMail["parts"] = [];
  const collect = (type: string, entityHeaders: Map<string, string[]>, entityBody: string) => {
    const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
    if (type.toLowerCase().startsWith("multipart/") && boundary) {
      const sections = entityBody.split(`--${boundary}`).slice(1);
      for (const section of sections) {
        if (section.startsWith("--")) break;
        const inner = splitEntity(section.replace(/^\n/, ""));
        collect(inner.headers.get("content-type")?.[0] ?? "text/plain", inner.headers, inner.body);
      }
      return;
    }
    const encoding = entityHeaders.get("content-transfer-encoding")?.[0]?.toLowerCase();
    let decoded = entityBody.replace(/\n$/, "");
    if (encoding === "base64") decoded = Buffer.from(decoded, "base64").toString("utf8");
    else if (encoding === "quoted-printable") decoded = decodeQuotedPrintable(decoded);
    parts.push({ contentType: type.split(";")[0].trim().toLowerCase(), body: decoded });
  };
  collect(contentType, headers, body);
  return {
    headers,
    header: (name) => headers.get(name.toLowerCase())?.[0],
    contentType: contentType.split(";")[0].trim().toLowerCase(),
    parts,
  };
}

/**
 * Queues one receipt-like message in the outbox, due at `nowMs`, in a transaction of its own (as the
 * checkout queues it); resolves to its id. Fields left out or undefined take a plain thank-you to
 * ada@example.org.
 */
export function queueTestEmail(db: Db, nowMs: number, mail: Partial<OutgoingMail> = {}): Promise<string> {
  return db.transaction().execute((trx) =>
    queueEmail(
      trx,
      {
        organizationId: "org_test",
        paymentId: "pay_test",
        to: "ada@example.org",
        fromName: "Acme Food Bank",
        subject: "Thank you",
        text: "Thank you.",
        html: "<p>Thank you.</p>",
        ...Object.fromEntries(Object.entries(mail).filter(([, value]) => value !== undefined)),
      },
      nowMs,
    ),
  );
}

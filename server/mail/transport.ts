import crypto from "node:crypto";
import fs from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { createTransport as createNodemailer, type SendMailOptions } from "nodemailer";
import { isoAt } from "../../shared/time.js";
import { inlineQrImages } from "./qrImages.js";

/**
 * Where messages go: an SMTP server (SMTP_URL), or, with none configured, one `.eml` file per message
 * under `<DATA_DIR>/mail/` so that a fresh install shows its receipts without any mail setup.
 */

export interface MailMessage {
  /** The outbox id: names the file and makes the Message-ID, so a resent copy can be recognised. */
  id: string;
  fromName: string;
  to: string;
  replyTo?: string;
  subject: string;
  text: string;
  html: string;
}

export interface MailTransport {
  /** Resolves once the message is handed over; `signal` abandons it (the worker's time limit). */
  send(message: MailMessage, signal?: AbortSignal): Promise<void>;
  close?(): Promise<void>;
}

export interface TransportOptions {
  /** smtp://user:pass@host:port (STARTTLS when offered) or smtps://… (TLS from the start). */
  smtpUrl?: string;
  dataDir: string;
  /** PUBLIC_URL: its host names the sender address `receipts@<host>`. */
  publicUrl: string;
  now?: () => number;
}

/** The host part of the sender address; IP literals get the bracketed form RFC 5321 requires. */
export function mailDomain(publicUrl: string): string {
  let host = "localhost";
  try {
    host = new URL(publicUrl).hostname || host;
  } catch {
    // A bad PUBLIC_URL is refused by the config; a fallback here keeps mail going regardless.
  }
  const bare = host.replace(/^\[|\]$/g, "");
  if (net.isIPv4(bare)) return `[${bare}]`;
  if (net.isIPv6(bare)) return `[IPv6:${bare}]`;
  return host;
}

/** A message that no retry can deliver; the worker gives it up at once instead of retrying. */
export class UndeliverableError extends Error {}

/** RFC 3463 statuses about the recipient's mailbox itself: bad mailbox, bad system, bad syntax, moved, null MX, disabled. */
const RECIPIENT_STATUSES = new Set(["5.1.1", "5.1.2", "5.1.3", "5.1.6", "5.1.10", "5.2.1"]);
/** Words of a bare refusal that is about our side (relay, authentication, the sender), not the address. */
const SET_UP_WORDS = /relay|auth|sender|from/i;

/**
 * The server's reply when an SMTP server refused the recipient's address itself, so that no retry can
 * deliver the message: a permanent (5xx) reply to RCPT TO whose enhanced status (RFC 3463) says the
 * recipient's mailbox is bad (5.1.1, 5.1.2, 5.1.3, 5.1.6, 5.1.10) or disabled (5.2.1), or, where the server
 * gives no enhanced status, 550, 551 or 553 with no word of relaying, authentication or the sender.
 * Every other refusal (to AUTH or MAIL FROM; a sender refused at RCPT TO, 5.1.0, 5.1.7, 5.1.8; a relay or
 * policy refusal such as 5.7.1 or a bare "550 relay not permitted"; a full mailbox) comes from how the
 * servers are set up and is retried on the schedule, so that mending the set-up delivers the message.
 */
export function addressRefusal(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const { command, response } = err as { command?: unknown; response?: unknown };
  if (command !== "RCPT TO" || typeof response !== "string") return undefined;
  const reply = /^(5\d\d)[ -](?:(5\.\d{1,3}\.\d{1,3})\s)?/.exec(response);
  if (!reply) return undefined;
  const [, code, enhanced] = reply;
  const permanent = enhanced
    ? RECIPIENT_STATUSES.has(enhanced)
    : ["550", "551", "553"].includes(code ?? "") && !SET_UP_WORDS.test(response);
  return permanent ? response : undefined;
}

/** Header values are single lines: a line break in a subject or name must never start a new header. */
const oneLine = (value: string): string => value.replace(/[\r\n\t]+/g, " ").trim();

/**
 * A subject that mail clients show as it is written. Text holding "=?" would be decoded by them as an RFC 2047
 * encoded word (a donor's dedication could bring in a right-to-left override that way), so such a subject is
 * itself sent encoded: base64 words of at most 45 bytes each, which a client decodes back to the very text.
 */
export function literalSubject(value: string): string {
  if (!value.includes("=?")) return value;
  const words: string[] = [];
  let chunk = "";
  for (const ch of value) {
    if (chunk && Buffer.byteLength(chunk + ch) > 45) {
      words.push(chunk);
      chunk = "";
    }
    chunk += ch;
  }
  if (chunk) words.push(chunk);
  return words.map((word) => `=?UTF-8?B?${Buffer.from(word).toString("base64")}?=`).join(" ");
}

// nodemailer reads "a@x.org, b@y.org" as two recipients; a receipt goes to exactly one plain address.
const SINGLE_ADDRESS = /^[^\s@,;:<>()"[\]\\]+@[^\s@,;:<>()"[\]\\]+$/;

async function composeOptions(m: MailMessage, domain: string, nowMs: number): Promise<SendMailOptions> {
  const to = m.to.trim();
  if (!SINGLE_ADDRESS.test(to))
    throw new UndeliverableError(`not a single e-mail address: ${JSON.stringify(to)}`);
  // The QR codes the HTML shows (a receipt's tickets), as inline images; none for other messages.
  const images = await inlineQrImages(m.html);
  return {
    ...(images.length > 0 && { attachments: images }),
    from: { name: oneLine(m.fromName), address: `receipts@${domain}` },
    to,
    replyTo: m.replyTo ? oneLine(m.replyTo) : undefined,
    subject: literalSubject(oneLine(m.subject)),
    text: m.text,
    html: m.html,
    messageId: `<${m.id}@${domain}>`,
    date: new Date(nowMs),
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

export function smtpTransport(
  smtpUrl: string,
  opts: { publicUrl: string; now?: () => number },
): MailTransport {
  const url = new URL(smtpUrl);
  const secure = url.protocol === "smtps:";
  const domain = mailDomain(opts.publicUrl);
  const now = opts.now ?? Date.now;
  // One connection per message (no pool): receipts are few, and nothing stays open between passes.
  // Timeouts well under the worker's claim so a dead server cannot hold a message past its lease.
  const mailer = createNodemailer({
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port ? Number(url.port) : undefined,
    secure,
    auth: url.username
      ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }
      : undefined,
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 30_000,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    async send(message, signal) {
      try {
        await mailer.sendMail({ ...(await composeOptions(message, domain, now())), signal });
      } catch (err) {
        const refusal = addressRefusal(err);
        if (refusal) throw new UndeliverableError(`the receiving server refused the address: ${refusal}`);
        throw err;
      }
    },
    async close() {
      mailer.close();
    },
  };
}

export function fileTransport(dir: string, opts: { publicUrl: string; now?: () => number }): MailTransport {
  const domain = mailDomain(opts.publicUrl);
  const now = opts.now ?? Date.now;
  const composer = createNodemailer({ streamTransport: true, buffer: true, newline: "windows" });
  return {
    async send(message, signal) {
      const nowMs = now();
      const info = await composer.sendMail({ ...(await composeOptions(message, domain, nowMs)), signal });
      const raw = Buffer.isBuffer(info.message) ? info.message : Buffer.from(String(info.message));
      await fs.mkdir(dir, { recursive: true });
      const stamp = isoAt(nowMs).replace(/[-:.]/g, "");
      const name = `${stamp}-${message.id.replace(/[^A-Za-z0-9_-]/g, "_")}.eml`;
      // Readers (and people) see a whole .eml or none: write a hidden temp file, flush it, then rename.
      const temp = path.join(dir, `.${name}.${crypto.randomBytes(6).toString("hex")}.tmp`);
      try {
        const handle = await fs.open(temp, "wx");
        try {
          await handle.writeFile(raw);
          await handle.sync();
        } finally {
          await handle.close();
        }
        signal?.throwIfAborted();
        await fs.rename(temp, path.join(dir, name));
      } catch (err) {
        await fs.rm(temp, { force: true });
        throw err;
      }
    },
  };
}

/** SMTP when a URL is configured, otherwise `.eml` files under `<dataDir>/mail/`. */
export function createTransport(opts: TransportOptions): MailTransport {
  if (opts.smtpUrl) return smtpTransport(opts.smtpUrl, opts);
  return fileTransport(path.join(opts.dataDir, "mail"), opts);
}

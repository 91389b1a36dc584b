import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterEach, describe, expect, it } from "vitest";
import { queueTestEmail, startSmtp, type TestSmtp } from "../mail/support.js";
import { createForm, donor } from "../support/checkout.js";
import {
  databaseUrlOf,
  killAll,
  type ServerProcess,
  startServer,
  type TempDir,
  tempDir,
} from "../support/processes.js";
import { type StripeTestApp, setupStripeApp } from "../support/stripeApp.js";
import { dialect, validForms } from "../support/testApp.js";

/**
 * A server killed outright (SIGKILL) while it holds work: receipts it claimed (its SMTP server never
 * answers), and a checkout whose charge went through at Stripe but whose answer had not come back. Another
 * server finishes all of it within a minute of the kill, with the default liveness settings: on SQLite a
 * server restarted on the same database, on PostgreSQL a second server that ran alongside all along (and
 * left the live one's work alone). A server on the same machine sees the dead one's pid gone; one frozen
 * with SIGSTOP keeps its pid, as a server on another machine would look, and is known dead only when its
 * heartbeat lapses (30 s).
 */

/** An SMTP server that takes the message and never answers it: the sending process waits. */
async function startSilentSmtp(): Promise<{ url: string; close(): Promise<void> }> {
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    onData(stream) {
      stream.resume();
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await killAll();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

// Each case starts two servers and waits out a death (a few seconds each on a busy machine).
describe(`a server killed while it holds work (${dialect})`, { timeout: 150_000 }, () => {
  it("leaves its receipts and its interrupted checkout to another server, finished within a minute", () =>
    takeOver("SIGKILL"));

  it.skipIf(dialect !== "postgres")(
    "a server that stops answering (its pid alive) loses its work once its heartbeat lapses, within a minute",
    () => takeOver("SIGSTOP"),
  );
});

async function takeOver(signal: "SIGKILL" | "SIGSTOP"): Promise<void> {
  const s: StripeTestApp = await setupStripeApp();
  cleanups.push(() => s.close());
  const temp: TempDir = tempDir();
  cleanups.push(async () => temp.remove());
  const silent = await startSilentSmtp();
  cleanups.push(() => silent.close());
  const smtp: TestSmtp = await startSmtp();
  cleanups.push(() => smtp.close());
  const db = s.t.store.db;
  const base = {
    DATA_DIR: temp.dir,
    DATABASE_URL: databaseUrlOf(s.t.database),
    PUBLIC_URL: s.t.config.publicUrl,
    SECRETS_KEY: s.t.config.secretsKey?.toString("hex"),
    STRIPE_API_URL: s.emulator.url,
    WORKER_INTERVAL_SECONDS: "1",
    CHECKOUT_LIMIT_PER_IP: "0",
  };
  const formId = await createForm(s.t, validForms.standard());
  const token = await s.cardToken();

  // A claims the receipts and waits on its SMTP server for good.
  const a = await startServer({ ...base, SMTP_URL: silent.url });
  const { id: aId } = await db
    .selectFrom("processes")
    .select("id")
    .where("pid", "=", a.child.pid ?? -1)
    .executeTakeFirstOrThrow();
  const receipts: string[] = [];
  for (const to of ["ada@example.org", "grace@example.org", "alan@example.org"])
    receipts.push(
      await queueTestEmail(db, Date.now(), {
        organizationId: s.t.org.id,
        paymentId: undefined,
        to,
        fromName: "Acme",
      }),
    );
  const outbox = () => db.selectFrom("email_outbox").select(["id", "status", "claimed_by"]).execute();
  await until(
    "A to claim the receipts",
    async () => (await outbox()).every((r) => r.claimed_by === aId),
    // Before the kill: only the time after it is measured. A machine running other suites is slow here.
    60_000,
  );

  // A's checkout: Stripe charges, and its answer is held back; A waits for it with the payment PROCESSING.
  s.emulator.faults.delay("POST", "/v1/payment_intents/", 10 * 60_000, { after: true });
  const abandoned = a
    .json("POST", `/api/forms/${formId}/checkout`, {
      body: { amount: 50, donor: donor("donor@example.org"), paymentMethod: { type: "token", token } },
    })
    .catch(() => undefined);
  const payment = () =>
    db.selectFrom("payments").select(["status", "claimed_by", "processor_payment_id"]).executeTakeFirst();

  let b: ServerProcess | undefined;
  if (dialect === "postgres" || signal === "SIGSTOP") {
    // The other instance runs alongside A, and leaves A's work alone while A lives.
    b = await startServer({ ...base, SMTP_URL: smtp.url });
  }
  await until("A's checkout to be charging", async () => (await payment())?.status === "PROCESSING", 60_000);
  expect(await payment()).toMatchObject({ status: "PROCESSING", claimed_by: aId });
  const charged = (await payment())?.processor_payment_id ?? "";
  await until(
    "Stripe to charge",
    async () => (await s.stripe.paymentIntents.retrieve(charged)).status === "succeeded",
    10_000,
  );
  if (b) {
    await sleep(2000);
    expect((await outbox()).every((r) => r.status === "PENDING" && r.claimed_by === aId)).toBe(true);
    expect(smtp.received).toHaveLength(0);
  }

  a.child.kill(signal);
  const killedAt = Date.now();
  if (signal === "SIGKILL") await abandoned;
  // On SQLite the server is restarted, as after a crash.
  b ??= await startServer({ ...base, SMTP_URL: smtp.url });

  await until(
    "the other server to finish A's work",
    async () =>
      (await payment())?.status === "COMPLETED" && (await outbox()).every((r) => r.status === "SENT"),
    60_000 - (Date.now() - killedAt),
  );
  expect(Date.now() - killedAt).toBeLessThan(60_000);
  // Each receipt once (A's three, and the recovered checkout's), all sent by the other server.
  const sent = smtp.received.map((m) => m.rcptTo[0]).sort();
  expect(sent).toEqual(["ada@example.org", "alan@example.org", "donor@example.org", "grace@example.org"]);
  expect(receipts).toHaveLength(3);
  // One charge: recovery asked Stripe, it did not charge again.
  expect(s.emulator.countRequests("POST", "/v1/payment_intents")).toBe(1);
  // A's heartbeat row is gone (or lapsed); B's is alive, and goes with B when B stops.
  await b.stop();
  expect(await db.selectFrom("processes").select("id").where("id", "!=", aId).execute()).toEqual([]);
}

import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../server/app.js";
import { composeDeps } from "../../server/compose.js";
import { loadConfig } from "../../server/config.js";
import { openStore } from "../../server/store/database.js";
import { createApiKey } from "../../server/store/keys.js";
import { createOrganization, updateOrganization } from "../../server/store/organizations.js";
import {
  type CliResult,
  databaseUrlOf,
  type Env,
  killAll,
  lines,
  runCli,
  runServerToExit,
  type TempDir,
  tempDir,
} from "../support/processes.js";
import { type StripeEmulator, startStripeEmulator } from "../support/stripe/emulator.js";
import { dialect, freshDatabase, type TestDatabase } from "../support/testApp.js";

/**
 * `org stripe` and `payment refund` as an operator runs them: keys checked with Stripe (the emulator,
 * through STRIPE_API_URL), the webhook endpoint made, one clear line and exit 2 for anything refused,
 * nothing stored then; never a secret on the screen.
 */

function ok<T>(result: CliResult): T {
  expect(result.stderr, `stderr: ${result.stderr}`).toBe("");
  expect(result.code, `stdout: ${result.stdout}`).toBe(0);
  expect(lines(result.stdout)).toHaveLength(1);
  return result.json as T;
}

/** Refused with one line on stderr: exit 2 for a bad command, 1 for a setting the command cannot run with. */
function refused(result: CliResult, code = 2): string {
  expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(code);
  expect(result.stdout).toBe("");
  expect(lines(result.stderr)).toHaveLength(1);
  return result.stderr;
}

// Each case starts several processes (each a few seconds on a busy machine).
describe(`org stripe on the command line (${dialect})`, { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let temp: TempDir;
  let env: Env;
  let emulator: StripeEmulator;
  let orgId: string;
  const cli = (...args: string[]) => runCli(args, env);

  beforeAll(async () => {
    temp = tempDir();
    database = await freshDatabase();
    emulator = await startStripeEmulator({
      accounts: [{ displayName: "Acme Giving" }, { chargesEnabled: false }, { defaultCurrency: "eur" }],
      webhookMode: "manual",
    });
    env = {
      DATA_DIR: temp.dir,
      DATABASE_URL: databaseUrlOf(database),
      PUBLIC_URL: "https://give.example.org",
      STRIPE_API_URL: emulator.url,
      SECRETS_KEY: "ab".repeat(32),
    };
    orgId = ok<{ organizationId: string }>(
      await cli("org", "create", "--name", "Acme", "--json"),
    ).organizationId;
  });

  afterAll(async () => {
    await killAll();
    await emulator?.close();
    await database?.drop();
    temp?.remove();
  });

  const keys = (i = 0) => [
    "--secret-key",
    emulator.accounts[i].secretKey,
    "--publishable-key",
    emulator.accounts[i].publishableKey,
  ];

  it("refuses keys Stripe does not know, keys of two modes, and an account that cannot take charges", async () => {
    const unknown = refused(
      await cli(
        "org",
        "stripe",
        "--org",
        orgId,
        "--secret-key",
        "sk_test_nobodyknowsthis123",
        "--publishable-key",
        "pk_test_nobodyknowsthis123",
      ),
    );
    expect(unknown).toContain("Stripe refused the secret key sk_test_…s123");
    expect(unknown).not.toContain("nobodyknowsthis");
    const mixed = refused(
      await cli(
        "org",
        "stripe",
        "--org",
        orgId,
        "--secret-key",
        emulator.account.secretKey,
        "--publishable-key",
        "pk_live_abcdefghijklmnop",
      ),
    );
    expect(mixed).toContain("different modes");
    expect(refused(await cli("org", "stripe", "--org", orgId, ...keys(1)))).toContain(
      "cannot take charges yet",
    );
    expect(
      refused(
        await cli(
          "org",
          "stripe",
          "--org",
          orgId,
          "--secret-key",
          "not-a-key",
          "--publishable-key",
          "pk_test_x",
        ),
      ),
    ).toContain("--secret-key must be");
    const store = await openStore(env.DATABASE_URL as string, { pgSchema: database.pgSchema });
    try {
      const row = await store.db
        .selectFrom("organizations")
        .selectAll()
        .where("id", "=", orgId)
        .executeTakeFirstOrThrow();
      expect(row.processor).toBeNull();
      expect(row.processor_secrets).toBeNull();
    } finally {
      await store.close();
    }
  });

  it("connects good keys: the endpoint and the wallet domain are made at Stripe, nothing secret is printed", async () => {
    const result = await cli("org", "stripe", "--org", orgId, ...keys(), "--json");
    const out = ok<Record<string, unknown>>(result);
    expect(out).toMatchObject({
      processor: "stripe",
      mode: "test",
      accountId: emulator.account.id,
      accountName: "Acme Giving",
      currency: "USD",
      webhookEndpoint: `https://give.example.org/stripe/webhooks/${orgId}`,
      walletDomains: ["give.example.org"],
    });
    expect(result.stdout).not.toContain(emulator.account.secretKey);
    expect(result.stdout).not.toContain("whsec_");
    const endpoints = emulator.requests.filter(
      (r) => r.method === "POST" && r.path === "/v1/webhook_endpoints",
    );
    expect(endpoints).toHaveLength(1);
    expect(emulator.countRequests("POST", "/v1/payment_method_domains")).toBe(1);
  });

  it("registers another site for wallets, and disconnects (removing the endpoint)", async () => {
    const added = ok<{ walletDomains: string[] }>(
      await cli("org", "stripe", "--org", orgId, "--register-domain", "https://www.acme.org/give", "--json"),
    );
    expect(added.walletDomains).toEqual(["give.example.org", "www.acme.org"]);
    const off = ok<{ processor: null }>(await cli("org", "stripe", "--org", orgId, "--off", "--json"));
    expect(off.processor).toBeNull();
    expect(
      emulator.requests.some((r) => r.method === "DELETE" && r.path.startsWith("/v1/webhook_endpoints/")),
    ).toBe(true);
    // Connected, domain added, disconnected: each in the audit log by the system, never with a secret.
    const store = await openStore(env.DATABASE_URL as string, { pgSchema: database.pgSchema });
    try {
      const entries = await store.db
        .selectFrom("audit_log")
        .selectAll()
        .where("organization_id", "=", orgId)
        .where("action", "=", "organization.updated")
        .orderBy("id")
        .execute();
      expect(entries.map((e) => e.actor_type)).toEqual(["system", "system", "system"]);
      expect(JSON.parse(entries[1].new_values ?? "null").paymentProcessor.walletDomains).toEqual([
        "give.example.org",
        "www.acme.org",
      ]);
      expect(JSON.parse(entries[2].new_values ?? "null")).toEqual({ paymentProcessor: null });
      const text = JSON.stringify(entries);
      expect(text).not.toContain(emulator.account.secretKey);
      expect(text).not.toContain("whsec_");
    } finally {
      await store.close();
    }
  });

  it("fails with exit code 1 and one line when Stripe cannot be reached (a failure that takes seconds)", async () => {
    // A port nothing listens on: every call is refused, and the stripe package retries before giving up.
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const started = Date.now();
    const stderr = refused(
      await runCli(["org", "stripe", "--org", orgId, ...keys()], {
        ...env,
        STRIPE_API_URL: `http://127.0.0.1:${port}`,
      }),
      1,
    );
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toMatch(/^Failed: Stripe could not be reached/);
    // Long enough that the store's background work had started: its close is awaited, not raced.
    expect(Date.now() - started).toBeGreaterThan(1000);
  });

  it("refuses STRIPE_API_URL with live keys, and in production", async () => {
    const live = await startStripeEmulator({
      accounts: [{ secretKey: "sk_live_abcdefghijkl1234", publishableKey: "pk_live_abcdefghijkl1234" }],
    });
    try {
      const result = refused(
        await runCli(
          [
            "org",
            "stripe",
            "--org",
            orgId,
            "--secret-key",
            "sk_live_abcdefghijkl1234",
            "--publishable-key",
            "pk_live_abcdefghijkl1234",
          ],
          { ...env, STRIPE_API_URL: live.url },
        ),
      );
      expect(result).toContain("STRIPE_API_URL");
      expect(live.requests).toHaveLength(0);
    } finally {
      await live.close();
    }
    const prod = refused(
      await runCli(["org", "stripe", "--org", orgId, ...keys()], { ...env, NODE_ENV: "production" }),
      1,
    );
    expect(prod).toContain("STRIPE_API_URL");
  });

  it("in production without SECRETS_KEY refuses to store keys; once keys are stored the server refuses to start without that key", async () => {
    const prodEnv = { ...env, STRIPE_API_URL: undefined, SECRETS_KEY: undefined, NODE_ENV: "production" };
    const noKey = refused(
      await runCli(
        [
          "org",
          "stripe",
          "--org",
          orgId,
          "--secret-key",
          "sk_test_abcdefghijkl1234",
          "--publishable-key",
          "pk_test_abcdefghijkl1234",
          "--webhook-secret",
          "whsec_abcdefghijkl",
        ],
        prodEnv,
      ),
    );
    expect(noKey).toContain("Set SECRETS_KEY");
    // Keys stored under a key, then the server started without it.
    ok(await cli("org", "stripe", "--org", orgId, ...keys(), "--json"));
    const server = await runServerToExit({ ...prodEnv, SECRETS_KEY: undefined });
    expect(server.code).not.toBe(0);
    expect(server.stderr).toContain("SECRETS_KEY");
    // Started with another key than the one they were sealed with: stopped at start, not at every payment.
    const otherKey = "cd".repeat(32);
    const wrongKey = await runServerToExit({ ...prodEnv, SECRETS_KEY: otherKey });
    expect(wrongKey.code).not.toBe(0);
    expect(wrongKey.stderr).toContain("SECRETS_KEY does not open the payment processor keys");
    expect(wrongKey.stderr).not.toContain(otherKey);
  });

  it("refuses to connect an organization with another SECRETS_KEY than the one the stored keys were sealed with", async () => {
    ok(await cli("org", "stripe", "--org", orgId, ...keys(), "--json"));
    const other = ok<{ organizationId: string }>(await cli("org", "create", "--name", "Other", "--json"));
    const otherKey = "ef".repeat(32);
    const endpointsBefore = emulator.countRequests("POST", "/v1/webhook_endpoints");
    const stderr = refused(
      await runCli(["org", "stripe", "--org", other.organizationId, ...keys(2)], {
        ...env,
        SECRETS_KEY: otherKey,
      }),
      1,
    );
    expect(stderr).toContain("SECRETS_KEY does not open the payment processor keys stored in the database");
    expect(stderr).toContain("which must be the server's");
    expect(stderr).not.toContain(otherKey);
    // Refused before anything was made at Stripe or stored: with the server's key it connects afresh.
    expect(emulator.countRequests("POST", "/v1/webhook_endpoints")).toBe(endpointsBefore);
    ok(await cli("org", "stripe", "--org", other.organizationId, ...keys(2), "--json"));
    expect(emulator.countRequests("POST", "/v1/webhook_endpoints")).toBe(endpointsBefore + 1);
    ok(await cli("org", "stripe", "--org", other.organizationId, "--off", "--json"));
    ok(await cli("org", "stripe", "--org", orgId, "--off", "--json"));
  });

  it("payment refund refunds part of a payment, then the rest, and refuses a third time with one line", async () => {
    const paymentId = await sandboxGift(env, database);
    const part = ok<{ refund: { amount: number }; payment: { status: string; refundedAmount: number } }>(
      await cli("payment", "refund", "--payment", paymentId, "--amount", "5", "--reason", "asked", "--json"),
    );
    expect(part).toMatchObject({
      refund: { amount: 5 },
      payment: { status: "COMPLETED", refundedAmount: 5 },
    });
    expect(refused(await cli("payment", "refund", "--payment", paymentId, "--amount", "0"))).toContain(
      "--amount",
    );
    const rest = ok<{ payment: { status: string } }>(
      await cli("payment", "refund", "--payment", paymentId, "--json"),
    );
    expect(rest.payment.status).toBe("REFUNDED");
    expect(refused(await cli("payment", "refund", "--payment", paymentId))).toContain(
      "already fully refunded",
    );
    expect(refused(await cli("payment", "refund", "--payment", "pay_nope"))).toContain("No payment");
  });

  it("payment refund cancels a free registration: nothing refunded, the order REFUNDED, said in one line", async () => {
    const paymentId = await sandboxGift(env, database, "USD", "free registration");
    const cancelled = await cli("payment", "refund", "--payment", paymentId);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout.trim()).toBe(
      `Cancelled the free order ${paymentId}: its tickets are void and its places given back.`,
    );
    expect(refused(await cli("payment", "refund", "--payment", paymentId, "--json"))).toContain(
      "already cancelled",
    );
  });

  it("payment refund reads --amount only as a decimal amount, and says amounts in the payment's currency", async () => {
    const paymentId = await sandboxGift(env, database, "EUR");
    // Number() would read these as 5 and 1,000: a command that moves money refuses them.
    for (const written of ["0x5", "1e1", "5,00", " "])
      expect(refused(await cli("payment", "refund", "--payment", paymentId, "--amount", written))).toContain(
        "--amount must be an amount of the payment's currency (EUR)",
      );
    const part = await cli("payment", "refund", "--payment", paymentId, "--amount", "5");
    expect(part.code, part.stderr).toBe(0);
    expect(part.stdout).toContain("Refunded €5 of");
    expect(part.stdout).toContain("€5 refunded in all");
    expect(part.stdout).not.toContain("$");
  });

  it("connects an organization in JPY to an account whose default currency is EUR (gifts are charged in JPY)", async () => {
    const yen = ok<{ organizationId: string }>(
      await cli("org", "create", "--name", "Yen giving", "--json"),
    ).organizationId;
    const store = await openStore(env.DATABASE_URL as string, { pgSchema: database.pgSchema });
    try {
      await updateOrganization(store.db, yen, { currency: "JPY" }, Date.now());
    } finally {
      await store.close();
    }
    const out = ok<Record<string, unknown>>(await cli("org", "stripe", "--org", yen, ...keys(2), "--json"));
    expect(out).toMatchObject({ processor: "stripe", accountId: emulator.accounts[2].id, currency: "EUR" });
    const text = await cli("org", "stripe", "--org", yen, ...keys(2));
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain("Gifts are charged in JPY");
  });
});

/** A $20 card gift on the sandbox, made through the app on the same database, for an organization of its own. */
async function sandboxGift(
  env: Env,
  database: TestDatabase,
  currency = "USD",
  order: "gift" | "free registration" = "gift",
): Promise<string> {
  const store = await openStore(env.DATABASE_URL as string, { pgSchema: database.pgSchema });
  try {
    const config = loadConfig({ ...env, STRIPE_API_URL: undefined } as NodeJS.ProcessEnv);
    const deps = await composeDeps(store, config);
    const app = createApp(deps);
    const org = await createOrganization(store.db, { name: "Sandbox charity", sandbox: true }, Date.now());
    if (currency !== "USD") await updateOrganization(store.db, org.id, { currency }, Date.now());
    const { key } = await createApiKey(store.db, { organizationId: org.id, sandbox: true }, Date.now());
    const form = await app.request("/v1/forms", {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify(
        order === "gift"
          ? { title: "Refund me", funds: ["General"] }
          : {
              title: "Free talk",
              funds: ["Talks"],
              formType: "event",
              tickets: [{ name: "Free", price: 0 }],
            },
      ),
    });
    const { formID } = (await form.json()) as { formID: string };
    const donor = { firstName: "Ada", lastName: "Donor", email: "ada@example.org" };
    const gift = await app.request(`/api/forms/${formID}/checkout`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(
        order === "gift"
          ? {
              amount: 20,
              donor,
              paymentMethod: {
                type: "card",
                number: "4242424242424242",
                expMonth: 12,
                expYear: 2034,
                cvc: "123",
              },
            }
          : { tickets: [{ name: "Free", quantity: 1 }], donor },
      ),
    });
    const body = (await gift.json()) as { payment: { paymentID: string } };
    await deps.metrics.close();
    return body.payment.paymentID;
  } finally {
    await store.close();
  }
}

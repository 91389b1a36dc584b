import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { connectStripe, sealStripeSecrets } from "../../server/processors/stripe/connection.js";
import { secretBox } from "../../server/secrets.js";
import { openStore } from "../../server/store/database.js";
import { createApiKey } from "../../server/store/keys.js";
import { createOrganization, setProcessorConnection } from "../../server/store/organizations.js";
import { encodeForm, startStripeEmulator } from "../support/stripe/emulator.js";
import { envNumber, loadSettings } from "./common.js";
import { type LoadFigures, measure } from "./load.js";
import { cpuSeconds, type ServerProcess, startServer, stopAllServers } from "./processes.js";

/**
 * `npm run bench` (part): completed checkouts on the Stripe path against the local Stripe emulator, beside
 * the sandbox's, on one server process (SQLite) in one run. The emulator runs in this process, so the
 * server's own CPU time per checkout (read from /proc) is compared, which leaves the emulator's time
 * out: the target is that a Stripe checkout costs the server at most twice what a sandbox one does
 * (ratio ≥ 0.5). Throughput is printed too, but it includes the emulator's answers.
 *
 * Both scenarios run with BENCH_STRIPE_CONNECTIONS connections (default 4), below what saturates a
 * two-core machine: with the emulator and the load generator busy on the same cores, a saturated machine
 * slows the server's own instructions too, which would count the emulator's time as the server's.
 *
 * The server runs outside production (STRIPE_API_URL is refused in production). Settings as run.ts:
 * BENCH_SECONDS, BENCH_WARMUP_SECONDS.
 */

const settings = { ...loadSettings(), connections: envNumber("BENCH_STRIPE_CONNECTIONS", 4, 1) };
const DONORS = 200;
const GIFT = 25;

interface Figures {
  figures: LoadFigures;
  /** Server CPU milliseconds per completed checkout. */
  cpuMsPerCheckout: number;
}

/**
 * One checkout first (a scenario that cannot complete one stops the run with the reason), then the warm-up
 * and the measured seconds. A ConfirmationToken is used once, and every load connection goes through its
 * request list from the start: so each connection, and the warm-up, gets a part of `requests` of its own.
 */
async function run(server: ServerProcess, requests: { path: string; body: string }[]): Promise<Figures> {
  const headers = { "Content-Type": "application/json", Origin: server.url };
  const [first, ...rest] = requests;
  const res = await fetch(`${server.url}${first.path}`, { method: "POST", headers, body: first.body });
  if (res.status !== 201)
    throw new Error(`a checkout answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  const share = settings.warmupSeconds / (settings.warmupSeconds + settings.seconds);
  const split = requests.length > 1000 ? Math.floor(rest.length * share) : 0;
  const perConnection = requests.length > 1000;
  const target = (list: typeof rest) => {
    const parts = perConnection ? settings.connections : 1;
    const size = Math.floor(list.length / parts);
    return Array.from({ length: parts }, (_, i) => ({
      url: server.url,
      paths: [],
      requests: list.slice(i * size, (i + 1) * size).map((r) => ({ method: "POST" as const, ...r, headers })),
    }));
  };
  if (settings.warmupSeconds > 0)
    await measure(target(split ? rest.slice(0, split) : rest), {
      ...settings,
      seconds: settings.warmupSeconds,
      warmupSeconds: 0,
    });
  let cpu0: number | null = null;
  let used = 0;
  const figures = await measure(
    target(split ? rest.slice(split) : rest),
    { ...settings, warmupSeconds: 0 },
    {
      measuring: () => {
        cpu0 = cpuSeconds(server.child.pid);
      },
      measured: () => {
        const now = cpuSeconds(server.child.pid);
        used = now !== null && cpu0 !== null ? now - cpu0 : Number.NaN;
      },
    },
  );
  const completed = figures.requests - figures.non2xx - figures.errors;
  return { figures, cpuMsPerCheckout: (used * 1000) / Math.max(1, completed) };
}

function donor(i: number) {
  return { firstName: "Bench", lastName: `Donor ${i}`, email: `donor${i}@bench.example.org` };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-bench-stripe-"));
  const url = path.join(dir, "almoner.db");
  const key = crypto.randomBytes(32);
  const emulator = await startStripeEmulator({ webhookMode: "manual", followUpDelayMs: null });
  const store = await openStore(url);
  let sandboxKey: string;
  let stripeKey: string;
  try {
    const box = secretBox(key);
    const sandbox = await createOrganization(store.db, { name: "Bench sandbox", sandbox: true }, Date.now());
    const stripeOrg = await createOrganization(store.db, { name: "Bench Stripe" }, Date.now());
    const connected = await connectStripe({
      organizationId: stripeOrg.id,
      secretKey: emulator.account.secretKey,
      publishableKey: emulator.account.publishableKey,
      webhookSecret: "whsec_benchbenchbenchbench",
      publicUrl: "http://127.0.0.1",
      apiUrl: emulator.url,
      production: false,
      nowIso: new Date().toISOString(),
      previous: null,
      previousSecrets: null,
    });
    await setProcessorConnection(
      store.db,
      stripeOrg.id,
      {
        settings: connected.settings,
        sealedSecrets: sealStripeSecrets(box, stripeOrg.id, connected.secrets),
      },
      new Date().toISOString(),
    );
    const keys: string[] = [];
    for (const org of [sandbox, stripeOrg])
      keys.push(
        (await createApiKey(store.db, { organizationId: org.id, sandbox: org.sandbox }, Date.now())).key,
      );
    [sandboxKey, stripeKey] = keys;
  } finally {
    await store.close();
  }

  const server = await startServer("Almoner (SQLite, Stripe emulator)", "server/index.ts", {
    NODE_ENV: "development",
    DATA_DIR: dir,
    DATABASE_URL: url,
    SECRETS_KEY: key.toString("hex"),
    STRIPE_API_URL: emulator.url,
    RATE_LIMIT_PER_HOUR: "10000000",
    CHECKOUT_LIMIT_PER_IP: "0",
    CHECKOUT_LIMIT_PER_FORM: "0",
    CARD_FAILURE_LIMIT: "0",
    WORKER_INTERVAL_SECONDS: "3600",
    ...(process.env.SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SERVER_NODE_OPTIONS } : {}),
  });
  try {
    const formOf = async (apiKey: string) => {
      const res = await fetch(`${server.url}/v1/forms`, {
        method: "POST",
        headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
        body: JSON.stringify({ title: `Bench ${Math.random()}`, funds: ["General"] }),
      });
      return ((await res.json()) as { formID: string }).formID;
    };
    const sandboxFormId = await formOf(sandboxKey);
    const stripeFormId = await formOf(stripeKey);

    console.log(
      `\nCheckouts: the sandbox and the Stripe path (local emulator), one SQLite server process, ${settings.connections} connections`,
    );
    const sandboxRequests = Array.from({ length: DONORS }, (_, i) => ({
      path: `/api/forms/${sandboxFormId}/checkout`,
      body: JSON.stringify({
        amount: GIFT,
        donor: donor(i),
        paymentMethod: { type: "card", number: "4242424242424242", expMonth: 12, expYear: 2034, cvc: "123" },
      }),
    }));
    const sandbox = await run(server, sandboxRequests);

    // A ConfirmationToken is used once: one per checkout the run can make, made as Stripe.js makes them.
    const expected = Math.ceil(
      (sandbox.figures.rps || 500) * (settings.seconds + settings.warmupSeconds) * 1.5,
    );
    const tokens: string[] = [];
    for (let i = 0; i < expected; i++) {
      const res = await fetch(`${emulator.url}/v1/confirmation_tokens`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: encodeForm({
          key: emulator.account.publishableKey,
          payment_method_data: {
            type: "card",
            card: { number: "4242424242424242", exp_month: 12, exp_year: 2034, cvc: "123" },
          },
        }),
      });
      tokens.push(((await res.json()) as { id: string }).id);
    }
    const stripeRequests = tokens.map((token, i) => ({
      path: `/api/forms/${stripeFormId}/checkout`,
      body: JSON.stringify({
        amount: GIFT,
        donor: donor(i % DONORS),
        paymentMethod: { type: "token", token },
      }),
    }));
    const stripe = await run(server, stripeRequests);

    const ratio = sandbox.cpuMsPerCheckout / stripe.cpuMsPerCheckout;
    const line = (name: string, f: Figures) =>
      `  ${name.padEnd(34)} ${f.figures.rps.toFixed(0).padStart(6)} checkouts/s  p50 ${f.figures.p50.toFixed(1)} ms  server CPU ${f.cpuMsPerCheckout.toFixed(3)} ms/checkout  (${f.figures.non2xx} non-2xx)`;
    console.log(line("sandbox card", sandbox));
    console.log(line("Stripe card (emulator)", stripe));
    console.log(
      `  server cost, sandbox ÷ Stripe: ${ratio.toFixed(2)} (target ≥ 0.50: ${ratio >= 0.5 ? "MET" : "NOT MET"})`,
    );
    const serverCalls = emulator.requests.filter((r) => r.keyKind !== "publishable");
    const intents = serverCalls.filter((r) => r.method === "POST" && r.path === "/v1/payment_intents").length;
    console.log(
      `  Stripe calls per checkout: ${(serverCalls.length / Math.max(1, intents)).toFixed(2)} (read the token, create and confirm the PaymentIntent; a customer for each new donor)`,
    );
    fs.mkdirSync(".bench", { recursive: true });
    fs.writeFileSync(
      ".bench/stripe.json",
      JSON.stringify({ sandbox, stripe, ratio, settings, at: new Date().toISOString() }, null, 2),
    );
  } finally {
    await stopAllServers();
    await emulator.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch(async (err) => {
  console.error(err);
  await stopAllServers();
  process.exit(1);
});

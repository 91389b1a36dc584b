import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { createApp } from "./app.js";
import { composeDeps } from "./compose.js";
import { loadConfig } from "./config.js";
import { type DemoOwner, demoOwner, seedDemoIfEmpty } from "./demo.js";
import { errorMessage, StartupError } from "./errors.js";
import { checkSealedSecrets } from "./secretsCheck.js";
import { openStore } from "./store/database.js";
import { pruneExpired } from "./store/maintenance.js";
import { ProcessHeartbeat } from "./store/processes.js";
import { recordPublicUrl } from "./store/settings.js";
import { startWorkers } from "./workers.js";

/** Process entry: read config, open the store, seed the demo outside production, serve, run upkeep. */
async function main(): Promise<void> {
  const config = loadConfig();
  if (config.production && !config.publicUrlSet)
    console.error(
      `PUBLIC_URL is not set: receipts, emails and set-up links will point at localhost; set it to the address donors and staff reach, such as https://give.example.org`,
    );
  const store = await openStore(config.databaseUrl);
  // A SECRETS_KEY missing or other than the one the stored secrets were sealed with stops the start here,
  // not at every payment; organizations whose keys it does not open are named.
  const { unopened } = await checkSealedSecrets(store.db, config).catch(async (err: unknown) => {
    await store.close();
    throw err;
  });
  if (unopened.length > 0)
    console.error(
      `SECRETS_KEY does not open the payment processor keys of ${unopened.length} organization(s) (${unopened.join(", ")}): they take no payments until reconnected (org stripe) or started with the key they were sealed with`,
    );
  // This process's heartbeat, before it serves or claims anything: the checkouts it charges and the work
  // it claims name it, and the other processes take them over soon after it dies (store/processes.ts).
  const heartbeat = new ProcessHeartbeat(store);
  await heartbeat.start();
  const deps = { ...(await composeDeps(store, config)), processId: heartbeat.id };
  const { metrics } = deps;
  const app = createApp(deps);
  let workers: { stop(): Promise<void> } | undefined;
  /** Set by the first SIGINT/SIGTERM: from then on nothing starts. */
  let stopping = false;

  // Every request goes to the one app: its middleware, routes and errors.
  // A client gets REQUEST_TIMEOUT_SECONDS to send its whole request (20 s at most for the headers); one
  // still sending then is answered 408 and its connection closed, checked every second or so, so a slow
  // client cannot hold a connection for Node's default of five minutes.
  const server = createServer(
    {
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: Math.min(config.requestTimeoutMs, 20_000),
      connectionsCheckingInterval: Math.min(1000, config.requestTimeoutMs / 2),
    },
    getRequestListener(app.fetch, { hostname: config.host }),
  );
  server.listen(config.port, config.host, () => {
    const info = server.address() as AddressInfo;
    // With PORT=0 the OS picks the port; links must name the real one.
    if (config.port === 0 && !process.env.PUBLIC_URL) config.publicUrl = `http://localhost:${info.port}`;
    // For the command line's links (a renewal's receipt made by `billing run`, a set-up link).
    recordPublicUrl(store.db, config.publicUrl).catch((err) =>
      console.error("Almoner could not record its public URL for the command line:", err),
    );
    // A signal that came while it was starting: it is stopping, and claims nothing.
    if (stopping) return;
    workers = startWorkers(deps);
    announce(info.port).catch((err) => {
      console.error("Almoner failed to create the demo organization:", err);
      process.exit(1);
    });
  });
  async function announce(port: number): Promise<void> {
    const demo = config.production ? undefined : await seedDemoIfEmpty(store.db, config, deps.now);
    // Made with the demo; on a later start, a fresh set-up link while the Owner has set no password.
    const owner = config.production
      ? undefined
      : await demoOwner(store, config, deps.now, demo?.organizationId);
    console.log(`Almoner listening on http://${config.host}:${port} (${store.describe})`);
    console.log(`API reference: ${config.publicUrl}/docs`);
    if (!demo) {
      if (owner) announceDemoOwnerAgain(owner);
      return;
    }
    console.log("\nCreated a demo organization (shown once):");
    console.log(`  organizationId: ${demo.organizationId}`);
    console.log(`  API key:        ${demo.apiKey}`);
    if (owner && "setupUrl" in owner) {
      console.log(`  Owner:          ${owner.email} (the dashboard's; sets a password with this link)`);
      console.log(`  Set-up link:    ${owner.setupUrl} (single use, 24 hours)`);
    }
    for (const form of demo.forms) console.log(`  ${form.title.padEnd(24)} ${form.url}`);
    console.log(`\nTry: curl -H "Authorization: Bearer ${demo.apiKey}" ${config.publicUrl}/v1/forms`);
    console.log(
      config.webhookTargetGuard
        ? "Webhooks go to public https addresses only; for a receiver on this machine start with WEBHOOK_TARGET_GUARD=off."
        : "Webhooks may go to http and local addresses (development); NODE_ENV=production takes public https ones only.",
    );
    const first = demo.forms[0];
    if (first) {
      const gift = JSON.stringify({
        amount: 25,
        frequency: "ONE_TIME",
        donor: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.org" },
        paymentMethod: { type: "card", number: "4242424242424242", expMonth: 12, expYear: 2030, cvc: "123" },
      });
      console.log(
        `Give $25 (sandbox card): curl -X POST -H "Content-Type: application/json" -H "Origin: ${new URL(config.publicUrl).origin}" -d '${gift}' ${config.publicUrl}/api/forms/${first.id}/checkout`,
      );
    }
    console.log("");
  }
  function announceDemoOwnerAgain(owner: DemoOwner): void {
    if ("setupUrl" in owner)
      console.log(
        `\nThe demo's dashboard Owner ${owner.email} has not set a password yet. A new set-up link (single use, until ${owner.expiresAt}; earlier ones no longer work):\n  ${owner.setupUrl}\n`,
      );
    else
      console.log(
        `\nThe demo's dashboard Owner ${owner.email} exists and has set a password: sign in at ${config.publicUrl}/dashboard. A set-up link for another Owner: npm run --silent cli -- user create --org ${owner.organizationId} --email YOU@EXAMPLE.ORG --role owner\n`,
      );
  }
  server.on("error", (err: NodeJS.ErrnoException) => {
    console.error(
      err.code === "EADDRINUSE"
        ? `Cannot listen on ${config.host}:${config.port}: the port is in use (set PORT)`
        : `Cannot listen on ${config.host}:${config.port}: ${err.message} (check HOST and PORT)`,
    );
    // Nothing was served or claimed: its heartbeat row goes (the other processes would otherwise count a
    // process that never ran until it went stale), and the database is closed, before it exits.
    void (async () => {
      await heartbeat.stop().catch(() => {});
      await metrics.close().catch(() => {});
      await store.close().catch(() => {});
    })().finally(() => process.exit(1));
  });

  const upkeep = setInterval(
    () =>
      void pruneExpired(store.db, deps.now()).catch((err: unknown) =>
        // Tried again at the next pass; said so that a failure that lasts is seen.
        console.error(`Almoner upkeep: removing expired records failed: ${errorMessage(err)}`),
      ),
    10 * 60 * 1000,
  );
  upkeep.unref();

  const shutdown = () => {
    // A second signal changes nothing: the first one's shutdown is under way.
    if (stopping) return;
    stopping = true;
    clearInterval(upkeep);
    // No new work is claimed from now on; what the workers are doing finishes.
    const workersStopped = workers?.stop();
    let finishing = false;
    const finish = () => {
      if (finishing) return;
      finishing = true;
      void (async () => {
        await workersStopped?.catch((err: unknown) => console.error("stopping the workers failed:", err));
        // What it still held is free for the other processes at once.
        await heartbeat.stop().catch(() => {});
        await metrics.close();
        await store.rateLimits.release().catch(() => {});
        await store.close();
        process.exit(0);
      })().catch((err: unknown) => {
        console.error("Almoner could not stop cleanly:", err);
        process.exit(1);
      });
    };
    // Requests under way are answered; then, or after 5 s for a client that never finishes its request,
    // the connections are closed and the process lets go of what it held.
    server.close(finish);
    setTimeout(() => {
      server.closeAllConnections();
      finish();
    }, 5000).unref();
    setTimeout(() => {
      console.error("Almoner did not finish stopping within 15 s; exiting");
      process.exit(1);
    }, 15_000).unref();
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
}

main().catch((err) => {
  if (err instanceof StartupError) console.error(err.message);
  else console.error("Almoner failed to start:", err);
  process.exit(1);
});

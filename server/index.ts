import { serve } from "@hono/node-server";
import { createApp } from "./app.js";
import { openProcessor } from "./checkout/processorFactory.js";
import { loadConfig } from "./config.js";
import { seedDemoIfEmpty } from "./demo.js";
import { StartupError } from "./errors.js";
import { openStore } from "./store/database.js";
import { pruneExpired } from "./store/maintenance.js";
import { MetricsRecorder } from "./store/metrics.js";

/** Process entry: read config, open the store, seed the demo outside production, serve, run upkeep. */
async function main(): Promise<void> {
  const config = loadConfig();
  const store = await openStore(config.databaseUrl);
  const metrics = new MetricsRecorder(store.db);
  const processor = await openProcessor(store, config, Date.now);
  const app = createApp({ config, store, metrics, processor, now: Date.now });

  const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) => {
    // With PORT=0 the OS picks the port; links must name the real one.
    if (config.port === 0 && !process.env.PUBLIC_URL) config.publicUrl = `http://localhost:${info.port}`;
    announce(info.port).catch((err) => {
      console.error("Almoner failed to create the demo organization:", err);
      process.exit(1);
    });
  });
  async function announce(port: number): Promise<void> {
    const demo = config.production ? undefined : await seedDemoIfEmpty(store.db, config);
    console.log(`Almoner listening on http://${config.host}:${port} (${store.describe})`);
    console.log(`API reference: ${config.publicUrl}/docs`);
    if (!demo) return;
    console.log("\nCreated a demo organization (shown once):");
    console.log(`  organizationId: ${demo.organizationId}`);
    console.log(`  API key:        ${demo.apiKey}`);
    for (const form of demo.forms) console.log(`  ${form.title.padEnd(24)} ${form.url}`);
    console.log(`\nTry: curl -H "Authorization: Bearer ${demo.apiKey}" ${config.publicUrl}/v1/forms\n`);
  }
  server.on("error", (err: NodeJS.ErrnoException) => {
    console.error(
      err.code === "EADDRINUSE"
        ? `Cannot listen on ${config.host}:${config.port}: the port is in use (set PORT)`
        : `Cannot listen on ${config.host}:${config.port}: ${err.message} (check HOST and PORT)`,
    );
    process.exit(1);
  });

  const upkeep = setInterval(() => void pruneExpired(store.db, Date.now()).catch(() => {}), 10 * 60 * 1000);
  upkeep.unref();

  const shutdown = () => {
    clearInterval(upkeep);
    server.close(async () => {
      await metrics.close();
      await store.close();
      process.exit(0);
    });
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
}

main().catch((err) => {
  if (err instanceof StartupError) console.error(err.message);
  else console.error("Almoner failed to start:", err);
  process.exit(1);
});

import { serveBare } from "./bareApp.js";

/** The bare routes (bareApp.ts) in a process of their own. Reads PORT (0 = the OS picks) and HOST. */

const host = process.env.HOST ?? "127.0.0.1";
const server = serveBare(host, Number(process.env.PORT ?? 0), (port) => {
  console.log(`Bare Hono listening on http://${host}:${port}`);
});

const stop = () => {
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);

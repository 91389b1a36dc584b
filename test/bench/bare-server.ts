import fs from "node:fs";
import { serve } from "@hono/node-server";
import { Hono } from "hono";

/**
 * The benchmark's baseline: a bare Hono route answering a fixed JSON object, served the way Almoner is
 * (@hono/node-server), and a second one answering a fixed object the size and shape of a full form (what
 * `GET /v1/forms/{id}` returns), to show what serializing and sending that much costs by itself. Reads
 * PORT (0 = the OS picks) and HOST like the real server.
 */

const body = {
  status: "ok",
  service: "almoner-bench-baseline",
  formID: "00000000-0000-4000-8000-000000000000",
  title: "Fixed response",
  funds: ["General"],
  active: true,
};

const form: unknown = JSON.parse(fs.readFileSync(new URL("./form-response.json", import.meta.url), "utf8"));

const app = new Hono();
app.get("/json", (c) => c.json(body));
app.get("/form", (c) => c.json(form));

const host = process.env.HOST ?? "127.0.0.1";
const server = serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 0), hostname: host }, (info) => {
  console.log(`Bare Hono listening on http://${host}:${info.port}`);
});

const stop = () => {
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);

import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import SQLite from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../server/store/keys.js";
import { createOrganization } from "../../server/store/organizations.js";
import {
  databaseUrlOf,
  killAll,
  lines,
  runServerToExit,
  type ServerProcess,
  startServer,
  type TempDir,
  tempDir,
} from "../support/processes.js";
import { dialect, freshDatabase, type TestDatabase, validForms } from "../support/testApp.js";

const DEMO_KEY_LINE = /API key:\s+(cs_(?:live|test)_[A-Za-z0-9]+)/g;
const ANY_KEY = /cs_(?:live|test)_[A-Za-z0-9]{32}/g;
const FORM_URL = /(https?:\/\/[^\s/]+)\/(donate|attend)\/([0-9a-f-]{36})\b/g;
const SETUP_LINK = /https?:\/\/[^\s/]+\/dashboard\/setup\?token=([A-Za-z0-9_-]{43})/g;
const DEMO_OWNER = "owner@demo.almoner.test";

describe.skipIf(dialect !== "sqlite")("server process: first start on a fresh DATA_DIR", () => {
  let temp: TempDir;
  let server: ServerProcess | undefined;

  beforeAll(() => {
    temp = tempDir();
  });
  afterAll(async () => {
    await killAll();
    temp?.remove();
  });

  it("listens, prints one demo key and four form URLs, and the key lists the four forms", async () => {
    server = await startServer({ DATA_DIR: temp.dir });
    expect(server.port).toBeGreaterThan(0);
    expect(server.stdout()).toContain(`Almoner listening on http://127.0.0.1:${server.port}`);

    const health = await server.json("GET", "/health");
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: "ok" });

    const log = server.stdout();
    const keyLines = [...log.matchAll(DEMO_KEY_LINE)];
    expect(keyLines).toHaveLength(1);
    const demoKey = keyLines[0][1];
    expect(demoKey).toMatch(/^cs_(live|test)_[A-Za-z0-9]{32}$/);
    // The only key the log ever mentions is that one.
    expect(new Set(log.match(ANY_KEY))).toEqual(new Set([demoKey]));

    const urls = [...log.matchAll(FORM_URL)];
    expect(urls).toHaveLength(4);
    expect(urls.filter((m) => m[2] === "donate")).toHaveLength(3);
    expect(urls.filter((m) => m[2] === "attend")).toHaveLength(1);

    const list = await server.json<{ forms: { formID: string; formType: string }[]; count: number }>(
      "GET",
      "/v1/forms",
      { key: demoKey },
    );
    expect(list.status).toBe(200);
    expect(list.body.count).toBe(4);
    expect(list.body.forms).toHaveLength(4);
    expect(new Set(list.body.forms.map((f) => f.formID))).toEqual(new Set(urls.map((m) => m[3])));
    // The key has a name, which the dashboard's Developers page shows.
    const keys = await server.json<{ keys: { prefix: string; name: string }[] }>("GET", "/v1/keys", {
      key: demoKey,
    });
    expect(keys.status).toBe(200);
    expect(keys.body.keys).toEqual([
      expect.objectContaining({ prefix: demoKey.slice(0, 12), name: "Demo key" }),
    ]);
    const eventIds = list.body.forms.filter((f) => f.formType === "EVENT").map((f) => f.formID);
    expect(eventIds).toEqual(urls.filter((m) => m[2] === "attend").map((m) => m[3]));

    // With PORT=0, the form's own answer names the port the server really listens on, as the list does.
    const donate = urls.find((m) => m[2] === "donate");
    if (!donate) throw new Error("no donation form printed");
    const one = await server.json<{ formUrl: string; embedHTML: string }>("GET", `/v1/forms/${donate[3]}`, {
      key: demoKey,
    });
    expect(one.body.formUrl).toBe(`http://localhost:${server.port}/donate/${donate[3]}`);
    expect(one.body.embedHTML).toContain(`http://localhost:${server.port}/donate/${donate[3]}?embed=1`);

    // A demo Owner for the dashboard, with one set-up link (used after the restart below).
    expect(log).toMatch(new RegExp(`Owner:\\s+${DEMO_OWNER}`));
    const links = [...log.matchAll(SETUP_LINK)];
    expect(links).toHaveLength(1);
    expect(log).toMatch(/Set-up link:\s+http:\/\/localhost:\d+\/dashboard\/setup\?token=/);

    // The printed paths are real hosted pages on this server.
    for (const m of urls) {
      const page = await server.fetch(`/${m[2]}/${m[3]}`);
      expect(page.status, `${m[2]}/${m[3]}`).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/text\/html/);
      await page.text();
    }
  });

  it("keeps the embedded SQLite database in WAL mode", () => {
    const file = path.join(temp.dir, "almoner.db");
    expect(fs.existsSync(file)).toBe(true);
    expect(fs.existsSync(`${file}-wal`)).toBe(true);
    const db = new SQLite(file, { readonly: true, fileMustExist: true });
    try {
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    } finally {
      db.close();
    }
  });

  it("takes an http webhook on this machine in development (no NODE_ENV, no WEBHOOK_TARGET_GUARD)", async () => {
    if (!server) throw new Error("the first start failed");
    const key = [...server.stdout().matchAll(DEMO_KEY_LINE)][0]?.[1];
    expect(server.stdout()).not.toContain("WEBHOOK_TARGET_GUARD");
    const created = await server.json<{ webhookId: string }>("POST", "/v1/webhooks", {
      key,
      body: { url: "http://127.0.0.1:4000/hook", events: ["form.created"] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const updated = await server.json("PUT", `/v1/webhooks/${created.body.webhookId}`, {
      key,
      body: { url: "http://localhost:4000/other" },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
  });

  it("stops cleanly on SIGTERM; a restart prints no demo key again, and a fresh demo Owner link until one is used", async () => {
    if (!server) throw new Error("the first start failed");
    const firstKey = [...server.stdout().matchAll(DEMO_KEY_LINE)][0]?.[1];
    const firstToken = [...server.stdout().matchAll(SETUP_LINK)][0]?.[1];
    const organizationId = /organizationId:\s+(org_\S+)/.exec(server.stdout())?.[1];
    const stopped = await server.stop();
    expect(stopped.code).toBe(0);

    const again = await startServer({ DATA_DIR: temp.dir });
    try {
      const health = await again.json("GET", "/health");
      expect(health.body).toEqual({ status: "ok" });
      const log = again.stdout();
      expect(log).not.toMatch(/API key/i);
      expect(log).not.toMatch(ANY_KEY);
      expect(log).not.toMatch(/Created a demo organization/);
      expect([...log.matchAll(FORM_URL)]).toHaveLength(0);
      // The demo data from the first start is still there and the key still works.
      const list = await again.json<{ count: number }>("GET", "/v1/forms", { key: firstKey });
      expect(list.status).toBe(200);
      expect(list.body.count).toBe(4);

      // The demo Owner has set no password yet: a fresh link, and the first one no longer works.
      expect(log).toContain(`${DEMO_OWNER} has not set a password yet`);
      const tokens = [...log.matchAll(SETUP_LINK)].map((m) => m[1]);
      expect(tokens).toHaveLength(1);
      expect(tokens[0]).not.toBe(firstToken);
      const password = "a long enough password";
      const stale = await again.json("POST", "/api/staff/setup", { body: { token: firstToken, password } });
      expect(stale.status).toBe(401);
      const setup = await again.json("POST", "/api/staff/setup", { body: { token: tokens[0], password } });
      expect(setup.status, JSON.stringify(setup.body)).toBe(200);
      expect(setup.body).toMatchObject({ email: DEMO_OWNER, organizationId, role: "OWNER" });
    } finally {
      await again.stop();
    }

    // Once the password is set, a start says so and how to make another Owner's link, and prints none.
    const third = await startServer({ DATA_DIR: temp.dir });
    try {
      expect((await third.json("GET", "/health")).status).toBe(200);
      const log = third.stdout();
      expect(log).toContain(`${DEMO_OWNER} exists and has set a password`);
      expect(log).toContain(`npm run --silent cli -- user create --org ${organizationId} --email`);
      expect([...log.matchAll(SETUP_LINK)]).toHaveLength(0);
      expect(log).not.toMatch(ANY_KEY);
    } finally {
      await third.stop();
    }
  });
});

describe.skipIf(dialect !== "sqlite")("server process: NODE_ENV=production", () => {
  let temp: TempDir;
  beforeAll(() => {
    temp = tempDir();
  });
  afterAll(async () => {
    await killAll();
    temp?.remove();
  });

  it("creates no demo organization", async () => {
    const server = await startServer({ DATA_DIR: temp.dir, NODE_ENV: "production" });
    try {
      expect((await server.json("GET", "/health")).body).toEqual({ status: "ok" });
      const log = server.stdout();
      expect(log).not.toMatch(ANY_KEY);
      expect(log).not.toMatch(/API key/i);
      expect([...log.matchAll(FORM_URL)]).toHaveLength(0);
      const db = new SQLite(path.join(temp.dir, "almoner.db"), { readonly: true, fileMustExist: true });
      try {
        const row = db.prepare("select count(*) as n from organizations").get() as { n: number };
        expect(row.n).toBe(0);
        const keys = db.prepare("select count(*) as n from api_keys").get() as { n: number };
        expect(keys.n).toBe(0);
        const staff = db.prepare("select count(*) as n from staff_users").get() as { n: number };
        expect(staff.n).toBe(0);
      } finally {
        db.close();
      }
    } finally {
      await server.stop();
    }
  });
});

// Each case starts a server process (several at once): on a loaded 2-core CI machine a start that fails
// at its configuration has taken 30 s. How fast it fails is not what these cases check.
describe.skipIf(dialect !== "sqlite")("server process: bad configuration", { timeout: 120_000 }, () => {
  let temp: TempDir;
  beforeAll(() => {
    temp = tempDir();
  });
  afterAll(async () => {
    await killAll();
    temp?.remove();
  });

  const cases: { name: string; env: Record<string, string>; setting: string }[] = [
    { name: "PORT=abc", env: { PORT: "abc" }, setting: "PORT" },
    { name: "PORT=70000", env: { PORT: "70000" }, setting: "PORT" },
    { name: "PUBLIC_URL=notaurl", env: { PUBLIC_URL: "notaurl" }, setting: "PUBLIC_URL" },
    { name: "RATE_LIMIT_PER_HOUR=0", env: { RATE_LIMIT_PER_HOUR: "0" }, setting: "RATE_LIMIT_PER_HOUR" },
    { name: "DATABASE_URL=mysql://x", env: { DATABASE_URL: "mysql://x" }, setting: "DATABASE_URL" },
    // A template such as sqlite:${DB_PATH} with the variable unset, and an in-memory database: both would
    // take gifts into a database that vanishes when the server stops.
    { name: "DATABASE_URL=sqlite: (no file)", env: { DATABASE_URL: "sqlite:" }, setting: "DATABASE_URL" },
    { name: "DATABASE_URL=:memory:", env: { DATABASE_URL: ":memory:" }, setting: "DATABASE_URL" },
    {
      name: "DATABASE_URL=sqlite::memory:",
      env: { DATABASE_URL: "sqlite::memory:" },
      setting: "DATABASE_URL",
    },
    {
      name: "DATABASE_URL unreachable PostgreSQL",
      env: { DATABASE_URL: "postgres://postgres@127.0.0.1:1/test" },
      setting: "DATABASE_URL",
    },
  ];

  it.concurrent.for(cases)(
    "$name exits non-zero with one stderr line naming $setting",
    async ({ env, setting }, { expect }) => {
      const result = await runServerToExit({ DATA_DIR: temp.dir, ...env }, 100_000);
      expect(result.signal).toBeNull();
      expect(result.code).not.toBe(0);
      expect(result.stdout).not.toMatch(/listening/i);
      const errLines = lines(result.stderr);
      expect(errLines, result.stderr).toHaveLength(1);
      expect(errLines[0]).toContain(setting);
    },
  );

  it.concurrent("refuses a SQLite database whose schema is newer than the code", async ({ expect }) => {
    const dir = path.join(temp.dir, "newer");
    fs.mkdirSync(dir);
    const file = path.join(dir, "almoner.db");
    const db = new SQLite(file);
    db.exec(
      "create table almoner_migrations (version integer primary key, name text not null, applied_at text not null)",
    );
    db.prepare("insert into almoner_migrations (version, name, applied_at) values (?, ?, ?)").run(
      999,
      "from the future",
      new Date().toISOString(),
    );
    db.close();

    const result = await runServerToExit({ DATA_DIR: dir }, 100_000);
    expect(result.code).not.toBe(0);
    expect(result.stdout).not.toMatch(/listening/i);
    const errLines = lines(result.stderr);
    expect(errLines, result.stderr).toHaveLength(1);
    expect(errLines[0]).toMatch(/newer/i);
    expect(errLines[0]).toContain("999");

    // Nothing was written: no tables of the old schema appeared, the future row is intact.
    const check = new SQLite(file, { readonly: true });
    try {
      const tables = check
        .prepare("select name from sqlite_master where type = 'table' and name = 'forms'")
        .all();
      expect(tables).toHaveLength(0);
      const versions = check.prepare("select version from almoner_migrations").all();
      expect(versions).toEqual([{ version: 999 }]);
    } finally {
      check.close();
    }
  });
});

describe(`server process: forms over real HTTP (${dialect})`, () => {
  let database: TestDatabase;
  let temp: TempDir;
  let server: ServerProcess;
  let key: string;
  const RATE = 50;

  beforeAll(async () => {
    temp = tempDir();
    database = await freshDatabase();
    const store = await database.open();
    try {
      const org = await createOrganization(store.db, { name: "HTTP Org" }, Date.now());
      key = (await createApiKey(store.db, { organizationId: org.id, sandbox: false }, Date.now())).key;
    } finally {
      await store.close();
    }
    server = await startServer({
      DATA_DIR: temp.dir,
      DATABASE_URL: databaseUrlOf(database),
      PUBLIC_URL: "https://give.example.org",
      RATE_LIMIT_PER_HOUR: String(RATE),
    });
  });

  afterAll(async () => {
    await server?.stop();
    await killAll();
    await database?.drop();
    temp?.remove();
  });

  it("answers /health with X-Request-Id", async () => {
    const res = await server.fetch("/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  it("creates a form with fetch and reads it back", async () => {
    const input = validForms.event();
    const created = await server.json<{
      formID: string;
      formUrl: string;
      embedHTML: string;
      message: string;
    }>("POST", "/v1/forms", { key, body: input });
    expect(created.status).toBe(201);
    expect(created.body.message).toBe("Form created successfully");
    expect(created.body.formID).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(created.body.formUrl).toBe(`https://give.example.org/donate/${created.body.formID}`);
    expect(created.body.embedHTML).toContain("<iframe");

    const got = await server.json<Record<string, unknown>>("GET", `/v1/forms/${created.body.formID}`, {
      key,
    });
    expect(got.status).toBe(200);
    expect(got.body.formID).toBe(created.body.formID);
    expect(got.body.title).toBe(input.title);
    expect(got.body.formType).toBe("EVENT");
    expect(got.body.funds).toEqual(["Gala"]);
    expect((got.body.tickets as { name: string }[]).map((t) => t.name)).toEqual(["Adult", "Table"]);

    const list = await server.json<{ forms: { formID: string }[] }>("GET", "/v1/forms", { key });
    expect(list.status).toBe(200);
    expect(list.body.forms.map((f) => f.formID)).toContain(created.body.formID);

    const page = await server.fetch(`/attend/${created.body.formID}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(input.title);
  });

  it("sends X-Request-Id on every response and echoes a sane one", async () => {
    const fresh = await server.fetch("/v1/forms", { key });
    await fresh.text();
    const id1 = fresh.headers.get("x-request-id");
    expect(id1).toBeTruthy();
    const other = await server.fetch("/v1/forms", { key });
    await other.text();
    expect(other.headers.get("x-request-id")).toBeTruthy();
    expect(other.headers.get("x-request-id")).not.toBe(id1);

    const echoed = await server.fetch("/v1/forms", { key, headers: { "X-Request-Id": "trace-abc.123" } });
    await echoed.text();
    expect(echoed.headers.get("x-request-id")).toBe("trace-abc.123");

    const unauthorized = await server.fetch("/v1/forms");
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("x-request-id")).toBeTruthy();
    expect(await unauthorized.json()).toHaveProperty("error");

    const notFound = await server.fetch("/v1/nope", { key });
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get("x-request-id")).toBeTruthy();
    expect(await notFound.json()).toEqual({ error: "Not found" });
  });

  it("sends X-RateLimit-* headers that count down", async () => {
    const before = Math.floor(Date.now() / 1000);
    const a = await server.fetch("/v1/forms", { key });
    await a.text();
    const b = await server.fetch("/v1/forms", { key });
    await b.text();
    for (const res of [a, b]) {
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe(String(RATE));
      expect(res.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/);
      const reset = Number(res.headers.get("x-ratelimit-reset"));
      expect(Number.isInteger(reset)).toBe(true);
      expect(reset).toBeGreaterThan(before);
      expect(reset).toBeLessThanOrEqual(before + 3600 + 60);
    }
    const ra = Number(a.headers.get("x-ratelimit-remaining"));
    const rb = Number(b.headers.get("x-ratelimit-remaining"));
    expect(ra).toBeLessThan(RATE);
    expect(rb).toBe(ra - 1);
  });
});

describe.skipIf(dialect !== "sqlite")(
  "server process: slow clients and a production start without PUBLIC_URL",
  () => {
    let temp: TempDir;
    let server: ServerProcess;
    beforeAll(async () => {
      temp = tempDir();
      server = await startServer({
        DATA_DIR: temp.dir,
        NODE_ENV: "production",
        REQUEST_TIMEOUT_SECONDS: "1",
      });
    });
    afterAll(async () => {
      await server?.stop();
      await killAll();
      temp?.remove();
    });

    it("says at the start that links will point at localhost", () => {
      expect(server.stderr()).toMatch(/PUBLIC_URL is not set: .*localhost.*https:\/\/give\.example\.org/);
    });

    /** Sends `text` on a raw connection and resolves with what came back once the server closed it. */
    function rawExchange(text: string, giveUpMs: number): Promise<{ answer: string; closedAfterMs: number }> {
      return new Promise((resolve, reject) => {
        const started = Date.now();
        let answer = "";
        const socket = net.connect(server.port, "127.0.0.1", () => socket.write(text));
        socket.setEncoding("utf8");
        socket.on("data", (chunk: string) => {
          answer += chunk;
        });
        socket.on("error", reject);
        socket.on("close", () => resolve({ answer, closedAfterMs: Date.now() - started }));
        setTimeout(() => {
          socket.destroy();
          reject(new Error(`the server still held the connection after ${giveUpMs} ms`));
        }, giveUpMs).unref();
      });
    }

    it("answers 408 and closes a request whose body never finishes (REQUEST_TIMEOUT_SECONDS)", async () => {
      const { answer, closedAfterMs } = await rawExchange(
        `POST /api/staff/login HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nOrigin: http://127.0.0.1:${server.port}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
        15_000,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(closedAfterMs).toBeGreaterThanOrEqual(900);
      // The client's doing, logged in one line: no stack trace, no "failed" (which a slow sender could
      // repeat to fill the log, and which the metrics counted as a 500).
      await expect
        .poll(() => server.stderr())
        .toMatch(/POST \/api\/staff\/login: the client stopped sending its request/);
      expect(server.stderr()).not.toMatch(/failed:|abortIncoming|ECONNRESET/);
    });

    it("closes a connection whose headers never finish", async () => {
      const { answer } = await rawExchange("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a", 15_000);
      expect(answer).toMatch(/^HTTP\/1\.1 408 |^$/);
    });

    it("still answers a request that arrives in time", async () => {
      expect((await server.json("GET", "/health")).body).toEqual({ status: "ok" });
    });
  },
);

describe.skipIf(dialect !== "sqlite")("server process: a port already in use", { timeout: 120_000 }, () => {
  let temp: TempDir;
  let first: ServerProcess;
  beforeAll(async () => {
    temp = tempDir();
    first = await startServer({ DATA_DIR: temp.dir });
  });
  afterAll(async () => {
    await first?.stop();
    await killAll();
    temp?.remove();
  });

  it("exits with one line and leaves no heartbeat row of a process that never served", async () => {
    const second = await runServerToExit({ DATA_DIR: temp.dir, PORT: String(first.port) }, 100_000);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`the port is in use (set PORT)`);
    const db = new SQLite(path.join(temp.dir, "almoner.db"), { readonly: true, fileMustExist: true });
    try {
      const rows = db.prepare("select count(*) as n from processes").get() as { n: number };
      // The first server's own row, and no other.
      expect(rows.n).toBe(1);
    } finally {
      db.close();
    }
  });
});

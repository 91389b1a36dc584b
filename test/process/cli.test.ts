import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PERMISSIONS } from "../../shared/enums.js";
import {
  type CliResult,
  databaseUrlOf,
  type Env,
  killAll,
  lines,
  runCli,
  type ServerProcess,
  startServer,
  type TempDir,
  tempDir,
} from "../support/processes.js";
import { dialect, freshDatabase, type TestDatabase, validForms } from "../support/testApp.js";

interface OrgJson {
  organizationId: string;
  name: string;
}
interface KeyJson {
  key: string;
  keyId: string;
  permissions: string[];
}
interface KeyListJson {
  keys: {
    keyId: string;
    prefix: string;
    permissions: string[];
    createdAt: string;
    revokedAt: string | null;
  }[];
}

/** A successful `--json` run: exit 0, nothing on stderr, exactly one JSON object on stdout. */
function ok<T>(result: CliResult): T {
  expect(result.stderr, `stderr: ${result.stderr}`).toBe("");
  expect(result.code, `stdout: ${result.stdout}`).toBe(0);
  expect(lines(result.stdout)).toHaveLength(1);
  expect(result.json).toBeTypeOf("object");
  expect(result.json).not.toBeNull();
  return result.json as T;
}

/** A failed run: non-zero exit, nothing on stdout, a message on stderr (returned). */
function failed(result: CliResult): string {
  expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).not.toBe(0);
  expect(result.code).not.toBeNull();
  expect(result.stdout).toBe("");
  expect(result.stderr.trim()).not.toBe("");
  return result.stderr;
}

// Each command is a process of its own (a few seconds to start), and the bad-input cases run at once:
// on a loaded 2-core CI machine a case of three commands takes longer than the default 30 s.
describe(`cli process (${dialect})`, { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let temp: TempDir;
  let env: Env;
  let server: ServerProcess;
  const cli = (...args: string[]) => runCli(args, env);

  beforeAll(async () => {
    temp = tempDir();
    database = await freshDatabase();
    env = { DATA_DIR: temp.dir, DATABASE_URL: databaseUrlOf(database) };
    // A server on the same database the whole time: the CLI must work beside it.
    // Production mode, so that it does not seed a demo organization into the list.
    server = await startServer({ ...env, NODE_ENV: "production" });
  });

  afterAll(async () => {
    await server?.stop();
    await killAll();
    await database?.drop();
    temp?.remove();
  });

  let acme: OrgJson;
  let fullKey: KeyJson;

  it("org create --json prints exactly {organizationId, name}", async () => {
    acme = ok<OrgJson>(await cli("org", "create", "--name", "Acme", "--json"));
    expect(Object.keys(acme).sort()).toEqual(["name", "organizationId"]);
    expect(acme.name).toBe("Acme");
    expect(acme.organizationId).toBeTypeOf("string");
    expect(acme.organizationId.length).toBeGreaterThan(0);
  });

  it("org list --json lists the organizations", async () => {
    const other = ok<OrgJson>(await cli("org", "create", "--name", "Beta Charity", "--json"));
    const list = ok<{ organizations: { organizationId: string; name: string }[] }>(
      await cli("org", "list", "--json"),
    );
    expect(list.organizations.map((o) => [o.organizationId, o.name]).sort()).toEqual(
      [
        [acme.organizationId, "Acme"],
        [other.organizationId, "Beta Charity"],
      ].sort(),
    );
  });

  it("key create --json prints exactly {key, keyId, permissions}, all permissions by default", async () => {
    fullKey = ok<KeyJson>(await cli("key", "create", "--org", acme.organizationId, "--json"));
    expect(Object.keys(fullKey).sort()).toEqual(["key", "keyId", "permissions"]);
    expect(fullKey.key).toMatch(/^cs_live_[A-Za-z0-9]{32}$/);
    expect(fullKey.keyId).toBeTypeOf("string");
    expect(fullKey.keyId).not.toBe(fullKey.key);
    expect(fullKey.key).not.toContain(fullKey.keyId);
    expect([...fullKey.permissions].sort()).toEqual([...PERMISSIONS].sort());
    // Without --name it is named, as the API requires every key to be, for where and when it was made.
    const listed = ok<{ keys: { keyId: string; name: string }[] }>(
      await cli("key", "list", "--org", acme.organizationId, "--json"),
    );
    expect(listed.keys.find((k) => k.keyId === fullKey.keyId)?.name).toMatch(
      /^Command line, \d{4}-\d{2}-\d{2}$/,
    );
  });

  it("the created key works against the running server", async () => {
    const list = await server.json<{ forms: unknown[]; count: number }>("GET", "/v1/forms", {
      key: fullKey.key,
    });
    expect(list.status).toBe(200);
    expect(list.body.count).toBe(0);
    const created = await server.json<{ formID: string }>("POST", "/v1/forms", {
      key: fullKey.key,
      body: validForms.standard(),
    });
    expect(created.status).toBe(201);
    const org = await server.json<{ organizationName: string }>("GET", "/v1/organization", {
      key: fullKey.key,
    });
    expect(org.status).toBe(200);
    expect(org.body.organizationName).toBe("Acme");
  });

  it("org set changes name, base URLs and global custom inputs, seen at once by the server", async () => {
    const inputs = JSON.stringify([
      { title: "Employer", inputType: "SHORT_TEXT_INPUT" },
      {
        title: "Chapter",
        inputType: "SINGLE_SELECTION_DROPDOWN",
        required: true,
        options: ["North", "South"],
      },
    ]);
    const out = ok<Record<string, unknown>>(
      await cli(
        "org",
        "set",
        "--org",
        acme.organizationId,
        "--name",
        "Acme Foundation",
        "--base-urls",
        "https://acme.example.org,https://www.acme.example.org/give",
        "--global-custom-inputs",
        inputs,
        "--json",
      ),
    );
    expect(out.organizationId).toBe(acme.organizationId);
    expect(out.organizationName).toBe("Acme Foundation");
    expect(out.organizationBaseURLs).toEqual([
      "https://acme.example.org",
      "https://www.acme.example.org/give",
    ]);
    const globals = out.globalCustomInputs as {
      id: string;
      title: string;
      required: boolean;
      options: string[];
    }[];
    expect(globals.map((g) => g.title)).toEqual(["Employer", "Chapter"]);
    for (const g of globals) expect(g.id).toMatch(/\S/);
    expect(globals[1].options).toEqual(["North", "South"]);
    expect(globals[1].required).toBe(true);

    const seen = await server.json<Record<string, unknown>>("GET", "/v1/organization", { key: fullKey.key });
    expect(seen.status).toBe(200);
    expect(seen.body.organizationName).toBe("Acme Foundation");
    expect(seen.body.organizationBaseURLs).toEqual(out.organizationBaseURLs);
    expect(seen.body.globalCustomInputs).toEqual(out.globalCustomInputs);

    const list = ok<{ organizations: { organizationId: string; name: string }[] }>(
      await cli("org", "list", "--json"),
    );
    expect(list.organizations.find((o) => o.organizationId === acme.organizationId)?.name).toBe(
      "Acme Foundation",
    );
  });

  it("org set refuses global custom inputs that would make a form's hosted page too large, as the API does", async () => {
    // Thirteen dropdowns of a hundred long options: well past the 180 KB a hosted page may weigh.
    const big = Array.from({ length: 13 }, (_, i) => ({
      title: `Question ${i}`,
      inputType: "SINGLE_SELECTION_DROPDOWN",
      required: false,
      options: Array.from({ length: 100 }, (_, j) => `Option ${i}-${j} ${"x".repeat(160)}`),
    }));
    const before = await server.json<Record<string, unknown>>("GET", "/v1/organization", {
      key: fullKey.key,
    });
    const api = await server.json("PUT", "/v1/organization", {
      key: fullKey.key,
      body: { globalCustomInputs: big },
    });
    expect(api.status).toBe(400);
    const file = path.join(temp.dir, "big-inputs.json");
    fs.writeFileSync(file, JSON.stringify(big));
    const message = failed(
      await cli("org", "set", "--org", acme.organizationId, "--global-custom-inputs", `@${file}`),
    );
    expect(message).toMatch(/globalCustomInputs would make the hosted page of form .* too large/);
    // Nothing changed: the organization's forms can still be saved.
    const after = await server.json<Record<string, unknown>>("GET", "/v1/organization", { key: fullKey.key });
    expect(after.body.globalCustomInputs).toEqual(before.body.globalCustomInputs);
    const forms = await server.json<{ forms: { formID: string }[] }>("GET", "/v1/forms", {
      key: fullKey.key,
    });
    const edit = await server.json("PUT", `/v1/forms/${forms.body.forms[0].formID}`, {
      key: fullKey.key,
      body: { title: "Spring appeal" },
    });
    expect(edit.status).toBe(200);
  });

  it("org set --fee-percent/--fee-fixed changes what cover-fees adds to a gift", async () => {
    const created = await server.json<{ formID: string }>("POST", "/v1/forms", {
      key: fullKey.key,
      body: validForms.givingLevel(),
    });
    expect(created.status).toBe(201);
    const quote = () =>
      server.json<{ fee: number; total: number }>("POST", `/api/forms/${created.body.formID}/quote`, {
        body: { givingLevel: "Friend", coverFees: true },
      });
    // Default 2.9% + $0.30 on $50: ceil((50 + 0.30) / 0.971) = 51.81.
    expect((await quote()).body).toMatchObject({ fee: 1.81, total: 51.81 });

    const out = ok<Record<string, unknown>>(
      await cli(
        "org",
        "set",
        "--org",
        acme.organizationId,
        "--fee-percent",
        "5",
        "--fee-fixed",
        "0.50",
        "--json",
      ),
    );
    expect(out).toMatchObject({ feePercent: 5, feeFixed: 0.5 });
    // 5% + $0.50 on $50: (50 + 0.50) / 0.95 = 53.157… → 53.16.
    expect((await quote()).body).toMatchObject({ fee: 3.16, total: 53.16 });

    const bad = failed(await cli("org", "set", "--org", acme.organizationId, "--fee-percent", "2.915"));
    expect(bad).toContain("--fee-percent");
    // Numbers in decimal only: 0x10 would otherwise be read as 16%.
    for (const odd of ["0x10", "1e1"])
      expect(failed(await cli("org", "set", "--org", acme.organizationId, "--fee-percent", odd))).toContain(
        `--fee-percent must be a number from 0 to 20, got "${odd}"`,
      );
    expect((await quote()).body).toMatchObject({ fee: 3.16 });
  });

  it("key create --permissions forms:read --name gives a key that may read forms but not create them, named as given", async () => {
    const readOnly = ok<KeyJson>(
      await cli(
        "key",
        "create",
        "--org",
        acme.organizationId,
        "--permissions",
        "forms:read",
        "--name",
        "Website sync",
        "--json",
      ),
    );
    const keys = await server.json("GET", "/v1/keys", { key: fullKey.key });
    expect(
      (keys.body.keys as { keyId: string; name: string }[]).find((k) => k.keyId === readOnly.keyId)?.name,
    ).toBe("Website sync");
    expect(Object.keys(readOnly).sort()).toEqual(["key", "keyId", "permissions"]);
    expect(readOnly.permissions).toEqual(["forms:read"]);
    expect(readOnly.key).toMatch(/^cs_live_[A-Za-z0-9]{32}$/);

    const list = await server.json("GET", "/v1/forms", { key: readOnly.key });
    expect(list.status).toBe(200);
    const post = await server.json("POST", "/v1/forms", { key: readOnly.key, body: validForms.standard() });
    expect(post.status).toBe(403);
    expect(post.body).toEqual({ error: "Missing permission: forms:write" });
    const org = await server.json("GET", "/v1/organization", { key: readOnly.key });
    expect(org.status).toBe(403);
  });

  it("key list --json shows the keys without their secrets", async () => {
    const result = await cli("key", "list", "--org", acme.organizationId, "--json");
    const list = ok<KeyListJson>(result);
    expect(list.keys).toHaveLength(2);
    expect(list.keys.map((k) => k.keyId)).toContain(fullKey.keyId);
    for (const k of list.keys) {
      expect(k.revokedAt ?? null).toBeNull();
      expect(k.createdAt).toBeTypeOf("string");
    }
    expect(list.keys.find((k) => k.keyId === fullKey.keyId)?.permissions.sort()).toEqual(
      [...PERMISSIONS].sort(),
    );
    expect(result.stdout).not.toContain(fullKey.key);
    expect(result.stdout).not.toContain(fullKey.key.slice(8));
  });

  it("key list names each key as it was created (--name), as the dashboard lists it", async () => {
    const named = ok<KeyJson>(
      await cli("key", "create", "--org", acme.organizationId, "--name", "Website sync", "--json"),
    );
    const list = ok<{ keys: { keyId: string; name: string }[] }>(
      await cli("key", "list", "--org", acme.organizationId, "--json"),
    );
    expect(list.keys.find((k) => k.keyId === named.keyId)?.name).toBe("Website sync");
    const text = await cli("key", "list", "--org", acme.organizationId);
    expect(lines(text.stdout).find((line) => line.startsWith(named.keyId))).toMatch(/ {2}Website sync$/);
    ok(await cli("key", "revoke", "--key", named.keyId, "--json"));
  });

  it("key revoke --json revokes at once: the server answers 401, other keys keep working", async () => {
    const spare = ok<KeyJson>(await cli("key", "create", "--org", acme.organizationId, "--json"));
    // Warm the server with the key first, so that a cached lookup would show.
    expect((await server.json("GET", "/v1/forms", { key: fullKey.key })).status).toBe(200);

    const revoked = ok<{ keyId: string; revoked: boolean }>(
      await cli("key", "revoke", "--key", fullKey.keyId, "--json"),
    );
    expect(revoked).toEqual({ keyId: fullKey.keyId, revoked: true });

    const denied = await server.json("GET", "/v1/forms", { key: fullKey.key });
    expect(denied.status).toBe(401);
    expect(denied.body).toHaveProperty("error");
    expect((await server.json("GET", "/v1/forms", { key: spare.key })).status).toBe(200);

    const list = ok<KeyListJson>(await cli("key", "list", "--org", acme.organizationId, "--json"));
    expect(list.keys.find((k) => k.keyId === fullKey.keyId)?.revokedAt).toBeTruthy();
    expect(list.keys.find((k) => k.keyId === spare.keyId)?.revokedAt ?? null).toBeNull();

    const again = failed(await cli("key", "revoke", "--key", fullKey.keyId));
    expect(again).toContain(fullKey.keyId);
  });

  it("prints with --help the usage text docs/operations.md shows", async () => {
    const help = await cli("--help");
    expect(help.code).toBe(0);
    const doc = fs.readFileSync(path.join(import.meta.dirname, "../../docs/operations.md"), "utf8");
    const shown = /Its usage text \(`--help`\):\n\n```text\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(shown).toBeDefined();
    expect(help.stdout.trim()).toBe(shown?.trim());
  });

  it("with --json, speaks JSON without a command too: the usage asked for, or a missing command's error", async () => {
    const usage = await cli("--help", "--json");
    expect(usage.code).toBe(0);
    // The same text as --help prints.
    expect(JSON.parse(usage.stdout).usage.trim()).toBe((await cli("--help")).stdout.trim());
    const none = await cli("--json");
    expect(none.code).toBe(2);
    expect(none.stdout).toBe("");
    expect(JSON.parse(none.stderr)).toEqual({
      error: "No command given (the usage: npm run --silent cli -- --help)",
    });
    // Without --json, no command prints the usage, as --help does.
    const plain = await cli();
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^Usage: /);
  });

  it("a sandbox organization gets cs_test_ keys", async () => {
    const sandbox = ok<OrgJson>(await cli("org", "create", "--name", "Sandbox Org", "--sandbox", "--json"));
    const key = ok<KeyJson>(await cli("key", "create", "--org", sandbox.organizationId, "--json"));
    expect(key.key).toMatch(/^cs_test_[A-Za-z0-9]{32}$/);
    expect((await server.json("GET", "/v1/forms", { key: key.key })).status).toBe(200);
  });

  it("user create --json prints a set-up link that signs the person in at the running server, once", async () => {
    const made = ok<{ userId: string; setupUrl: string; expiresAt: string }>(
      await cli(
        "user",
        "create",
        "--org",
        acme.organizationId,
        "--email",
        "owner@acme.example",
        "--role",
        "owner",
        "--json",
      ),
    );
    expect(Object.keys(made).sort()).toEqual(["expiresAt", "setupUrl", "userId"]);
    const token = new URL(made.setupUrl).searchParams.get("token");
    expect(new URL(made.setupUrl).pathname).toBe("/dashboard/setup");
    // Without PUBLIC_URL of its own, the command line links to the running server (its recorded address),
    // not to its own default port.
    expect(new URL(made.setupUrl).origin).toBe(`http://localhost:${server.port}`);
    const origin = `http://127.0.0.1:${server.port}`;
    const setup = await server.json("POST", "/api/staff/setup", {
      body: { token, password: "a long enough password" },
      headers: { Origin: origin },
    });
    expect(setup.status, JSON.stringify(setup.body)).toBe(200);
    expect(setup.body).toMatchObject({ organizationId: acme.organizationId, role: "OWNER" });
    const cookie = (setup.headers.get("Set-Cookie") ?? "").split(";")[0];
    expect((await server.json("GET", "/v1/forms", { headers: { Cookie: cookie } })).status).toBe(200);

    const again = failed(
      await cli(
        "user",
        "create",
        "--org",
        acme.organizationId,
        "--email",
        "OWNER@acme.example",
        "--role",
        "staff",
      ),
    );
    expect(again).toMatch(/already a member/);
    expect(
      failed(
        await cli(
          "user",
          "create",
          "--org",
          acme.organizationId,
          "--email",
          "x@acme.example",
          "--role",
          "admin",
        ),
      ),
    ).toMatch(/--role must be one of owner, finance, staff/);
    expect(
      failed(
        await cli(
          "user",
          "create",
          "--org",
          acme.organizationId,
          "--email",
          "not-an-address",
          "--role",
          "owner",
        ),
      ),
    ).toMatch(/--email must be an e-mail address/);
  });

  it("user create again for a person with no password yet prints a fresh link, and the first stops working", async () => {
    const create = async (role: string) =>
      ok<{ userId: string; setupUrl: string }>(
        await cli(
          "user",
          "create",
          "--org",
          acme.organizationId,
          "--email",
          "late@acme.example",
          "--role",
          role,
          "--json",
        ),
      );
    const first = await create("staff");
    const second = await create("finance");
    expect(second.userId).toBe(first.userId);
    expect(second.setupUrl).not.toBe(first.setupUrl);
    const origin = `http://127.0.0.1:${server.port}`;
    const setUp = (url: string) =>
      server.json("POST", "/api/staff/setup", {
        body: { token: new URL(url).searchParams.get("token"), password: "a long enough password" },
        headers: { Origin: origin },
      });
    expect((await setUp(first.setupUrl)).status).toBe(401);
    const setup = await setUp(second.setupUrl);
    expect(setup.status, JSON.stringify(setup.body)).toBe(200);
    expect(setup.body).toMatchObject({ organizationId: acme.organizationId, role: "FINANCE" });
  });

  it("works while the server is busy writing to the same database", async () => {
    const busy = ok<KeyJson>(await cli("key", "create", "--org", acme.organizationId, "--json"));
    let stop = false;
    const statuses: number[] = [];
    const hammer = (async () => {
      let i = 0;
      while (!stop) {
        const res = await server.json("POST", "/v1/forms", {
          key: busy.key,
          body: { title: `Busy ${i++} ${Math.random()}`, funds: ["General"] },
        });
        statuses.push(res.status);
      }
    })();
    try {
      const results = await Promise.all([
        cli("org", "create", "--name", "Concurrent One", "--json"),
        cli("org", "create", "--name", "Concurrent Two", "--json"),
        cli("key", "create", "--org", acme.organizationId, "--json"),
        cli("org", "set", "--org", acme.organizationId, "--name", "Acme Foundation", "--json"),
      ]);
      for (const r of results) ok(r);
    } finally {
      stop = true;
      await hammer;
    }
    expect(statuses.length).toBeGreaterThan(0);
    expect(new Set(statuses)).toEqual(new Set([201]));
  });

  describe("bad input exits non-zero with a clear message", () => {
    it.concurrent("an unknown permission", async ({ expect }) => {
      // An organization of its own, so that no other test's keys change the count.
      const quiet = ok<OrgJson>(await cli("org", "create", "--name", "Quiet Org", "--json"));
      const message = failed(
        await cli("key", "create", "--org", quiet.organizationId, "--permissions", "forms:read,forms:delete"),
      );
      expect(message).toContain("forms:delete");
      expect(message).toMatch(/unknown permission/i);
      const after = ok<KeyListJson>(await cli("key", "list", "--org", quiet.organizationId, "--json"));
      expect(after.keys).toEqual([]);
    });

    it.concurrent("an unknown permission, with --json: the error is JSON on stderr", async ({ expect }) => {
      const result = await cli(
        "key",
        "create",
        "--org",
        acme.organizationId,
        "--permissions",
        "root",
        "--json",
      );
      const message = failed(result);
      const parsed = JSON.parse(message) as { error: string };
      expect(parsed.error).toContain("root");
    });

    it.concurrent("a word past the command (a mistyped or missing flag), refused before anything is made", async ({
      expect,
    }) => {
      const result = await cli("org", "create", "--name", "Stray", "--json", "extra");
      const message = failed(result);
      expect((JSON.parse(message) as { error: string }).error).toContain('Unexpected argument: "extra"');
      const list = await cli("org", "list", "--json");
      expect(JSON.parse(list.stdout).organizations.map((o: { name: string }) => o.name)).not.toContain(
        "Stray",
      );
      expect(failed(await cli("key", "revoke", "key_a", "key_b"))).toContain('Unexpected argument: "key_b"');
    });

    it.concurrent("key create without --org", async ({ expect }) => {
      const message = failed(await cli("key", "create"));
      expect(message).toContain("--org");
    });

    it.concurrent("key list without --org", async ({ expect }) => {
      const message = failed(await cli("key", "list", "--json"));
      expect(message).toContain("--org");
    });

    it.concurrent("key create for an unknown organization id", async ({ expect }) => {
      const message = failed(await cli("key", "create", "--org", "org_doesnotexist", "--json"));
      expect(message).toContain("org_doesnotexist");
      expect(message).toMatch(/no organization/i);
    });

    it.concurrent("org set for an unknown organization id", async ({ expect }) => {
      const message = failed(await cli("org", "set", "--org", "org_missing", "--name", "X"));
      expect(message).toContain("org_missing");
    });

    it.concurrent("org set with a bad base URL leaves the organization unchanged", async ({ expect }) => {
      const message = failed(
        await cli(
          "org",
          "set",
          "--org",
          acme.organizationId,
          "--base-urls",
          "https://ok.example.org,notaurl",
        ),
      );
      expect(message).toMatch(/URL/);
      expect(message).toMatch(/organizationBaseURLs|base/i);
      const spare = ok<KeyJson>(await cli("key", "create", "--org", acme.organizationId, "--json"));
      const org = await server.json<{ organizationBaseURLs: string[] }>("GET", "/v1/organization", {
        key: spare.key,
      });
      expect(org.body.organizationBaseURLs).toEqual([
        "https://acme.example.org",
        "https://www.acme.example.org/give",
      ]);
    });

    it.concurrent("org create without --name", async ({ expect }) => {
      const message = failed(await cli("org", "create", "--json"));
      expect(message).toContain("--name");
    });

    it.concurrent("org create with a name longer than 200 characters, as org set refuses it", async ({
      expect,
    }) => {
      const message = failed(await cli("org", "create", "--name", "x".repeat(201), "--json"));
      expect(JSON.parse(message)).toEqual({ error: "--name must be at most 200 characters" });
    });

    it.concurrent("org create with a line break in the name, as org set refuses it", async ({ expect }) => {
      const result = await cli("org", "create", "--name", "Acme\nFood Bank", "--json");
      expect(result.code).toBe(2);
      expect(JSON.parse(failed(result)).error).toMatch(/^--name must be a single line/);
    });

    it.concurrent("an unknown command: one line on stderr naming it, exit 2", async ({ expect }) => {
      const result = await cli("org", "destroy");
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toMatch(/unknown command: org destroy/i);
    });

    it.concurrent("an unknown command touches no database: nothing is opened, made or migrated", async ({
      expect,
    }) => {
      const untouched = path.join(temp.dir, "never-made");
      const result = await runCli(["org", "destory"], { DATA_DIR: untouched });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/unknown command: org destory/i);
      expect(fs.existsSync(untouched)).toBe(false);
    });

    it.concurrent("an unknown option: one line on stderr naming it, exit 2", async ({ expect }) => {
      const result = await cli("org", "list", "--bogus");
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toContain("--bogus");
    });

    it.concurrent("an unknown option with --json: one line of JSON, exit 2", async ({ expect }) => {
      const result = await cli("org", "list", "--bogus", "--json");
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(JSON.parse(result.stderr).error).toContain("--bogus");
    });

    it.concurrent("a JSON option naming a file that cannot be read: one line, exit 2", async ({ expect }) => {
      const result = await cli(
        "org",
        "set",
        "--org",
        acme.organizationId,
        "--global-custom-inputs",
        "@/nonexistent/inputs.json",
      );
      expect(result.code).toBe(2);
      expect(result.stderr.trim()).toBe(
        "--global-custom-inputs: cannot read /nonexistent/inputs.json (ENOENT)",
      );
    });
  });
});

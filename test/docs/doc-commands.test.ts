import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  killAll,
  repoRoot,
  runCli,
  type ServerProcess,
  startServer,
  type TempDir,
  tempDir,
} from "../support/processes.js";
import { dialect } from "../support/testApp.js";

/**
 * The docs cannot rot: every ```bash block of README.md and docs/*.md is run, in document order (README
 * first, then docs/ by name), against a real server started on a temporary database, and must exit 0.
 * Every `curl` in them uses `-f`, so an HTTP error (4xx, 5xx) fails its block. Commands that cannot run
 * here (installs, `npm start`, benchmarks, databases the test does not own) are fenced ```sh or ```text.
 *
 * What the blocks may use, as the docs tell readers to set it from the demo that `npm start` prints:
 *   localhost:3000  replaced by the test server's address
 *   $KEY            the demo API key            $ORG      the demo organization
 *   $FORM           "Support our work"          $EVENT    "Annual gala"
 *   $SUB, $PAYMENT  a monthly gift's subscription and payment (made here)
 *   $WEBHOOK        a registered webhook        $LINK     a checkout link of $FORM
 *   $KEY_ID         a second key of $ORG, for `key revoke`
 *   $DATA_DIR       the server's data folder (the command line and sqlite3 use it)
 * Each block runs in `bash -euo pipefail` (an unset variable fails it) in a scratch folder; `npm` runs in
 * the repository, as it does for a reader.
 *
 * The same file checks that every relative link (and its #anchor) and every source path named in the docs
 * exists, that the README's demo output matches the server, and that the webhook `verify` recipe is in
 * docs/webhooks.md.
 */

const DOC_FILES = [
  "README.md",
  ...fs
    .readdirSync(path.join(repoRoot, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`),
];

interface Block {
  file: string;
  line: number;
  lang: string;
  code: string;
}

/** The fenced code blocks of a Markdown text (also those indented in list items, dedented). */
function fencedBlocks(file: string, text: string): Block[] {
  const blocks: Block[] = [];
  let open: { indent: number; fence: string; lang: string; line: number; body: string[] } | null = null;
  for (const [i, line] of text.split("\n").entries()) {
    if (!open) {
      // As CommonMark: a backtick fence's info string holds no backtick (```` ```bash ```` is inline code).
      const m = /^( {0,3})(`{3,})([^`]*)$/.exec(line);
      if (m)
        open = { indent: m[1].length, fence: m[2], lang: m[3].trim().split(/\s+/)[0], line: i + 1, body: [] };
      continue;
    }
    const trimmed = line.trim();
    if (trimmed.startsWith(open.fence) && /^`+$/.test(trimmed)) {
      blocks.push({ file, line: open.line, lang: open.lang, code: open.body.join("\n") });
      open = null;
      continue;
    }
    const lead = /^ */.exec(line)?.[0].length ?? 0;
    open.body.push(line.slice(Math.min(lead, open.indent)));
  }
  if (open) throw new Error(`${file}:${open.line}: a code fence is never closed`);
  return blocks;
}

/** The Markdown outside code: fenced blocks blanked (lines kept) and inline code spans removed. */
function prose(text: string): string {
  let inFence = false;
  return text
    .split("\n")
    .map((line) => {
      if (/^ {0,3}`{3,}[^`]*$/.test(line)) {
        inFence = !inFence;
        return "";
      }
      return inFence ? "" : line.replace(/(`+)[\s\S]*?\1/g, "");
    })
    .join("\n");
}

/** GitHub's anchor for a heading: its text, lower case, without punctuation, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a Markdown text's headings (outside code blocks; repeated ones numbered as GitHub does). */
function headingAnchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let inFence = false;
  for (const line of text.split("\n")) {
    if (/^ {0,3}`{3,}[^`]*$/.test(line)) inFence = !inFence;
    const m = inFence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

const read = (file: string) => fs.readFileSync(path.join(repoRoot, file), "utf8");
const docs = DOC_FILES.map((file) => ({ file, text: read(file) }));
const blocks = docs.flatMap((d) => fencedBlocks(d.file, d.text));
const bashBlocks = blocks.filter((b) => b.lang === "bash");

/** The commands of a shell script, continuation lines joined and comments dropped. */
function commands(code: string): string[] {
  return code
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
}

describe("the docs' structure", () => {
  it("finds bash blocks to run", () => {
    expect(bashBlocks.length).toBeGreaterThan(10);
  });

  it("keeps the README under 12 KB (12,000 bytes)", () => {
    expect(Buffer.byteLength(read("README.md"))).toBeLessThanOrEqual(12_000);
  });

  it("fences commands as bash (run by this test), sh or text (not run): never shell, console or zsh", () => {
    const ambiguous = blocks.filter((b) => ["shell", "console", "zsh", "shell-session"].includes(b.lang));
    expect(ambiguous.map((b) => `${b.file}:${b.line} ${b.lang}`)).toEqual([]);
  });

  it("uses curl -f in bash blocks, so that an HTTP error fails the block", () => {
    const unchecked: string[] = [];
    for (const b of bashBlocks)
      for (const cmd of commands(b.code)) {
        if (!/(^|[\s|;&(])curl\s/.test(cmd)) continue;
        const flags = cmd.split(/\s+/).filter((t) => /^-[A-Za-z]+$/.test(t) || t === "--fail");
        if (!flags.some((t) => t === "--fail" || t.slice(1).includes("f")))
          unchecked.push(`${b.file}:${b.line}: ${cmd}`);
      }
    expect(unchecked).toEqual([]);
  });

  it("links only to files (and headings) that exist", () => {
    const broken: string[] = [];
    for (const { file, text } of docs) {
      const dir = path.dirname(path.join(repoRoot, file));
      for (const m of prose(text).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = m[1];
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const [rel, anchor] = target.split("#");
        const abs = rel ? path.resolve(dir, decodeURIComponent(rel)) : path.join(repoRoot, file);
        if (!fs.existsSync(abs)) {
          broken.push(`${file}: ${target} (no such file)`);
          continue;
        }
        if (anchor !== undefined && abs.endsWith(".md")) {
          if (!headingAnchors(fs.readFileSync(abs, "utf8")).has(anchor))
            broken.push(`${file}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("names only source paths that exist", () => {
    const missing: string[] = [];
    for (const { file, text } of docs)
      for (const m of text.matchAll(/(?<![\w./-])((?:server|shared|widget|test)\/[\w./-]*[\w/])/g))
        if (!fs.existsSync(path.join(repoRoot, m[1]))) missing.push(`${file}: ${m[1]}`);
    expect(missing).toEqual([]);
  });

  it("gives the webhook verify recipe (which the webhook tests run) in docs/webhooks.md only", () => {
    const verifyIn = (file: string) =>
      blocks.some((b) => b.file === file && b.lang === "js" && b.code.includes("function verify("));
    expect(verifyIn("docs/webhooks.md")).toBe(true);
    expect(verifyIn("README.md")).toBe(false);
  });

  it("runs the command line as the docs' `npm run --silent cli --` does", () => {
    const pkg = JSON.parse(read("package.json")) as { scripts: Record<string, string> };
    expect(pkg.scripts.cli).toBe("tsx server/cli.ts");
  });

  it("makes anchors as GitHub does", () => {
    const text =
      "## Idempotency keys (`idempotency-store.test.ts`)\n## The sandbox's test data\n## Tests\n## Tests\n";
    expect(headingAnchors(text)).toEqual(
      new Set(["idempotency-keys-idempotency-storetestts", "the-sandboxs-test-data", "tests", "tests-1"]),
    );
  });
});

/** Settings of the test runner's own environment that must not reach the commands. */
const ALMONER_SETTINGS =
  /^(PORT|HOST|DATA_DIR|DATABASE_URL|PUBLIC_URL|NODE_ENV|SECRETS_KEY|SMTP_URL|STRIPE_.*|WEBHOOK_.*|RATE_LIMIT_PER_HOUR|MAX_BODY_BYTES|LEGACY_DONATIONS_API|TRUST_PROXY|.*_LIMIT.*|WORKER_INTERVAL_SECONDS|SANDBOX_BANK_SETTLE_SECONDS|APPLE_PAY_DOMAIN_ASSOCIATION|VITEST.*)$/;

function runBash(
  code: string,
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child: ChildProcess = spawn("bash", ["--noprofile", "--norc", "-euo", "pipefail", "-c", code], {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ["ignore", "pipe", "pipe"],
      // A group of its own, so that a block that hangs is stopped with every command it started.
      detached: true,
    });
    let output = "";
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      output += d;
    });
    child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      output += d;
    });
    const timer = setTimeout(() => {
      output += `\n[killed after ${opts.timeoutMs} ms]`;
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    }, opts.timeoutMs);
    child.on("close", (exit) => {
      clearTimeout(timer);
      resolve({ code: exit, output });
    });
  });
}

describe.skipIf(dialect !== "sqlite")("the docs' bash blocks, run against a started server", () => {
  let temp: TempDir;
  let server: ServerProcess | undefined;
  let env: NodeJS.ProcessEnv;
  let workDir: string;
  let ran = 0;

  beforeAll(async () => {
    temp = tempDir("almoner-docs-");
    const dataDir = path.join(temp.dir, "data");
    workDir = path.join(temp.dir, "work");
    const binDir = path.join(temp.dir, "bin");
    for (const d of [dataDir, workDir, binDir]) fs.mkdirSync(d);

    server = await startServer({ DATA_DIR: dataDir });
    const started = Date.now();
    while (!server.stdout().includes("Give $25") && Date.now() - started < 10_000)
      await new Promise((r) => setTimeout(r, 50));
    const log = server.stdout();
    const org = /organizationId:\s+(org_\w+)/.exec(log)?.[1];
    const key = /API key:\s+(cs_(?:live|test)_\w+)/.exec(log)?.[1];
    const formId = (title: string) =>
      new RegExp(`${title}\\s+https?://\\S+/(?:donate|attend)/([0-9a-f-]{36})`).exec(log)?.[1];
    const form = formId("Support our work");
    const event = formId("Annual gala");
    if (!org || !key || !form || !event) throw new Error(`Unexpected demo output:\n${log}`);

    // What the docs ask readers to take from their own demo: made here the way a reader would.
    const gift = await server.json<{ payment: { paymentID: string; subscription: { id: string } } }>(
      "POST",
      `/api/forms/${form}/checkout`,
      {
        body: {
          amount: 50,
          frequency: "MONTHLY",
          donor: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.org" },
          paymentMethod: {
            type: "card",
            number: "4242424242424242",
            expMonth: 12,
            expYear: 2030,
            cvc: "123",
          },
        },
      },
    );
    const [webhook, link, secondKey] = await Promise.all([
      server.json<{ webhookId: string }>("POST", "/v1/webhooks", {
        key,
        // A reserved name (RFC 2606): nothing is ever delivered anywhere.
        body: { url: "https://hooks.example/almoner", events: ["donation.created"] },
      }),
      server.json<{ linkID: string }>("POST", `/v1/forms/${form}/links`, {
        key,
        body: { prefill: { amount: 25 } },
      }),
      runCli(["key", "create", "--org", org, "--json"], { DATA_DIR: dataDir }),
    ]);
    const keyId = (secondKey.json as { keyId?: string } | undefined)?.keyId;
    if (gift.status !== 201 || webhook.status !== 201 || link.status !== 201 || !keyId)
      throw new Error(
        `Setup failed: ${JSON.stringify([gift, webhook, link].map((r) => [r.status, r.body]))} ${secondKey.stderr}`,
      );

    // `npm` runs in the repository, where a reader types it; every other command in the scratch folder.
    // `npm run --silent cli -- …` goes straight to the script it names (checked above to be
    // `tsx server/cli.ts`), which saves npm's own start-up on each of the docs' many CLI commands.
    const npm = execFileSync("sh", ["-c", "command -v npm"], { encoding: "utf8" }).trim();
    const shim = [
      "#!/bin/sh",
      `cd ${JSON.stringify(repoRoot)} || exit 1`,
      'if [ "$1 $2 $3 $4" = "run --silent cli --" ]; then',
      "  shift 4",
      `  exec ${JSON.stringify(process.execPath)} --import tsx server/cli.ts "$@"`,
      "fi",
      `exec ${JSON.stringify(npm)} "$@"`,
      "",
    ].join("\n");
    fs.writeFileSync(path.join(binDir, "npm"), shim, { mode: 0o755 });

    env = { NO_COLOR: "1" };
    for (const [name, value] of Object.entries(process.env))
      if (!ALMONER_SETTINGS.test(name) && value !== undefined) env[name] = value;
    Object.assign(env, {
      PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ""}`,
      DATA_DIR: dataDir,
      KEY: key,
      ORG: org,
      FORM: form,
      EVENT: event,
      SUB: gift.body.payment.subscription.id,
      PAYMENT: gift.body.payment.paymentID,
      WEBHOOK: webhook.body.webhookId,
      LINK: link.body.linkID,
      KEY_ID: keyId,
    });
  });

  afterAll(async () => {
    await server?.stop();
    await killAll();
    temp?.remove();
  });

  it("prints the demo output the README shows", () => {
    const shown = blocks.find(
      (b) => b.file === "README.md" && b.code.includes("Created a demo organization"),
    );
    expect(shown).toBeDefined();
    const log = server?.stdout() ?? "";
    for (const line of (shown?.code ?? "").split("\n")) {
      // The literal part of each line: up to the first elided value (…) or placeholder (<formID>).
      const literal = line
        .split(/[…<]/)[0]
        .replace("0.0.0.0:3000", `127.0.0.1:${server?.port}`)
        .replace("localhost:3000", `localhost:${server?.port}`)
        .replace(/\s+$/, "");
      if (literal.trim() === "") continue;
      expect(log, line).toContain(literal);
    }
  });

  for (const block of bashBlocks)
    it(`${block.file}:${block.line} runs and exits 0`, async () => {
      const code = block.code.replaceAll("localhost:3000", `127.0.0.1:${server?.port}`);
      const result = await runBash(code, { cwd: workDir, env, timeoutMs: 50_000 });
      ran++;
      expect(result.code, `${block.file}:${block.line}\n${code}\n--- output ---\n${result.output}`).toBe(0);
    }, 60_000);

  it("ran every bash block", () => {
    expect(ran).toBe(bashBlocks.length);
  });
});

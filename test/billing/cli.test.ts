import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type CliResult,
  type Env,
  killAll,
  lines,
  runCli,
  type TempDir,
  tempDir,
} from "../support/processes.js";
import { ledgerCharges } from "../support/race.js";
import { dialect, setupTestApp, type TestApp } from "../support/testApp.js";
import { databaseUrlOfStore, JAN_31, paymentsOf, recurringForm, subscribe, subscription } from "./support.js";

interface RunJson {
  asOf: string;
  billing: { charged: number; failed: number; cancelled: number; ended: number };
  settlement: { completed: number; failed: number; pending: number };
}

/** A successful `--json` run: exit 0, nothing on stderr, exactly one JSON object on stdout. */
function ok(result: CliResult): RunJson {
  expect(result.stderr, `stderr: ${result.stderr}`).toBe("");
  expect(result.code, `stdout: ${result.stdout}`).toBe(0);
  expect(lines(result.stdout)).toHaveLength(1);
  return result.json as RunJson;
}

describe(`billing run on the command line (${dialect})`, { timeout: 120_000 }, () => {
  let temp: TempDir;
  let t: TestApp;
  let env: Env;
  const clock = JAN_31;
  const cli = (...args: string[]) => runCli(["billing", "run", ...args], env);

  beforeAll(() => {
    temp = tempDir();
  });
  afterAll(async () => {
    await killAll();
    temp?.remove();
  });
  beforeEach(async () => {
    t = await setupTestApp({
      now: () => clock,
      env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" },
    });
    env = { DATA_DIR: temp.dir, DATABASE_URL: await databaseUrlOfStore(t.store) };
  });
  afterEach(async () => {
    await t.close();
  });

  it("--as-of a month later bills a monthly gift once, as of that moment", async () => {
    const sub = await subscribe(t, await recurringForm(t));

    const early = ok(await cli("--as-of", "2026-02-28T09:59:59Z", "--json"));
    expect(early).toEqual({
      asOf: "2026-02-28T09:59:59.000Z",
      billing: { charged: 0, failed: 0, cancelled: 0, ended: 0 },
      settlement: { completed: 0, failed: 0, pending: 0 },
    });

    const due = ok(await cli("--as-of", "2026-02-28T10:00:00Z", "--json"));
    expect(due.billing).toEqual({ charged: 1, failed: 0, cancelled: 0, ended: 0 });
    const payments = await paymentsOf(t.store.db, sub.id);
    expect(payments).toHaveLength(2);
    expect(payments[1]).toMatchObject({
      status: "COMPLETED",
      frequency: "MONTHLY",
      subscription_id: sub.id,
      amount_cents: 2500,
      created_at: "2026-02-28T10:00:00.000Z",
    });
    expect(await subscription(t.store.db, sub.id)).toMatchObject({
      cycle: 1,
      next_billing_at: "2026-03-31T10:00:00.000Z",
    });

    const again = ok(await cli("--as-of", "2026-02-28T10:00:00Z", "--json"));
    expect(again.billing.charged).toBe(0);
    expect(await paymentsOf(t.store.db, sub.id)).toHaveLength(2);

    const text = await cli("--as-of", "2026-03-31T10:00:00Z");
    expect(text.code).toBe(0);
    expect(text.stderr).toBe("");
    expect(text.stdout).toMatch(/Billing as of 2026-03-31T10:00:00\.000Z: 1 charged/);
  });

  it("several processes billing at once charge each subscription exactly once", async () => {
    const formId = await recurringForm(t);
    const subs = [];
    for (let i = 0; i < 8; i++) subs.push(await subscribe(t, formId, { amount: 5 + i }));
    const before = await ledgerCharges(t.store.db);
    const runs = await Promise.all([1, 2, 3].map(() => cli("--as-of", "2026-03-01T00:00:00Z", "--json")));
    const charged = runs.map((r) => ok(r).billing.charged);
    expect(charged.reduce((a, b) => a + b, 0)).toBe(8);
    expect(await ledgerCharges(t.store.db)).toBe(before + 8);
    for (const sub of subs) {
      const payments = await paymentsOf(t.store.db, sub.id);
      expect(payments.map((p) => p.status)).toEqual(["COMPLETED", "COMPLETED"]);
    }
  });

  it("a charge billed --as-of a future moment mails its receipt now, not at that moment", async () => {
    const sub = await subscribe(t, await recurringForm(t));
    const due = ok(await cli("--as-of", "2030-01-01T00:00:00Z", "--json"));
    expect(due.billing.charged).toBe(1);
    const [, charge] = await paymentsOf(t.store.db, sub.id);
    const receipt = await t.store.db
      .selectFrom("email_outbox")
      .select(["status", "next_attempt_at"])
      .where("payment_id", "=", charge.id)
      .executeTakeFirstOrThrow();
    expect(receipt.status).toBe("PENDING");
    expect(Date.parse(receipt.next_attempt_at)).toBeLessThanOrEqual(Date.now());
  });

  it("a bad --as-of is one clear error line and exit code 2", async () => {
    for (const bad of ["next tuesday", "2026-02-30T00:00:00Z", "2026-03-01", "2026-03-01T10:00:00"]) {
      const result = await cli("--as-of", bad);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(lines(result.stderr)).toHaveLength(1);
      expect(result.stderr).toMatch(/--as-of must be an ISO 8601 time/);
      expect(result.stderr).toContain(bad);
    }
    const json = await cli("--as-of", "soon", "--json");
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr).error).toMatch(/--as-of/);
  }, 120_000);

  it("refuses an --as-of before 2000 or more than ten years ahead: a pass in year 9999 dated the next charge past 9999 and the gift was never billed again", async () => {
    for (const far of ["9999-12-31T23:59:59Z", "2040-01-01T00:00:00Z", "1999-12-31T23:59:59Z"]) {
      const result = await cli("--as-of", far);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout).toBe("");
      expect(lines(result.stderr)).toHaveLength(1);
      expect(result.stderr).toMatch(
        /--as-of must be from 2000-01-01 to 10 years from now \(\d{4}-\d{2}-\d{2}\), got/,
      );
      expect(result.stderr).toContain(far);
    }
  }, 120_000);
});

import { sql } from "kysely";
import { afterEach, beforeEach } from "vitest";
import type { AppDeps } from "../../server/api/env.js";
import { BillingWorker } from "../../server/billing/worker.js";
import type { Db, Store } from "../../server/store/database.js";
import { openStore } from "../../server/store/database.js";
import type { SubscriptionsTable } from "../../server/store/schema.js";
import { card, checkout, createForm, donor } from "../support/checkout.js";
import { pgUrl, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/** What the billing tests share: recurring checkouts through the API, and a look at what they left. */

export const JAN_31 = Date.parse("2026-01-31T10:00:00Z");
export const at = (isoTime: string) => Date.parse(isoTime);

/**
 * Each test of the calling file on an app of its own whose clock the test moves (`app.now = at(…)`),
 * starting at `start`; the checkout's rate limits are off. Registers the file's beforeEach and afterEach.
 */
export function clockedApp(start = JAN_31): { t: TestApp; now: number } {
  const app = { now: start } as { t: TestApp; now: number };
  beforeEach(async () => {
    app.now = start;
    app.t = await setupTestApp({
      now: () => app.now,
      env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" },
    });
  });
  afterEach(() => app.t.close());
  return app;
}

/** A form offering monthly (and other) gifts. */
export function recurringForm(t: TestApp, extra: Record<string, unknown> = {}): Promise<string> {
  return createForm(t, {
    ...validForms.standard(),
    frequencies: ["ONE_TIME", "DAILY", "WEEKLY", "MONTHLY", "ANNUALLY"],
    ...extra,
  });
}

/** A recurring gift through the public checkout; returns its subscription row. */
export async function subscribe(
  t: TestApp,
  formId: string,
  body: Record<string, unknown> = {},
): Promise<SubscriptionsTable> {
  const res = await checkout(t, formId, {
    frequency: "MONTHLY",
    amount: 25,
    donor: donor(),
    paymentMethod: card(),
    ...body,
  });
  if (res.status !== 201) throw new Error(`checkout failed: ${res.status} ${res.text}`);
  const payment = res.body.payment as { subscription: { id: string } | null };
  if (!payment.subscription) throw new Error("the checkout made no subscription");
  return subscription(t.store.db, payment.subscription.id);
}

export function subscription(db: Db, id: string): Promise<SubscriptionsTable> {
  return db.selectFrom("subscriptions").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

/** A subscription's payments, oldest first. */
export function paymentsOf(db: Db, subscriptionId: string) {
  return db
    .selectFrom("payments")
    .selectAll()
    .where("subscription_id", "=", subscriptionId)
    .orderBy("created_at")
    .orderBy("charge_key")
    .execute();
}

/** Outbox events about one record, oldest first. */
export async function eventsOf(db: Db, subjectId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("outbox_events")
    .select("type")
    .where("subject_id", "=", subjectId)
    .orderBy("id")
    .execute();
  return rows.map((r) => r.type);
}

export function worker(deps: AppDeps, extra: Partial<ConstructorParameters<typeof BillingWorker>[0]> = {}) {
  return new BillingWorker({
    deps,
    onError: (err) => {
      throw err;
    },
    ...extra,
  });
}

/** The DATABASE_URL of a test store (PostgreSQL: with `?schema=`), for a second store or a child process. */
export async function databaseUrlOfStore(store: Store): Promise<string> {
  if (store.dialect === "postgres") {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(store.db);
    const url = new URL(pgUrl);
    url.searchParams.set("schema", rows[0].schema);
    return url.toString();
  }
  const { rows } = await sql<{ name: string; file: string }>`pragma database_list`.execute(store.db);
  const main = rows.find((r) => r.name === "main");
  if (!main?.file) throw new Error("the test store has no database file");
  return main.file;
}

/** Another connection (pool) on the same database: stands in for another process. */
export async function secondStore(store: Store): Promise<Store> {
  return openStore(await databaseUrlOfStore(store));
}

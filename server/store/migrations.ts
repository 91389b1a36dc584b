import type { Kysely } from "kysely";
import { StartupError } from "../errors.js";
import { holdSchemaLock } from "./dialect.js";
import { initialSchema } from "./migrations/001-initial-schema.js";
import { checkoutLinks } from "./migrations/002-checkout-links.js";
import { checkoutEngine } from "./migrations/003-checkout-engine.js";
import { paymentMethodUpdateLinks } from "./migrations/004-payment-method-update-links.js";
import { webhooks } from "./migrations/005-webhooks.js";
import { paymentsFingerprintStatusIndex } from "./migrations/006-payments-fingerprint-status-index.js";
import { apiMetricsKeyedByOrganizationTime } from "./migrations/007-api-metrics-by-organization-time.js";
import { postgresChangeNotifications } from "./migrations/008-postgres-change-notifications.js";
import { sqliteApiMetricsInKeyOrder } from "./migrations/009-sqlite-api-metrics-in-key-order.js";
import { sqliteChangeCounter } from "./migrations/010-sqlite-change-counter.js";
import { paymentProcessors } from "./migrations/011-payment-processors.js";
import { phonesE164 } from "./migrations/012-phones-e164.js";
import { processLiveness } from "./migrations/013-process-liveness.js";
import { donorPortal } from "./migrations/014-donor-portal.js";
import { organizationCurrencyLanguage } from "./migrations/015-organization-currency-language.js";
import { staffAccounts } from "./migrations/016-staff-accounts.js";
import { staffSecurity } from "./migrations/017-staff-security.js";
import { auditLogActors } from "./migrations/018-audit-log-actors.js";
import { organizationTimeZone } from "./migrations/019-organization-time-zone.js";
import { paymentsBySubscription } from "./migrations/020-payments-by-subscription.js";
import { tickets } from "./migrations/021-tickets.js";
import { developers } from "./migrations/022-developers.js";
import { organizationBrandingReceipts } from "./migrations/023-organization-branding-receipts.js";
import { paymentsPartialIndexes } from "./migrations/024-payments-partial-indexes.js";
import { phoneDigitKeys } from "./migrations/025-phone-digit-keys.js";
import { apiMetricsByKey } from "./migrations/026-api-metrics-by-key.js";
import { phoneKeysByNumber } from "./migrations/027-phone-keys-by-number.js";
import { donorEmailKeys } from "./migrations/028-donor-email-keys.js";
import { invitedEmail } from "./migrations/029-invited-email.js";
import type { Migration } from "./migrations/shared.js";
import type { Database } from "./schema.js";

/**
 * The schema's history, portable across SQLite and PostgreSQL, oldest first: one file per migration in
 * migrations/, named by its version. Pending migrations run together in one transaction, behind a row lock
 * that serialises several processes starting at once.
 */
export const MIGRATIONS: Migration[] = [
  initialSchema,
  checkoutLinks,
  checkoutEngine,
  paymentMethodUpdateLinks,
  webhooks,
  paymentsFingerprintStatusIndex,
  apiMetricsKeyedByOrganizationTime,
  postgresChangeNotifications,
  sqliteApiMetricsInKeyOrder,
  sqliteChangeCounter,
  paymentProcessors,
  phonesE164,
  processLiveness,
  donorPortal,
  organizationCurrencyLanguage,
  staffAccounts,
  staffSecurity,
  auditLogActors,
  organizationTimeZone,
  paymentsBySubscription,
  tickets,
  developers,
  organizationBrandingReceipts,
  paymentsPartialIndexes,
  phoneDigitKeys,
  apiMetricsByKey,
  phoneKeysByNumber,
  donorEmailKeys,
  invitedEmail,
];

// The highest version, wherever it is listed (migrations written side by side may land out of order).
export const LATEST_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

/** Brings the database to the latest schema; refuses one that is newer than this code knows. */
export async function migrate(db: Kysely<Database>): Promise<{ applied: number[] }> {
  // PostgreSQL's CREATE TABLE IF NOT EXISTS is not safe against itself: processes starting at once on a
  // fresh database would collide in its catalog. They take turns on a lock of the schema's own first.
  await db.transaction().execute(async (trx: Kysely<Database>) => {
    await holdSchemaLock(trx, "almoner_migrate");
    await createLockTables(trx);
  });
  return applyPending(db);
}

/** The lock row's table and the applied migrations' table, made once. */
async function createLockTables(db: Kysely<Database>): Promise<void> {
  await db.schema
    .createTable("almoner_schema_lock")
    .ifNotExists()
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("holder", "text")
    .execute();
  await db.schema
    .createTable("almoner_migrations")
    .ifNotExists()
    .addColumn("version", "integer", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("applied_at", "text", (c) => c.notNull())
    .execute();
  await db
    .insertInto("almoner_schema_lock")
    .values({ id: 1, holder: null })
    .onConflict((oc) => oc.column("id").doNothing())
    .execute();
}

/** Applies every migration not yet applied, in one transaction holding the lock row. */
function applyPending(db: Kysely<Database>): Promise<{ applied: number[] }> {
  return db.transaction().execute(async (trx) => {
    // Taking the lock row's write lock first makes concurrent migrators wait for each other.
    await trx
      .updateTable("almoner_schema_lock")
      .set({ holder: String(process.pid) })
      .where("id", "=", 1)
      .execute();
    const rows = await trx.selectFrom("almoner_migrations").select("version").execute();
    const done = new Set(rows.map((r) => Number(r.version)));
    const newest = Math.max(0, ...done);
    if (newest > LATEST_VERSION) {
      throw new StartupError(
        `The database is at schema version ${newest}, newer than this Almoner knows (${LATEST_VERSION}): upgrade Almoner, or point DATABASE_URL at another database`,
      );
    }
    const applied: number[] = [];
    for (const migration of MIGRATIONS) {
      if (done.has(migration.version)) continue;
      await migration.up(trx);
      // applied_at is the wall clock, not an injected one: it records when the migration really ran.
      await trx
        .insertInto("almoner_migrations")
        .values({ version: migration.version, name: migration.name, applied_at: new Date().toISOString() })
        .execute();
      applied.push(migration.version);
    }
    return { applied };
  });
}

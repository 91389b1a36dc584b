import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prefixedId } from "../../server/ids.js";
import type { Store } from "../../server/store/database.js";
import { insertForm } from "../../server/store/forms.js";
import { donorEmailKeys } from "../../server/store/migrations/028-donor-email-keys.js";
import { createOrganization } from "../../server/store/organizations.js";
import type { PaymentsTable } from "../../server/store/schema.js";
import { formSchema } from "../../shared/schemas/form.js";
import { dialect, freshDatabase, type TestDatabase, validForms } from "../support/testApp.js";

/**
 * Migration 28 writes each stored gift's address key as the application makes it (trimmed, lower-cased
 * and composed as JavaScript does), not as SQL's lower() would: the keys the donor portal finds gifts by.
 */
describe(`donors' address keys written for the gifts already stored (${dialect})`, () => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await freshDatabase();
    store = await database.open();
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it("keys ASCII, Turkish, Greek and decomposed addresses as emailKey does", async () => {
    const now = Date.parse("2026-11-29T12:00:00Z");
    const org = await createOrganization(store.db, { name: "Keys" }, now);
    const config = formSchema({ allowHttpImages: true }).parse(validForms.standard());
    const form = await insertForm(store.db, org.id, config, new Date(now).toISOString());
    const addresses = {
      "Ada@Example.ORG": "ada@example.org",
      "İpek@example.org": "i\u0307pek@example.org",
      "ΝΙΚΟΣ@example.gr": "νικος@example.gr",
      "Jose\u0301@example.es": "josé@example.es",
    };
    const ids: Record<string, string> = {};
    for (const email of Object.keys(addresses)) {
      const row = payment(org.id, form.id, email, now);
      ids[email] = row.id;
      await store.db.insertInto("payments").values(row).execute();
    }
    // The schema as version 27 left it: no key column, the donors' index on lower(email).
    await store.db.transaction().execute(async (trx) => {
      for (const table of ["payments", "subscriptions"]) {
        await sql`drop index ${sql.raw(`${table}_donor_email_key`)}`.execute(trx);
        await sql`alter table ${sql.table(table)} drop column email_key`.execute(trx);
        await sql`create index ${sql.raw(`${table}_donor_email`)} on ${sql.table(table)} (organization_id, lower(email))`.execute(
          trx,
        );
      }
      await donorEmailKeys.up(trx);
    });
    const rows = await store.db.selectFrom("payments").select(["id", "email_key"]).execute();
    const keyOf = new Map(rows.map((r) => [r.id, r.email_key]));
    for (const [email, key] of Object.entries(addresses)) expect(keyOf.get(ids[email]), email).toBe(key);
  });
});

function payment(organizationId: string, formId: string, email: string, nowMs: number): PaymentsTable {
  const at = new Date(nowMs).toISOString();
  return {
    id: prefixedId("pay", nowMs),
    organization_id: organizationId,
    form_id: formId,
    contact_id: null,
    subscription_id: null,
    status: "COMPLETED",
    amount_cents: 1000,
    fee_cents: 0,
    refunded_cents: 0,
    currency: "USD",
    fund: "General",
    form_title: "Keys",
    frequency: "ONE_TIME",
    cover_fees: 0,
    anonymous: 0,
    email,
    email_key: "",
    first_name: "Key",
    last_name: "Donor",
    payment_method_type: "card",
    card_brand: "visa",
    last4: "4242",
    fingerprint: null,
    processor_payment_id: null,
    charge_key: `keys:${prefixedId("pay", nowMs)}`,
    failure_code: null,
    failure_message: null,
    details: "{}",
    processor: "sandbox",
    dispute: null,
    created_at: at,
    updated_at: at,
  };
}

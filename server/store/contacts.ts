import { centsToDollars } from "../../shared/money.js";
import { uuid } from "../ids.js";
import type { Db } from "./database.js";
import type { ConsentValue, ContactsTable } from "./schema.js";

/**
 * Donor contacts. Each live contact's emails (lower-cased) and phones (digits) are also rows of
 * `contact_keys`, whose primary key makes an address belong to one contact only: "match by email, else
 * create" stays right when two checkouts of the same new donor run at the same moment.
 */

export interface ContactEmail {
  value: string;
  isPrimary: boolean;
  isVerified: boolean;
}
export interface ContactPhone {
  value: string;
  isPrimary: boolean;
}
export interface ContactAddress {
  line1: string;
  line2: string;
  city: string;
  region: string;
  postal: string;
  country: string;
  isPrimary: boolean;
}

export const emailKey = (email: string): string => email.trim().toLowerCase();
export const phoneKey = (phone: string): string => phone.replace(/\D/g, "");

export interface NewContact {
  firstName: string;
  lastName: string;
  organizationName?: string | null;
  emails: ContactEmail[];
  phones: ContactPhone[];
  addresses: ContactAddress[];
  emailConsent: ConsentValue;
  smsConsent: ConsentValue;
  communicationConsent: ConsentValue;
}

export async function findContactIdByEmail(
  db: Db,
  organizationId: string,
  email: string,
): Promise<string | null> {
  const row = await db
    .selectFrom("contact_keys")
    .select("contact_id")
    .where("organization_id", "=", organizationId)
    .where("kind", "=", "email")
    .where("value_key", "=", emailKey(email))
    .executeTakeFirst();
  return row?.contact_id ?? null;
}

/**
 * Inserts a contact and claims its email and phone keys. When another transaction claimed the primary
 * email first, the new row is removed again and that contact's id returned (`created: false`). A phone
 * already on another contact is kept on the record but not claimed.
 */
export async function insertContact(
  trx: Db,
  organizationId: string,
  input: NewContact,
  nowIso: string,
): Promise<{ id: string; created: boolean }> {
  const id = uuid();
  const row: ContactsTable = {
    id,
    organization_id: organizationId,
    first_name: input.firstName,
    last_name: input.lastName,
    organization_name: input.organizationName ?? null,
    emails: JSON.stringify(input.emails),
    phones: JSON.stringify(input.phones),
    addresses: JSON.stringify(input.addresses),
    email_consent: input.emailConsent,
    sms_consent: input.smsConsent,
    communication_consent: input.communicationConsent,
    status: "ACTIVE",
    merged_into: null,
    created_at: nowIso,
    updated_at: nowIso,
  };
  await trx.insertInto("contacts").values(row).execute();
  const keys = [
    ...input.emails.map((e) => ({ kind: "email", value_key: emailKey(e.value) })),
    ...input.phones.map((p) => ({ kind: "phone", value_key: phoneKey(p.value) })).filter((k) => k.value_key),
  ];
  for (const [i, key] of keys.entries()) {
    const claimed = await trx
      .insertInto("contact_keys")
      .values({ organization_id: organizationId, contact_id: id, ...key })
      .onConflict((oc) => oc.columns(["organization_id", "kind", "value_key"]).doNothing())
      .returning("contact_id")
      .executeTakeFirst();
    if (!claimed && i === 0 && key.kind === "email") {
      await trx.deleteFrom("contacts").where("id", "=", id).execute();
      const existing = await findContactIdByEmail(trx, organizationId, key.value_key);
      if (existing) return { id: existing, created: false };
      throw new Error("contact email key vanished while matching");
    }
  }
  return { id, created: true };
}

export async function findContact(db: Db, id: string): Promise<ContactsTable | undefined> {
  return db.selectFrom("contacts").selectAll().where("id", "=", id).executeTakeFirst();
}

export interface ContactTotals {
  count: number;
  valueCents: number;
  first: string | null;
  last: string | null;
  activeSubscription: boolean;
}

/** Lifetime figures from completed (and refunded) payments, net of refunds. */
export async function contactTotals(db: Db, ids: string[]): Promise<Map<string, ContactTotals>> {
  const out = new Map<string, ContactTotals>();
  if (ids.length === 0) return out;
  for (const id of ids)
    out.set(id, { count: 0, valueCents: 0, first: null, last: null, activeSubscription: false });
  const rows = await db
    .selectFrom("payments")
    .select((eb) => [
      "contact_id",
      eb.fn.countAll<number>().as("n"),
      eb.fn.sum<number>(eb("amount_cents", "-", eb.ref("refunded_cents"))).as("net"),
      eb.fn.min("created_at").as("first"),
      eb.fn.max("created_at").as("last"),
    ])
    .where("contact_id", "in", ids)
    .where("status", "in", ["COMPLETED", "REFUNDED"])
    .groupBy("contact_id")
    .execute();
  for (const r of rows) {
    const t = out.get(r.contact_id as string);
    if (!t) continue;
    t.count = Number(r.n);
    t.valueCents = Number(r.net ?? 0);
    t.first = (r.first as string | null) ?? null;
    t.last = (r.last as string | null) ?? null;
  }
  const subs = await db
    .selectFrom("subscriptions")
    .select("contact_id")
    .where("contact_id", "in", ids)
    .where("status", "=", "ACTIVE")
    .execute();
  for (const s of subs) {
    const t = out.get(s.contact_id);
    if (t) t.activeSubscription = true;
  }
  return out;
}

/** The contact as the API returns it (seed 2.4, contract 7). */
export function presentContact(row: ContactsTable, totals: ContactTotals) {
  return {
    id: row.id,
    firstName: row.first_name,
    lastName: row.last_name,
    fullName: [row.first_name, row.last_name].filter((s) => s.trim() !== "").join(" "),
    organizationName: row.organization_name,
    emails: JSON.parse(row.emails) as ContactEmail[],
    phones: JSON.parse(row.phones) as ContactPhone[],
    addresses: JSON.parse(row.addresses) as ContactAddress[],
    totalTransactionCount: totals.count,
    totalTransactionValue: centsToDollars(totals.valueCents),
    emailConsent: row.email_consent as ConsentValue,
    smsConsent: row.sms_consent as ConsentValue,
    communicationConsent: row.communication_consent as ConsentValue,
    hasActiveSubscription: totals.activeSubscription,
    firstDonationAt: totals.first,
    lastDonationAt: totals.last,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export type ContactView = ReturnType<typeof presentContact>;

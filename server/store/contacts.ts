import { emailKey } from "../../shared/email.js";
import { DEFAULT_COUNTRY, phoneCountry, phoneMatchKeys, toE164 } from "../../shared/phone.js";
import { uuid } from "../ids.js";
import type { Db } from "./database.js";
import { fixedQuery } from "./fixedQuery.js";
import { isKeptSql, keptCentsSql } from "./keptSql.js";
import { afterPosition } from "./keyset.js";
import { type ContactFilters, filterConditions } from "./listFilters.js";
import type { ConsentValue, ContactsTable } from "./schema.js";

/**
 * Donor contacts. Each live contact's emails (lower-cased) and phones (E.164 and digits) are also rows of
 * `contact_keys`, whose primary key makes an address belong to one contact only: "match by email, else
 * create" stays right when two checkouts of the same new donor run at the same moment.
 */

export interface ContactEmail {
  value: string;
  isPrimary: boolean;
  isVerified: boolean;
}
export interface ContactPhone {
  /** As typed. */
  value: string;
  isPrimary: boolean;
  /**
   * Its E.164 form (the contact's primary address's country, else the organization's, supplying a missing
   * country code); null: not a valid number.
   */
  e164?: string | null;
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

export { emailKey } from "../../shared/email.js";

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

/**
 * The live contact holding an email's key (keys of deleted or merged contacts are free to be taken): a
 * query of its own, or a subquery of another statement (the payment's update that links its donor).
 */
export function contactIdByEmailKey(db: Db, organizationId: string, key: string) {
  return db
    .selectFrom("contact_keys")
    .innerJoin("contacts", "contacts.id", "contact_keys.contact_id")
    .select("contact_keys.contact_id")
    .where("contact_keys.organization_id", "=", organizationId)
    .where("contact_keys.kind", "=", "email")
    .where("contact_keys.value_key", "=", key)
    .where("contacts.status", "=", "ACTIVE")
    .limit(1);
}

const contactIdByEmail = fixedQuery(contactIdByEmailKey);

export async function findContactIdByEmail(
  db: Db,
  organizationId: string,
  email: string,
): Promise<string | null> {
  const { rows } = await contactIdByEmail(db, organizationId, emailKey(email));
  return rows[0]?.contact_id ?? null;
}

export interface ContactKey {
  kind: "email" | "phone";
  value_key: string;
}

/**
 * The keys a contact's emails and phones claim: phones by their E.164 form when they are valid numbers and
 * by their digits (text without digits as typed; an empty one claims nothing). Two items with one key
 * claim it once.
 */
export function contactKeys(emails: { value: string }[], phones: ContactPhone[]): ContactKey[] {
  const keys = [
    ...emails.map((e): ContactKey => ({ kind: "email", value_key: emailKey(e.value) })),
    ...phones.flatMap((p) => phoneMatchKeys(p).map((key): ContactKey => ({ kind: "phone", value_key: key }))),
  ];
  const seen = new Set<string>();
  return keys.filter((k) => {
    const id = `${k.kind}:${k.value_key}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** The country of a contact's primary address (the first when none is marked), as typed; null without one. */
export function addressCountry(addresses: { country?: string | null; isPrimary?: boolean }[]): string | null {
  return (addresses.find((a) => a.isPrimary) ?? addresses[0])?.country ?? null;
}

/**
 * Phones with their E.164 form, read in the contact's own country (`contactCountry`, its address's, when it
 * is a valid ISO code), else the organization's (one read, only when there are phones and no such country).
 * A number written with a leading + is international whatever the country; one that does not parse keeps
 * `e164: null`.
 */
export async function withE164(
  db: Db,
  organizationId: string,
  phones: ContactPhone[],
  contactCountry?: string | null,
): Promise<ContactPhone[]> {
  if (!phones.length) return phones;
  let country = phoneCountry(contactCountry, "");
  if (!country) {
    const org = await db
      .selectFrom("organizations")
      .select("country")
      .where("id", "=", organizationId)
      .executeTakeFirst();
    country = org?.country ?? DEFAULT_COUNTRY;
  }
  return phones.map((p) => ({ value: p.value, isPrimary: p.isPrimary, e164: toE164(p.value, country) }));
}

/**
 * Claims each key for `contactId`; returns the keys another live contact holds (with its id). A key still
 * held by a deleted or merged contact is taken over. The primary key of `contact_keys` decides races: on
 * PostgreSQL a second claimer waits for the first transaction and then finds the key taken.
 */
export async function claimContactKeys(
  trx: Db,
  organizationId: string,
  contactId: string,
  keys: ContactKey[],
): Promise<(ContactKey & { contactId: string })[]> {
  const taken: (ContactKey & { contactId: string })[] = [];
  for (const key of keys) {
    const claimed = await trx
      .insertInto("contact_keys")
      .values({ organization_id: organizationId, contact_id: contactId, ...key })
      .onConflict((oc) => oc.columns(["organization_id", "kind", "value_key"]).doNothing())
      .returning("contact_id")
      .executeTakeFirst();
    if (claimed) continue;
    const holder = await trx
      .selectFrom("contact_keys")
      .innerJoin("contacts", "contacts.id", "contact_keys.contact_id")
      .select(["contact_keys.contact_id", "contacts.status"])
      .where("contact_keys.organization_id", "=", organizationId)
      .where("contact_keys.kind", "=", key.kind)
      .where("contact_keys.value_key", "=", key.value_key)
      .executeTakeFirst();
    if (holder?.contact_id === contactId) continue;
    if (holder && holder.status !== "ACTIVE") {
      const moved = await trx
        .updateTable("contact_keys")
        .set({ contact_id: contactId })
        .where("organization_id", "=", organizationId)
        .where("kind", "=", key.kind)
        .where("value_key", "=", key.value_key)
        .where("contact_id", "=", holder.contact_id)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) > 0) continue;
    }
    taken.push({ ...key, contactId: holder?.contact_id ?? "" });
  }
  return taken;
}

function contactRow(id: string, organizationId: string, input: NewContact, nowIso: string): ContactsTable {
  return {
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
}

/**
 * The API's create: inserts the contact and claims every email and phone. When any is already on a live
 * contact the keys taken are returned and the caller rolls the transaction back (409).
 */
export async function createContact(
  trx: Db,
  organizationId: string,
  input: NewContact,
  nowIso: string,
): Promise<{ row: ContactsTable; taken: (ContactKey & { contactId: string })[] }> {
  const phones = await withE164(trx, organizationId, input.phones, addressCountry(input.addresses));
  const row = contactRow(uuid(), organizationId, { ...input, phones }, nowIso);
  await trx.insertInto("contacts").values(row).execute();
  const taken = await claimContactKeys(trx, organizationId, row.id, contactKeys(input.emails, phones));
  return { row, taken };
}

export type ContactChanges = Partial<
  Pick<NewContact, "firstName" | "lastName" | "organizationName" | "emails" | "phones" | "addresses">
>;

/**
 * The API's partial update of a live contact. The first statement writes the row, which locks it (both
 * databases), so concurrent updates of one contact apply one after the other and keys stay in step with
 * the lists. Returns null for a contact that is not live, or the keys another contact holds (the caller
 * rolls back).
 */
export async function updateContact(
  trx: Db,
  organizationId: string,
  id: string,
  changes: ContactChanges,
  nowIso: string,
): Promise<{ row: ContactsTable; taken: (ContactKey & { contactId: string })[] } | null> {
  const locked = await trx
    .updateTable("contacts")
    .set({ updated_at: nowIso })
    .where("id", "=", id)
    .where("organization_id", "=", organizationId)
    .where("status", "=", "ACTIVE")
    .returningAll()
    .executeTakeFirst();
  if (!locked) return null;
  const set: Partial<ContactsTable> = {};
  if (changes.firstName !== undefined) set.first_name = changes.firstName;
  if (changes.lastName !== undefined) set.last_name = changes.lastName;
  if (changes.organizationName !== undefined) set.organization_name = changes.organizationName ?? null;
  if (changes.emails !== undefined) set.emails = JSON.stringify(changes.emails);
  // Phones are read in the country of the primary address: a new address reads the kept phones again.
  if (changes.phones !== undefined || changes.addresses !== undefined) {
    const addresses = changes.addresses ?? (JSON.parse(locked.addresses) as ContactAddress[]);
    const phones = changes.phones ?? (JSON.parse(locked.phones) as ContactPhone[]);
    set.phones = JSON.stringify(await withE164(trx, organizationId, phones, addressCountry(addresses)));
  }
  if (changes.addresses !== undefined) set.addresses = JSON.stringify(changes.addresses);
  const row = { ...locked, ...set };
  if (Object.keys(set).length) await trx.updateTable("contacts").set(set).where("id", "=", id).execute();
  let taken: (ContactKey & { contactId: string })[] = [];
  if (set.emails !== undefined || set.phones !== undefined) {
    const wanted = contactKeys(JSON.parse(row.emails), JSON.parse(row.phones));
    // What the contact listed before: a phone it listed without holding its key (another contact had it
    // when a checkout added it here) stays as it was; only what this change adds is claimed.
    const listed = new Set(
      contactKeys(JSON.parse(locked.emails), JSON.parse(locked.phones)).map(
        (k) => `${k.kind}:${k.value_key}`,
      ),
    );
    const wantedSet = new Set(wanted.map((k) => `${k.kind}:${k.value_key}`));
    const held = await trx
      .selectFrom("contact_keys")
      .select(["kind", "value_key"])
      .where("contact_id", "=", id)
      .execute();
    for (const k of held)
      if (!wantedSet.has(`${k.kind}:${k.value_key}`))
        await trx
          .deleteFrom("contact_keys")
          .where("organization_id", "=", organizationId)
          .where("kind", "=", k.kind)
          .where("value_key", "=", k.value_key)
          .where("contact_id", "=", id)
          .execute();
    const heldSet = new Set(held.map((k) => `${k.kind}:${k.value_key}`));
    taken = await claimContactKeys(
      trx,
      organizationId,
      id,
      wanted.filter(
        (k) => !heldSet.has(`${k.kind}:${k.value_key}`) && !listed.has(`${k.kind}:${k.value_key}`),
      ),
    );
  }
  return { row, taken };
}

/**
 * Live contacts that match `filters`, newest first; with `email`, the one whose emails include it
 * (case-insensitive); with `search`, those whose name, organization name or an e-mail contains it.
 */
export async function listContacts(
  db: Db,
  organizationId: string,
  filters: ContactFilters,
  limit: number,
  after?: { sort: string; id: string },
): Promise<ContactsTable[]> {
  return contactsQuery(db, organizationId, filters, after).limit(limit).execute();
}

/** The same as a query, after a keyset position if one is given: a page adds its limit; an export streams it. */
export function contactsQuery(
  db: Db,
  organizationId: string,
  filters: ContactFilters,
  after?: { sort: string; id: string },
) {
  let query = db
    .selectFrom("contacts")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("status", "=", "ACTIVE");
  const { email, search } = filters;
  if (search !== undefined) {
    const conditions = filterConditions(db);
    query = query.where((eb) => conditions.contactSearch(eb, organizationId, search));
  }
  if (email !== undefined)
    query = query.where("id", "in", (eb) =>
      eb
        .selectFrom("contact_keys")
        .select("contact_id")
        .where("organization_id", "=", organizationId)
        .where("kind", "=", "email")
        .where("value_key", "=", emailKey(email)),
    );
  if (after) query = query.where((eb) => afterPosition(eb, "created_at", after));
  return query.orderBy("created_at", "desc").orderBy("id", "desc");
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
  const phones = await withE164(trx, organizationId, input.phones, addressCountry(input.addresses));
  await trx
    .insertInto("contacts")
    .values(contactRow(id, organizationId, { ...input, phones }, nowIso))
    .execute();
  const keys = contactKeys(input.emails, phones);
  const taken = await claimContactKeys(trx, organizationId, id, keys);
  const first = keys[0];
  const lost =
    first?.kind === "email"
      ? taken.find((k) => k.kind === "email" && k.value_key === first.value_key)
      : undefined;
  if (lost) {
    await trx.deleteFrom("contact_keys").where("contact_id", "=", id).execute();
    await trx.deleteFrom("contacts").where("id", "=", id).execute();
    return { id: lost.contactId, created: false };
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

/**
 * Lifetime figures from completed payments, net of refunds; dates of the first and last of them. Only
 * payments in the organization's current currency count (the count and the dates too, so that they describe
 * the same gifts as the value): gifts taken before a change of currency keep theirs, and with no exchange
 * rates a sum across currencies would be wrong. The same rule as the hosted page's fundraising bar.
 */
export async function contactTotals(db: Db, ids: string[]): Promise<Map<string, ContactTotals>> {
  const out = new Map<string, ContactTotals>();
  if (ids.length === 0) return out;
  for (const id of ids)
    out.set(id, { count: 0, valueCents: 0, first: null, last: null, activeSubscription: false });
  const rows = await db
    .selectFrom("payments as p")
    .innerJoin("organizations as o", "o.id", "p.organization_id")
    .select((eb) => [
      "p.contact_id",
      eb.fn.countAll<number>().as("n"),
      eb.fn.sum<number>(keptCentsSql(db, "p.")).as("net"),
      eb.fn.min("p.created_at").as("first"),
      eb.fn.max("p.created_at").as("last"),
    ])
    .where("p.contact_id", "in", ids)
    .whereRef("p.currency", "=", "o.currency")
    // Completed payments, and refunded or disputed ones only for what was kept: one refunded or taken back
    // in full is no gift.
    .where(isKeptSql(db, "p."))
    .groupBy("p.contact_id")
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

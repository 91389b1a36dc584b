import type { FormConfig } from "../../shared/schemas/form.js";
import { uuid } from "../ids.js";
import type { Db, Store } from "./database.js";
import { isPostgres } from "./dialect.js";
import { afterPosition } from "./keyset.js";
import type { FormsTable } from "./schema.js";

export interface FormRecord {
  id: string;
  organizationId: string;
  config: FormConfig;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

function fromRow(row: FormsTable): FormRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    config: JSON.parse(row.config),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at,
  };
}

/** Titles are unique among a merchant's live forms, compared without case and outer spaces. */
export const titleKey = (title: string): string => title.trim().toLowerCase();

/** Inserts a form; a duplicate live title surfaces as the dialect's unique violation. */
export async function insertForm(
  db: Db,
  organizationId: string,
  config: FormConfig,
  nowIso: string,
): Promise<FormRecord> {
  const row: FormsTable = {
    id: uuid(),
    organization_id: organizationId,
    title: config.title,
    title_key: titleKey(config.title),
    form_type: config.formType,
    active: config.active ? 1 : 0,
    config: JSON.stringify(config),
    created_at: nowIso,
    updated_at: nowIso,
    deleted_at: null,
  };
  await db.insertInto("forms").values(row).execute();
  return fromRow(row);
}

export async function findForm(db: Db, id: string): Promise<FormRecord | undefined> {
  const row = await db.selectFrom("forms").selectAll().where("id", "=", id).executeTakeFirst();
  return row && fromRow(row);
}

/** The form's record if the read cache holds it (see findFormCached); never reads the database. */
export function peekForm(store: Store, id: string): FormRecord | undefined {
  return store.caches.of<FormRecord>("forms").peek(id);
}

/**
 * findForm through the store's read cache (readCache.ts), for reads that only show a form: the record
 * is shared and never to be modified. Updates read with findForm.
 */
export function findFormCached(store: Store, id: string): Promise<FormRecord | undefined> {
  return store.caches.of<FormRecord>("forms").get(id, () => findForm(store.db, id));
}

/** One page of a merchant's live forms, newest first, after the keyset position `after`. */
export async function listLiveForms(
  db: Db,
  organizationId: string,
  limit: number,
  after?: { sort: string; id: string },
): Promise<FormRecord[]> {
  let query = db
    .selectFrom("forms")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("deleted_at", "is", null);
  if (after) query = query.where((eb) => afterPosition(eb, "created_at", after));
  const rows = await query.orderBy("created_at", "desc").orderBy("id", "desc").limit(limit).execute();
  return rows.map(fromRow);
}

/**
 * A live form read for an update, its row locked until the transaction ends (PostgreSQL: `for update`;
 * SQLite's writes run one at a time): what checkouts take stock against (inventory.ts). Undefined when
 * the form was deleted.
 */
/** Which of `ids` (lower case) are forms of another organization than `organizationId`, deleted ones included. */
export async function formsOfOthers(db: Db, organizationId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom("forms")
    .select("id")
    .where("id", "in", ids)
    .where("organization_id", "!=", organizationId)
    .execute();
  return rows.map((r) => r.id);
}

export async function lockLiveForm(trx: Db, id: string): Promise<FormRecord | undefined> {
  let query = trx.selectFrom("forms").selectAll().where("id", "=", id).where("deleted_at", "is", null);
  if (isPostgres(trx)) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row && fromRow(row);
}

/** Replaces a live form's configuration; false when it was deleted meanwhile. */
export async function updateFormConfig(
  db: Db,
  id: string,
  config: FormConfig,
  nowIso: string,
): Promise<boolean> {
  const result = await db
    .updateTable("forms")
    .set({
      title: config.title,
      title_key: titleKey(config.title),
      form_type: config.formType,
      active: config.active ? 1 : 0,
      config: JSON.stringify(config),
      updated_at: nowIso,
    })
    .where("id", "=", id)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Soft-deletes a live form; false when it was already deleted. */
export async function softDeleteForm(db: Db, id: string, nowIso: string): Promise<boolean> {
  const result = await db
    .updateTable("forms")
    .set({ deleted_at: nowIso, updated_at: nowIso })
    .where("id", "=", id)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

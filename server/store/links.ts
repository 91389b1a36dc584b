import type { Prefill } from "../../shared/prefill.js";
import type { Db } from "./database.js";
import { afterPosition } from "./keyset.js";
import type { CheckoutLinksTable } from "./schema.js";

export const DESTINATION_TYPES = [
  "HOSTED_PAGE_DONATE",
  "HOSTED_PAGE_ATTEND",
  "OVERLAY_DONATE",
  "OVERLAY_ATTEND",
] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

export interface LinkRecord {
  id: string;
  organizationId: string;
  formId: string;
  name: string;
  destinationType: DestinationType;
  overlayPath: string;
  prefill: Prefill;
  active: boolean;
  createdAt: string;
  updatedAt: string;
}

function fromRow(row: CheckoutLinksTable): LinkRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    formId: row.form_id,
    name: row.name,
    destinationType: row.destination_type as DestinationType,
    overlayPath: row.overlay_path,
    prefill: JSON.parse(row.prefill),
    active: row.active === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function insertLink(db: Db, link: LinkRecord): Promise<void> {
  await db
    .insertInto("checkout_links")
    .values({
      id: link.id,
      organization_id: link.organizationId,
      form_id: link.formId,
      name: link.name,
      destination_type: link.destinationType,
      overlay_path: link.overlayPath,
      prefill: JSON.stringify(link.prefill),
      active: link.active ? 1 : 0,
      created_at: link.createdAt,
      updated_at: link.updatedAt,
    })
    .execute();
}

export async function findLink(db: Db, id: string): Promise<LinkRecord | undefined> {
  const row = await db.selectFrom("checkout_links").selectAll().where("id", "=", id).executeTakeFirst();
  return row && fromRow(row);
}

export async function listLinks(
  db: Db,
  formId: string,
  limit: number,
  opts: { active?: boolean; after?: { sort: string; id: string } },
): Promise<LinkRecord[]> {
  let query = db.selectFrom("checkout_links").selectAll().where("form_id", "=", formId);
  if (opts.active !== undefined) query = query.where("active", "=", opts.active ? 1 : 0);
  const after = opts.after;
  if (after) query = query.where((eb) => afterPosition(eb, "created_at", after));
  const rows = await query.orderBy("created_at", "desc").orderBy("id", "desc").limit(limit).execute();
  return rows.map(fromRow);
}

/**
 * A page of the active links of an organization's live forms (a deleted form's links open nothing), newest
 * first, after the keyset position `after`: one query for every form, not one per form.
 */
export async function listActiveLinksOfLiveForms(
  db: Db,
  organizationId: string,
  limit: number,
  after?: { sort: string; id: string },
): Promise<LinkRecord[]> {
  let query = db
    .selectFrom("checkout_links")
    .innerJoin("forms", "forms.id", "checkout_links.form_id")
    .selectAll("checkout_links")
    .where("checkout_links.organization_id", "=", organizationId)
    .where("checkout_links.active", "=", 1)
    .where("forms.deleted_at", "is", null);
  if (after)
    query = query.where((eb) => afterPosition(eb, "checkout_links.created_at", after, "checkout_links.id"));
  const rows = await query
    .orderBy("checkout_links.created_at", "desc")
    .orderBy("checkout_links.id", "desc")
    .limit(limit)
    .execute();
  return rows.map(fromRow);
}

/** Replaces a link's editable fields (name, destination, overlay path, prefill); keeps active and createdAt. */
export async function replaceLink(
  db: Db,
  id: string,
  fields: Pick<LinkRecord, "name" | "destinationType" | "overlayPath" | "prefill" | "updatedAt">,
): Promise<boolean> {
  const result = await db
    .updateTable("checkout_links")
    .set({
      name: fields.name,
      destination_type: fields.destinationType,
      overlay_path: fields.overlayPath,
      prefill: JSON.stringify(fields.prefill),
      updated_at: fields.updatedAt,
    })
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function setLinkActive(db: Db, id: string, active: boolean, nowIso: string): Promise<boolean> {
  const result = await db
    .updateTable("checkout_links")
    .set({ active: active ? 1 : 0, updated_at: nowIso })
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteLink(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom("checkout_links").where("id", "=", id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

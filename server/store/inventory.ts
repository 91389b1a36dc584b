import { sql } from "kysely";
import { type Availability, NO_SALES, productKey, promoKey } from "../../shared/pricing/availability.js";
import type { FormConfig } from "../../shared/schemas/form.js";
import type { Db } from "./database.js";
import { isPostgres } from "./dialect.js";

/**
 * Stock counters per form: tickets sold, products sold, promo-code redemptions. A checkout takes its
 * items with one conditional UPDATE each (`sold + n <= limit`), which both databases run atomically
 * under the row's write lock, so racing checkouts can never take more than the limit together.
 *
 * Stock is counted by name (a ticket's name, a product's group and option titles, a promo code), so a form
 * update must not rename or remove what has sales, nor lower a limit below them (api/forms/sales.ts). A
 * checkout takes its stock under a shared lock of the form's row (PostgreSQL; SQLite's writes run one at a
 * time), checking that the form it priced is still the form as it stands: the update locks that row before
 * it counts the sales, so it either waits for a checkout's take to commit and counts it, or the checkout
 * waits for the update and takes by the form as updated (an item it no longer has is refused as gone).
 */

export type ItemKind = "ticket" | "product" | "promo";

export interface HeldItem {
  kind: ItemKind;
  key: string;
  quantity: number;
  /** null = unlimited: counted, never refused. */
  limit: number | null;
}

/**
 * Takes every item or none: returns the first item that is out of stock (or no longer on the form), after
 * undoing the others. `form` is the form as the order was priced: its limits hold unless it changed since.
 */
export async function takeItems(
  trx: Db,
  form: { id: string; updatedAt: string },
  wanted: HeldItem[],
): Promise<HeldItem | null> {
  if (wanted.length === 0) return null;
  const formId = form.id;
  const current = await asTheFormStands(trx, form, wanted);
  if ("gone" in current) return current.gone;
  // In one order for every checkout (kind, then key): two checkouts taking the same items, listed in
  // opposite orders, would each lock one row and wait for the other's (a deadlock on PostgreSQL).
  const items = inLockOrder(current.items);
  for (const [i, item] of items.entries()) {
    if (!(await addSold(trx, formId, item, item.limit))) {
      await releaseItems(trx, formId, items.slice(0, i));
      return item;
    }
  }
  return null;
}

/**
 * Counts `item.quantity` more of the item as sold, its row made first if need be; with a `limit`, only
 * while the total stays within it (one conditional update). False when the limit refused it.
 */
async function addSold(trx: Db, formId: string, item: HeldItem, limit: number | null): Promise<boolean> {
  await trx
    .insertInto("inventory")
    .values({ form_id: formId, item_kind: item.kind, item_key: item.key, sold: 0 })
    .onConflict((oc) => oc.columns(["form_id", "item_kind", "item_key"]).doNothing())
    .execute();
  let query = trx
    .updateTable("inventory")
    .set({ sold: sql`sold + ${item.quantity}` })
    .where("form_id", "=", formId)
    .where("item_kind", "=", item.kind)
    .where("item_key", "=", item.key);
  if (limit !== null) query = query.where(sql<boolean>`sold + ${item.quantity} <= ${limit}`);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * The items with the limits of the form as it stands, its row locked against updates until the transaction
 * ends; `gone` is an item the form no longer has (renamed or removed since the order was priced).
 */
async function asTheFormStands(
  trx: Db,
  form: { id: string; updatedAt: string },
  items: HeldItem[],
): Promise<{ items: HeldItem[] } | { gone: HeldItem }> {
  let query = trx.selectFrom("forms").select("updated_at").where("id", "=", form.id);
  if (isPostgres(trx)) query = query.forShare();
  const row = await query.executeTakeFirst();
  if (!row || row.updated_at === form.updatedAt) return { items };
  const stored = await trx.selectFrom("forms").select("config").where("id", "=", form.id).executeTakeFirst();
  if (!stored) return { items };
  const config = JSON.parse(stored.config) as FormConfig;
  const out: HeldItem[] = [];
  for (const item of items) {
    const limit = limitNow(config, item);
    if (limit === undefined) return { gone: item };
    out.push({ ...item, limit });
  }
  return { items: out };
}

/** An item's limit on `config` (null: unlimited), or undefined when the form has no such item. */
function limitNow(config: FormConfig, item: HeldItem): number | null | undefined {
  if (item.kind === "ticket") {
    const ticket = config.tickets.find((t) => t.name === item.key);
    return ticket ? (ticket.quantity ?? null) : undefined;
  }
  if (item.kind === "promo") {
    const promo = config.promoCodes.find((p) => promoKey(p.code) === item.key);
    return promo ? (promo.quantity ?? null) : undefined;
  }
  for (const g of config.sponsorshipGroups)
    for (const o of g.options)
      if (productKey(g.groupTitle, o.optionTitle) === item.key) return o.quantity ?? null;
  return undefined;
}

/**
 * Takes back the stock of an order whose full refund failed after the fact (the processor gave the money
 * back to the organization): the order stands, so its items count as sold again, past a limit if need be
 * (a seat sold again in between is then one over, which the form's sales show), never refused.
 */
export async function retakeItems(trx: Db, formId: string, items: HeldItem[]): Promise<void> {
  for (const item of inLockOrder(items)) await addSold(trx, formId, item, null);
}

/** Items sorted by kind, then key: the order every take and release locks their rows in. */
function inLockOrder(items: HeldItem[]): HeldItem[] {
  const rank = (item: HeldItem) => `${item.kind}\u0000${item.key}`;
  return [...items].sort((a, b) => (rank(a) < rank(b) ? -1 : rank(a) > rank(b) ? 1 : 0));
}

/** Gives items back (a declined payment, an abandoned hold). Never below zero. */
export async function releaseItems(trx: Db, formId: string, items: HeldItem[]): Promise<void> {
  for (const item of inLockOrder(items)) {
    await trx
      .updateTable("inventory")
      .set({ sold: sql`case when sold >= ${item.quantity} then sold - ${item.quantity} else 0 end` })
      .where("form_id", "=", formId)
      .where("item_kind", "=", item.kind)
      .where("item_key", "=", item.key)
      .execute();
  }
}

/**
 * What has been taken of a form's stock; without a read for a form that has none (no tickets, products
 * or promo codes), most donation forms.
 */
export function stockTaken(db: Db, form: { id: string; config: FormConfig }): Promise<Availability> {
  const c = form.config;
  if (c.tickets.length === 0 && c.sponsorshipGroups.length === 0 && c.promoCodes.length === 0)
    return Promise.resolve(NO_SALES);
  return formAvailability(db, form.id);
}

/** What has been taken of a form's stock, in the shape pricing reads. */
export async function formAvailability(db: Db, formId: string): Promise<Availability> {
  const rows = await db
    .selectFrom("inventory")
    .select(["item_kind", "item_key", "sold"])
    .where("form_id", "=", formId)
    .execute();
  // Records without a prototype: an item named `__proto__` or `constructor` is counted like any other.
  const out: Availability = { ticketsSold: counts(), productsSold: counts(), promoRedemptions: counts() };
  for (const r of rows) {
    const n = Number(r.sold);
    if (r.item_kind === "ticket") out.ticketsSold[r.item_key] = n;
    else if (r.item_kind === "product") out.productsSold[r.item_key] = n;
    else out.promoRedemptions[r.item_key] = n;
  }
  return out;
}

const counts = (): Record<string, number> => Object.create(null) as Record<string, number>;

export { productKey, promoKey };

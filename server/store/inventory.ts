import { sql } from "kysely";
import { type Availability, NO_SALES, productKey, promoKey } from "../../shared/pricing/availability.js";
import type { FormConfig } from "../../shared/schemas/form.js";
import type { Db } from "./database.js";

/**
 * Stock counters per form: tickets sold, products sold, promo-code redemptions. A checkout takes its
 * items with one conditional UPDATE each (`sold + n <= limit`), which both databases run atomically
 * under the row's write lock, so racing checkouts can never take more than the limit together.
 */

export type ItemKind = "ticket" | "product" | "promo";

export interface HeldItem {
  kind: ItemKind;
  key: string;
  quantity: number;
  /** null = unlimited: counted, never refused. */
  limit: number | null;
}

/** Takes every item or none: returns the first item that is out of stock, after undoing the others. */
export async function takeItems(trx: Db, formId: string, items: HeldItem[]): Promise<HeldItem | null> {
  for (const [i, item] of items.entries()) {
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
    if (item.limit !== null) query = query.where(sql<boolean>`sold + ${item.quantity} <= ${item.limit}`);
    const result = await query.executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) {
      await releaseItems(trx, formId, items.slice(0, i));
      return item;
    }
  }
  return null;
}

/** Gives items back (a declined payment, an abandoned hold). Never below zero. */
export async function releaseItems(trx: Db, formId: string, items: HeldItem[]): Promise<void> {
  for (const item of items) {
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
  const out: Availability = { ticketsSold: {}, productsSold: {}, promoRedemptions: {} };
  for (const r of rows) {
    const n = Number(r.sold);
    if (r.item_kind === "ticket") out.ticketsSold[r.item_key] = n;
    else if (r.item_kind === "product") out.productsSold[r.item_key] = n;
    else out.promoRedemptions[r.item_key] = n;
  }
  return out;
}

export { productKey, promoKey };

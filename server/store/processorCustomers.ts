import { emailKey } from "./contacts.js";
import type { Db } from "./database.js";

/** Each donor's customer at a processor account (Stripe `cus_…`), by e-mail as contacts are matched. */

export async function findProcessorCustomer(
  db: Db,
  organizationId: string,
  account: string,
  email: string,
): Promise<string | null> {
  const row = await db
    .selectFrom("processor_customers")
    .select("customer_id")
    .where("organization_id", "=", organizationId)
    .where("account", "=", account)
    .where("email_key", "=", emailKey(email))
    .executeTakeFirst();
  return row?.customer_id ?? null;
}

/** Keeps the customer made for a donor; if another checkout kept one first, that one is returned. */
export async function saveProcessorCustomer(
  db: Db,
  organizationId: string,
  account: string,
  email: string,
  customerId: string,
  nowIso: string,
): Promise<string> {
  await db
    .insertInto("processor_customers")
    .values({
      organization_id: organizationId,
      account,
      email_key: emailKey(email),
      customer_id: customerId,
      created_at: nowIso,
    })
    .onConflict((oc) => oc.columns(["organization_id", "account", "email_key"]).doNothing())
    .execute();
  return (await findProcessorCustomer(db, organizationId, account, email)) ?? customerId;
}

/**
 * Forgets the donor's customer `customerId` (deleted at the processor), so that the next checkout makes a
 * new one; a customer another checkout has kept in its place since is left alone.
 */
export async function forgetProcessorCustomer(
  db: Db,
  organizationId: string,
  account: string,
  email: string,
  customerId: string,
): Promise<void> {
  await db
    .deleteFrom("processor_customers")
    .where("organization_id", "=", organizationId)
    .where("account", "=", account)
    .where("email_key", "=", emailKey(email))
    .where("customer_id", "=", customerId)
    .execute();
}

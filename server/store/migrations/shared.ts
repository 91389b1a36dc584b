import type { CreateTableBuilder, Transaction } from "kysely";
import { sql } from "kysely";
import type { Database } from "../schema.js";

/** What the migrations share: their shape and helpers used by more than one. */

/** One step of the schema's history: `version` and `name` are recorded in almoner_migrations once it runs. */
export interface Migration {
  version: number;
  name: string;
  up(trx: Transaction<Database>): Promise<void>;
}

// biome-ignore lint/suspicious/noExplicitAny: migrations build tables that the Database type does not yet describe.
export type AnyTrx = Transaction<any>;

/**
 * Rebuilds api_metrics keyed by (organization_id, created_at, id), as `store` leaves its table's storage:
 * a new table `staging` (its key named `<staging>_pk`), the rows copied, the old table dropped, the new one
 * renamed. The old table's indexes go with it (migration 26's index of each key's requests included): a
 * later rebuild makes them again.
 */
export async function rebuildApiMetrics(
  trx: AnyTrx,
  staging: string,
  store: <T extends string, C extends string>(table: CreateTableBuilder<T, C>) => CreateTableBuilder<T, C>,
): Promise<void> {
  const columns = [
    ["id", "text"],
    ["organization_id", "text"],
    ["key_id", "text"],
    ["endpoint", "text"],
    ["method", "text"],
    ["status_code", "integer"],
    ["response_time_us", "bigint"],
    ["created_at", "text"],
  ] as const;
  let table: CreateTableBuilder<string, string> = trx.schema.createTable(staging);
  for (const [name, type] of columns) table = table.addColumn(name, type, (c) => c.notNull());
  await store(
    table.addPrimaryKeyConstraint(`${staging}_pk`, ["organization_id", "created_at", "id"]),
  ).execute();
  const names = sql.join(columns.map(([name]) => sql.id(name)));
  await sql`insert into ${sql.table(staging)} (${names}) select ${names} from api_metrics`.execute(trx);
  await trx.schema.dropTable("api_metrics").execute();
  await trx.schema.alterTable(staging).renameTo("api_metrics").execute();
}

/**
 * Claims `keys` as a contact's phone keys, in one statement; a key another contact claimed first stays
 * that contact's.
 */
export async function claimPhoneKeys(
  trx: AnyTrx,
  contact: { id: string; organization_id: string },
  keys: Iterable<string>,
): Promise<void> {
  const rows = [...new Set(keys)].map((key) => ({
    organization_id: contact.organization_id,
    kind: "phone",
    value_key: key,
    contact_id: contact.id,
  }));
  if (rows.length === 0) return;
  await trx
    .insertInto("contact_keys")
    .values(rows)
    .onConflict((oc) => oc.columns(["organization_id", "kind", "value_key"]).doNothing())
    .execute();
}

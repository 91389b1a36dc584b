import { isoAt } from "../../shared/time.js";
import type { Db } from "./database.js";
import { type DialectName, valuesList } from "./dialect.js";

/**
 * When each API key was last used. The requests' metric records (metrics.ts) pass through `note`, which
 * keeps a key's use for writing at most once a minute per key in this process; the metrics writer stores
 * the kept uses with its next batch, in the same statements list. So "last used" is exact to the minute at
 * no cost per request beyond a map lookup, and nothing writes to api_keys (whose every change empties the
 * key read cache of every process). A later time never gives way to an earlier one (several processes).
 */

/** A key's use is noted again once this long has passed since its last noted use. */
export const KEY_USE_INTERVAL_MS = 60_000;

export class KeyUseNotes {
  /** Per key: the time (ISO) from which its next use is noted. */
  private readonly dueAt = new Map<string, string>();
  /** Uses noted and not yet handed to a write: key id → time (ISO). */
  private pending = new Map<string, string>();

  /** A request made with `keyId` at `at` (ISO); staff sessions (their key id is a user id) are not keys. */
  note(keyId: string, at: string): void {
    if (!keyId.startsWith("key_")) return;
    const due = this.dueAt.get(keyId);
    if (due !== undefined && at < due) return;
    this.dueAt.set(keyId, isoAt(Date.parse(at) + KEY_USE_INTERVAL_MS));
    this.pending.set(keyId, at);
  }

  /** The statement storing the uses noted since the last call (its text and parameters), or undefined. */
  take(dialect: DialectName): [string, unknown[]] | undefined {
    if (this.pending.size === 0) return undefined;
    const params: unknown[] = [];
    for (const [keyId, at] of this.pending) params.push(keyId, at);
    const rows = this.pending.size;
    this.pending = new Map();
    return [
      `insert into api_key_uses (key_id, last_used_at) values ${valuesList(dialect, rows, 2)} on conflict (key_id) do update set last_used_at = excluded.last_used_at where excluded.last_used_at > api_key_uses.last_used_at`,
      params,
    ];
  }
}

/** The last use (ISO) of each of an organization's keys that has been used. */
export async function lastUsesOf(db: Db, organizationId: string): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom("api_key_uses")
    .innerJoin("api_keys", "api_keys.id", "api_key_uses.key_id")
    .select(["api_key_uses.key_id", "api_key_uses.last_used_at"])
    .where("api_keys.organization_id", "=", organizationId)
    .execute();
  return new Map(rows.map((r) => [r.key_id, r.last_used_at]));
}

import type SQLite from "better-sqlite3";

/**
 * Tells in-process caches when the rows they copied may have changed. A table's version moves at once
 * with every write this process makes to it (the statement wrapper in dialect.ts reports each one), and
 * every version moves when another process sharing the database (another server, the CLI) has committed:
 * SQLite's `PRAGMA data_version` changes when another connection commits. That check is a read
 * transaction, whose system calls would cost a cached request a fifth of its time on the bench machine, so
 * it is made at most once per CHECK_EVERY_MS: another process's commit is seen by every request that
 * starts more than that after it, which is sooner than any client can learn of the commit and ask again.
 *
 * Only SQLite has one (see openDialect): on PostgreSQL, several servers on several machines are the
 * normal case and nothing tells one of another's writes cheaply, so the caches are off there.
 */
export interface ChangeFeed {
  /** Changes whenever `table`'s rows may have changed. Compare with ===. */
  version(table: string): number;
}

/** How long a check for other processes' commits holds. */
export const CHECK_EVERY_MS = 1;

const WRITE =
  /^\s*(?:insert(?:\s+or\s+\w+)?\s+into|replace\s+into|update(?:\s+or\s+\w+)?|delete\s+from)\s+"?(\w+)"?/i;

/** The table a statement writes, "*" for one that may change anything (DDL, pragmas), or null for a read. */
export function writtenTable(sql: string): string | null {
  const match = WRITE.exec(sql);
  if (match) return match[1].toLowerCase();
  return /^\s*(?:select|with|begin|commit|rollback|savepoint|release)\b/i.test(sql) ? null : "*";
}

export class SqliteChangeFeed implements ChangeFeed {
  private readonly own = new Map<string, number>();
  /** Bumped for a write to "*" and whenever another process committed: every version moves. */
  private everything = 0;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private lastDataVersion: number | undefined;
  private readonly dataVersion: SQLite.Statement<[], number>;

  constructor(private readonly db: SQLite.Database) {
    this.dataVersion = db.prepare<[], number>("PRAGMA data_version").pluck();
    this.check(performance.now());
  }

  version(table: string): number {
    const now = performance.now();
    if (now - this.checkedAt >= CHECK_EVERY_MS) this.check(now);
    // Own writes count up by one; other processes' commits by 2^32, so the two never cancel out.
    return (this.own.get(table) ?? 0) + this.everything * 0x1_0000_0000;
  }

  /** Called by the statement wrapper for every write statement, before it runs. */
  wrote(table: string): void {
    if (table === "*") this.everything++;
    else this.own.set(table, (this.own.get(table) ?? 0) + 1);
  }

  private check(now: number): void {
    this.checkedAt = now;
    try {
      const dataVersion = this.db.open ? this.dataVersion.get() : undefined;
      if (dataVersion !== undefined && dataVersion === this.lastDataVersion) return;
      this.lastDataVersion = dataVersion;
    } catch {
      // A busy or closed database: count it as changed, so nothing stale is served meanwhile.
      this.lastDataVersion = undefined;
    }
    this.everything++;
  }
}

import type { OperationNode, RootOperationNode, WithNode } from "kysely";

/**
 * This process's writes, read from the query tree Kysely hands the store's driver (drivers.ts), never
 * from SQL text. Rule: every write to a cached table (changes.ts, CACHED_TABLES) goes through the query
 * builder (db.insertInto, updateTable, deleteFrom, mergeInto, or a fixedQuery built from one). A raw `sql`
 * statement carries no tree to read, so a write made that way is heard by this process only as another
 * process's would be (the SQLite counter, PostgreSQL notifications); raw writes to those tables belong in
 * migrations alone.
 */

/** What a statement did to a table; "schema" (table "*") for a change of the schema through the builder. */
export type WriteKind = "insert" | "update" | "delete" | "merge" | "schema";

export interface Write {
  /** The table written, or "*" when what changed is not one table. */
  table: string;
  kind: WriteKind;
}

const NONE: readonly Write[] = Object.freeze([]);

/** The writes a query makes: its own and those of its common table expressions. Empty for a read. */
export function writesOf(node: RootOperationNode): readonly Write[] {
  const own = rootWriteOf(node);
  const ctes = (node as { with?: WithNode }).with;
  if (!ctes) return own ? [own] : NONE;
  const out: Write[] = own ? [own] : [];
  for (const cte of ctes.expressions) out.push(...writesOf(cte.expression as RootOperationNode));
  return out;
}

/** The write a query makes to its own table (not its common table expressions'), or null. */
export function rootWriteOf(node: RootOperationNode): Write | null {
  switch (node.kind) {
    case "InsertQueryNode":
      return { table: tableName(node.into), kind: "insert" };
    case "UpdateQueryNode":
      return { table: tableName(node.table), kind: "update" };
    case "DeleteQueryNode":
      return { table: node.from.froms.length === 1 ? tableName(node.from.froms[0]) : "*", kind: "delete" };
    case "MergeQueryNode":
      return { table: tableName(node.into), kind: "merge" };
    case "CreateTableNode":
    case "DropTableNode":
    case "AlterTableNode":
    case "CreateIndexNode":
    case "DropIndexNode":
    case "CreateViewNode":
    case "DropViewNode":
    case "CreateSchemaNode":
    case "DropSchemaNode":
    case "CreateTypeNode":
    case "DropTypeNode":
    case "RefreshMaterializedViewNode":
      return { table: "*", kind: "schema" };
    default:
      return null;
  }
}

/** A table's own name (without its schema), through an alias; "*" for anything else. */
function tableName(node: OperationNode | undefined): string {
  if (!node) return "*";
  if (node.kind === "AliasNode") return tableName((node as unknown as { node: OperationNode }).node);
  if (node.kind === "TableNode")
    return (node as unknown as { table: { identifier: { name: string } } }).table.identifier.name;
  return "*";
}

/**
 * The store's listeners to its own writes (the change feed, the webhook dispatcher's wake-up), told by its
 * driver: on SQLite as each statement runs, on PostgreSQL once the statement (outside a transaction) or
 * its transaction has ended (drivers.ts). One per store: two stores in a process hear only their own.
 */
export class StoreWrites {
  private readonly listeners = new Set<(write: Write) => void>();

  /** Calls `listener` with every write of this store; the function returned stops it. */
  on(listener: (write: Write) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  report(write: Write): void {
    for (const listener of this.listeners) listener(write);
  }
}

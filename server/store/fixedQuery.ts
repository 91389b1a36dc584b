import {
  type Compilable,
  CompiledQuery,
  type DialectAdapter,
  type Insertable,
  type QueryResult,
} from "kysely";
import type { Db } from "./database.js";
import type { Database } from "./schema.js";

/** Stands for an argument while a query's shape is compiled. */
class Slot {
  constructor(readonly index: number) {}
}

interface Template {
  sql: string;
  /** Per parameter: the argument it takes, or -1 for a value fixed in the shape. */
  from: number[];
  fixed: readonly unknown[];
}

/**
 * A statement whose shape never changes, written with Kysely as usual (its SQL and types are checked the
 * same way), but built and compiled once per database: a run only binds its arguments. For the
 * statements of every checkout, where building and compiling the query costs more than running it.
 *
 * `build` is called once per database with stand-ins for the arguments, so it must use each argument as
 * a plain value (never branch on it, spread it, or pass an array for `in`); compiling checks that each
 * argument became a parameter.
 */
export function fixedQuery<A extends unknown[], R>(
  build: (db: Db, ...args: A) => Compilable<R>,
): (db: Db, ...args: A) => Promise<QueryResult<R>> {
  const templates = new WeakMap<DialectAdapter, Template>();
  return async (db, ...args) => {
    const adapter = db.getExecutor().adapter;
    let template = templates.get(adapter);
    if (!template) {
      template = compileShape(db, build, args.length);
      templates.set(adapter, template);
    }
    const { from, fixed } = template;
    const parameters = from.map((arg, i) => (arg < 0 ? fixed[i] : args[arg]));
    return db.executeQuery<R>(CompiledQuery.raw(template.sql, parameters));
  };
}

function compileShape<A extends unknown[], R>(
  db: Db,
  build: (db: Db, ...args: A) => Compilable<R>,
  arity: number,
): Template {
  const slots = Array.from({ length: arity }, (_, i) => new Slot(i));
  const compiled = build(db, ...(slots as unknown as A)).compile();
  const from = compiled.parameters.map((p) => (p instanceof Slot ? p.index : -1));
  for (let i = 0; i < arity; i++) {
    const uses = from.filter((arg) => arg === i).length;
    if (uses === 0) throw new Error(`fixedQuery: argument ${i} is not a parameter of the query`);
  }
  return { sql: compiled.sql, from, fixed: compiled.parameters };
}

const inserts = new Map<string, (db: Db, ...values: unknown[]) => Promise<QueryResult<unknown>>>();

/**
 * Inserts one row as a fixedQuery: one shape per table and set of columns (a row's defined keys, in
 * order), so the rows a piece of code writes share one compiled statement.
 */
export function insertRow<T extends keyof Database & string>(
  db: Db,
  table: T,
  row: Insertable<Database[T]>,
): Promise<QueryResult<unknown>> {
  const values = row as Record<string, unknown>;
  const columns = Object.keys(values).filter((c) => values[c] !== undefined);
  const shape = `${table}(${columns.join(",")})`;
  let insert = inserts.get(shape);
  if (!insert) {
    insert = fixedQuery((db: Db, ...args: unknown[]) =>
      db.insertInto(table).values(Object.fromEntries(columns.map((c, i) => [c, args[i]])) as never),
    );
    inserts.set(shape, insert);
  }
  return insert(db, ...columns.map((c) => values[c]));
}
